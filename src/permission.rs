//! The one decision of whether a tool call runs, asks or is refused: from the mode, the tool's
//! kind, where it writes, and what the user allowed for the rest of the session. Every path
//! (TUI, `exec`) goes through `decide`.

use std::collections::HashSet;
use std::path::Path;

use serde_json::Value;

pub mod protected;
pub mod rules;
pub mod shell;

use crate::planning::Mode;
use crate::tools::{Tool, ToolKind, paths};
use rules::{PermissionRules, RuleVerdict, Subject};

/// What happens to a call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Run,
    /// Ask the user. `reason` says why; `scope` is what "allow always" would remember.
    Ask {
        reason: String,
        scope: Scope,
    },
    Deny {
        reason: String,
    },
}

/// What an "allow always for this session" answer covers.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Scope {
    /// The key remembered in the session's allow-set.
    pub key: String,
    /// The same in words for the approval overlay.
    pub description: String,
}

/// Commands whose first word is a family of subcommands: "allow always" remembers two words.
const SUBCOMMAND_TOOLS: &[&str] = &[
    "git", "cargo", "npm", "pnpm", "yarn", "go", "docker", "kubectl", "make", "uv", "pip",
    "python", "python3", "node", "npx", "rustup", "bun", "deno", "gradle", "mvn", "dotnet",
];

/// The text rules match a call by: a command as typed, a path relative to the working directory
/// when it is inside it (absolute otherwise).
fn subject_text(tool: &dyn Tool, arguments: &Value, workdir: &Path) -> Option<String> {
    let raw = tool.rule_subject(arguments)?;
    if tool.name() == "bash" {
        return Some(raw);
    }
    let resolved = paths::resolve(workdir, &raw);
    Some(paths::display(workdir, &resolved))
}

/// The narrowest rule that would allow calls like this one: a command's first words, or the
/// exact path. `None` when no rule short of the exact call would be safe.
pub fn suggested_rule(tool: &dyn Tool, arguments: &Value, workdir: &Path) -> Option<String> {
    match tool.kind() {
        ToolKind::Dangerous => {
            let prefix = command_prefix(arguments)?;
            Some(format!("{}({prefix}*)", tool.name()))
        }
        ToolKind::Edit => {
            let subject = subject_text(tool, arguments, workdir)?;
            (!subject.starts_with('/')).then(|| format!("{}({subject})", tool.name()))
        }
        _ => None,
    }
}

/// Decides a call of `tool` with parsed `arguments`: the rules first (a deny applies in every
/// mode), then the mode, then what the user allowed for this session.
pub fn decide(
    tool: &dyn Tool,
    arguments: &Value,
    mode: Mode,
    workdir: &Path,
    allowed: &HashSet<String>,
    rules: &PermissionRules,
) -> Verdict {
    let text = subject_text(tool, arguments, workdir);
    let verdict = rules.evaluate(&Subject {
        tool: tool.name(),
        text: text.as_deref(),
    });
    match verdict {
        Some(RuleVerdict::Deny(rule)) => {
            return Verdict::Deny {
                reason: format!(
                    "The permission rule `{rule}` (in .harness9/settings.json or \
                     $HARNESS9_HOME/settings.json) denies this call. Do not retry it; find \
                     another way or tell the user what you needed."
                ),
            };
        }
        _ if mode == Mode::Yolo => return Verdict::Run,
        Some(RuleVerdict::Ask(rule)) => {
            return Verdict::Ask {
                reason: format!("the rule `{rule}` asks before such calls"),
                scope: Scope {
                    key: format!("rule-ask:{rule}:{arguments}"),
                    description: "this exact call".into(),
                },
            };
        }
        Some(RuleVerdict::Allow(_)) if !writes_outside(tool, arguments, workdir) => {
            return Verdict::Run;
        }
        _ => {}
    }
    // Plan mode's registry has already refused anything that is not read-only.
    if mode == Mode::Plan {
        return Verdict::Run;
    }
    match tool.kind() {
        ToolKind::ReadOnly | ToolKind::Planning => Verdict::Run,
        ToolKind::Edit => {
            let outside: Vec<String> = tool
                .written_paths(arguments)
                .iter()
                .map(|raw| paths::resolve(workdir, raw))
                .filter(|path| !paths::is_inside(workdir, path))
                .map(|path| path.display().to_string())
                .collect();
            if !outside.is_empty() {
                // Outside the working directory always asks, whatever was allowed before.
                return Verdict::Ask {
                    reason: format!(
                        "writes outside the working directory: {}",
                        outside.join(", ")
                    ),
                    scope: Scope {
                        key: format!("{}:outside:{}", tool.name(), outside.join(",")),
                        description: format!("writes to {}", outside.join(", ")),
                    },
                };
            }
            let scope = edit_scope();
            if mode == Mode::AutoEdit || allowed.contains(&scope.key) {
                Verdict::Run
            } else {
                Verdict::Ask {
                    reason: format!("`{}` changes a file", tool.name()),
                    scope,
                }
            }
        }
        ToolKind::Dangerous => {
            let scope = command_scope(tool.name(), arguments);
            if scope.as_ref().is_some_and(|s| allowed.contains(&s.key)) {
                return Verdict::Run;
            }
            Verdict::Ask {
                reason: format!("`{}` runs a command", tool.name()),
                scope: scope.unwrap_or_else(|| Scope {
                    key: format!("{}:exact:{arguments}", tool.name()),
                    description: "this exact command".into(),
                }),
            }
        }
    }
}

fn writes_outside(tool: &dyn Tool, arguments: &Value, workdir: &Path) -> bool {
    tool.kind() == ToolKind::Edit
        && tool
            .written_paths(arguments)
            .iter()
            .any(|raw| !paths::is_inside(workdir, &paths::resolve(workdir, raw)))
}

/// Edits inside the working directory, remembered as one scope.
fn edit_scope() -> Scope {
    Scope {
        key: "edit:workdir".into(),
        description: "file edits inside the working directory".into(),
    }
}

/// What "allow always" remembers for a command: its prefix (`command_prefix`).
pub fn command_scope(tool: &str, arguments: &Value) -> Option<Scope> {
    let prefix = command_prefix(arguments)?;
    Some(Scope {
        key: format!("{tool}:prefix:{prefix}"),
        description: format!("`{tool}` commands starting with `{prefix}`"),
    })
}

/// A command's first word, or two for tools with subcommands (`cargo test`); `None` for a
/// command that chains, substitutes or redirects, which a prefix cannot describe safely.
fn command_prefix(arguments: &Value) -> Option<String> {
    let command = arguments.get("command")?.as_str()?.trim();
    if command.is_empty() || has_shell_control(command) {
        return None;
    }
    let words: Vec<&str> = command.split_whitespace().collect();
    let take =
        if SUBCOMMAND_TOOLS.contains(&words[0]) && words.len() > 1 && !words[1].starts_with('-') {
            2
        } else {
            1
        };
    Some(words[..take].join(" "))
}

/// Whether `command` does more than run one program with arguments.
fn has_shell_control(command: &str) -> bool {
    command.contains(['\n', ';', '&', '|', '`', '>', '<']) || command.contains("$(")
}

/// For `exec`, where nobody can answer: the flag that would let `kind` run.
pub fn headless_flag(kind: ToolKind, outside_workdir: bool) -> &'static str {
    match (kind, outside_workdir) {
        (ToolKind::Edit, false) => "--mode auto-edit",
        _ => "--mode yolo",
    }
}

#[cfg(test)]
mod tests;
