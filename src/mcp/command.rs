//! `harness9 mcp list|add|remove`: `list` connects to every server this folder would start (as
//! `exec` would, waiting up to 10 s in all) and shows each one's status and tools, plus the
//! project servers that are not started and why; `add` and `remove` edit one file through
//! `edit`, keeping everything else in it. Exit status: 0 done, 1 a file could not be written,
//! 2 a usage error.

use std::path::Path;

use serde_json::json;

use super::config::{self, Scope};
use super::{HEADLESS_WAIT, McpManager, Status, edit};
use crate::config::{McpAction, McpArgs, McpScope};
use crate::terminal_text::sanitize;

/// Runs the command; returns the exit status.
pub async fn run(
    args: McpArgs,
    workdir: &Path,
    home: &Path,
    trusted: bool,
    trust_flag: bool,
) -> u8 {
    match args.action {
        McpAction::List { json } => list(workdir, home, trusted, trust_flag, json).await,
        McpAction::Add {
            name,
            scope,
            env,
            url,
            header,
            command,
        } => add(
            workdir,
            home,
            &name,
            scope,
            &env,
            url.as_deref(),
            &header,
            &command,
        ),
        McpAction::Remove { name, scope } => remove(workdir, home, &name, scope),
        McpAction::Login { name } => login(workdir, home, trusted, trust_flag, &name, true).await,
        McpAction::Logout { name } => login(workdir, home, trusted, trust_flag, &name, false).await,
    }
}

/// `mcp login NAME` (`log_in`) or `mcp logout NAME`.
async fn login(
    workdir: &Path,
    home: &Path,
    trusted: bool,
    trust_flag: bool,
    name: &str,
    log_in: bool,
) -> u8 {
    let loaded = config::load(workdir, home, trusted, trust_flag);
    let Some(spec) = loaded.servers.iter().find(|s| s.name == name) else {
        return usage(&format!(
            "no MCP server named `{name}` starts in this folder"
        ));
    };
    let Ok(config::Transport::Http { url, oauth, .. }) = &spec.transport else {
        return usage(&format!(
            "`{name}` is not an HTTP server: only those log in"
        ));
    };
    if !log_in {
        return match super::oauth::logout(home, name, url) {
            Ok(true) => {
                println!("forgot the tokens of `{name}`");
                0
            }
            Ok(false) => {
                println!("`{name}` had no tokens");
                0
            }
            Err(e) => {
                eprintln!("harness9 mcp logout: {e}");
                1
            }
        };
    }
    match super::oauth::login(home, name, url, oauth).await {
        Ok(()) => {
            println!("logged in to `{name}`");
            0
        }
        Err(e) => {
            eprintln!("harness9 mcp login: {e}");
            1
        }
    }
}

fn scope_of(scope: McpScope) -> Scope {
    match scope {
        McpScope::Project => Scope::Project,
        McpScope::User => Scope::User,
    }
}

#[allow(clippy::too_many_arguments)]
fn add(
    workdir: &Path,
    home: &Path,
    name: &str,
    scope: McpScope,
    env: &[String],
    url: Option<&str>,
    headers: &[String],
    command: &[String],
) -> u8 {
    if name.trim().is_empty() {
        eprintln!("harness9 mcp add: the server needs a name");
        return 2;
    }
    let split =
        |items: &[String], separator: char, what: &str| -> Result<Vec<(String, String)>, String> {
            items
                .iter()
                .map(|item| {
                    item.split_once(separator)
                        .map(|(k, v)| (k.trim().to_owned(), v.trim_start().to_owned()))
                        .filter(|(k, _)| !k.is_empty())
                        .ok_or_else(|| format!("`{item}` is not a {what}"))
                })
                .collect()
        };
    let definition = match (url, command.split_first()) {
        (Some(url), None) => match split(headers, ':', "header (`'K: V'`)") {
            Ok(headers) => edit::http_definition(url, &headers),
            Err(e) => return usage(&e),
        },
        (None, Some((program, args))) => match split(env, '=', "variable (`K=V`)") {
            Ok(env) => edit::stdio_definition(program, args, &env),
            Err(e) => return usage(&e),
        },
        (Some(_), Some(_)) => return usage("give either --url or a command after `--`, not both"),
        (None, None) => {
            return usage("say how to reach the server: `-- CMD ARGS...` or `--url URL`");
        }
    };
    if url.is_some() && !env.is_empty() {
        return usage("--env is for stdio servers; an HTTP server takes --header");
    }
    let scope = scope_of(scope);
    let path = scope.file(workdir, home);
    match edit::add(&path, name, definition) {
        Ok(replaced) => {
            let verb = if replaced { "replaced" } else { "added" };
            println!("{verb} the MCP server `{name}` in {}", path.display());
            if scope == Scope::Project {
                println!(
                    "project servers start only in a trusted folder, once you approved them \
                     (--trust approves them for exec and serve)"
                );
            }
            0
        }
        Err(e) => {
            eprintln!("harness9 mcp add: {e}");
            1
        }
    }
}

