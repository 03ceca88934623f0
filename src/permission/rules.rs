//! Permission rules from every settings file at once: `$HARNESS9_HOME/settings.json` (the
//! user's), `<workdir>/.harness9/settings.json` and `<workdir>/.harness9/settings.local.json`
//! (the project's). `{"permissions": {"allow": [...], "ask": [...], "deny": [...]}}` with patterns
//! such as `bash(git status*)` or `edit_file(src/**)`. Whichever file holds them, deny beats ask
//! beats allow, so a project can never lift the user's deny; in an untrusted folder the project's
//! allow rules are ignored (said once). Files are re-read when they change; a malformed one is
//! reported once and ignored, never a crash.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use globset::{GlobBuilder, GlobMatcher};
use serde::Deserialize;

#[path = "rules_source.rs"]
mod source;
use source::Source;

/// What a rule says about a call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RuleVerdict {
    Allow(String),
    Ask(String),
    Deny(String),
}

/// Which list a rule is in; the order is the strength (deny beats ask beats allow).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum List {
    Allow,
    Ask,
    Deny,
}

#[derive(Debug, Clone)]
struct Rule {
    list: List,
    tool: String,
    /// `None` matches every call of the tool.
    pattern: Option<GlobMatcher>,
    /// For a `bash` rule: its pattern's first word, which `Subject::OpenCommand` is matched by.
    /// `None` matches every program.
    program: Option<GlobMatcher>,
    text: String,
}

/// The rules of one file.
/// A settings file or a rule that does not parse.
#[derive(Debug, thiserror::Error)]
pub enum RuleError {
    #[error("it is not valid settings JSON: {0}")]
    Json(#[source] serde_json::Error),
    #[error("the rule `{rule}` has no closing parenthesis")]
    Unclosed { rule: String },
    #[error("the rule `{rule}` names no tool")]
    NoTool { rule: String },
    #[error("the rule `{rule}` has a bad pattern: {source}")]
    BadPattern {
        rule: String,
        #[source]
        source: globset::Error,
    },
    /// A rule given on the command line, as given (`exec --allow/--deny`).
    #[error("{given:?}: {source}")]
    Given {
        given: String,
        #[source]
        source: Box<RuleError>,
    },
}

#[derive(Debug, Clone, Default)]
pub struct RuleSet {
    rules: Vec<Rule>,
}

#[derive(Deserialize, Default)]
struct SettingsFile {
    #[serde(default)]
    permissions: PermissionLists,
}

#[derive(Deserialize, Default)]
struct PermissionLists {
    #[serde(default)]
    allow: Vec<String>,
    #[serde(default)]
    ask: Vec<String>,
    #[serde(default)]
    deny: Vec<String>,
}

/// What a rule is asked about. Path rules are concerns, not tools: `read_file(...)` covers every
/// read of the path by any tool, `edit_file(...)`/`write_file(...)` every write (CONTRACT: a deny
/// rule on a path covers every tool that reads or writes it).
#[derive(Debug, Clone, Copy)]
pub enum Subject<'a> {
    /// `tool` reads `path` (shown relative to the working directory when inside it).
    Read { tool: &'a str, path: &'a str },
    /// `tool` writes `path`.
    Write { tool: &'a str, path: &'a str },
    /// One simple command of a `bash` line, its program normalised (`/bin/rm` → `rm`).
    Command(&'a str),
    /// A command whose arguments are only partly known before it runs (`xargs rm`,
    /// `find -exec rm -r {} +`, and `find -delete` as `rm`): any argument could follow. An
    /// allow rule must match it as written; a deny or ask rule matches it when the rule's
    /// first word matches its program, whatever the rest of the rule says.
    OpenCommand(&'a str),
    /// Any other call: its tool, and the text rules match it by (if any).
    Call {
        tool: &'a str,
        text: Option<&'a str>,
    },
}

impl Subject<'_> {
    fn text(&self) -> Option<&str> {
        match self {
            Subject::Read { path, .. } | Subject::Write { path, .. } => Some(path),
            Subject::Command(text) | Subject::OpenCommand(text) => Some(text),
            Subject::Call { text, .. } => *text,
        }
    }
}

impl Rule {
    /// Whether this rule speaks about `subject` at all (ignoring its pattern).
    fn concerns(&self, subject: &Subject<'_>) -> bool {
        let tool = self.tool.as_str();
        tool == "*"
            || match subject {
                Subject::Read { tool: by, .. } => tool == "read_file" || tool == *by,
                Subject::Write { tool: by, .. } => {
                    matches!(tool, "edit_file" | "write_file") || tool == *by
                }
                Subject::Command(_) | Subject::OpenCommand(_) => tool == "bash",
                Subject::Call { tool: by, .. } => tool == *by || mcp_server_covers(tool, by),
            }
    }

