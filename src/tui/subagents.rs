//! Sub-agents on screen (issue 17): a child's events go to its task block, `/tasks` lists the
//! children still running (background ones stay until their own end), and `Ctrl+O` on the
//! newest task block since the prompt opens the child's transcript in a layer. That transcript
//! is read from the store through the session core (`Command::ReadSession`), by the session id
//! of the child's first event, as the picker's sessions are; Esc closes it.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::Line;
use ratatui::widgets::{Block, Borders, Clear, Paragraph};

use super::app::{App, Command};
use super::keymap::{Action, Focus};
use super::task_view::seconds;
use super::transcript::{Tone, Transcript};
use super::wrap::truncate;
use crate::engine::SubagentEvent;
use crate::schema::Message;

/// A child's transcript, open over the conversation.
#[derive(Debug)]
pub struct ChildView {
    /// The `task` call whose child this is.
    pub task_id: String,
    pub session_id: String,
    /// "explore · find the callers".
    pub title: String,
    /// `None` while it is being read.
    pub transcript: Option<Transcript>,
    /// Why it could not be read.
    pub problem: Option<String>,
}

impl App {
    /// One of a child's events, into its task block.
    pub(super) fn subagent_event(&mut self, event: SubagentEvent) {
        // A child's model calls are counted here, once: the parent's own `token_update`s never
        // include them (only its `done` does, and the status line does not add `done`).
        match &event.event.kind {
            crate::engine::EventKind::SessionStarted(info) => {
                self.child_models
                    .insert(event.task_id.clone(), info.model.clone());
            }
            crate::engine::EventKind::TokenUpdate(update) => {
                let model = self
                    .child_models
                    .get(&event.task_id)
                    .unwrap_or(&self.session.model)
                    .clone();
                self.count_spend(&model, update);
            }
            _ => {}
        }
        let now = self.clock.now();
        self.transcript
            .task_event(&event.task_id, &event.agent, &event.event, now);
    }

    /// The child layer's actions, and `Ctrl+O` on the conversation when there is a task block
    /// since the last prompt; `None`: not for this module.
    pub(super) fn apply_tasks(&mut self, action: Action) -> Option<Vec<Command>> {
        match self.layer() {
            Focus::Main if action == Action::ToggleExpand => {
                let task = self.transcript.current_task()?;
                // A block read back from the store does not know its child's session: Ctrl+O
                // folds and unfolds there, as everywhere.
                if task.child_session.is_none() && !task.is_running() {
                    return None;
                }
                let task_id = task.call.id.clone();
                Some(self.open_child(&task_id))
            }
            Focus::TaskTranscript => {
                match action {
                    Action::Close => self.child_view = None,
                    Action::ToggleExpand => self.expanded = !self.expanded,
                    Action::Top => self.overlay_scroll = 0,
                    Action::Bottom => self.overlay_scroll = u16::MAX,
                    Action::ReadAgain => {
                        let id = self.child_view.as_ref()?.task_id.clone();
                        return Some(self.open_child(&id));
                    }
                    Action::OtherTask(forward) => return Some(self.other_task(forward)),
                    _ => return None,
                }
                Some(Vec::new())
            }
            _ => None,
        }
    }

    /// Opens the transcript of the child of `task_id` and asks for it to be read.
    fn open_child(&mut self, task_id: &str) -> Vec<Command> {
        let Some(task) = self.transcript.task(task_id) else {
            return Vec::new();
        };
        let Some(session_id) = task.child_session.clone() else {
            self.flash = Some(format!(
                "{} has not started yet: its transcript is there from its first step",
                task.agent
            ));
            return Vec::new();
        };
        self.child_view = Some(ChildView {
            task_id: task_id.to_owned(),
            title: format!("{} · {}", task.agent, task.description),
            session_id: session_id.clone(),
            transcript: None,
            problem: None,
        });
        // From its end: what the child found is what is looked for first.
        self.overlay_scroll = u16::MAX;
        vec![Command::ReadSession(session_id)]
    }

    /// The next (or previous) task block's child, from the one open.
    fn other_task(&mut self, forward: bool) -> Vec<Command> {
        let ids: Vec<String> = self
            .transcript
            .tasks()
            .filter(|t| t.child_session.is_some())
            .map(|t| t.call.id.clone())
            .collect();
        let open = self.child_view.as_ref().map(|v| v.task_id.as_str());
        let Some(at) = ids.iter().position(|id| Some(id.as_str()) == open) else {
            return Vec::new();
        };
        let next = if forward {
            (at + 1) % ids.len()
        } else {
            (at + ids.len() - 1) % ids.len()
        };
        let id = ids[next].clone();
        self.open_child(&id)
    }

    /// A stored conversation read for the open child view (a late answer for another is
    /// dropped).
    pub(super) fn session_read(
        &mut self,
        session_id: &str,
        messages: Result<Vec<Message>, String>,
    ) {
        let running = self
            .child_view
            .as_ref()
            .and_then(|v| self.transcript.task(&v.task_id))
            .is_some_and(|t| t.is_running());
        let Some(view) = self
            .child_view
            .as_mut()
            .filter(|v| v.session_id == session_id)
        else {
            return;
        };
        match messages {
            Ok(messages) => {
                let mut transcript = Transcript::from_stored(&messages, !running);
                if running {
                    transcript.notice("still running: r reads its transcript again", Tone::Quiet);
                }
                view.transcript = Some(transcript);
            }
            Err(problem) => view.problem = Some(problem),
        }
    }

    /// `/tasks`: the children still running, one line each.
    pub(super) fn tasks_text(&self) -> String {
        let now = self.clock.now();
        let running: Vec<String> = self
            .transcript
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

/// Draws the open child's transcript over `area`; the furthest it can scroll.
pub(super) fn draw(app: &App, overlay_scroll: u16, frame: &mut Frame, area: Rect) -> u16 {
    let (expanded, spinner, now) = (app.expanded, app.spinner, app.clock.now());
    let top = overlay_scroll as usize;
    let Some(view) = app.child_view.as_ref() else {
        return 0;
    };
    frame.render_widget(Clear, area);
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(Style::new().fg(super::theme::accent()))
        .title(truncate(
            &format!(
                " {} · ↑↓ scroll · Tab next task · Ctrl+O folds · Esc closes ",
                view.title
            ),
            area.width.saturating_sub(2) as usize,
        ))
        .title_style(Style::new().add_modifier(Modifier::BOLD));
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let inner = Rect {
        x: inner.x + 1,
        width: inner.width.saturating_sub(2).max(1),
        ..inner
    };
    let height = inner.height as usize;
    let (lines, most) = match (&view.transcript, &view.problem) {
        (_, Some(problem)) => (vec![Line::styled(problem.clone(), super::view::DIM)], 0),
        (None, None) => (vec![Line::styled("reading…", super::view::DIM)], 0),
        (Some(transcript), None) => {
            transcript.set_now(now);
            let total = transcript.total_height(inner.width, expanded, spinner);
            let most = total.saturating_sub(height);
            let top = top.min(most);
            let offset = total - top - height.min(total);
            let (lines, _) = transcript.window(inner.width, height, offset, expanded, spinner);
            (lines, most)
        }
    };
    frame.render_widget(Paragraph::new(lines), inner);
    most.min(u16::MAX as usize) as u16
}
