//! What an approval may remember: the session scopes behind "allow always" (`a`) and the rule
//! "always allow calls like this" (`r`) may write. Destructive and interpreter commands get the
//! exact command or nothing; protected paths and secret files get nothing.

use std::path::Path;

use serde_json::Value;

use super::facts::{Facts, bash_command, secret_named};
use super::{CallInput, Scope, command};
use crate::files::protected;
use crate::planning::Mode;
use crate::schema::ToolKind;
use crate::tools::Tool;

/// This exact call: a command by its text, any other call by its arguments.
pub(super) fn exact_scope(facts: &Facts<'_>) -> Scope {
    let tool = facts.tool();
    if let Some(domain) = &facts.domain {
        return Scope {
            key: format!("{tool}:{domain}"),
            description: format!("`{tool}` from {}", domain.trim_start_matches("domain:")),
        };
    }
    if facts.call.tool.kind() == ToolKind::Network {
        return Scope {
            key: format!("{tool}:any"),
            description: format!("every `{tool}` call"),
        };
    }
    match bash_command(facts.call) {
        Some(command) => Scope {
            key: format!("{tool}:exact:{command}"),
            description: format!("this exact command (`{command}`)"),
        },
        None => Scope {
            key: format!("{tool}:exact:{}", facts.call.arguments),
            description: "this exact call".into(),
        },
    }
}

/// Edits inside the working directory, remembered as one scope.
pub(super) fn edit_scope() -> Scope {
    Scope {
        key: "edit:workdir".into(),
        description: "file edits inside the working directory".into(),
    }
}

pub(super) fn prefix_scope(tool: &str, prefix: &str) -> Scope {
    Scope {
        key: format!("{tool}:prefix:{prefix}"),
        description: format!("`{tool}` commands starting with `{prefix}`"),
    }
}

/// The narrowest rule "always allow calls like this" may write: an allowlisted command's
/// prefix, else the exact command (or nothing); an edit's exact path inside the working
/// directory. Never for protected paths or secret files.
pub fn suggested_rule(tool: &dyn Tool, arguments: &Value, workdir: &Path) -> Option<String> {
    let call = CallInput::new(tool, arguments, Mode::Default, workdir);
    let facts = Facts::gather(&call, None);
    if secret_named(&facts).is_some() || call.leave_sandbox {
        return None;
    }
    if let Some(line) = &facts.line {
        let pattern = match command::command_prefix(line) {
            Some(prefix) => format!("{prefix}*"),
            None => command::exact_pattern(line)?,
        };
        return Some(format!("{}({pattern})", tool.name()));
    }
    if let Some(domain) = &facts.domain {
        // A host of letters, digits, dots and dashes (an IPv4 address too): nothing a glob
        // reads as a wildcard or a class. An IPv6 host (`[::1]`) gets no rule.
        return domain
            .trim_start_matches("domain:")
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-'))
            .then(|| format!("{}({domain})", tool.name()));
    }
    match tool.kind() {
        ToolKind::Network => Some(tool.name().to_owned()),
        ToolKind::Edit => {
            let [path] = facts.writes.as_slice() else {
                return None;
            };
            (path.inside
                && !protected::is_protected_write(&path.resolved)
                && !path.shown.contains(['*', '?', '[', '{']))
            .then(|| format!("{}({})", tool.name(), path.shown))
        }
        // An MCP tool is allowed as a whole: its arguments are the server's business.
        ToolKind::Dangerous if crate::schema::is_mcp_tool(tool.name()) => {
            Some(tool.name().to_owned())
        }
        _ => None,
    }
}