fn remove(workdir: &Path, home: &Path, name: &str, scope: Option<McpScope>) -> u8 {
    let scopes: Vec<Scope> = match scope {
        Some(scope) => vec![scope_of(scope)],
        None => [Scope::Project, Scope::User]
            .into_iter()
            .filter(|s| edit::contains(&s.file(workdir, home), name))
            .collect(),
    };
    if scope.is_none() && scopes.len() > 1 {
        return usage(&format!(
            "`{name}` is defined in both {} and {}; say which with --scope project|user",
            Scope::Project.file(workdir, home).display(),
            Scope::User.file(workdir, home).display()
        ));
    }
    let Some(scope) = scopes.first() else {
        eprintln!("harness9 mcp remove: no MCP server named `{name}`");
        return 2;
    };
    let path = scope.file(workdir, home);
    match edit::remove(&path, name) {
        Ok(true) => {
            println!("removed the MCP server `{name}` from {}", path.display());
            0
        }
        Ok(false) => {
            eprintln!(
                "harness9 mcp remove: {} has no server named `{name}`",
                path.display()
            );
            2
        }
        Err(e) => {
            eprintln!("harness9 mcp remove: {e}");
            1
        }
    }
}

async fn list(workdir: &Path, home: &Path, trusted: bool, trust_flag: bool, json: bool) -> u8 {
    let loaded = config::load(workdir, home, trusted, trust_flag);
    for notice in &loaded.notices {
        eprintln!("harness9: {notice}");
    }
    let manager = McpManager::start_with_home(
        loaded.servers,
        loaded.skipped,
        workdir.to_path_buf(),
        Some(home.to_path_buf()),
    );
    manager.wait_ready(HEADLESS_WAIT).await;
    let statuses = manager.statuses();
    manager.shutdown();
    if json {
        let mut rows: Vec<serde_json::Value> = statuses
            .iter()
            .map(|s| {
                let (status, reason) = match &s.status {
                    Status::Failed(reason) => ("failed", Some(reason.clone())),
                    other => (status_word(other), None),
                };
                json!({
                    "name": s.name,
                    "scope": s.scope,
                    "status": status,
                    "reason": reason,
                    "protocol": s.protocol,
                    "tools": s.tools,
                })
            })
            .collect();
        rows.extend(manager.skipped().iter().map(|s| {
            json!({"name": s.name, "scope": "project", "status": "not_started", "reason": s.reason,
                   "protocol": "", "tools": []})
        }));
        println!("{}", serde_json::Value::Array(rows));
        return 0;
    }
    if statuses.is_empty() && manager.skipped().is_empty() {
        println!("no MCP servers configured (harness9 mcp add NAME -- CMD ARGS..., or --url URL)");
        return 0;
    }
    for s in &statuses {
        println!(
            "{}  ({}) {}{}",
            sanitize(&s.name),
            s.scope.as_str(),
            sanitize(&s.status.to_string()),
            if s.protocol.is_empty() {
                String::new()
            } else {
                format!(", protocol {}", s.protocol)
            }
        );
        for tool in &s.tools {
            println!("    {tool}");
        }
    }
    for s in manager.skipped() {
        println!("{}  (project) not started: {}", sanitize(&s.name), s.reason);
    }
    0
}

fn status_word(status: &Status) -> &'static str {
    match status {
        Status::Starting => "starting",
        Status::Connected => "connected",
        Status::Failed(_) => "failed",
        Status::Disabled => "disabled",
    }
}

fn usage(message: &str) -> u8 {
    eprintln!("harness9 mcp: {message}");
    2
}