    fn matches(&self, subject: &Subject<'_>) -> bool {
        if !self.concerns(subject) {
            return false;
        }
        if let Subject::OpenCommand(text) = subject
            && self.list != List::Allow
        {
            let program = text.split(' ').next().unwrap_or(text);
            return self.pattern.is_none()
                || self.program.as_ref().is_none_or(|p| p.is_match(program));
        }
        match (&self.pattern, subject.text()) {
            (None, _) => true,
            (Some(pattern), Some(text)) => pattern.is_match(text),
            (Some(_), None) => false,
        }
    }
}

/// `mcp__srv` and `mcp__srv__*` cover every tool of the MCP server `srv`, whose tools are
/// `mcp__srv__<tool>` (a server's part of a name never holds `__`, so the prefix cannot reach
/// into another server's tools).
fn mcp_server_covers(rule_tool: &str, call_tool: &str) -> bool {
    let server = rule_tool.strip_suffix("__*").unwrap_or(rule_tool);
    let Some(name) = server.strip_prefix("mcp__") else {
        return false;
    };
    if name.is_empty() || name.contains("__") {
        return false;
    }
    call_tool
        .strip_prefix(server)
        .and_then(|rest| rest.strip_prefix("__"))
        .is_some_and(|tool| !tool.is_empty())
}

impl RuleSet {
    /// Parses a settings file's text.
    pub fn parse(text: &str) -> Result<RuleSet, RuleError> {
        let file: SettingsFile = serde_json::from_str(text).map_err(RuleError::Json)?;
        let mut rules = Vec::new();
        for (list, patterns) in [
            (List::Allow, &file.permissions.allow),
            (List::Ask, &file.permissions.ask),
            (List::Deny, &file.permissions.deny),
        ] {
            for text in patterns {
                rules.push(parse_rule(list, text)?);
            }
        }
        Ok(RuleSet { rules })
    }

    /// The strongest rule of this set matching `subject`, allow rules only when `with_allow`.
    fn strongest(&self, subject: &Subject<'_>, with_allow: bool) -> Option<&Rule> {
        self.rules
            .iter()
            .filter(|rule| with_allow || rule.list != List::Allow)
            .filter(|rule| rule.matches(subject))
            .max_by_key(|rule| rule.list)
    }

    fn has(&self, list: List, subject: &Subject<'_>) -> bool {
        self.rules
            .iter()
            .any(|rule| rule.list == list && rule.concerns(subject))
    }

    /// Rules given on the command line for one run (`exec --allow/--deny`), in the settings'
    /// syntax; the first that does not parse is the error.
    pub fn from_lists(allow: &[String], deny: &[String]) -> Result<RuleSet, RuleError> {
        let mut rules = Vec::new();
        for (list, patterns) in [(List::Allow, allow), (List::Deny, deny)] {
            for text in patterns {
                rules.push(parse_rule(list, text).map_err(|e| RuleError::Given {
                    given: text.clone(),
                    source: Box::new(e),
                })?);
            }
        }
        Ok(RuleSet { rules })
    }

    pub fn len(&self) -> usize {
        self.rules.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }
}

/// `tool` or `tool(pattern)`.
fn parse_rule(list: List, text: &str) -> Result<Rule, RuleError> {
    let text = text.trim();
    let (tool, pattern) = match text.split_once('(') {
        Some((tool, rest)) => {
            let pattern = rest.strip_suffix(')').ok_or_else(|| RuleError::Unclosed {
                rule: text.to_owned(),
            })?;
            (tool.trim(), Some(pattern))
        }
        None => (text, None),
    };
    if tool.is_empty() {
        return Err(RuleError::NoTool {
            rule: text.to_owned(),
        });
    }
    let pattern = pattern.filter(|p| !p.is_empty() && *p != "*");
    // In a command `*` matches anything; in a path it stays within a directory.
    let compile = |glob: &str| {
        GlobBuilder::new(glob)
            .literal_separator(tool != "bash")
            .build()
            .map(|g| g.compile_matcher())
            .map_err(|source| RuleError::BadPattern {
                rule: text.to_owned(),
                source,
            })
    };
    let program = match pattern {
        Some(pattern) if tool == "bash" => {
            let first = pattern.split_whitespace().next().unwrap_or(pattern);
            (first != "*").then(|| compile(first)).transpose()?
        }
        _ => None,
    };
    Ok(Rule {
        list,
        tool: tool.to_owned(),
        pattern: pattern.map(compile).transpose()?,
        program,
        text: text.to_owned(),
    })
}

/// Who wrote a settings file: the user's own rules always count; a project's allow rules only
/// in a trusted folder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Origin {
    User,
    Project,
}

