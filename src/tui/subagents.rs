//! Sub-agents on screen (issue 17): a child's events go to its task block, `/tasks` lists the
//! children still running (background ones stay until their own end), and `Ctrl+O` on the
//! newest task block since the prompt opens the child's transcript in a layer. That transcript
//! is read from the store through the session core (`Request::ReadSession`), by the session id
//! of the child's first event, as the picker's sessions are (`child_view`); Esc closes it.

use super::app::{App, Effect};
use super::child_view::ChildView;
use super::keymap::{Action, Focus};
use super::task_view::seconds;
use crate::engine::SubagentEvent;
use crate::schema::Message;

impl App {
    /// One of a child's events, into its task block.
    pub(super) fn subagent_event(&mut self, event: SubagentEvent) {
        // A child's model calls are counted here, once: the parent's own `token_update`s never
        // include them (only its `done` does, and the status line does not add `done`).
        match &event.event.kind {
            crate::engine::EventKind::SessionStarted(info) => {
                self.spending_mut()
                    .child_started(&event.task_id, &info.model);
            }
            crate::engine::EventKind::TokenUpdate(update) => {
                let model = self
                    .spending()
                    .child_model(&event.task_id)
                    .unwrap_or(self.session().model.as_str())
                    .to_owned();
                self.spending_mut().count(&model, update);
            }
            _ => {}
        }
        let now = self.clock().now();
        self.transcript_mut()
            .task_event(&event.task_id, &event.agent, &event.event, now);
    }

    /// `Ctrl+O` on the conversation when there is a task block since the last prompt: its
    /// child's transcript opens over it; `None`: not for this module.
    pub(super) fn apply_tasks(&mut self, action: Action) -> Option<Vec<Effect>> {
        if self.layer() != Focus::Main || action != Action::ToggleExpand {
            return None;
        }
        let task = self.transcript().current_task()?;
        // A block read back from the store does not know its child's session: Ctrl+O folds
        // and unfolds there, as everywhere.
        if task.child_session.is_none() && !task.is_running() {
            return None;
        }
        let task_id = task.call.id.clone();
        Some(match ChildView::open(self.transcript(), &task_id) {
            Ok((view, read)) => {
                self.open_layer(view);
                vec![read]
            }
            Err(said) => {
                self.flash_mut().text = said.flash();
                Vec::new()
            }
        })
    }

    /// A stored conversation read for the open child view (a late answer for another is
    /// dropped).
    pub(super) fn session_read(
        &mut self,
        session_id: &str,
        messages: Result<Vec<Message>, crate::session::Failure>,
    ) {
        let Some(task_id) = self
            .stack()
            .find::<ChildView>()
            .map(|view| view.task_id().to_owned())
        else {
            return;
        };
        let running = self
            .transcript()
            .task(&task_id)
            .is_some_and(|t| t.is_running());
        if let Some(view) = self.stack_mut().find_mut::<ChildView>() {
            view.read(session_id, messages, running);
        }
    }

    /// `/tasks`: the children still running, one line each.
    pub(super) fn tasks_text(&self) -> String {
        let now = self.clock().now();
        let running: Vec<String> = self
            .transcript()
            .tasks()
            .filter(|t| t.is_running())
            .map(|t| {
                let background = if t.background { " · background" } else { "" };
                format!(
                    "{} · {} · {} · {}{background}",
                    t.agent,
                    t.description,
                    t.step_text(),
                    seconds(t.elapsed_at(now))
                )
            })
            .collect();
        if running.is_empty() {
            "no task is running".into()
        } else {
            format!("running tasks:\n{}", running.join("\n"))
        }
    }
}
