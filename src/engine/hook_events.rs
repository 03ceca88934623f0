//! The command hooks of the moments that are not tool calls (CONTRACT "Hooks"): `SessionStart`
//! and `UserPromptSubmit` before a prompt reaches the model (their stdout becomes context, an
//! exit 2 of the latter drops the prompt), `Stop` when the model is done (a block keeps the run
//! going with the reason as the next instruction, at most `MAX_STOP_BLOCKS` times in a row;
//! a sub-agent's end is `SubagentStop`, alike), `PreCompact` before the history is compacted,
//! `TurnComplete` after each turn, `Notification` when an approval waits for the user, and
//! `SessionEnd` when the session closes. Each shows on the status line while it runs, and what
//! hooks say reaches the user as notices.

use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use super::AgentEngine;
use super::emitter::Emitter;
use super::event::{Event, EventKind};
use crate::hooks::{HookEvent, Said};

/// How many times in a row a `Stop` hook may keep a run going (CONTRACT "Hooks").
pub(crate) const MAX_STOP_BLOCKS: u32 = 3;

/// The longest `SessionEnd` hooks may hold up closing a session (then they are stopped with
/// their children): an exit must not wait on a hook's own ten-minute limit.
pub const SESSION_END_PATIENCE: std::time::Duration = std::time::Duration::from_secs(5);

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
            context.extend(
                said.context
                    .map(|text| tagged("a SessionStart hook's context", &text)),
            );
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
                .map(|text| tagged("a UserPromptSubmit hook's context", &text)),
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
        let (event, fields) = match &self.options.subagent {
            None => (
                HookEvent::Stop,
                fields([("stop_hook_active", json!(active))]),
            ),
            Some(agent) => (
                HookEvent::SubagentStop,
                fields([
                    ("stop_hook_active", json!(active)),
                    ("agent_type", json!(agent)),
                ]),
            ),
        };
        self.event_hooks(turn, event, fields, cancel, em)
            .await
            .block
    }

    /// `TurnComplete`, after each turn (what it says is notices; it cannot block).
    pub(super) async fn turn_complete_hooks(
        &self,
        turn: u32,
        has_tool_calls: bool,
        cancel: &CancellationToken,
        em: &mut dyn Emitter,
    ) {
        let fields = fields([
            ("turn", json!(turn)),
            ("has_tool_calls", json!(has_tool_calls)),
        ]);
        self.event_hooks(turn, HookEvent::TurnComplete, fields, cancel, em)
            .await;
    }

    /// `Notification`, when an approval waits for the user: run beside the question (a slow
    /// hook must not hold up the dialog), its output logged.
    pub(super) fn notification_hooks(&self, message: String, cancel: &CancellationToken) {
        if self
            .hooks
            .matching(HookEvent::Notification, None)
            .is_empty()
        {
            return;
        }
        let hooks = std::sync::Arc::clone(&self.hooks);
        let session_id = self
            .session()
            .map(|s| s.id().to_owned())
            .unwrap_or_default();
        let cancel = cancel.clone();
        let Ok(mut running) = self.notifications.lock() else {
            return;
        };
        // Those that ended are let go of, so the set holds only the running ones.
        while running.try_join_next().is_some() {}
        running.spawn(async move {
            let fields = fields([
                ("message", json!(message)),
                ("notification_type", json!("permission_prompt")),
            ]);
            let said = hooks
                .run(HookEvent::Notification, None, &session_id, fields, &cancel)
                .await;
            for notice in said.notices {
                tracing::info!("[hooks] Notification | {notice}");
            }
        });
    }

    /// `SessionEnd`, when a session this process started (its `SessionStart` ran) closes, after
    /// the `Notification` hooks still running; each get `SESSION_END_PATIENCE` at most. What
    /// they say, for the front end to show.
    pub async fn session_end_hooks(&self, reason: &str) -> Vec<String> {
        let mut notifications = self
            .notifications
            .lock()
            .map(|mut running| std::mem::take(&mut *running))
            .unwrap_or_default();
        let _ = tokio::time::timeout(SESSION_END_PATIENCE, async {
            while notifications.join_next().await.is_some() {}
        })
        .await;
        let Some(session_id) = self.session().map(|s| s.id().to_owned()) else {
            return Vec::new();
        };
        let started = self
            .started_sessions
            .lock()
            .map(|started| started.contains(&session_id))
            .unwrap_or(false);
        if !started {
            return Vec::new();
        }
        // Past its patience, the hooks are cancelled: their commands are stopped with their
        // children and what they said so far is kept.
        let cancel = CancellationToken::new();
        let timer = tokio::spawn({
            let cancel = cancel.clone();
            async move {
                tokio::time::sleep(SESSION_END_PATIENCE).await;
                cancel.cancel();
            }
        });
        let fields = fields([("reason", json!(reason))]);
        let said = self
            .hooks
            .run(HookEvent::SessionEnd, None, &session_id, fields, &cancel)
            .await;
        timer.abort();
        said.notices
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
/// A hook's context for the model: fenced as data from outside (issue 29 point 15).
fn tagged(tag: &str, text: &str) -> String {
    crate::schema::fence_outside(tag, text)
}
