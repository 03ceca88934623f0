//! The one decision of whether a tool call runs, asks or is refused: the last `before` stage of
//! the tool-call chain (`hooks::chain`), so it judges the arguments as the earlier stages (the
//! user's command hooks) left them. A hook may refuse or ask; its `allow` (`hook_allowed`) lifts
//! only the ordinary approval of a tool's kind, never a deny rule, an ask rule, a protected
//! path, a secret, a write outside the working directory, leaving the sandbox or plan mode. It
//! judges resolved paths and parsed commands, never the text the model wrote, and every path
//! (TUI, `exec`, `serve`) goes through it.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use serde_json::Value;

pub mod always_allow;
mod arguments;
pub mod command;
mod destructive;
mod expand;
mod facts;
mod git;
mod git_config;
mod history;
pub mod rules;
mod scope;
mod tracked;

use crate::files::{paths, protected};
use crate::planning::Mode;
use crate::schema::ToolKind;
use crate::tools::Tool;
use command::CommandLine;
use facts::{Facts, bash_command, guarded, named, names_denied, reads_only, strongest};
use rules::{List, PermissionRules, RuleVerdict, Subject};
pub use scope::suggested_rule;
use scope::{edit_scope, exact_scope, prefix_scope};

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

/// The prefixes of the keys a session never remembers: their calls ask every time.
const NEVER_REMEMBERED: [&str; 2] = ["protected:", "unsandboxed:"];

impl Scope {
    /// Whether the session remembers an "allow always" for this scope. Writes to protected
    /// paths or outside the working directory and leaving the sandbox ask every time, so
    /// their approval offers no grant for the session.
    pub fn remembered(&self) -> bool {
        !NEVER_REMEMBERED
            .iter()
            .any(|prefix| self.key.starts_with(prefix))
            && !self.key.contains(OUTSIDE)
    }
}

/// The part of a scope's key that names writes outside the working directory.
const OUTSIDE: &str = ":outside:";

/// A call about to run, as the hook chain sees it.
pub struct CallInput<'a> {
    pub tool: &'a dyn Tool,
    /// Parsed and checked against the tool's schema.
    pub arguments: &'a Value,
    pub mode: Mode,
    /// Canonical.
    pub workdir: &'a Path,
    /// Whether this `bash` call will run inside the sandbox (`Tool::runs_sandboxed`). In
    /// `auto-edit` a sandboxed call runs without asking.
    pub sandboxed: bool,
    /// Whether the call asked to leave the sandbox (`"sandbox": false`): it always asks, except
    /// in `yolo`.
    pub leave_sandbox: bool,
    /// A hook allowed the call (`hooks::Step::Allow`): the ordinary approval of its kind is not
    /// asked; nothing else changes.
    pub hook_allowed: bool,
    /// This session's folder of cut outputs (`tools::output::outputs_dir`): a read-only tool
    /// reads in it without asking, in every mode, though it lies in `$HARNESS9_HOME`.
    pub outputs: Option<&'a Path>,
    /// Whether a tool of this session created a file (absolute path): in `auto-edit` a command
    /// may delete or overwrite such a file unasked (`checkpoint::Checkpoints` knows).
    pub created: Option<&'a CreatedInSession>,
}

/// Tells whether a tool of this session created a file.
pub type CreatedInSession = dyn Fn(&Path) -> bool + Send + Sync;

impl<'a> CallInput<'a> {
    pub fn new(tool: &'a dyn Tool, arguments: &'a Value, mode: Mode, workdir: &'a Path) -> Self {
        CallInput {
            tool,
            arguments,
            mode,
            workdir,
            sandboxed: tool.runs_sandboxed(arguments, mode),
            // Only `bash` runs in the sandbox; another tool's `sandbox` argument is its own.
            leave_sandbox: tool.name() == "bash" && crate::sandbox::leave_requested(arguments),
            hook_allowed: false,
            outputs: None,
            created: None,
        }
    }
}

