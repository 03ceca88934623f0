//! Which MCP servers a session starts, read from `$HARNESS9_HOME/mcp.json` (the user's) and
//! `<workdir>/.mcp.json` (the project's), both in Claude Code's `{"mcpServers": {NAME: {...}}}`
//! shape. A project's servers are started only in a trusted folder and only once the user
//! approved exactly their definition (`config::approved`, the one place that decides it); a
//! project server named like a user server is ignored. `${VAR}` and `${VAR:-default}` expand in
//! `command`, `args`, `env`, `url` and `headers` from the process environment (which holds no
//! API key: `hardening` took them out), after the approval hash was taken from the text as
//! written, so an approval covers what the file says, not what the environment made of it.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::config::approved::{self, ExtensionKind, PendingExtension};
use crate::mcp::error::DefinitionError;

/// The user's file, under `$HARNESS9_HOME`.
pub const USER_FILE: &str = "mcp.json";
/// The project's file, in the working directory.
pub const PROJECT_FILE: &str = ".mcp.json";

/// Which file a server comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Scope {
    User,
    Project,
    /// Passed by the editor (ACP `session/new`); no file holds it.
    Editor,
}

impl Scope {
    pub fn file(self, workdir: &Path, home: &Path) -> PathBuf {
        match self {
            Scope::User => home.join(USER_FILE),
            Scope::Project => workdir.join(PROJECT_FILE),
            // The editor's settings hold it; harness9's own file is where it could be added.
            Scope::Editor => home.join(USER_FILE),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Scope::User => "user",
            Scope::Project => "project",
            Scope::Editor => "editor",
        }
    }
}

/// How to reach a server, with every `${VAR}` expanded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Transport {
    /// A child process speaking JSON-RPC on its stdin and stdout.
    Stdio {
        command: String,
        args: Vec<String>,
        env: Vec<(String, String)>,
    },
    /// Streamable HTTP.
    Http {
        url: String,
        headers: Vec<(String, String)>,
        /// Its `oauth` entry (empty: harness9 discovers and registers itself).
        oauth: super::oauth::ClientSettings,
    },
}

/// One configured server.
#[derive(Debug, Clone)]
pub struct ServerSpec {
    pub name: String,
    pub scope: Scope,
    /// How to reach it, or why its definition cannot be used (it is then shown as failed).
    pub transport: Result<Transport, DefinitionError>,
}

/// A project server that is not started, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    pub name: String,
    pub reason: String,
}

/// What the two files say for this folder.
#[derive(Debug, Default)]
pub struct Loaded {
    /// The servers to start: the user's, then the project's approved ones.
    pub servers: Vec<ServerSpec>,
    /// Project servers of a trusted folder waiting for the user's approval.
    pub pending: Vec<PendingExtension>,
    /// Project servers not started for another reason (untrusted folder, a name clash).
    pub skipped: Vec<Skipped>,
    /// For the user: unreadable files, name clashes.
    pub notices: Vec<String>,
}

/// Reads both files. `approve_pending` (`--trust` in `exec` and `serve`) starts a trusted
/// folder's unapproved project servers for this run.
pub fn load(workdir: &Path, home: &Path, trusted: bool, approve_pending: bool) -> Loaded {
    let mut loaded = Loaded::default();
    let user = read_servers(&Scope::User.file(workdir, home), &mut loaded.notices);
    let project_path = Scope::Project.file(workdir, home);
    let project = read_servers(&project_path, &mut loaded.notices);
    for (name, definition) in &user {
        loaded.servers.push(spec(name, Scope::User, definition));
    }
    for (name, definition) in &project {
        let skip = |reason: &str| Skipped {
            name: name.clone(),
            reason: reason.to_owned(),
        };
        if user.iter().any(|(user_name, _)| user_name == name) {
            loaded.notices.push(format!(
                "the MCP server `{name}` of {} is ignored: one of your own servers \
                 ($HARNESS9_HOME/{USER_FILE}) has that name",
                project_path.display()
            ));
            loaded
                .skipped
                .push(skip("named like one of the user's servers"));
            continue;
        }
        if !trusted {
            // config::resolve already says once that the folder's .mcp.json is ignored.
            loaded.skipped.push(skip("this folder is not trusted"));
            continue;
        }
        let hash = approved::definition_hash(definition, workdir);
        let kind = ExtensionKind::McpServer;
        if approve_pending || approved::is_approved(home, workdir, kind, name, &hash) {
            loaded.servers.push(spec(name, Scope::Project, definition));
        } else {
            loaded.pending.push(PendingExtension {
                kind,
                name: name.clone(),
                summary: summary(definition),
                hash,
            });
            loaded.skipped.push(skip("waiting for your approval"));
        }
    }
    loaded
}

