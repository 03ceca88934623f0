//! The one decision of whether a tool call runs, asks or is refused, shaped as the first stage of
//! the tool-call hook chain (`ToolHook::before`): later stages (hooks, issue 15) come after it and
//! may only narrow what it lets through. It judges resolved paths and parsed commands, never the
//! text the model wrote, and every path (TUI, `exec`, `serve`) goes through it.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use serde_json::Value;

pub mod always_allow;
pub mod command;
pub mod protected;
pub mod rules;
pub mod shell;

use crate::planning::Mode;
use crate::tools::{Tool, ToolKind, paths};
use command::CommandLine;
use rules::{List, PermissionRules, RuleVerdict, Subject};

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

/// A call about to run, as the hook chain sees it.
pub struct CallInput<'a> {
    pub tool: &'a dyn Tool,
    /// Parsed and checked against the tool's schema.
    pub arguments: &'a Value,
    pub mode: Mode,
    /// Canonical.
    pub workdir: &'a Path,
    /// Whether this `bash` call will run inside the sandbox (issue 12 sets it; `false` until
    /// then). In `auto-edit` a sandboxed call runs without asking.
    pub sandboxed: bool,
    /// Whether the call asked to leave the sandbox (`"sandbox": false`): it always asks, except
    /// in `yolo`.
    pub leave_sandbox: bool,
}

impl<'a> CallInput<'a> {
    pub fn new(tool: &'a dyn Tool, arguments: &'a Value, mode: Mode, workdir: &'a Path) -> Self {
        CallInput {
            tool,
            arguments,
            mode,
            workdir,
            sandboxed: false,
            leave_sandbox: arguments.get("sandbox") == Some(&Value::Bool(false)),
        }
    }
}

/// One stage of the tool-call hook chain. The permission decision is the first; each later
/// stage sees only calls the earlier ones let through and may ask or refuse, never widen.
pub trait ToolHook: Send + Sync {
    fn before(&self, call: &CallInput<'_>) -> Verdict;
}

/// The permission stage: the settings' rules and what the user allowed for this session.
pub struct PermissionStage<'a> {
    pub rules: &'a PermissionRules,
    /// Scope keys answered "allow always" in this session.
    pub granted: &'a HashSet<String>,
}

impl ToolHook for PermissionStage<'_> {
    fn before(&self, call: &CallInput<'_>) -> Verdict {
        decide(call, self.granted, self.rules)
    }
}

/// A path a call names, resolved once: the form rules match (relative inside the working
/// directory, absolute outside) and whether it is inside.
struct NamedPath {
    resolved: PathBuf,
    shown: String,
    inside: bool,
}

fn named(workdir: &Path, raw: &str) -> NamedPath {
    let resolved = paths::resolve(workdir, raw);
    NamedPath {
        shown: paths::display(workdir, &resolved),
        inside: paths::is_inside(workdir, &resolved),
        resolved,
    }
}

/// Everything the decision judges a call by, gathered once.
struct Facts<'a> {
    call: &'a CallInput<'a>,
    reads: Vec<NamedPath>,
    writes: Vec<NamedPath>,
    /// For `bash`: the parsed line.
    line: Option<CommandLine>,
}

impl<'a> Facts<'a> {
    fn gather(call: &'a CallInput<'a>) -> Self {
        let workdir = call.workdir;
        let resolve_all = |raws: Vec<String>| -> Vec<NamedPath> {
            raws.iter().map(|r| named(workdir, r)).collect()
        };
        Facts {
            call,
            reads: resolve_all(call.tool.read_paths(call.arguments)),
            writes: resolve_all(call.tool.written_paths(call.arguments)),
            line: bash_command(call).map(CommandLine::parse),
        }
    }

    fn tool(&self) -> &'static str {
        self.call.tool.name()
    }

    /// Every rule subject of the call.
    fn subjects(&self) -> Vec<Subject<'_>> {
        let tool = self.tool();
        let mut out: Vec<Subject<'_>> = Vec::new();
        out.extend(self.reads.iter().map(|p| Subject::Read {
            tool,
            path: &p.shown,
        }));
        out.extend(self.writes.iter().map(|p| Subject::Write {
            tool,
            path: &p.shown,
        }));
        if let Some(line) = &self.line {
            out.extend(line.texts.iter().map(|t| Subject::Command(t)));
        }
        if out.is_empty() {
            out.push(Subject::Call { tool, text: None });
        }
        out
    }
}

