//! What the decision judges a call by, gathered once per call: the paths it reads and writes
//! (resolved, shown as rules match them), its parsed command line and what its arguments name,
//! the strongest rule over all of them, and the secret or denied files its arguments, its tree
//! walks or the git commands that print tracked files reach.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::arguments::{self, ArgumentPaths};
use super::command::CommandLine;
use super::rules::{List, PermissionRules, RuleVerdict, Subject};
use super::{CallInput, git, git_config, history, read_denied_cached, tracked};
use crate::files::paths;
use crate::files::protected;

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
    /// For `bash`: what its arguments name.
    pub arguments: Option<ArgumentPaths>,
    /// `$HARNESS9_HOME`, resolved, when the caller knows it: everything in it is secret.
    home: Option<&'a Path>,
    /// For a tool that reaches one host (`web_fetch`): `domain:HOST`, what rules match.
    pub domain: Option<String>,
}

impl<'a> Facts<'a> {
    pub fn gather(call: &'a CallInput<'a>, home: Option<&'a Path>) -> Self {
        let workdir = call.workdir;
        let resolve_all = |raws: Vec<String>| -> Vec<NamedPath> {
            raws.iter().map(|r| named(workdir, r)).collect()
        };
        let line = bash_command(call).map(CommandLine::parse);
        Facts {
            call,
            reads: resolve_all(call.tool.read_paths(call.arguments)),
            writes: resolve_all(call.tool.written_paths(call.arguments)),
            arguments: line.as_ref().map(|l| arguments::gather(l, workdir)),
            line,
            home,
            domain: call
                .tool
                .domain(call.arguments)
                .map(|host| format!("domain:{host}")),
        }
    }