/// The servers of one file, by name, as written. A missing file has none; an unreadable one
/// has none and says so.
pub fn read_servers(path: &Path, notices: &mut Vec<String>) -> Vec<(String, Value)> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Vec::new(),
        Err(e) => {
            notices.push(format!("cannot read {}: {e}", path.display()));
            return Vec::new();
        }
    };
    let value: Value = match serde_json::from_str(&text) {
        Ok(value) => value,
        Err(e) => {
            notices.push(format!(
                "{} is not valid JSON ({e}); its MCP servers are ignored",
                path.display()
            ));
            return Vec::new();
        }
    };
    match value.get("mcpServers") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Object(servers)) => servers
            .iter()
            .map(|(name, definition)| (name.clone(), definition.clone()))
            .collect(),
        Some(_) => {
            notices.push(format!(
                "{}: `mcpServers` is not an object; its MCP servers are ignored",
                path.display()
            ));
            Vec::new()
        }
    }
}

/// What a definition would run, in words for an approval prompt (unexpanded, as written).
pub fn summary(definition: &Value) -> String {
    if let Some(url) = definition.get("url").and_then(Value::as_str) {
        return format!("connects to {url}");
    }
    let command = definition
        .get("command")
        .and_then(Value::as_str)
        .unwrap_or("?");
    let args: Vec<&str> = definition
        .get("args")
        .and_then(Value::as_array)
        .map(|args| args.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut line = command.to_owned();
    for arg in args {
        line.push(' ');
        line.push_str(arg);
    }
    format!("runs {line}")
}

fn spec(name: &str, scope: Scope, definition: &Value) -> ServerSpec {
    ServerSpec {
        name: name.to_owned(),
        scope,
        transport: parse(definition, &|var| std::env::var(var).ok()),
    }
}

/// A definition as a transport, `${VAR}` expanded through `lookup`.
pub fn parse(
    definition: &Value,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<Transport, DefinitionError> {
    let object = definition.as_object().ok_or(DefinitionError::NotAnObject)?;
    let string = |key: &str| -> Result<Option<String>, DefinitionError> {
        match object.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(text)) => expand(text, lookup).map(Some),
            Some(_) => Err(DefinitionError::NotAString {
                key: key.to_owned(),
            }),
        }
    };
    let kind = string("type")?;
    match kind.as_deref() {
        Some("http" | "streamable-http" | "streamableHttp") => {
            let url = string("url")?.ok_or(DefinitionError::NoUrl)?;
            let headers = pairs(object.get("headers"), "headers", ':', lookup)?;
            let oauth = oauth_settings(object.get("oauth"), lookup)?;
            Ok(Transport::Http {
                url,
                headers,
                oauth,
            })
        }
        Some("sse") => Err(DefinitionError::OldSse),
        None | Some("stdio") => {
            if object.contains_key("url") && !object.contains_key("command") {
                let url = string("url")?.unwrap_or_default();
                let headers = pairs(object.get("headers"), "headers", ':', lookup)?;
                let oauth = oauth_settings(object.get("oauth"), lookup)?;
                return Ok(Transport::Http {
                    url,
                    headers,
                    oauth,
                });
            }
            let command = string("command")?.ok_or(DefinitionError::NoCommand)?;
            let args = match object.get("args") {
                None | Some(Value::Null) => Vec::new(),
                Some(Value::Array(args)) => args
                    .iter()
                    .map(|arg| match arg {
                        Value::String(text) => expand(text, lookup),
                        other => Ok(other.to_string()),
                    })
                    .collect::<Result<_, _>>()?,
                Some(_) => return Err(DefinitionError::ArgsNotAList),
            };
            let env = pairs(object.get("env"), "env", '=', lookup)?;
            Ok(Transport::Stdio { command, args, env })
        }
        Some(other) => Err(DefinitionError::UnknownType {
            kind: other.to_owned(),
        }),
    }
}

