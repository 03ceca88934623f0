//! Permission rules from `<workdir>/.harness9/settings.json` and `$HARNESS9_HOME/settings.json`:
//! `{"permissions": {"allow": [...], "ask": [...], "deny": [...]}}` with patterns such as
//! `bash(git status*)` or `edit_file(src/**)`. The project file wins over the user's; within a
//! file deny beats ask beats allow. Files are re-read when they change; a malformed one is
//! reported once and ignored, never a crash.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::SystemTime;

use globset::{GlobBuilder, GlobMatcher};
use serde::Deserialize;

/// What a rule says about a call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RuleVerdict {
    Allow(String),
    Ask(String),
    Deny(String),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum List {
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
    text: String,
}

/// The rules of one file.
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

/// What a call is judged by: its tool, and its subject (the command, or the path).
pub struct Subject<'a> {
    pub tool: &'a str,
    pub text: Option<&'a str>,
}

impl RuleSet {
    /// Parses a settings file's text.
    pub fn parse(text: &str) -> Result<RuleSet, String> {
        let file: SettingsFile = serde_json::from_str(text)
            .map_err(|e| format!("it is not valid settings JSON: {e}"))?;
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

    /// The verdict of the strongest matching rule.
    pub fn evaluate(&self, subject: &Subject<'_>) -> Option<RuleVerdict> {
        let is_bash = subject.tool == "bash";
        let parts: Vec<&str> = match (is_bash, subject.text) {
            (true, Some(command)) => split_command(command),
            (_, Some(text)) => vec![text],
            (_, None) => Vec::new(),
        };
        let matches = |rule: &Rule, text: Option<&str>| match (&rule.pattern, text) {
            (None, _) => true,
            (Some(pattern), Some(text)) => pattern.is_match(text),
            (Some(_), None) => false,
        };
        let mut strongest: Option<&Rule> = None;
        // Whether every part of a command is allowed: the same for every allow rule, so once.
        let mut bash_allowed: Option<bool> = None;
        for rule in self
            .rules
            .iter()
            .filter(|r| r.tool == subject.tool || r.tool == "*")
        {
            let hit = match rule.list {
                // Deny and ask when any part of a command matches: `ls && rm -rf x` is an `rm`.
                List::Deny | List::Ask => {
                    parts.iter().any(|p| matches(rule, Some(p)))
                        || subject.text.is_none_or(|t| matches(rule, Some(t)))
                }
                // Allow only when every part does, and nothing is substituted or redirected.
                List::Allow if is_bash => *bash_allowed.get_or_insert_with(|| {
                    let command = subject.text.unwrap_or("");
                    !command.contains(['`', '>', '<'])
                        && !command.contains("$(")
                        && !parts.is_empty()
                        && parts.iter().all(|p| self.allowed_part(p))
                }),
                List::Allow => matches(rule, subject.text),
            };
            if hit && strongest.is_none_or(|s| rule.list > s.list) {
                strongest = Some(rule);
            }
        }
        strongest.map(|rule| match rule.list {
            List::Allow => RuleVerdict::Allow(rule.text.clone()),
            List::Ask => RuleVerdict::Ask(rule.text.clone()),
            List::Deny => RuleVerdict::Deny(rule.text.clone()),
        })
    }

    fn allowed_part(&self, part: &str) -> bool {
        self.rules.iter().any(|r| {
            r.list == List::Allow
                && (r.tool == "bash" || r.tool == "*")
                && r.pattern.as_ref().is_none_or(|p| p.is_match(part))
        })
    }

    pub fn len(&self) -> usize {
        self.rules.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }
}

/// `tool` or `tool(pattern)`.
fn parse_rule(list: List, text: &str) -> Result<Rule, String> {
    let text = text.trim();
    let (tool, pattern) = match text.split_once('(') {
        Some((tool, rest)) => {
            let pattern = rest
                .strip_suffix(')')
                .ok_or_else(|| format!("the rule `{text}` has no closing parenthesis"))?;
            (tool.trim(), Some(pattern))
        }
        None => (text, None),
    };
    if tool.is_empty() {
        return Err(format!("the rule `{text}` names no tool"));
    }
    let pattern = match pattern.filter(|p| !p.is_empty() && *p != "*") {
        Some(pattern) => Some(
            // In a command `*` matches anything; in a path it stays within a directory.
            GlobBuilder::new(pattern)
                .literal_separator(tool != "bash")
                .build()
                .map_err(|e| format!("the rule `{text}` has a bad pattern: {e}"))?
                .compile_matcher(),
        ),
        None => None,
    };
    Ok(Rule {
        list,
        tool: tool.to_owned(),
        pattern,
        text: text.to_owned(),
    })
}

/// The simple commands of a command line.
fn split_command(command: &str) -> Vec<&str> {
    command
        .split(['\n', ';', '|', '&'])
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .collect()
}

/// One settings file, re-read when its modification time changes.
#[derive(Debug)]
struct Source {
    path: PathBuf,
    seen: Option<(SystemTime, u64)>,
    rules: RuleSet,
}

impl Source {
    fn new(path: PathBuf) -> Self {
        Source {
            path,
            seen: None,
            rules: RuleSet::default(),
        }
    }