    pub fn tool(&self) -> &'a str {
        self.call.tool.name()
    }

    /// Whether reading `path` (resolved) asks: a file that usually holds secrets, or anything
    /// in `$HARNESS9_HOME` (the sessions, the serve token, the user's settings).
    pub fn is_secret(&self, path: &Path) -> bool {
        protected::is_secret_file(path) || self.home.is_some_and(|home| path.starts_with(home))
    }

    /// The paths the arguments of a `bash` line name (globs expanded); none for other tools.
    pub fn argument_paths(&self) -> &[NamedPath] {
        self.arguments.as_ref().map_or(&[], |a| a.paths.as_slice())
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
            out.extend(line.open.iter().map(|t| Subject::OpenCommand(t)));
        }
        if out.is_empty() {
            out.push(Subject::Call {
                tool,
                text: self.domain.as_deref(),
            });
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

/// Why what a call reads needs the user before it runs.
pub(super) enum Guarded {
    /// A file that usually holds secrets (or one a deny rule covers) that the call reads or
    /// may print, as shown, with what makes it so when that is not the name alone.
    Secret(String),
    /// What the call reads could not be worked out, and why.
    Unsure(String),
}

impl Guarded {
    /// Why plan mode refuses the call.
    pub fn plan_reason(&self) -> String {
        match self {
            Guarded::Secret(path) => format!("{path} usually holds secrets"),
            Guarded::Unsure(why) => format!("this command: {why}"),
        }
    }

    /// Why the call asks.
    pub fn ask_reason(&self, tool: &str) -> String {
        match self {
            Guarded::Secret(path) => {
                format!("`{tool}` reads {path}, a file that usually holds secrets")
            }
            Guarded::Unsure(why) => format!("`{tool}` runs a command, and {why}"),
        }
    }
}

/// The first thing the call reads that needs the user: a secret it names (a glob's matches
/// included), one below a tree it searches, one git tracks when it prints tracked files, or
/// files it names that could not be worked out.
pub(super) fn guarded(facts: &Facts<'_>, rules: &PermissionRules) -> Option<Guarded> {
    secret_named(facts)
        .map(Guarded::Secret)
        .or_else(|| guarded_below(facts, rules).map(Guarded::Secret))
        .or_else(|| tracked_secret(facts, rules))
        .or_else(|| git_configuration(facts).map(Guarded::Unsure))
        .or_else(|| {
            facts
                .arguments
                .as_ref()
                .and_then(|a| a.unsure_expansion.clone())
                .map(Guarded::Unsure)
        })
}

/// The first path the call reads (by a read tool's argument or a command's word) that usually
/// holds secrets.
pub(super) fn secret_named(facts: &Facts<'_>) -> Option<String> {
    facts
        .reads
        .iter()
        .chain(facts.argument_paths())
        .find(|p| facts.is_secret(&p.resolved))
        .map(|p| p.shown.clone())
}

/// Files a tree walk by a command may look at before it gives up and asks.
pub(super) const WALK_LIMIT: usize = 20_000;

/// For a command that reads whole trees (`grep -r KEY .`, `rg KEY`, `git grep --untracked`):
/// the first secret or denied file below the directories it names (where it runs when it names
/// none); for `diff` and `git diff --no-index` (and `git diff` outside a repository, which is
/// the same), below the directories it compares. Symbolic links are followed (`grep -R` does)
/// and judged by what they point to as well. A tree too large to look through counts as
/// holding one: unsure, so it asks.
pub(super) fn guarded_below(facts: &Facts<'_>, rules: &PermissionRules) -> Option<String> {
    let line = facts.line.as_ref()?;
    let arguments = facts.arguments.as_ref()?;
    let searches = line.searches_trees();
    let workdir = facts.call.workdir;
    let commands = &line.parsed.commands;
    let diffs = commands
        .iter()
        .any(|c| c.program() == "diff" || git::diffs_paths(c, false))
        || (commands.iter().any(|c| git::diffs_paths(c, true)) && !tracked::in_repository(workdir));
    if !searches && !diffs {
        return None;
    }
    let mut roots: Vec<PathBuf> = arguments
        .paths
        .iter()
        .filter(|p| p.resolved.is_dir())
        .map(|p| p.resolved.clone())
        .collect();
    if roots.is_empty() && searches {
        roots.clone_from(&arguments.directories);
    }
    for root in roots {
        // Everything a recursive grep would open: no ignore files, hidden files included.
        let walk = ignore::WalkBuilder::new(&root)
            .standard_filters(false)
            .follow_links(true)
            .filter_entry(|entry| entry.file_name() != ".git")
            .build();
        let withheld =
            |path: &Path| facts.is_secret(path) || read_denied_cached(rules, workdir, path);
        for (seen, entry) in walk.enumerate() {
            if seen >= WALK_LIMIT {
                return Some(format!(
                    "{} (more than {WALK_LIMIT} files, not all checked for secrets)",
                    paths::display(workdir, &root)
                ));
            }
            let Ok(entry) = entry else { continue };
            let path = entry.path();
            if withheld(path) {
                return Some(paths::display(workdir, path));
            }
            if entry.path_is_symlink()
                && let Ok(target) = path.canonicalize()
                && withheld(&target)
            {
                return Some(format!(
                    "{} (a link to {})",
                    paths::display(workdir, path),
                    paths::display(workdir, &target)
                ));
            }
        }
    }
    None
}

/// For a git command that prints the contents of tracked files (`git grep`, `git show`,
/// `git log -p`...): the first tracked file that usually holds secrets or that a read deny rule
/// covers, in the repository of every directory the line runs git in. Tracked files that
/// cannot be listed count as unsure.
fn tracked_secret(facts: &Facts<'_>, rules: &PermissionRules) -> Option<Guarded> {
    let line = facts.line.as_ref()?;
    let workdir = facts.call.workdir;
    let sub = line.parsed.commands.iter().find_map(git::prints_tracked)?;
    let directories = match git_directories(facts, |c| git::prints_tracked(c).is_some()) {
        Ok(directories) => directories,
        Err(why) => {
            return Some(Guarded::Unsure(format!(
                "`git {sub}` prints the files git tracks, and which repository it reads is \
                 not known: {why}"
            )));
        }
    };
    let deny_reads = rules.has_rules(
        List::Deny,
        &Subject::Read {
            tool: "read_file",
            path: "",
        },
    );
    for directory in &directories {
        let tracked = match tracked::tracked(directory) {
            Ok(Some(tracked)) => tracked,
            Ok(None) => continue,
            Err(why) => {
                return Some(Guarded::Unsure(format!(
                    "`git {sub}` prints the files git tracks, and they could not be listed: {why}"
                )));
            }
        };
        let in_home = facts.home.is_some_and(|h| h.starts_with(&tracked.toplevel));
        let secret = tracked.secrets.first().or_else(|| {
            tracked.files.iter().find(|f| {
                (in_home && facts.is_secret(f))
                    || (deny_reads && read_denied_cached(rules, workdir, f))
            })
        });
        if let Some(file) = secret {
            return Some(Guarded::Secret(format!(
                "{} (git tracks it, and `git {sub}` prints what git tracks)",
                paths::display(workdir, file)
            )));
        }
    }
    history_secret(facts, sub, &directories)
}

/// For a git command that may print past versions (`git log -p`, `git show REV`,
/// `git cat-file -p BLOB`...): a secret-looking path that the history of a repository it runs
/// in holds, though the index no longer tracks it; a history that cannot be listed in time
/// counts as unsure.
fn history_secret(facts: &Facts<'_>, sub: &str, directories: &[PathBuf]) -> Option<Guarded> {
    let line = facts.line.as_ref()?;
    let printing: Vec<_> = line
        .parsed
        .commands
        .iter()
        .filter(|c| git::prints_history(c))
        .collect();
    if printing.is_empty() {
        return None;
    }
    if printing.iter().any(|c| git::prints_any_object(c)) {
        return Some(Guarded::Unsure(format!(
            "`git {sub}` prints whatever objects it is given, unreachable ones (a deleted \
             file's contents) included"
        )));
    }
    let ids: Vec<String> = printing
        .iter()
        .flat_map(|c| git::named_object_ids(c))
        .collect();
    for directory in directories {
        match history::secret_in_history(directory) {
            Ok(None) => {}
            Ok(Some(path)) => {
                return Some(Guarded::Secret(format!(
                    "{} (in the repository's history, and `git {sub}` can print past versions)",
                    path.display()
                )));
            }
            Err(why) => {
                return Some(Guarded::Unsure(format!(
                    "`git {sub}` can print past versions of files, and the history could not \
                     be checked for secrets: {why}"
                )));
            }
        }
        if ids.is_empty() {
            continue;
        }
        match history::unreachable_object(directory, &ids) {
            Ok(None) => {}
            Ok(Some(id)) => {
                return Some(Guarded::Unsure(format!(
                    "`git {sub}` names the object {id}, which no branch, tag or reflog reaches \
                     (a deleted file's contents live on in such objects)"
                )));
            }
            Err(why) => {
                return Some(Guarded::Unsure(format!(
                    "`git {sub}` names an object by its id, and whether the history reaches \
                     it could not be checked: {why}"
                )));
            }
        }
    }
    None
}

/// The directories the git commands of a line that `selected` picks run in (where the line
/// runs, moved by their `-C` options), each once; or why they cannot be known.
fn git_directories(
    facts: &Facts<'_>,
    selected: impl Fn(&crate::shell::SimpleCommand) -> bool,
) -> Result<Vec<PathBuf>, String> {
    let (Some(line), Some(arguments)) = (facts.line.as_ref(), facts.arguments.as_ref()) else {
        return Ok(Vec::new());
    };
    let mut directories: Vec<PathBuf> = Vec::new();
    for command in line.parsed.commands.iter().filter(|c| selected(c)) {
        if let Some(why) = &arguments.unsure_directory {
            return Err(why.clone());
        }
        // `git -C DIR` reads DIR's repository.
        let moves = git::moves(command).map_err(|why| why.to_string())?;
        for base in &arguments.directories {
            let directory = moves
                .iter()
                .fold(base.clone(), |at, dir| paths::resolve(&at, dir));
            if !directories.contains(&directory) {
                directories.push(directory);
            }
        }
    }
    Ok(directories)
}

/// For a line that runs git: why the configuration of a repository it runs in (which the
/// repository, not the user, controls) could make git run a program, when it could.
fn git_configuration(facts: &Facts<'_>) -> Option<String> {
    let directories = match git_directories(facts, |c| c.program() == "git") {
        Ok(directories) => directories,
        Err(why) => return Some(format!("which repository git reads is not known: {why}")),
    };
    directories
        .iter()
        .find_map(|directory| git_config::check(directory).err())
        .map(|why| format!("{why}, so git is not run unasked"))
}
