//! The command hooks of the moments that are not tool calls (CONTRACT "Hooks"): `SessionStart`
//! and `UserPromptSubmit` before a prompt reaches the model (their stdout becomes context, an
//! exit 2 of the latter drops the prompt), `Stop` when the model is done (a block keeps the run
//! going with the reason as the next instruction, at most `MAX_STOP_BLOCKS` times in a row),
//! `PreCompact` before the history is compacted. Each shows on the status line while it runs,
//! and what hooks say reaches the user as notices.

use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use super::AgentEngine;
use super::emitter::Emitter;
use super::event::{Event, EventKind};
use crate::hooks::{HookEvent, Said};

/// How many times in a row a `Stop` hook may keep a run going (CONTRACT "Hooks").
pub(crate) const MAX_STOP_BLOCKS: u32 = 3;

impl AgentEngine {
    /// Tells the front ends a hook runs (`Some`) or ended (`None`).
    pub(super) async fn hook_running(
        &self,
        turn: u32,
        label: Option<String>,
        em: &mut dyn Emitter,
    ) {
        em.emit(Event {
            turn,
            kind: EventKind::HookRunning(label),
        })
        .await;
    }

    /// Runs the hooks of a moment that is not a tool call; what they said as notices.
    pub(super) async fn event_hooks(
        &self,
        turn: u32,
        event: HookEvent,
        fields: Map<String, Value>,
        cancel: &CancellationToken,
        em: &mut dyn Emitter,
    ) -> Said {
        let Some(label) = self.hooks.running_label(event, None) else {
            return Said::default();
        };
        self.hook_running(turn, Some(label), em).await;
        let session_id = self
            .session()
            .map(|s| s.id().to_owned())
            .unwrap_or_default();
        let said = self
            .hooks
            .run(event, None, &session_id, fields, cancel)
            .await;
        self.hook_running(turn, None, em).await;
        for notice in &said.notices {
            em.emit(Event {
                turn,
                kind: EventKind::Notice(notice.clone()),
            })
            .await;
        }
        said
    }

    /// `SessionStart` (the first prompt of a session in this process) and `UserPromptSubmit`:
    /// the context they add, or `None` when a hook dropped the prompt (the user is told why).
    pub(super) async fn prompt_hooks(
        &self,
        prompt: &str,
        resumed: bool,
        cancel: &CancellationToken,
        em: &mut dyn Emitter,
    ) -> Option<Vec<String>> {
        let mut context = Vec::new();
        let session_id = self
            .session()
            .map(|s| s.id().to_owned())
            .unwrap_or_default();
        let first = self
            .started_sessions
            .lock()
            .map(|mut started| started.insert(session_id))
            .unwrap_or(false);
        if first {
            let source = if resumed { "resume" } else { "startup" };
            let fields = fields([("source", json!(source))]);
            let said = self
                .event_hooks(0, HookEvent::SessionStart, fields, cancel, em)
                .await;
            context.extend(said.context.map(|text| tagged("session-start-hook", &text)));
        }
        let fields = fields([("prompt", json!(prompt))]);
        let said = self
            .event_hooks(0, HookEvent::UserPromptSubmit, fields, cancel, em)
            .await;
        if let Some(reason) = said.block {
            em.emit(Event {
                turn: 0,
                kind: EventKind::Notice(format!(
                    "a UserPromptSubmit hook dropped this prompt; it was not sent: {reason}"
                )),
            })
            .await;
            return None;
        }
        context.extend(
            said.context
                .map(|text| tagged("user-prompt-submit-hook", &text)),
        );
        Some(context)
    }

    /// `Stop`: the reason to go on, when a hook blocks the end of the run.
    pub(super) async fn stop_hooks(
        &self,
        turn: u32,
        active: bool,
        cancel: &CancellationToken,
        em: &mut dyn Emitter,
    ) -> Option<String> {
        let fields = fields([("stop_hook_active", json!(active))]);
        self.event_hooks(turn, HookEvent::Stop, fields, cancel, em)
            .await
            .block
    }

    /// `PreCompact`, before the history is compacted (`auto` or `manual`).
    pub(super) async fn pre_compact_hooks(
        &self,
        turn: u32,
        trigger: &str,
        cancel: &CancellationToken,
        em: &mut dyn Emitter,
    ) {
        let fields = fields([("trigger", json!(trigger))]);
        self.event_hooks(turn, HookEvent::PreCompact, fields, cancel, em)
            .await;
    }
}

fn fields<const N: usize>(pairs: [(&str, Value); N]) -> Map<String, Value> {
    pairs
        .into_iter()
        .map(|(key, value)| (key.to_owned(), value))
        .collect()
}

/// Hook output for the model, marked as what it is.
fn tagged(tag: &str, text: &str) -> String {
    format!("<{tag}>\n{text}\n</{tag}>")
}
