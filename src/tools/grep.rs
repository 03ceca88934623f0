//! `grep`: a regex search over the tree (ripgrep's own crates), `file:line:text` results sorted by
//! file and line, ignored and binary files skipped, capped with a note of what was left out.

use std::sync::Mutex;

use async_trait::async_trait;
use grep_regex::RegexMatcherBuilder;
use grep_searcher::sinks::UTF8;
use grep_searcher::{BinaryDetection, SearcherBuilder};
use serde::Deserialize;
use serde_json::{Value, json};

use super::{Tool, ToolContext, ToolError};
use crate::files::paths;
use crate::files::walk::{left_out_note, walker, withheld_note};
use crate::schema::ToolKind;

const MAX_MATCHES: usize = 500;
const MAX_LINE_CHARS: usize = 300;

pub struct Grep;

#[derive(Deserialize)]
struct Args {
    pattern: String,
    #[serde(default)]
    path: Option<String>,
    #[serde(default)]
    glob: Option<String>,
    #[serde(default)]
    case_insensitive: Option<bool>,
}

#[async_trait]
impl Tool for Grep {
    fn name(&self) -> &'static str {
        "grep"
    }

    fn description(&self) -> &'static str {
        "Search file contents with a regular expression (Rust regex syntax, like ripgrep). \
         Returns `path:line:text` for each matching line, sorted, at most 500. `path` limits \
         the search to a directory or one file; `glob` filters file names (`*.rs`) or paths \
         (`src/**/*.ts`); `case_insensitive` ignores case. Skips .gitignore'd and binary files."
    }

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "pattern": {"type": "string", "description": "Regular expression."},
                "path": {"type": "string", "description": "Directory or file to search (default: the working directory)."},
                "glob": {"type": "string", "description": "Only files matching this glob."},
                "case_insensitive": {"type": "boolean", "description": "Ignore case (default false)."},
            },
            "required": ["pattern"],
            "additionalProperties": false,
        })
    }

    fn bounds_own_output(&self) -> bool {
        true
    }

    fn kind(&self) -> ToolKind {
        ToolKind::ReadOnly
    }

    fn read_paths(&self, arguments: &Value) -> Vec<String> {
        root_path(arguments)
    }

    async fn execute(&self, arguments: Value, ctx: &ToolContext) -> Result<String, ToolError> {
        let args: Args = super::parse_args(arguments)?;
        let matcher = RegexMatcherBuilder::new()
            .case_insensitive(args.case_insensitive.unwrap_or(false))
            .build(&args.pattern)
            .map_err(|e| ToolError::new(format!("`{}` is not a valid regex: {e}", args.pattern)))?;
        let filter = match &args.glob {
            Some(glob) => Some(
                globset::GlobBuilder::new(glob)
                    .literal_separator(glob.contains('/'))
                    .build()
                    .map_err(|e| ToolError::new(format!("`{glob}` is not a valid glob: {e}")))?
                    .compile_matcher(),
            ),
            None => None,
        };
        let root = paths::resolve(&ctx.workdir, args.path.as_deref().unwrap_or("."));
        let workdir = ctx.workdir.clone();
        let cancel = ctx.cancel.clone();
        let guard = ctx.read_guard.clone();
        super::blocking(move || {
            if !root.exists() {
                return Err(ToolError::new(format!(
                    "{} does not exist.",
                    paths::display(&workdir, &root)
                )));
            }
            let found = Mutex::new(Vec::<(String, u64, String)>::new());
            let withheld = Mutex::new(Vec::new());
            walker(&root).build_parallel().run(|| {
                let matcher = matcher.clone();
                let filter = filter.clone();
                let mut searcher = SearcherBuilder::new()
                    .line_number(true)
                    .binary_detection(BinaryDetection::quit(0))
                    .build();
                let (root, workdir, found, cancel) = (&root, &workdir, &found, &cancel);
                let (guard, withheld) = (&guard, &withheld);
                Box::new(move |entry| {
                    if cancel.is_cancelled() {
                        return ignore::WalkState::Quit;
                    }
                    let Ok(entry) = entry else {
                        return ignore::WalkState::Continue;
                    };
                    if !entry.file_type().is_some_and(|t| t.is_file()) {
                        return ignore::WalkState::Continue;
                    }
                    if let Some(filter) = &filter {
                        let relative = entry.path().strip_prefix(root).unwrap_or(entry.path());
                        let by_name = entry.file_name();
                        if !filter.is_match(relative) && !filter.is_match(by_name) {
                            return ignore::WalkState::Continue;
                        }
                    }
                    // A file named as `path` went through the permission decision; one the
                    // walk found did not, so a secret or denied one is left out.
                    if entry.depth() > 0 && guard.withholds(entry.path()) {
                        if let Ok(mut withheld) = withheld.lock() {
                            withheld.push(entry.path().to_owned());
                        }
                        return ignore::WalkState::Continue;
                    }
                    // Opened as judged (issue 29 point 2): a folder on the way swapped for a
                    // link since the walk read it cannot lead the read out of the working
                    // directory, nor onto a secret; then searched through that handle.
                    let withholds = |path: &std::path::Path| guard.withholds(path);
                    let Ok(file) = crate::files::open::open_read(workdir, entry.path(), &withholds)
                    else {
                        return ignore::WalkState::Continue;
                    };
                    if !file.metadata().is_ok_and(|m| m.is_file()) {
                        return ignore::WalkState::Continue;
                    }
                    let shown = paths::display(workdir, entry.path());
                    let mut local = Vec::new();
                    let _ = searcher.search_file(
                        &matcher,
                        &file,
                        UTF8(|line, text| {
                            local.push((
                                shown.clone(),
                                line,
                                cut(text.trim_end_matches(['\n', '\r'])),
                            ));
                            Ok(true)
                        }),
                    );
                    if !local.is_empty()
                        && let Ok(mut all) = found.lock()
                    {
                        all.extend(local);
                    }
                    ignore::WalkState::Continue
                })
            });
            let mut found = found.into_inner().unwrap_or_default();
            let withheld = withheld_note(&workdir, &withheld.into_inner().unwrap_or_default());
            if found.is_empty() {
                return Ok(format!("No matches for `{}`.{withheld}", args.pattern));
            }
            found.sort();
            let total = found.len();
            found.truncate(MAX_MATCHES);
            let lines: Vec<String> = found
                .iter()
                .map(|(path, line, text)| format!("{path}:{line}:{text}"))
                .collect();
            Ok(format!(
                "{}{}{withheld}",
                lines.join("\n"),
                left_out_note(lines.len(), total, "matches")
            ))
        })
        .await?
    }
}

fn cut(text: &str) -> String {
    match text.char_indices().nth(MAX_LINE_CHARS) {
        Some((i, _)) => format!("{} …", &text[..i]),
        None => text.to_owned(),
    }
}

/// The root a walking tool reads: its `path` argument, the working directory by default.
pub(super) fn root_path(arguments: &Value) -> Vec<String> {
    vec![
        arguments
            .get("path")
            .and_then(Value::as_str)
            .unwrap_or(".")
            .to_owned(),
    ]
}