/// The command of a `bash` call.
fn bash_command<'a>(call: &CallInput<'a>) -> Option<&'a str> {
    (call.tool.name() == "bash")
        .then(|| call.arguments.get("command").and_then(Value::as_str))
        .flatten()
}

/// The strongest rule over all of a call's subjects, deny first.
fn strongest(rules: &PermissionRules, subjects: &[Subject<'_>]) -> Option<RuleVerdict> {
    let verdicts: Vec<RuleVerdict> = subjects.iter().filter_map(|s| rules.evaluate(s)).collect();
    let find = |want: fn(&RuleVerdict) -> bool| verdicts.iter().find(|v| want(v)).cloned();
    find(|v| matches!(v, RuleVerdict::Deny(_)))
        .or_else(|| find(|v| matches!(v, RuleVerdict::Ask(_))))
        .or_else(|| {
            // Allow covers a call only when every subject is allowed.
            (verdicts.len() == subjects.len())
                .then(|| verdicts.first().cloned())
                .flatten()
        })
}

/// Decides a call: deny rules first (they apply in every mode, `yolo` too), then what always
/// asks, then the allow rules and the mode, then what the user allowed for this session.
pub fn decide(call: &CallInput<'_>, granted: &HashSet<String>, rules: &PermissionRules) -> Verdict {
    let facts = Facts::gather(call);
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
        let denied = argument_paths(&facts)
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

    if call.mode == Mode::Yolo {
        return Verdict::Run;
    }

    let secret = secret_named(&facts).or_else(|| guarded_below(&facts, rules));
    if plan {
        if let Some(path) = &secret {
            return plan_refusal(&format!("{path} usually holds secrets"));
        }
        if call.leave_sandbox {
            return leave_sandbox(&exact);
        }
        return match verdict {
            Some(RuleVerdict::Ask(rule)) if !is_granted => ask_rule(&rule, exact),
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
        .find(|p| protected::is_protected_write(&p.resolved))
    {
        // Never remembered: each write to these asks (CONTRACT, protected paths).
        return ask(
            format!(
                "`{}` writes {}, a protected path (harness9's settings, git's internals, MCP \
                 servers or environment files)",
                facts.tool(),
                path.shown
            ),
            Scope {
                key: format!("protected:{}", path.resolved.display()),
                description: "this call only: writes to protected paths ask every time".into(),
            },
        );
    }
    if let Some(path) = &secret
        && !is_granted
    {
        return ask(
            format!(
                "`{}` reads {path}, a file that usually holds secrets",
                facts.tool()
            ),
            exact,
        );
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
                key: format!("{}:outside:{}", facts.tool(), outside.join(",")),
                description: format!("writes to {}", outside.join(", ")),
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
        ToolKind::Edit => {
            let scope = edit_scope();
            if call.mode == Mode::AutoEdit || granted.contains(&scope.key) {
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
                if call.mode == Mode::AutoEdit && call.sandboxed {
                    return Verdict::Run;
                }
            }
            let prefix = facts
                .line
                .as_ref()
                .and_then(command::command_prefix)
                .map(|prefix| prefix_scope(facts.tool(), &prefix));
            if is_granted || prefix.as_ref().is_some_and(|s| granted.contains(&s.key)) {
                return Verdict::Run;
            }
            ask(
                format!("`{}` runs a command", facts.tool()),
                prefix.unwrap_or(exact),
            )
        }
    }
}

/// Whether default mode may run `line` unasked: plain, accepted by the read-only classifier,
/// and no argument that could not be judged as a path (`~` expands to the home directory).
/// Arguments naming secret or denied files were judged before.
fn reads_only(line: &CommandLine, text: &str) -> bool {
    line.is_plain()
        && !line.path_words().iter().any(|w| w.starts_with('~'))
        && crate::planning::readonly::check(text).is_ok()
}

/// Paths a call's arguments name: the tool's own, or each word of a command that could be one.
fn argument_paths(facts: &Facts<'_>) -> Vec<NamedPath> {
    match &facts.line {
        Some(line) => line
            .path_words()
            .into_iter()
            .map(|w| named(facts.call.workdir, w))
            .collect(),
        None => Vec::new(),
    }
}

/// Whether a deny rule covers reading or writing `path`.
fn names_denied(rules: &PermissionRules, path: &NamedPath) -> bool {
    [
        Subject::Read {
            tool: "bash",
            path: &path.shown,
        },
        Subject::Write {
            tool: "bash",
            path: &path.shown,
        },
    ]
    .iter()
    .any(|s| matches!(rules.evaluate(s), Some(RuleVerdict::Deny(_))))
}

/// The guard a tool's tree walk reads through: secret files and paths a read deny rule covers
/// are withheld, judged as the decision judges a named path.
pub fn read_guard(
    rules: std::sync::Arc<PermissionRules>,
    workdir: PathBuf,
) -> crate::tools::walk::ReadGuard {
    crate::tools::walk::ReadGuard::new(move |path| read_denied(&rules, &workdir, path))
}

/// Whether a deny rule covers reading `path` (resolved), whoever reads it: a tool's walk or an
/// `@` mention.
pub fn read_denied(rules: &PermissionRules, workdir: &Path, path: &Path) -> bool {
    let shown = paths::display(workdir, path);
    matches!(
        rules.evaluate(&Subject::Read {
            tool: "read_file",
            path: &shown,
        }),
        Some(RuleVerdict::Deny(_))
    )
}

/// The first path the call reads (by a read tool's argument or a command's word) that usually
/// holds secrets.
fn secret_named(facts: &Facts<'_>) -> Option<String> {
    facts
        .reads
        .iter()
        .chain(argument_paths(facts).iter())
        .find(|p| protected::is_secret_file(&p.resolved))
        .map(|p| p.shown.clone())
}

/// Files a tree walk by a command may look at before it gives up and asks.
const WALK_LIMIT: usize = 20_000;

/// For a command that reads whole trees (`grep -r KEY .`, `rg KEY`): the first secret or
/// denied file below the directories it names (the working directory when it names none). A
/// tree too large to look through counts as holding one: unsure, so it asks.
fn guarded_below(facts: &Facts<'_>, rules: &PermissionRules) -> Option<String> {
    let line = facts.line.as_ref()?;
    if !line.searches_trees() {
        return None;
    }
    let workdir = facts.call.workdir;
    let mut roots: Vec<PathBuf> = argument_paths(facts)
        .into_iter()
        .filter(|p| p.resolved.is_dir())
        .map(|p| p.resolved)
        .collect();
    if roots.is_empty() {
        roots.push(workdir.to_owned());
    }
    for root in roots {
        // Everything a recursive grep would open: no ignore files, hidden files included.
        let walk = ignore::WalkBuilder::new(&root)
            .standard_filters(false)
            .filter_entry(|entry| entry.file_name() != ".git")
            .build();
        for (seen, entry) in walk.enumerate() {
            if seen >= WALK_LIMIT {
                return Some(format!(
                    "{} (more than {WALK_LIMIT} files, not all checked for secrets)",
                    paths::display(workdir, &root)
                ));
            }
            let Ok(entry) = entry else { continue };
            let path = entry.path();
            if protected::is_secret_file(path) || read_denied(rules, workdir, path) {
                return Some(paths::display(workdir, path));
            }
        }
    }
    None
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
            description: "this call only: leaving the sandbox asks every time".into(),
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

/// This exact call: a command by its text, any other call by its arguments.
fn exact_scope(facts: &Facts<'_>) -> Scope {
    let tool = facts.tool();
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
fn edit_scope() -> Scope {
    Scope {
        key: "edit:workdir".into(),
        description: "file edits inside the working directory".into(),
    }
}

fn prefix_scope(tool: &str, prefix: &str) -> Scope {
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
    let facts = Facts::gather(&call);
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
    match tool.kind() {
        ToolKind::Edit => {
            let [path] = facts.writes.as_slice() else {
                return None;
            };
            (path.inside
                && !protected::is_protected_write(&path.resolved)
                && !path.shown.contains(['*', '?', '[', '{']))
            .then(|| format!("{}({})", tool.name(), path.shown))
        }
        _ => None,
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

#[cfg(test)]
mod tests;