/// `env` or `headers`: an object, or a list of `"K=V"` (`"K: V"`) strings as the Go original
/// wrote them.
/// An HTTP server's `oauth` entry: `client_id`, `client_secret`, `scopes`, `grant`
/// (`authorization_code` or `client_credentials`), `private_key_file`, `signing_algorithm`;
/// variables expand as elsewhere.
fn oauth_settings(
    value: Option<&Value>,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<super::oauth::ClientSettings, DefinitionError> {
    use super::oauth::{ClientSettings, Grant};
    let Some(Value::Object(object)) = value else {
        return Ok(ClientSettings::default());
    };
    let string = |key: &str| -> Result<Option<String>, DefinitionError> {
        match object.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(text)) => expand(text, lookup).map(Some),
            Some(_) => Err(DefinitionError::NotAString {
                key: format!("oauth.{key}"),
            }),
        }
    };
    let scopes = match object.get("scopes") {
        Some(Value::Array(items)) => items
            .iter()
            .map(|item| match item {
                Value::String(text) => expand(text, lookup),
                _ => Err(DefinitionError::NotAString {
                    key: "oauth.scopes".into(),
                }),
            })
            .collect::<Result<_, _>>()?,
        _ => Vec::new(),
    };
    let grant = match string("grant")?.as_deref() {
        Some("client_credentials") => Grant::ClientCredentials,
        _ => Grant::AuthorizationCode,
    };
    Ok(ClientSettings {
        client_id: string("client_id")?,
        client_secret: string("client_secret")?,
        scopes,
        grant,
        private_key_file: string("private_key_file")?,
        signing_algorithm: string("signing_algorithm")?,
    })
}

fn pairs(
    value: Option<&Value>,
    key: &str,
    separator: char,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<Vec<(String, String)>, DefinitionError> {
    let mut out = Vec::new();
    match value {
        None | Some(Value::Null) => {}
        Some(Value::Object(map)) => {
            for (name, value) in map {
                let value = match value {
                    Value::String(text) => expand(text, lookup)?,
                    other => other.to_string(),
                };
                out.push((name.clone(), value));
            }
        }
        Some(Value::Array(items)) => {
            for item in items {
                let text = item
                    .as_str()
                    .ok_or_else(|| DefinitionError::EntryNotAString {
                        key: key.to_owned(),
                    })?;
                let (name, value) =
                    text.split_once(separator)
                        .ok_or_else(|| DefinitionError::NoSeparator {
                            key: key.to_owned(),
                            entry: text.to_owned(),
                            separator,
                        })?;
                out.push((name.trim().to_owned(), expand(value.trim_start(), lookup)?));
            }
        }
        Some(_) => {
            return Err(DefinitionError::NotObjectOrList {
                key: key.to_owned(),
            });
        }
    }
    Ok(out)
}

/// Expands `${VAR}` and `${VAR:-default}`; an unset variable without a default is an error
/// (the server would start with a hole in its command line). `$` alone stays as written.
pub fn expand(
    text: &str,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<String, DefinitionError> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let end = after.find('}').ok_or_else(|| DefinitionError::Unclosed {
            text: text.to_owned(),
        })?;
        let inner = &after[..end];
        let (name, default) = match inner.split_once(":-") {
            Some((name, default)) => (name, Some(default)),
            None => (inner, None),
        };
        let valid = !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !valid {
            return Err(DefinitionError::BadVariableName {
                inner: inner.to_owned(),
            });
        }
        match (lookup(name).filter(|v| !v.is_empty()), default) {
            (Some(value), _) => out.push_str(&value),
            (None, Some(default)) => out.push_str(default),
            (None, None) => {
                return Err(DefinitionError::Unset {
                    name: name.to_owned(),
                });
            }
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests;

/// The servers the editor passed, as specs of the editor's scope; one named like a server of
/// the files is ignored with a notice (the files' server is the one the user's other front ends
/// use).
pub fn editor_servers(servers: &[crate::config::EditorMcpServer], loaded: &mut Loaded) {
    use crate::config::EditorMcpTransport;
    for server in servers {
        if loaded.servers.iter().any(|s| s.name == server.name) {
            loaded.notices.push(format!(
                "the editor's MCP server `{}` is ignored: a server of that name is configured \
                 in mcp.json or .mcp.json",
                server.name
            ));
            continue;
        }
        let transport = match &server.transport {
            EditorMcpTransport::Stdio { command, args, env } => Transport::Stdio {
                command: command.clone(),
                args: args.clone(),
                env: env.clone(),
            },
            EditorMcpTransport::Http { url, headers } => Transport::Http {
                url: url.clone(),
                headers: headers.clone(),
                oauth: Default::default(),
            },
        };
        loaded.servers.push(ServerSpec {
            name: server.name.clone(),
            scope: Scope::Editor,
            transport: Ok(transport),
        });
    }
}
