//! A sub-agent's transcript as a layer over the conversation, opened by `Ctrl+O` on its task
//! block (`subagents`): read from the store through the session core (`Request::ReadSession`),
//! by the session id of the child's first event. It scrolls (from its end: what the child found
//! is looked for first), Tab goes to the next task's child, `r` reads it again, Esc closes it.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::Line;
use ratatui::widgets::{Block, Borders, Clear, Paragraph};

use super::app::Effect;
use super::compositor::{Layer, Outcome, Shared};
use super::keymap::{Action, Focus};
use super::layer_scroll::LayerScroll;
use super::transcript::{Tone, Transcript};
use super::wrap::truncate;
use crate::schema::Message;
use crate::session::Request;

/// A child's transcript, open over the conversation.
#[derive(Debug)]
pub(super) struct ChildView {
    /// The `task` call whose child this is.
    task_id: String,
    session_id: String,
    /// "explore · find the callers".
    title: String,
    /// `None` while it is being read.
    transcript: Option<Transcript>,
    /// Why it could not be read.
    problem: Option<String>,
    scroll: LayerScroll,
}

/// Why a task block's child transcript cannot be opened.
#[derive(Debug, thiserror::Error)]
pub enum NotOpened {
    /// No task block has that id: nothing to tell the user.
    #[error("no such task")]
    NoTask,
    #[error("{agent} has not started yet: its transcript is there from its first step")]
    NotStarted { agent: String },
}

impl NotOpened {
    /// What the status line says of it, if anything.
    pub fn flash(self) -> Option<String> {
        match self {
            NotOpened::NoTask => None,
            said => Some(said.to_string()),
        }
    }
}

impl ChildView {
    /// The transcript of the child of `task_id` in `transcript`, and the request that reads
    /// it; or why it cannot be opened.
    pub fn open(transcript: &Transcript, task_id: &str) -> Result<(Self, Effect), NotOpened> {
        let Some(task) = transcript.task(task_id) else {
            return Err(NotOpened::NoTask);
        };
        let Some(session_id) = task.child_session.clone() else {
            return Err(NotOpened::NotStarted {
                agent: task.agent.clone(),
            });
        };
        let view = ChildView {
            task_id: task_id.to_owned(),
            title: format!("{} · {}", task.agent, task.description),
            session_id: session_id.clone(),
            transcript: None,
            problem: None,
            // From its end: what the child found is what is looked for first.
            scroll: LayerScroll::at_end(),
        };
        Ok((view, Effect::Request(Request::ReadSession { session_id })))
    }

    pub fn task_id(&self) -> &str {
        &self.task_id
    }

    /// The stored conversation of `session_id`, when it is this child's.
    pub fn read(
        &mut self,
        session_id: &str,
        messages: Result<Vec<Message>, crate::session::Failure>,
        running: bool,
    ) {
        if self.session_id != session_id {
            return;
        }
        match messages {
            Ok(messages) => {
                let mut transcript = Transcript::from_stored(&messages, !running);
                if running {
                    transcript.notice("still running: r reads its transcript again", Tone::Quiet);
                }
                self.transcript = Some(transcript);
            }
            Err(problem) => self.problem = Some(problem.message),
        }
    }

    /// This layer replaced by the child of `task_id`'s (read anew).
    fn reopen(&self, transcript: &Transcript, task_id: &str) -> Outcome {
        match ChildView::open(transcript, task_id) {
            Ok((view, read)) => Outcome {
                open: Some(Box::new(view)),
                ..Outcome::close(vec![read])
            },
            Err(said) => match said.flash() {
                Some(said) => Outcome::done().flash(said),
                None => Outcome::done(),
            },
        }
    }

    /// The next (or previous) task block's child, from this one.
    fn other_task(&self, transcript: &Transcript, forward: bool) -> Outcome {
        let ids: Vec<String> = transcript
            .tasks()
            .filter(|t| t.child_session.is_some())
            .map(|t| t.call.id.clone())
            .collect();
        let Some(at) = ids.iter().position(|id| *id == self.task_id) else {
            return Outcome::done();
        };
        let next = if forward {
            (at + 1) % ids.len()
        } else {
            (at + ids.len() - 1) % ids.len()
        };
        self.reopen(transcript, &ids[next])
    }
}

impl Layer for ChildView {
    fn focus(&self) -> Focus {
        Focus::TaskTranscript
    }

    fn update(&mut self, action: Action, shared: &Shared) -> Outcome {
        if self.scroll.update(action, shared.viewport) {
            return Outcome::done();
        }
        match action {
            Action::Close => Outcome::close(Vec::new()),
            Action::ReadAgain => self.reopen(shared.transcript, &self.task_id),
            Action::OtherTask(forward) => self.other_task(shared.transcript, forward),
            // Folding (Ctrl+O) and Ctrl+C are the app's.
            Action::ToggleExpand | Action::ClearOrQuit => Outcome::pass(),
            _ => Outcome::done(),
        }
    }

    fn draw(&self, shared: &Shared, frame: &mut Frame, area: Rect) {
        self.scroll.found_end(draw(self, shared, frame, area));
    }

    fn drawn(&mut self) {
        self.scroll.drawn();
    }

    fn hints(&self) -> std::borrow::Cow<'static, str> {
        " ↑↓ scroll · Tab next task · r reads again · Ctrl+O folds · Esc closes ".into()
    }
}

/// Draws the child's transcript over `area`; the furthest it can scroll.
fn draw(view: &ChildView, shared: &Shared, frame: &mut Frame, area: Rect) -> u16 {
    let (expanded, spinner, now) = (shared.expanded, shared.spinner, shared.clock.now());
    let top = view.scroll.top() as usize;
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