    /// Re-reads the file when it changed; a problem is returned once per change.
    fn refresh(&mut self) -> Option<String> {
        let stamp = std::fs::metadata(&self.path)
            .ok()
            .map(|m| (m.modified().unwrap_or(SystemTime::UNIX_EPOCH), m.len()));
        if stamp == self.seen {
            return None;
        }
        self.seen = stamp;
        if stamp.is_none() {
            self.rules = RuleSet::default();
            return None;
        }
        let parsed = std::fs::read_to_string(&self.path)
            .map_err(|e| e.to_string())
            .and_then(|text| RuleSet::parse(&text));
        match parsed {
            Ok(rules) => {
                self.rules = rules;
                None
            }
            Err(problem) => {
                self.rules = RuleSet::default();
                Some(format!("{} is ignored: {problem}", self.path.display()))
            }
        }
    }
}

/// The rules of a run: the project's file, then the user's.
#[derive(Debug)]
pub struct PermissionRules {
    sources: Mutex<[Source; 2]>,
    problems: Mutex<Vec<String>>,
}

impl PermissionRules {
    pub fn new(workdir: &Path, home: &Path, _trusted: bool) -> Self {
        PermissionRules {
            sources: Mutex::new([
                Source::new(project_file(workdir)),
                Source::new(home.join("settings.json")),
            ]),
            problems: Mutex::new(Vec::new()),
        }
    }

    /// No rules at all (tests, embedding).
    pub fn none() -> Self {
        Self::new(
            Path::new("/nonexistent-harness9"),
            Path::new("/nonexistent-harness9"),
            false,
        )
    }

    /// The verdict for a call: the project file's if any of its rules matches, else the user's.
    pub fn evaluate(&self, subject: &Subject<'_>) -> Option<RuleVerdict> {
        let Ok(mut sources) = self.sources.lock() else {
            return None;
        };
        for source in sources.iter_mut() {
            if let Some(problem) = source.refresh()
                && let Ok(mut problems) = self.problems.lock()
            {
                tracing::warn!("[rules] {problem}");
                problems.push(problem);
            }
        }
        sources.iter().find_map(|s| s.rules.evaluate(subject))
    }

    /// Problems found since the last call (each reported once).
    pub fn take_problems(&self) -> Vec<String> {
        self.problems
            .lock()
            .map(|mut p| std::mem::take(&mut *p))
            .unwrap_or_default()
    }

