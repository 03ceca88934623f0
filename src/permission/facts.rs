//! What the decision judges a call by, gathered once per call: the paths it reads and writes
//! (resolved, shown as rules match them), its parsed command line, the strongest rule over all
//! of them, and the secret or denied files its arguments or its tree walks reach.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::command::CommandLine;
use super::protected;
use super::rules::{PermissionRules, RuleVerdict, Subject};
use super::{CallInput, read_denied_cached};
use crate::tools::paths;

/// A path a call names, resolved once: the form rules match (relative inside the working
/// directory, absolute outside) and whether it is inside.
pub(super) struct NamedPath {
    pub resolved: PathBuf,
    pub shown: String,
    pub inside: bool,
}

pub(super) fn named(workdir: &Path, raw: &str) -> NamedPath {
    let resolved = paths::resolve(workdir, raw);
    NamedPath {
        shown: paths::display(workdir, &resolved),
        inside: paths::is_inside(workdir, &resolved),
        resolved,
    }
}

/// Everything the decision judges a call by, gathered once.
pub(super) struct Facts<'a> {
    pub call: &'a CallInput<'a>,
    pub reads: Vec<NamedPath>,
    pub writes: Vec<NamedPath>,
    /// For `bash`: the parsed line.
    pub line: Option<CommandLine>,
}

impl<'a> Facts<'a> {
    pub fn gather(call: &'a CallInput<'a>) -> Self {
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

    pub fn tool(&self) -> &'static str {
        self.call.tool.name()
    }

    /// Every rule subject of the call.
    pub fn subjects(&self) -> Vec<Subject<'_>> {
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
pub(super) fn bash_command<'a>(call: &CallInput<'a>) -> Option<&'a str> {
    (call.tool.name() == "bash")
        .then(|| call.arguments.get("command").and_then(Value::as_str))
        .flatten()
}

/// The strongest rule over all of a call's subjects, deny first.
pub(super) fn strongest(rules: &PermissionRules, subjects: &[Subject<'_>]) -> Option<RuleVerdict> {
    let verdicts: Vec<RuleVerdict> = subjects
        .iter()
        .filter_map(|s| rules.evaluate_cached(s))
        .collect();
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

/// Whether default mode may run `line` unasked: plain, accepted by the read-only classifier,
/// and no argument that could not be judged as a path (`~` expands to the home directory).
/// Arguments naming secret or denied files were judged before.
pub(super) fn reads_only(line: &CommandLine, text: &str) -> bool {
    line.is_plain()
        && !line.path_words().iter().any(|w| w.starts_with('~'))
        && crate::planning::readonly::check(text).is_ok()
}

/// Paths a call's arguments name: the tool's own, or each word of a command that could be one.
pub(super) fn argument_paths(facts: &Facts<'_>) -> Vec<NamedPath> {
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
pub(super) fn names_denied(rules: &PermissionRules, path: &NamedPath) -> bool {
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
    .any(|s| matches!(rules.evaluate_cached(s), Some(RuleVerdict::Deny(_))))
}

/// The first path the call reads (by a read tool's argument or a command's word) that usually
/// holds secrets.
pub(super) fn secret_named(facts: &Facts<'_>) -> Option<String> {
    facts
        .reads
        .iter()
        .chain(argument_paths(facts).iter())
        .find(|p| protected::is_secret_file(&p.resolved))
        .map(|p| p.shown.clone())
}

/// Files a tree walk by a command may look at before it gives up and asks.
pub(super) const WALK_LIMIT: usize = 20_000;

/// For a command that reads whole trees (`grep -r KEY .`, `rg KEY`): the first secret or
/// denied file below the directories it names (the working directory when it names none). A
/// tree too large to look through counts as holding one: unsure, so it asks.
pub(super) fn guarded_below(facts: &Facts<'_>, rules: &PermissionRules) -> Option<String> {
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
            if protected::is_secret_file(path) || read_denied_cached(rules, workdir, path) {
                return Some(paths::display(workdir, path));
            }
        }
    }
    None
}