#[derive(Debug)]
struct State {
    sources: Vec<Source>,
    /// Whether the untrusted folder's ignored allow rules were already mentioned.
    untrusted_said: bool,
}

/// The rules of a run: the user's file and the project's two, applied together.
#[derive(Debug)]
pub struct PermissionRules {
    state: Mutex<State>,
    /// The run's own rules (`exec --allow/--deny`): the user's, applied with the files' rules
    /// (so an `--allow` never lifts a deny of any file).
    run: RuleSet,
    problems: Mutex<Vec<String>>,
    trusted: bool,
    local_file: PathBuf,
    /// `$HARNESS9_HOME`, resolved: every path in it is secret to read and protected to write.
    home: PathBuf,
}

impl PermissionRules {
    /// The rules of `workdir` and of the user's `home` (`$HARNESS9_HOME`). In an untrusted
    /// folder (`trusted == false`) the project files' allow rules are ignored; their deny and ask
    /// rules still apply.
    pub fn new(workdir: &Path, home: &Path, trusted: bool) -> Self {
        let rules = PermissionRules {
            run: RuleSet::default(),
            state: Mutex::new(State {
                sources: vec![
                    Source::new(home.join("settings.json"), Origin::User),
                    Source::new(project_file(workdir), Origin::Project),
                    Source::new(local_file(workdir), Origin::Project),
                ],
                untrusted_said: false,
            }),
            problems: Mutex::new(Vec::new()),
            trusted,
            local_file: local_file(workdir),
            home: crate::files::paths::resolve(workdir, &home.to_string_lossy()),
        };
        // The allow rules the session starts with are read now; later ones wait (point 4).
        rules.refresh();
        rules
    }

    /// These rules, plus the run's own (`exec --allow/--deny`).
    pub fn with_run_rules(mut self, run: RuleSet) -> Self {
        self.run = run;
        self
    }

    /// `$HARNESS9_HOME`, resolved (symlinks too): the user's settings, sessions, serve token and
    /// trusted folders.
    pub fn home(&self) -> &Path {
        &self.home
    }

    /// Whether `path` (resolved) lies in `$HARNESS9_HOME`.
    pub fn in_home(&self, path: &Path) -> bool {
        path.starts_with(&self.home)
    }

    /// Whether the folder is trusted (its allow rules count).
    pub fn trusted(&self) -> bool {
        self.trusted
    }

    /// No rules at all (tests, embedding).
    pub fn none() -> Self {
        let nowhere = Path::new("/nonexistent-harness9");
        Self::new(nowhere, nowhere, true)
    }

    /// Re-reads the files that changed since the last look (a `stat` each). `evaluate` does
    /// this itself; a caller asking many questions at once refreshes once and then uses
    /// `evaluate_cached`.
    pub fn refresh(&self) {
        self.with_sources(true, |_| ());
    }