/// Decides a call: deny rules first (they apply in every mode, `yolo` too), then what always
/// asks, then the allow rules and the mode, then what the user allowed for this session.
pub fn decide(call: &CallInput<'_>, granted: &HashSet<String>, rules: &PermissionRules) -> Verdict {
    // One look at the settings files per decision; every question below uses what it read.
    rules.refresh();
    let facts = Facts::gather(call, Some(rules.home()));
    let subjects = facts.subjects();
    let verdict = strongest(rules, &subjects);
    let exact = exact_scope(&facts);
    let is_granted = granted.contains(&exact.key);
    let plan = call.mode == Mode::Plan;

    if let Some(RuleVerdict::Deny(rule)) = &verdict {
        return Verdict::Deny {
            reason: format!(
                "The permission rule `{rule}` (in .harness9/settings*.json or \
                 $HARNESS9_HOME/settings.json) denies this call. Do not retry it; find another \
                 way or tell the user what you needed."
            ),
        };
    }

    // A line whose program is unknown, or whose arguments name a path a rule denies, cannot be
    // proven to stay clear of the deny rules: asked in every mode, never run unasked.
    if let Some(line) = &facts.line {
        let unsure = line.has_dynamic_program()
            && [List::Deny, List::Ask]
                .into_iter()
                .any(|list| rules.has_rules(list, &Subject::Command("")));
        let denied = facts
            .argument_paths()
            .iter()
            .find(|p| names_denied(rules, p))
            .map(|p| p.shown.clone());
        let why = match (unsure, denied) {
            (_, Some(path)) => Some(format!(
                "its arguments name {path}, which a deny rule covers"
            )),
            (true, None) => Some(
                "which program it runs is only known when it runs, so it cannot be checked \
                 against the deny rules"
                    .to_owned(),
            ),
            (false, None) => None,
        };
        if let Some(why) = why {
            if plan {
                return plan_refusal(&format!("this command: {why}"));
            }
            if !is_granted {
                return ask(format!("`bash` runs a command, and {why}"), exact);
            }
        }
    }

    if reads_only_outputs(&facts) {
        return Verdict::Run;
    }

    if call.mode == Mode::Yolo {
        return Verdict::Run;
    }

    if crate::tools::memory::writes_user_memory(call.tool, call.arguments) {
        return user_memory(verdict.as_ref(), granted);
    }
    if call.tool.kind() == ToolKind::Network {
        return network(call, &facts, verdict.as_ref(), exact, is_granted);
    }

    let secret = guarded(&facts, rules);
    if plan {
        if let Some(guarded) = &secret {
            return plan_refusal(&guarded.plan_reason());
        }
        if call.leave_sandbox {
            return leave_sandbox(&exact);
        }
        return match verdict {
            Some(RuleVerdict::Ask(rule)) if !is_granted => ask_rule(&rule, exact),
            // An MCP tool is offered in plan mode on its server's word that it only reads:
            // a claim, not a proof, so it still asks unless a rule or the user allowed it.
            Some(RuleVerdict::Allow(_)) => Verdict::Run,
            _ if runs_unchecked(call) && !is_granted => {
                ask(format!("`{}` is an MCP server's tool", facts.tool()), exact)
            }
            // The registry has already refused anything that is not read-only.
            _ => Verdict::Run,
        };
    }

    if let Some(RuleVerdict::Ask(rule)) = &verdict
        && !is_granted
    {
        return ask_rule(rule, exact);
    }
    if let Some(path) = facts
        .writes
        .iter()
        .find(|p| protected::is_protected_write(&p.resolved) || rules.in_home(&p.resolved))
    {
        // Never remembered: each write to these asks (CONTRACT, protected paths).
        return ask(
            format!(
                "`{}` writes {}, a protected path (harness9's settings or state, git's \
                 internals, MCP servers or environment files)",
                facts.tool(),
                path.shown
            ),
            Scope {
                key: format!("protected:{}", path.resolved.display()),
                description: "writes to protected paths ask every time".into(),
            },
        );
    }
    if let Some(guarded) = &secret
        && !is_granted
    {
        return ask(guarded.ask_reason(facts.tool()), exact);
    }
    let outside: Vec<&str> = facts
        .writes
        .iter()
        .filter(|p| !p.inside)
        .map(|p| p.shown.as_str())
        .collect();
    if !outside.is_empty() {
        // Outside the working directory always asks, whatever was allowed before.
        return ask(
            format!(
                "writes outside the working directory: {}",
                outside.join(", ")
            ),
            Scope {
                key: format!("{}{OUTSIDE}{}", facts.tool(), outside.join(",")),
                description: "writes outside the working directory ask every time".into(),
            },
        );
    }
    if call.leave_sandbox {
        return leave_sandbox(&exact);
    }
    if let Some(RuleVerdict::Allow(_)) = verdict
        && facts.line.as_ref().is_none_or(CommandLine::is_plain)
    {
        return Verdict::Run;
    }

    match call.tool.kind() {
        ToolKind::ReadOnly | ToolKind::Planning => Verdict::Run,
        ToolKind::Network => network(call, &facts, verdict.as_ref(), exact, is_granted),
        ToolKind::Edit => {
            let scope = edit_scope();
            if call.mode == Mode::AutoEdit || granted.contains(&scope.key) || call.hook_allowed {
                Verdict::Run
            } else {
                ask(format!("`{}` changes a file", facts.tool()), scope)
            }
        }
        ToolKind::Dangerous => {
            if let Some(line) = &facts.line {
                if reads_only(line, bash_command(call).unwrap_or("")) {
                    return Verdict::Run;
                }
                if call.mode == Mode::AutoEdit {
                    // The sandbox lets a command write the working directory: it does not keep
                    // the user's files, so deleting or overwriting them asks, sandboxed or not.
                    if let Some(what) = destructive::destroys(line, call.workdir, call.created) {
                        if is_granted || call.hook_allowed {
                            return Verdict::Run;
                        }
                        return ask(
                            format!(
                                "`bash` runs a command that deletes or overwrites files that \
                                 exist ({what}); auto-edit asks before that"
                            ),
                            exact,
                        );
                    }
                    if call.sandboxed {
                        return Verdict::Run;
                    }
                }
            }
            let prefix = facts
                .line
                .as_ref()
                .and_then(command::command_prefix)
                .map(|prefix| prefix_scope(facts.tool(), &prefix));
            if is_granted
                || call.hook_allowed
                || prefix.as_ref().is_some_and(|s| granted.contains(&s.key))
            {
                return Verdict::Run;
            }
            let what = if runs_unchecked(call) {
                "is an MCP server's tool"
            } else {
                "runs a command"
            };
            ask(
                format!("`{}` {what}", facts.tool()),
                prefix.unwrap_or(exact),
            )
        }
    }
}

