//! `/undo` and `/rewind` on screen. `/rewind` opens a layer listing the conversation's prompts
//! (Enter goes back to before the selected one with its files and the conversation, `c` the
//! conversation only, `f` the files only); a restore that finds files changed since the
//! checkpoint opens a question naming them (overwrite, keep yours, or cancel). The app only
//! sends requests and shows answers: the session core restores.

use std::sync::Arc;

use crossterm::event::{KeyCode, KeyEvent};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};

use super::app::{App, Command};
use super::keymap::Layer;
use super::overlays::{boxed, centered};
use super::transcript::Tone;
use super::view::DIM;
use super::wrap::truncate;
use crate::session::{Conflicts, PromptPoint};
use crate::session::{Restore, Restored};
use crate::terminal_text::sanitize;

/// `/rewind`'s list, while it is open.
#[derive(Debug, Clone, Default)]
pub struct RewindList {
    pub prompts: Vec<PromptPoint>,
    pub selected: usize,
    /// The list was asked for and has not come yet.
    pub loading: bool,
}

/// A restore waiting for the user: these files changed since the checkpoint.
#[derive(Debug, Clone)]
pub struct RestoreQuestion {
    pub what: Restore,
    pub changed: Vec<String>,
}

impl App {
    /// `/undo`: the files of the last prompt that changed any.
    pub(super) fn undo(&mut self) -> Vec<Command> {
        if self.busy() {
            self.flash = Some("wait for the run to end (or Esc) before /undo".into());
            return Vec::new();
        }
        vec![Command::Restore {
            what: Restore::Undo,
            conflicts: Conflicts::Ask,
        }]
    }

    /// `/rewind`: asks for the prompts and opens the list.
    pub(super) fn open_rewind(&mut self) -> Vec<Command> {
        if self.busy() {
            self.flash = Some("wait for the run to end (or Esc) before /rewind".into());
            return Vec::new();
        }
        self.rewind = Some(RewindList {
            loading: true,
            ..RewindList::default()
        });
        vec![Command::ListPrompts]
    }

    pub(super) fn on_prompts(&mut self, prompts: Vec<PromptPoint>) {
        if let Some(list) = &mut self.rewind {
            // The newest is the likeliest choice.
            list.selected = prompts.len().saturating_sub(1);
            list.prompts = prompts;
            list.loading = false;
        }
    }

    pub(super) fn on_restored(&mut self, restored: Arc<Restored>) {
        let workdir = std::path::PathBuf::from(&self.session.workdir);
        if restored.report.asking {
            self.restore_question = Some(RestoreQuestion {
                what: restored.what.clone(),
                changed: restored
                    .report
                    .changed_since
                    .iter()
                    .map(|p| crate::files::paths::display(&workdir, p))
                    .collect(),
            });
            return;
        }
        let tone = if restored.report.failed.is_empty() {
            Tone::Quiet
        } else {
            Tone::Warning
        };
        self.transcript.notice(restored.text.clone(), tone);
        self.flash = Some(restored.text.lines().next().unwrap_or("").to_owned());
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

/// The keys of the rewind list and the restore question, when one has the focus.
pub fn key(app: &mut App, key: KeyEvent) -> Option<Vec<Command>> {
    match app.layer() {
        Layer::RestoreQuestion => {
            let question = app.restore_question.clone()?;
            let conflicts = match key.code {
                KeyCode::Char('o' | 'O') => Some(Conflicts::Overwrite),
                KeyCode::Char('k' | 'K') => Some(Conflicts::Keep),
                KeyCode::Char('n' | 'N') | KeyCode::Esc => None,
                _ => return Some(Vec::new()),
            };
            app.restore_question = None;
            Some(match conflicts {
                Some(conflicts) => vec![Command::Restore {
                    what: question.what,
                    conflicts,
                }],
                None => {
                    app.flash = Some("nothing was restored".into());
                    Vec::new()
                }
            })
        }
        Layer::Rewind => {
            let list = app.rewind.as_mut()?;
            let last = list.prompts.len().saturating_sub(1);
            let choice = match key.code {
                KeyCode::Esc | KeyCode::Char('q') => {
                    app.rewind = None;
                    return Some(Vec::new());
                }
                KeyCode::Up | KeyCode::Char('k') => {
                    list.selected = list.selected.saturating_sub(1);
                    return Some(Vec::new());
                }
                KeyCode::Down | KeyCode::Char('j') => {
                    list.selected = (list.selected + 1).min(last);
                    return Some(Vec::new());
                }
                KeyCode::Enter => (true, true),
                KeyCode::Char('c') => (false, true),
                KeyCode::Char('f') => (true, false),
                _ => return Some(Vec::new()),
            };
            let seq = list.prompts.get(list.selected)?.seq;
            app.rewind = None;
            Some(vec![Command::Restore {
                what: Restore::Rewind {
                    seq,
                    files: choice.0,
                    conversation: choice.1,
                },
                conflicts: Conflicts::Ask,
            }])
        }
        _ => None,
    }
}

pub fn draw_list(list: &RewindList, frame: &mut Frame, area: Rect) {
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

pub fn draw_question(question: &RestoreQuestion, frame: &mut Frame, area: Rect) {
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
