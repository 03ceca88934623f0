//! Hooks (issue 15). Inside, the tool-call chain (`chain`): every call passes through stages
//! before it runs (observability, output bounds, the user's command hooks, the permission
//! decision) and back through them in reverse after; the engine calls the chain and nothing
//! else. Outside, command hooks from the settings files (`settings`), run at six moments as
//! CONTRACT "Hooks" says (`command` runs one, `outcome` reads what it said). A hook that is
//! slow, crashes, prints garbage or is missing is a notice, never the end of a session.

pub mod chain;
pub mod command;
pub mod outcome;
pub mod settings;
mod stages;

use std::path::{Path, PathBuf};

use futures_util::future::join_all;
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

pub use chain::{ChainCall, Gate, Passed, Step, ToolChain, ToolHook};
pub use outcome::{Permission, Said};
pub use settings::{CommandHook, HookEvent, HookSources, LoadedHooks, Matcher, Origin};
pub use stages::{CommandStage, ObserveStage, OutputBound, PermissionStage};

/// The command hooks of a session, read once at start.
#[derive(Debug, Default)]
pub struct Hooks {
    hooks: Vec<CommandHook>,
    workdir: PathBuf,
}

impl Hooks {
    /// No hooks (tests, embedding).
    pub fn none() -> Self {
        Self::default()
    }

    pub fn new(hooks: Vec<CommandHook>, workdir: impl Into<PathBuf>) -> Self {
        Hooks {
            hooks,
            workdir: workdir.into(),
        }
    }

    /// Every configured hook, in the order of the files (`/hooks`).
    pub fn all(&self) -> &[CommandHook] {
        &self.hooks
    }

    /// One line per hook: its event, matcher, command and the file it comes from (`/hooks`).
    pub fn describe(&self) -> Vec<String> {
        self.hooks
            .iter()
            .map(|h| {
                let matcher = if h.event.is_tool_event() {
                    format!(" [{}]", h.matcher.describe())
                } else {
                    String::new()
                };
                let origin = match h.origin {
                    Origin::User => "user",
                    Origin::Project => "project, approved",
                };
                format!(
                    "{}{matcher}: {} (timeout {}s) from {} ({origin})",
                    h.event.name(),
                    h.command,
                    h.timeout.as_secs_f64(),
                    h.file.display()
                )
            })
            .collect()
    }

    pub fn workdir(&self) -> &Path {
        &self.workdir
    }

    /// The hooks `event` runs (for `tool`, on a tool event); the same command configured
    /// twice runs once.
    pub fn matching(&self, event: HookEvent, tool: Option<&str>) -> Vec<&CommandHook> {
        let mut out: Vec<&CommandHook> = Vec::new();
        for hook in &self.hooks {
            let applies = hook.event == event
                && (!event.is_tool_event() || tool.is_some_and(|t| hook.matcher.matches(t)));
            if applies
                && !out
                    .iter()
                    .any(|h| h.command == hook.command && h.timeout == hook.timeout)
            {
                out.push(hook);
            }
        }
        out
    }

    /// What the status line shows while `event`'s hooks run, or `None` when none would.
    pub fn running_label(&self, event: HookEvent, tool: Option<&str>) -> Option<String> {
        let matching = self.matching(event, tool);
        match matching.as_slice() {
            [] => None,
            [one] => Some(outcome::label(one)),
            [first, rest @ ..] => Some(format!("{} (+{} more)", outcome::label(first), rest.len())),
        }
    }

    /// Runs every hook of `event` that applies, all at once, and combines what they said.
    /// `fields` are the event's own (`tool_name`, `prompt`, ...).
    pub async fn run(
        &self,
        event: HookEvent,
        tool: Option<&str>,
        session_id: &str,
        fields: Map<String, Value>,
        cancel: &CancellationToken,
    ) -> Said {
        let matching = self.matching(event, tool);
        if matching.is_empty() {
            return Said::default();
        }
        let mut input = json!({
            "session_id": session_id,
            "cwd": self.workdir,
            "hook_event_name": event.name(),
        });
        if let Some(object) = input.as_object_mut() {
            object.extend(fields);
        }
        let bytes = input.to_string().into_bytes();
        let runs = matching.iter().map(|hook| {
            let bytes = &bytes;
            async move {
                let ran =
                    command::run(&hook.command, bytes, &self.workdir, hook.timeout, cancel).await;
                outcome::interpret(hook, &ran)
            }
        });
        outcome::combine(join_all(runs).await)
    }
}