/// The guard a tool's tree walk reads through: secret files, `$HARNESS9_HOME` and paths a read
/// deny rule covers are withheld, judged as the decision judges a named path.
pub fn read_guard(
    rules: std::sync::Arc<PermissionRules>,
    workdir: PathBuf,
) -> crate::files::walk::ReadGuard {
    rules.refresh();
    crate::files::walk::ReadGuard::new(move |path| {
        rules.in_home(path) || read_denied_cached(&rules, &workdir, path)
    })
}

/// Whether a deny rule covers reading `path` (resolved), whoever reads it: a tool's walk or an
/// `@` mention.
pub fn read_denied(rules: &PermissionRules, workdir: &Path, path: &Path) -> bool {
    rules.refresh();
    read_denied_cached(rules, workdir, path)
}

/// `read_denied` without looking at the settings files again.
fn read_denied_cached(rules: &PermissionRules, workdir: &Path, path: &Path) -> bool {
    let shown = paths::display(workdir, path);
    matches!(
        rules.evaluate_cached(&Subject::Read {
            tool: "read_file",
            path: &shown,
        }),
        Some(RuleVerdict::Deny(_))
    )
}

/// A tool whose effect harness9 cannot judge from its arguments: a dangerous tool with no
/// command line to parse (an MCP server's tool).
fn runs_unchecked(call: &CallInput<'_>) -> bool {
    call.tool.kind() == ToolKind::Dangerous && bash_command(call).is_none()
}

/// A network call (`web_fetch`, `web_search`), in every mode but `yolo`: an allow rule
/// (`web_fetch(domain:docs.rs)`) or the session's "allow always" for its domain runs it;
/// otherwise it asks, per domain for `web_fetch`. It reads only, so plan mode asks the same.
fn network(
    call: &CallInput<'_>,
    facts: &Facts<'_>,
    verdict: Option<&RuleVerdict>,
    exact: Scope,
    is_granted: bool,
) -> Verdict {
    match verdict {
        Some(RuleVerdict::Allow(_)) => Verdict::Run,
        Some(RuleVerdict::Ask(rule)) if !is_granted => ask_rule(rule, exact),
        _ if is_granted || call.hook_allowed => Verdict::Run,
        _ => {
            let reason = match &facts.domain {
                Some(domain) => format!(
                    "`{}` reaches {}",
                    facts.tool(),
                    domain.trim_start_matches("domain:")
                ),
                None => format!("`{}` goes to the network", facts.tool()),
            };
            ask(reason, exact)
        }
    }
}

