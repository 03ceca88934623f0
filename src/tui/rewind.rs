//! `/undo` and `/rewind` on screen. `/rewind` opens a layer listing the conversation's prompts
//! (Enter goes back to before the selected one with its files and the conversation, `c` the
//! conversation only, `f` the files only); a restore that finds files changed since the
//! checkpoint opens a question naming them (`restore_question`). The app only
//! sends requests and shows answers: the session core restores.

use std::sync::Arc;

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

use super::app::{App, Effect};
use super::compositor::{Layer, Outcome, Shared};
use super::keymap::{Action, Focus};
use super::overlays::{boxed, centered};
use super::restore_question::RestoreQuestion;
use super::transcript::Tone;
use super::view::DIM;
use super::wrap::truncate;
use crate::session::Request;
use crate::session::{Conflicts, PromptPoint};
use crate::session::{Restore, Restored};
use crate::terminal_text::sanitize;

/// `/rewind`'s list, while it is open.
#[derive(Debug, Clone, Default)]
pub(super) struct RewindList {
    prompts: Vec<PromptPoint>,
    selected: usize,
    /// The list was asked for and has not come yet.
    loading: bool,
}

impl App {
    /// `/undo`: the files of the last prompt that changed any.
    pub(super) fn undo(&mut self) -> Vec<Effect> {
        if self.busy() {
            self.flash_mut().text = Some("wait for the run to end (or Esc) before /undo".into());
            return Vec::new();
        }
        vec![Effect::Request(Request::Restore {
            what: Restore::Undo,
            conflicts: Conflicts::Ask,
        })]
    }

    /// `/rewind`: asks for the prompts and opens the list.
    pub(super) fn open_rewind(&mut self) -> Vec<Effect> {
        if self.busy() {
            self.flash_mut().text = Some("wait for the run to end (or Esc) before /rewind".into());
            return Vec::new();
        }
        self.open_layer(RewindList {
            loading: true,
            ..RewindList::default()
        });
        vec![Effect::Request(Request::ListPrompts)]
    }

    pub(super) fn on_prompts(&mut self, prompts: Vec<PromptPoint>) {
        if let Some(list) = self.stack_mut().find_mut::<RewindList>() {
            // The newest is the likeliest choice.
            list.selected = prompts.len().saturating_sub(1);
            list.prompts = prompts;
            list.loading = false;
        }
    }

    pub(super) fn on_restored(&mut self, restored: Arc<Restored>) {
        let workdir = std::path::PathBuf::from(&self.session().workdir);
        if restored.report.asking {
            self.open_layer(RestoreQuestion::new(
                restored.what.clone(),
                restored
                    .report
                    .changed_since
                    .iter()
                    .map(|p| crate::files::paths::display(&workdir, p))
                    .collect(),
            ));
            return;
        }
        let tone = if restored.report.failed.is_empty() {
            Tone::Quiet
        } else {
            Tone::Warning
        };
        self.transcript_mut().notice(restored.text.clone(), tone);
        self.flash_mut().text = Some(restored.text.lines().next().unwrap_or("").to_owned());
        // Back before a prompt in the conversation: the prompt is offered again to edit.
        if restored.branched.is_some()
            && let Some(prompt) = &restored.prompt
            && self.input_is_empty()
        {
            let (text, _) = crate::session::text::split_attachments(prompt);
            self.set_input(text);
        }
    }
}

impl Layer for RewindList {
    fn focus(&self) -> Focus {
        Focus::Rewind
    }

    fn update(&mut self, action: Action, _: &Shared) -> Outcome {
        if let Some(chosen) = action.chosen(self.selected, self.prompts.len()) {
            self.selected = chosen;
            return Outcome::done();
        }
        match action {
            Action::Close => Outcome::close(Vec::new()),
            Action::Rewind {
                files,
                conversation,
            } => match self.prompts.get(self.selected) {
                Some(point) => Outcome::close(vec![Effect::Request(Request::Restore {
                    what: Restore::Rewind {
                        seq: point.seq,
                        files,
                        conversation,
                    },
                    conflicts: Conflicts::Ask,
                })]),
                // Nothing to go back to (the list is still coming, or empty).
                None => Outcome::done(),
            },
            // The wheel scrolls the conversation under the list.
            Action::ScrollUp(_) | Action::ScrollDown(_) => Outcome::pass(),
            _ => Outcome::done(),
        }
    }

    fn draw(&self, _: &Shared, frame: &mut Frame, area: Rect) {
        draw_list(self, frame, area);
    }

    fn hints(&self) -> std::borrow::Cow<'static, str> {
        " ↑↓ choose · Enter files and conversation · c · f · Esc closes ".into()
    }
}

fn draw_list(list: &RewindList, frame: &mut Frame, area: Rect) {
    let width = area.width.saturating_sub(4).min(100);
    let text = width.saturating_sub(4) as usize;
    let mut lines: Vec<Line<'static>> = Vec::new();
    if list.loading {
        lines.push(Line::styled("reading the conversation…", DIM));
    } else if list.prompts.is_empty() {
        lines.push(Line::raw("No prompt in this conversation yet."));
    }
    let rows = (area.height as usize).saturating_sub(6).max(1);
    let first = list.selected.saturating_sub(rows.saturating_sub(1));
    for (index, point) in list.prompts.iter().enumerate().skip(first).take(rows) {
        let selected = index == list.selected;
        let marker = if selected { "› " } else { "  " };
        let files = match point.files {
            0 => String::new(),
            1 => "  · 1 file changed since".to_owned(),
            n => format!("  · {n} files changed since"),
        };
        let style = if selected {
            Style::new().add_modifier(Modifier::BOLD | Modifier::REVERSED)
        } else {
            Style::new()
        };
        let label = sanitize(&crate::session::text::title_from(&point.text));
        let room = text.saturating_sub(files.chars().count() + 2);
        lines.push(Line::from(vec![
            Span::styled(marker, Style::new().fg(super::theme::accent())),
            Span::styled(truncate(&label, room), style),
            Span::styled(files, DIM),
        ]));
    }
    let height = (lines.len() as u16 + 2).min(area.height);
    boxed(
        frame,
        centered(area, width, height),
        Span::raw(
            " Rewind to before a prompt · Enter files and conversation · c conversation · \
             f files · Esc ",
        ),
        Style::new().fg(super::theme::accent()),
        lines,
    );
}
