//! `lsp`: precise navigation through the project's language server: go to definition, find
//! references, hover (type and docs), a file's symbols, a workspace symbol search, by file and
//! position or by symbol name. Read-only, so it runs unasked in every mode; its `path` goes
//! through the same read judgement as `read_file`'s, and locations the read guard withholds
//! (secret files, denied paths) are left out of its answer. What the server says is fenced as
//! data from outside (`answers` words it).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use async_lsp::lsp_types::{self as types, request};
use async_trait::async_trait;
use serde::Deserialize;
use serde_json::{Value, json};

use super::answers::{MAX_ITEMS, answer, hover_text, location_lines, symbol_lines};
use super::client::{Client, url_of};
use super::servers::{START_LIMIT, Servers};
use crate::schema::ToolKind;
use crate::tools::{Tool, ToolContext, ToolError};

/// How long one query waits for the server's answer.
const QUERY_LIMIT: Duration = Duration::from_secs(15);

pub const LSP_TOOL: &str = "lsp";

/// The `lsp` tool over the session's servers.
pub struct LspTool {
    servers: Servers,
}

impl LspTool {
    pub fn new(servers: Servers) -> Self {
        LspTool { servers }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Operation {
    Definition,
    References,
    Hover,
    DocumentSymbols,
    WorkspaceSymbols,
    Diagnostics,
}

#[derive(Deserialize)]
struct Args {
    operation: Operation,
    path: Option<String>,
    line: Option<u32>,
    character: Option<u32>,
    /// A name: searched in the workspace, or found in `path` when no `line` is given.
    query: Option<String>,
}

/// Where a query points: a file, and a position in it (0-based, UTF-16 columns).
struct Target {
    path: PathBuf,
    position: Option<types::Position>,
}

fn utf16_column(line: &str, chars: usize) -> u32 {
    line.chars().take(chars).map(char::len_utf16).sum::<usize>() as u32
}

/// The position of the first whole-word `symbol` in `text`.
fn find_symbol(text: &str, symbol: &str) -> Option<types::Position> {
    let word = |c: char| c.is_alphanumeric() || c == '_';
    for (number, line) in text.lines().enumerate() {
        for (at, _) in line.match_indices(symbol) {
            let before = line[..at].chars().next_back();
            let after = line[at + symbol.len()..].chars().next();
            if !before.is_some_and(word) && !after.is_some_and(word) {
                let column = utf16_column(line, line[..at].chars().count());
                return Some(types::Position::new(number as u32, column));
            }
        }
    }
    None
}

fn document_position(
    url: types::Url,
    position: types::Position,
) -> types::TextDocumentPositionParams {
    types::TextDocumentPositionParams {
        text_document: types::TextDocumentIdentifier { uri: url },
        position,
    }
}

fn failed(error: super::LspError) -> ToolError {
    ToolError::new(format!("the language server failed: {error}"))
}

impl LspTool {
    /// The file and position the arguments name, or the model is told what is missing.
    async fn target(&self, args: &Args, ctx: &ToolContext) -> Result<Target, ToolError> {
        let Some(raw) = &args.path else {
            let symbol = args.query.as_deref().ok_or_else(|| {
                ToolError::new("give `path` (with `line` and `character`, or `query`), or `query`")
            })?;
            return self.locate_in_workspace(symbol).await;
        };
        let path = crate::files::paths::resolve(&ctx.workdir, raw);
        if matches!(
            args.operation,
            Operation::DocumentSymbols | Operation::Diagnostics
        ) {
            return Ok(Target {
                path,
                position: None,
            });
        }
        let text = tokio::fs::read_to_string(&path)
            .await
            .map_err(|e| ToolError::new(format!("cannot read {raw}: {e}")))?;
        let position = match (args.line, args.character, &args.query) {
            (Some(line), column, _) => {
                let index = line.saturating_sub(1) as usize;
                let text_line = text.lines().nth(index).unwrap_or("");
                let column = column.unwrap_or(1).saturating_sub(1) as usize;
                types::Position::new(index as u32, utf16_column(text_line, column))
            }
            (None, _, Some(symbol)) => find_symbol(&text, symbol)
                .ok_or_else(|| ToolError::new(format!("`{symbol}` does not occur in {raw}")))?,
            (None, _, None) => {
                return Err(ToolError::new(
                    "give `line` and `character` (1-based) or `query` (a name in the file) for \
                     this operation",
                ));
            }
        };
        Ok(Target {
            path,
            position: Some(position),
        })
    }

    /// A symbol's place found by the running servers' workspace search.
    async fn locate_in_workspace(&self, symbol: &str) -> Result<Target, ToolError> {
        for client in self.servers.running() {
            let found = workspace_symbols(&client, symbol).await?;
            let exact = found.iter().find(|s| s.name == symbol).or(found.first());
            if let Some(symbol) = exact
                && let Ok(path) = symbol.location.uri.to_file_path()
            {
                return Ok(Target {
                    path,
                    position: Some(symbol.location.range.start),
                });
            }
        }
        Err(ToolError::new(format!(
            "no running language server knows `{symbol}`; name the file it is in with `path`"
        )))
    }

    /// The first running server of `path`.
    async fn client_for(&self, path: &Path, ctx: &ToolContext) -> Result<Arc<Client>, ToolError> {
        let clients = self.servers.clients_for(path, START_LIMIT).await;
        let client = clients.into_iter().next().ok_or_else(|| {
            ToolError::new(format!(
                "no language server serves {} here (`harness9 lsp list` shows which can)",
                crate::files::paths::display(&ctx.workdir, path)
            ))
        })?;
        client.open(path).await;
        Ok(client)
    }
}

async fn workspace_symbols(
    client: &Client,
    query: &str,
) -> Result<Vec<types::SymbolInformation>, ToolError> {
    let answer = client
        .request::<request::WorkspaceSymbolRequest>(
            types::WorkspaceSymbolParams {
                query: query.to_owned(),
                ..Default::default()
            },
            QUERY_LIMIT,
        )
        .await
        .map_err(failed)?;
    #[allow(deprecated)] // `SymbolInformation::deprecated` must be named to build one.
    let flat = match answer {
        None => Vec::new(),
        Some(types::WorkspaceSymbolResponse::Flat(symbols)) => symbols,
        Some(types::WorkspaceSymbolResponse::Nested(symbols)) => symbols
            .into_iter()
            .filter_map(|symbol| match symbol.location {
                types::OneOf::Left(location) => Some(types::SymbolInformation {
                    name: symbol.name,
                    kind: symbol.kind,
                    tags: symbol.tags,
                    deprecated: None,
                    location,
                    container_name: symbol.container_name,
                }),
                types::OneOf::Right(_) => None,
            })
            .collect(),
    };
    Ok(flat)
}

#[async_trait]
impl Tool for LspTool {
    fn name(&self) -> &str {
        LSP_TOOL
    }

    fn description(&self) -> &str {
        "Asks the project's language server (the type checker) instead of guessing: \
         `definition` and `references` of a symbol, `hover` (its type and docs), \
         `document_symbols` of a file, `workspace_symbols` matching `query`, and a file's \
         current `diagnostics`. Name the place by `path` with `line` and `character` (1-based), \
         or by `path` and `query` (the name's first occurrence in the file), or by `query` alone \
         (found by the workspace search). Read-only."
    }

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "operation": {
                    "type": "string",
                    "enum": ["definition", "references", "hover", "document_symbols", "workspace_symbols", "diagnostics"]
                },
                "path": {"type": "string", "description": "The file, relative to the working directory."},
                "line": {"type": "integer", "minimum": 1},
                "character": {"type": "integer", "minimum": 1},
                "query": {"type": "string", "description": "A name: searched in the workspace, or found in `path` when no `line` is given."}
            },
            "required": ["operation"],
            "additionalProperties": false
        })
    }

    fn kind(&self) -> ToolKind {
        ToolKind::ReadOnly
    }

    fn bounds_own_output(&self) -> bool {
        true
    }

    fn works_here(&self) -> bool {
        !self.servers.is_empty()
    }

    async fn execute(&self, arguments: Value, ctx: &ToolContext) -> Result<String, ToolError> {
        let args: Args = serde_json::from_value(arguments)
            .map_err(|e| ToolError::new(format!("invalid arguments: {e}")))?;
        if args.operation == Operation::WorkspaceSymbols {
            let query = args
                .query
                .as_deref()
                .ok_or_else(|| ToolError::new("`workspace_symbols` needs `query`"))?;
            let clients = match &args.path {
                Some(raw) => {
                    let path = crate::files::paths::resolve(&ctx.workdir, raw);
                    vec![self.client_for(&path, ctx).await?]
                }
                None => self.servers.running(),
            };
            let mut lines = Vec::new();
            for client in clients {
                for symbol in workspace_symbols(&client, query).await? {
                    lines.push((symbol.name.clone(), symbol.kind, symbol.location));
                }
            }
            let locations: Vec<_> = lines.iter().map(|(_, _, l)| l.clone()).collect();
            let text = location_lines(&locations, ctx);
            return Ok(answer("workspace symbols", &text));
        }
        let target = self.target(&args, ctx).await?;
        let client = self.client_for(&target.path, ctx).await?;
        let url = url_of(&target.path).map_err(failed)?;
        let position = target.position.unwrap_or_default();
        let text = match args.operation {
            Operation::Diagnostics => {
                let text = tokio::fs::read_to_string(&target.path)
                    .await
                    .map_err(|e| ToolError::new(format!("cannot read the file: {e}")))?;
                let published = client
                    .sync(&target.path, text, super::servers::PUBLISH_LIMIT)
                    .await
                    .ok_or_else(|| {
                        ToolError::new("the language server published no diagnostics in time")
                    })?;
                let all = super::diagnostics::introduced(&[], &published.diagnostics);
                let shown = crate::files::paths::display(&ctx.workdir, &target.path);
                super::diagnostics::lines(&shown, &all)
            }
            Operation::Definition => {
                let found = client
                    .request::<request::GotoDefinition>(
                        types::GotoDefinitionParams {
                            text_document_position_params: document_position(url, position),
                            work_done_progress_params: Default::default(),
                            partial_result_params: Default::default(),
                        },
                        QUERY_LIMIT,
                    )
                    .await
                    .map_err(failed)?;
                let locations = match found {
                    None => Vec::new(),
                    Some(types::GotoDefinitionResponse::Scalar(location)) => vec![location],
                    Some(types::GotoDefinitionResponse::Array(locations)) => locations,
                    Some(types::GotoDefinitionResponse::Link(links)) => links
                        .into_iter()
                        .map(|link| types::Location {
                            uri: link.target_uri,
                            range: link.target_selection_range,
                        })
                        .collect(),
                };
                location_lines(&locations, ctx)
            }
            Operation::References => {
                let found = client
                    .request::<request::References>(
                        types::ReferenceParams {
                            text_document_position: document_position(url, position),
                            work_done_progress_params: Default::default(),
                            partial_result_params: Default::default(),
                            context: types::ReferenceContext {
                                include_declaration: true,
                            },
                        },
                        QUERY_LIMIT,
                    )
                    .await
                    .map_err(failed)?;
                location_lines(&found.unwrap_or_default(), ctx)
            }
            Operation::Hover => client
                .request::<request::HoverRequest>(
                    types::HoverParams {
                        text_document_position_params: document_position(url, position),
                        work_done_progress_params: Default::default(),
                    },
                    QUERY_LIMIT,
                )
                .await
                .map_err(failed)?
                .map(hover_text)
                .unwrap_or_default(),
            Operation::DocumentSymbols | Operation::WorkspaceSymbols => {
                let found = client
                    .request::<request::DocumentSymbolRequest>(
                        types::DocumentSymbolParams {
                            text_document: types::TextDocumentIdentifier { uri: url },
                            work_done_progress_params: Default::default(),
                            partial_result_params: Default::default(),
                        },
                        QUERY_LIMIT,
                    )
                    .await
                    .map_err(failed)?;
                let mut lines = Vec::new();
                match found {
                    None => {}
                    Some(types::DocumentSymbolResponse::Nested(symbols)) => {
                        symbol_lines(&symbols, 0, &mut lines)
                    }
                    Some(types::DocumentSymbolResponse::Flat(symbols)) => {
                        for symbol in symbols {
                            lines.push(format!(
                                "{} {:?} (line {})",
                                symbol.name,
                                symbol.kind,
                                symbol.location.range.start.line + 1
                            ));
                        }
                    }
                }
                let total = lines.len();
                lines.truncate(MAX_ITEMS * 4);
                if total > lines.len() {
                    lines.push(format!("… and {} more", total - lines.len()));
                }
                lines.join("\n")
            }
        };
        let what = format!("{} of {}", operation_name(args.operation), client.spec_name);
        Ok(answer(&what, &text))
    }
}

fn operation_name(operation: Operation) -> &'static str {
    match operation {
        Operation::Definition => "definition",
        Operation::References => "references",
        Operation::Hover => "hover",
        Operation::DocumentSymbols => "document symbols",
        Operation::WorkspaceSymbols => "workspace symbols",
        Operation::Diagnostics => "diagnostics",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_symbol_is_found_as_a_whole_word_in_utf16_columns() {
        let text = "greeting_x = 1\né = greet()\ndef greet(): pass\n";
        assert_eq!(find_symbol(text, "greet"), Some(types::Position::new(1, 4)));
        assert_eq!(find_symbol(text, "absent"), None);
    }
}