    /// Runs `look` over the sources that count, each with whether its allow rules count;
    /// re-reads changed files first when `refresh`.
    fn with_sources<T>(
        &self,
        refresh: bool,
        look: impl FnOnce(&[(&RuleSet, bool)]) -> T,
    ) -> Option<T> {
        let Ok(mut state) = self.state.lock() else {
            return None;
        };
        if !refresh {
            let mut sets: Vec<(&RuleSet, bool)> = state
                .sources
                .iter()
                .map(|s| (&s.rules, self.trusted || s.origin == Origin::User))
                .collect();
            sets.push((&self.run, true));
            return Some(look(&sets));
        }
        let mut found = Vec::new();
        for source in state.sources.iter_mut() {
            found.extend(source.refresh());
        }
        let ignored_allows = !self.trusted
            && state.sources.iter().any(|s| {
                s.origin == Origin::Project && s.rules.rules.iter().any(|r| r.list == List::Allow)
            });
        if ignored_allows && !state.untrusted_said {
            state.untrusted_said = true;
            found.push(
                "this folder is not trusted: the allow rules of its .harness9/settings*.json \
                 are ignored (its deny and ask rules still apply)"
                    .to_owned(),
            );
        }
        if !found.is_empty()
            && let Ok(mut problems) = self.problems.lock()
        {
            for problem in found {
                tracing::warn!("[rules] {problem}");
                problems.push(problem);
            }
        }
        let mut sets: Vec<(&RuleSet, bool)> = state
            .sources
            .iter()
            .map(|s| (&s.rules, self.trusted || s.origin == Origin::User))
            .collect();
        sets.push((&self.run, true));
        Some(look(&sets))
    }

    /// The strongest rule of all files matching `subject`: deny beats ask beats allow,
    /// whichever file holds them.
    pub fn evaluate(&self, subject: &Subject<'_>) -> Option<RuleVerdict> {
        self.refresh();
        self.evaluate_cached(subject)
    }

    /// `evaluate` without looking at the files again (after a `refresh`).
    pub fn evaluate_cached(&self, subject: &Subject<'_>) -> Option<RuleVerdict> {
        self.with_sources(false, |sets| {
            sets.iter()
                .filter_map(|(set, with_allow)| set.strongest(subject, *with_allow))
                .max_by_key(|rule| rule.list)
                .map(|rule| match rule.list {
                    List::Allow => RuleVerdict::Allow(rule.text.clone()),
                    List::Ask => RuleVerdict::Ask(rule.text.clone()),
                    List::Deny => RuleVerdict::Deny(rule.text.clone()),
                })
        })
        .flatten()
    }

    /// Whether any file holds a rule of `list` about subjects like `subject` (whatever its
    /// pattern): a command that cannot be read cannot be proven to miss a `bash` deny rule.
    pub fn has_rules(&self, list: List, subject: &Subject<'_>) -> bool {
        self.with_sources(false, |sets| {
            sets.iter().any(|(set, with_allow)| {
                (list != List::Allow || *with_allow) && set.has(list, subject)
            })
        })
        .unwrap_or(false)
    }

    /// Problems found since the last call (each reported once).
    pub fn take_problems(&self) -> Vec<String> {
        self.problems
            .lock()
            .map(|mut p| std::mem::take(&mut *p))
            .unwrap_or_default()
    }

    /// Accepts `rule` as an allow rule of the local file before harness9 writes it there for
    /// the user ("always allow"), so it counts when the file is read again.
    pub fn accept_local_allow(&self, rule: &str) {
        if let Ok(mut state) = self.state.lock()
            && let Some(source) = state.sources.iter_mut().find(|s| s.path == self.local_file)
        {
            source.accept(rule);
        }
    }

    /// The allow rules added to the files during the session and held back, by file.
    pub fn pending_allows(&self) -> Vec<(PathBuf, Vec<String>)> {
        self.refresh();
        self.state
            .lock()
            .map(|state| {
                state
                    .sources
                    .iter()
                    .filter(|s| !s.pending.is_empty())
                    .map(|s| (s.path.clone(), s.pending.iter().cloned().collect()))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The user confirmed the held allow rules: they count from now on. Returns them.
    pub fn confirm_pending(&self) -> Vec<String> {
        self.refresh();
        let confirmed = self
            .state
            .lock()
            .map(|mut state| {
                state
                    .sources
                    .iter_mut()
                    .flat_map(|s| s.confirm_pending())
                    .collect()
            })
            .unwrap_or_default();
        self.refresh();
        confirmed
    }

    /// Where "always allow" writes: `<workdir>/.harness9/settings.local.json`.
    pub fn local_file(&self) -> &Path {
        &self.local_file
    }
}

/// `<workdir>/.harness9/settings.json`: the project's shared rules.
pub fn project_file(workdir: &Path) -> PathBuf {
    workdir.join(".harness9").join("settings.json")
}

/// `<workdir>/.harness9/settings.local.json`: personal rules, git-ignored.
pub fn local_file(workdir: &Path) -> PathBuf {
    workdir.join(".harness9").join("settings.local.json")
}

#[cfg(test)]
#[path = "rules_tests.rs"]
mod tests;