/// Whether the call is a read-only tool's (not a command's) that reads only in this session's
/// folder of cut outputs: what a tool's own cut left there for the model to read back. The
/// paths are resolved (`..` and links followed) before they are judged.
fn reads_only_outputs(facts: &Facts<'_>) -> bool {
    let Some(outputs) = facts.call.outputs else {
        return false;
    };
    facts.line.is_none()
        && facts.call.tool.kind() == ToolKind::ReadOnly
        && facts.writes.is_empty()
        && !facts.reads.is_empty()
        && facts.reads.iter().all(|p| p.resolved.starts_with(outputs))
}

/// A `user` memory reaches every future session's prompt: asked (in plan mode too) unless a
/// rule or the session's "allow always" allows it. A hook's allow does not lift it.
fn user_memory(verdict: Option<&RuleVerdict>, granted: &HashSet<String>) -> Verdict {
    let scope = Scope {
        key: "memory_write:user".into(),
        description: "`user` memories (they reach every future session)".into(),
    };
    match verdict {
        Some(RuleVerdict::Allow(_)) => Verdict::Run,
        Some(RuleVerdict::Ask(rule)) if !granted.contains(&scope.key) => ask_rule(rule, scope),
        _ if granted.contains(&scope.key) => Verdict::Run,
        _ => ask(
            "`memory_write` writes, changes or removes a `user` memory, which goes into every \
             future session's prompt"
                .into(),
            scope,
        ),
    }
}

fn ask(reason: String, scope: Scope) -> Verdict {
    Verdict::Ask { reason, scope }
}

/// Never remembered: leaving the sandbox asks every time (CONTRACT, Sandbox).
fn leave_sandbox(exact: &Scope) -> Verdict {
    ask(
        "`bash` asks to run outside the sandbox".into(),
        Scope {
            key: format!("unsandboxed:{}", exact.key),
            description: "leaving the sandbox asks every time".into(),
        },
    )
}

fn ask_rule(rule: &str, scope: Scope) -> Verdict {
    ask(format!("the rule `{rule}` asks before such calls"), scope)
}

fn plan_refusal(why: &str) -> Verdict {
    Verdict::Deny {
        reason: format!(
            "Plan mode does not read this: {why}. Plan without it, or tell the user what you \
             needed; they can read it to you or switch modes."
        ),
    }
}

/// For `exec`, where nobody can answer: the flag that would let a call that asked run.
/// `auto-edit` covers edits inside the working directory that are not to protected paths;
/// everything else that asks runs only in `yolo`.
pub fn headless_flag(tool: &dyn Tool, arguments: &Value, workdir: &Path) -> &'static str {
    let plain_edit = tool.kind() == ToolKind::Edit
        && tool.written_paths(arguments).iter().all(|raw| {
            let path = named(workdir, raw);
            path.inside && !protected::is_protected_write(&path.resolved)
        });
    if plain_edit {
        "--mode auto-edit"
    } else {
        "--mode yolo"
    }
}

/// The built-in tools whose `path` argument names what they open.
const PATH_TOOLS: &[&str] = &[
    "read_file",
    "write_file",
    "edit_file",
    "list_dir",
    "grep",
    "glob",
];

/// For a built-in tool whose `path` resolves outside the working directory: its arguments with
/// that path replaced by what it resolves to now (issue 29 point 2). The decision judges that
/// path and the tool opens exactly it, following no link (`files::open`), so a link swapped in
/// after the approval refuses the open instead of leading it elsewhere. `None` when nothing
/// changes (inside the working directory, links that stay inside are followed by the open).
pub fn pin_outside_path(tool: &str, arguments: &Value, workdir: &Path) -> Option<Value> {
    if !PATH_TOOLS.contains(&tool) {
        return None;
    }
    let raw = arguments.get("path")?.as_str()?;
    let resolved = paths::resolve(workdir, raw);
    if paths::is_inside(workdir, &resolved) {
        return None;
    }
    let text = resolved.to_str()?;
    if text == raw {
        return None;
    }
    let mut pinned = arguments.clone();
    pinned["path"] = Value::String(text.to_owned());
    Some(pinned)
}

#[cfg(test)]
mod bypass_tests;
#[cfg(test)]
mod destructive_tests;
#[cfg(test)]
mod history_tests;
#[cfg(test)]
mod network_tests;
#[cfg(test)]
mod structure_tests;
#[cfg(test)]
mod tests;
