//! The question a restore asks when files changed since its checkpoint (`/undo`, `/rewind`):
//! it names them, and `o` overwrites them too, `k` keeps them and restores the others, `n` or
//! Esc restores nothing. The answer is a request for the session core, which restores.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Color, Style};
use ratatui::text::{Line, Span};

use super::app::Effect;
use super::compositor::{Layer, Outcome, Shared};
use super::keymap::{Action, Focus};
use super::overlays::{boxed, centered};
use super::wrap::truncate;
use crate::session::Conflicts;
use crate::session::Request;
use crate::session::Restore;
use crate::terminal_text::sanitize;

/// A restore waiting for the user: these files changed since the checkpoint.
#[derive(Debug, Clone)]
pub(super) struct RestoreQuestion {
    what: Restore,
    changed: Vec<String>,
}

impl RestoreQuestion {
    pub fn new(what: Restore, changed: Vec<String>) -> Self {
        RestoreQuestion { what, changed }
    }
}

impl Layer for RestoreQuestion {
    fn focus(&self) -> Focus {
        Focus::RestoreQuestion
    }

    fn update(&mut self, action: Action, _: &Shared) -> Outcome {
        let conflicts = match action {
            Action::Overwrite => Conflicts::Overwrite,
            // The wheel scrolls the conversation under the question.
            Action::ScrollUp(_) | Action::ScrollDown(_) => return Outcome::pass(),
            Action::Keep => Conflicts::Keep,
            Action::Close => return Outcome::close(Vec::new()).flash("nothing was restored"),
            _ => return Outcome::done(),
        };
        Outcome::close(vec![Effect::Request(Request::Restore {
            what: self.what.clone(),
            conflicts,
        })])
    }

    fn draw(&self, _: &Shared, frame: &mut Frame, area: Rect) {
        draw_question(self, frame, area);
    }

    fn hints(&self) -> std::borrow::Cow<'static, str> {
        " o overwrites · k keeps yours · n or Esc restores nothing ".into()
    }
}

fn draw_question(question: &RestoreQuestion, frame: &mut Frame, area: Rect) {
    let width = area.width.saturating_sub(4).min(90);
    let text = width.saturating_sub(4) as usize;
    let mut lines = vec![Line::raw(
        "These files changed since the checkpoint (you, or another program, edited them):",
    )];
    for path in &question.changed {
        lines.push(Line::styled(
            format!("  {}", truncate(&sanitize(path), text.saturating_sub(2))),
            Style::new().fg(Color::Yellow),
        ));
    }
    lines.push(Line::default());
    lines.push(Line::raw("o  overwrite them with the checkpoint too"));
    lines.push(Line::raw("k  keep them as they are, restore the others"));
    lines.push(Line::raw("n  restore nothing (Esc)"));
    let height = (lines.len() as u16 + 2).min(area.height);
    boxed(
        frame,
        centered(area, width, height),
        Span::raw(" Files changed since the checkpoint "),
        Style::new().fg(Color::Yellow),
        lines,
    );
}
