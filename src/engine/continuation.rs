//! Auto-continue (自动续跑) and stall detection (停滞检测): when a run ends by itself while the
//! todo list has open items, it goes on with a short continuation prompt; three runs in a row
//! that complete nothing stop it, and so does the same call repeated three times (counted in the
//! loop), each time telling the user why, with the list as it stands.

use super::AgentEngine;
use super::emitter::Emitter;
use super::event::{Event, EventKind};
use super::run_loop::RunState;

/// What auto-continue decides when a run ends by itself.
pub(super) enum Continuation {
    /// Nothing to continue (off, or every todo is done).
    Finished,
    /// Keep going with this prompt; `progress` is told to the user.
    Prompt { prompt: String, progress: String },
    /// Stop, for this reason.
    Stop(String),
}

impl AgentEngine {
    /// Whether (and how) the run goes on by itself after the model stopped calling tools.
    pub(super) fn continuation(&self, state: &mut RunState) -> Continuation {
        use crate::planning::TodoStatus;
        if !self.auto_continue_enabled() {
            return Continuation::Finished;
        }
        let todos = self.todos.snapshot();
        let completed = todos
            .iter()
            .filter(|t| t.status == TodoStatus::Completed)
            .count();
        let Some(next) = todos
            .iter()
            .find(|t| t.status == TodoStatus::InProgress)
            .or_else(|| todos.iter().find(|t| t.status == TodoStatus::Pending))
        else {
            return Continuation::Finished;
        };
        if completed > state.completed_seen {
            state.runs_without_progress = 0;
        } else {
            state.runs_without_progress += 1;
        }
        state.completed_seen = completed;
        if state.runs_without_progress >= 3 {
            return Continuation::Stop("three runs in a row completed no todo item".into());
        }
        Continuation::Prompt {
            prompt: format!(
                "Continue with the plan: {completed} of {} todo items are done. Next: \"{}\". \
                 Work on it, keep the list current with todo_write (in_progress when you start \
                 an item, completed when it is done), and stop once every item is completed.",
                todos.len(),
                next.content
            ),
            progress: format!(
                "auto-continue: {completed}/{} done, next: {}",
                todos.len(),
                next.content
            ),
        }
    }

    pub(super) async fn stop_auto_continue(&self, turn: u32, reason: &str, em: &mut dyn Emitter) {
        let list: Vec<String> = self
            .todos
            .snapshot()
            .iter()
            .map(|t| {
                let mark = match t.status {
                    crate::planning::TodoStatus::Completed => "[x]",
                    crate::planning::TodoStatus::InProgress => "[~]",
                    crate::planning::TodoStatus::Pending => "[ ]",
                };
                format!("{mark} {}", t.content)
            })
            .collect();
        tracing::warn!("{} auto-continue stopped | reason={reason}", em.prefix());
        em.emit(Event {
            turn,
            kind: EventKind::Notice(format!(
                "auto-continue stopped: {reason}. The list as it stands:\n{}",
                list.join("\n")
            )),
        })
        .await;
    }
}