    /// Adds `rule` to the project file's allow list (creating the file); returns its path.
    pub fn add_allow(&self, rule: &str) -> std::io::Result<PathBuf> {
        let path = self
            .sources
            .lock()
            .map(|s| s[0].path.clone())
            .map_err(|_| std::io::Error::other("the rules are unavailable"))?;
        let mut value: serde_json::Value = std::fs::read_to_string(&path)
            .ok()
            .and_then(|text| serde_json::from_str(&text).ok())
            .unwrap_or_else(|| serde_json::json!({}));
        if !value.is_object() {
            value = serde_json::json!({});
        }
        let allow = value
            .as_object_mut()
            .map(|root| {
                root.entry("permissions")
                    .or_insert_with(|| serde_json::json!({}))
            })
            .and_then(|permissions| {
                if !permissions.is_object() {
                    *permissions = serde_json::json!({});
                }
                permissions.as_object_mut()
            })
            .map(|permissions| {
                permissions
                    .entry("allow")
                    .or_insert_with(|| serde_json::json!([]))
            });
        if let Some(allow) = allow {
            if !allow.is_array() {
                *allow = serde_json::json!([]);
            }
            if let Some(list) = allow.as_array_mut()
                && !list.iter().any(|r| r == rule)
            {
                list.push(serde_json::json!(rule));
            }
        }
        let text = serde_json::to_string_pretty(&value).map_err(std::io::Error::other)?;
        crate::tools::write_atomic(&path, format!("{text}\n").as_bytes())?;
        Ok(path)
    }
}

/// `<workdir>/.harness9/settings.json`.
pub fn project_file(workdir: &Path) -> PathBuf {
    workdir.join(".harness9").join("settings.json")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(json: &str) -> RuleSet {
        RuleSet::parse(json).unwrap()
    }

    fn verdict(set: &RuleSet, tool: &str, text: &str) -> Option<RuleVerdict> {
        set.evaluate(&Subject {
            tool,
            text: Some(text),
        })
    }

    #[test]
    fn precedence_and_globbing() {
        let set = rules(
            r#"{"permissions": {
            "allow": ["bash(git status*)", "bash(cargo test*)", "edit_file(src/**)", "read_file"],
            "ask": ["bash(git push*)"],
            "deny": ["bash(rm *)", "read_file(**/.env)", "edit_file(src/secret.rs)"]}}"#,
        );
        let allow = |t: &str| matches!(verdict(&set, "bash", t), Some(RuleVerdict::Allow(_)));
        assert!(allow("git status --short"));
        assert!(allow("cargo test -p x && git status"));
        assert!(!allow("cargo build"));
        assert_eq!(verdict(&set, "bash", "cargo build"), None);
        assert!(matches!(
            verdict(&set, "bash", "git push origin main"),
            Some(RuleVerdict::Ask(_))
        ));
        assert!(
            matches!(
                verdict(&set, "bash", "git status && rm -rf target"),
                Some(RuleVerdict::Deny(_))
            ),
            "deny beats allow, part by part"
        );
        assert!(
            !allow("git status > out.txt"),
            "a redirection is never allowed by a prefix"
        );
        assert!(matches!(
            verdict(&set, "edit_file", "src/parser/mod.rs"),
            Some(RuleVerdict::Allow(_))
        ));
        assert!(matches!(
            verdict(&set, "edit_file", "src/secret.rs"),
            Some(RuleVerdict::Deny(_))
        ));
        assert_eq!(verdict(&set, "edit_file", "tests/a.rs"), None);
        assert!(matches!(
            verdict(&set, "read_file", "config/.env"),
            Some(RuleVerdict::Deny(_))
        ));
        assert!(matches!(
            verdict(&set, "read_file", "README.md"),
            Some(RuleVerdict::Allow(_))
        ));
    }

    #[test]
    fn malformed_files_are_reported_once_and_ignored_and_changes_are_reread() {
        let dir = tempfile::tempdir().unwrap();
        let (work, home) = (dir.path().join("w"), dir.path().join("h"));
        std::fs::create_dir_all(work.join(".harness9")).unwrap();
        std::fs::create_dir_all(&home).unwrap();
        std::fs::write(
            home.join("settings.json"),
            r#"{"permissions": {"allow": ["bash(ls*)"], "deny": ["bash(make*)"]}}"#,
        )
        .unwrap();
        std::fs::write(project_file(&work), "{ not json").unwrap();
        let permissions = PermissionRules::new(&work, &home, true);
        let ls = Subject {
            tool: "bash",
            text: Some("ls -la"),
        };
        assert!(
            matches!(permissions.evaluate(&ls), Some(RuleVerdict::Allow(_))),
            "the user's file still applies"
        );
        let problems = permissions.take_problems();
        assert_eq!(problems.len(), 1);
        assert!(problems[0].contains("settings.json is ignored"));
        permissions.evaluate(&ls);
        assert!(permissions.take_problems().is_empty(), "reported once");
        // The project file is fixed: it is re-read and wins.
        std::fs::write(
            project_file(&work),
            r#"{"permissions": {"deny": ["bash(ls*)"], "allow": ["bash(make*)"]}}"#,
        )
        .unwrap();
        assert!(matches!(
            permissions.evaluate(&ls),
            Some(RuleVerdict::Deny(_))
        ));
        let make = Subject {
            tool: "bash",
            text: Some("make all"),
        };
        assert!(
            matches!(permissions.evaluate(&make), Some(RuleVerdict::Allow(_))),
            "the project file wins"
        );
    }

    #[test]
    fn always_allow_writes_the_narrow_rule_into_the_project_file() {
        let dir = tempfile::tempdir().unwrap();
        let work = dir.path().join("w");
        std::fs::create_dir_all(&work).unwrap();
        let permissions = PermissionRules::new(&work, &dir.path().join("h"), true);
        let path = permissions.add_allow("bash(cargo test*)").unwrap();
        permissions.add_allow("bash(cargo test*)").unwrap();
        let written: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(
            written,
            serde_json::json!({"permissions": {"allow": ["bash(cargo test*)"]}})
        );
        let test = Subject {
            tool: "bash",
            text: Some("cargo test --release"),
        };
        assert!(matches!(
            permissions.evaluate(&test),
            Some(RuleVerdict::Allow(_))
        ));
    }
}
