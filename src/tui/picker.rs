//! The session picker (Ctrl+R, `/resume`, `harness9 --resume`): this directory's sessions newest
//! first, Tab for every directory's, typing filters by name, title and full text. Queries run off
//! the UI task; each carries a generation and answers to an older one are dropped. A layer over
//! the conversation: Enter resumes the chosen session (not while a turn runs), Esc closes it.

use crossterm::event::{KeyCode, KeyModifiers};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};

use unicode_width::UnicodeWidthStr;

use super::app::Effect;
use super::compositor::{Layer, Outcome, Shared};
use super::keymap::{Action, Focus};
use super::wrap::truncate;
use crate::session::Request;
use crate::session::SessionHit;
use crate::session::text::{age, now_ms};

#[derive(Debug, Default)]
pub(super) struct Picker {
    pub(super) query: String,
    /// Every directory's sessions, not only this one's.
    all: bool,
    hits: Vec<SessionHit>,
    selected: usize,
    /// The generation of the latest query sent; older answers are stale.
    pub(super) generation: u64,
    loading: bool,
}

impl Picker {
    /// The picker, and its first query (this directory's sessions).
    pub fn open() -> (Self, Effect) {
        let mut picker = Picker::default();
        let query = picker.query_sessions();
        (picker, query)
    }

    /// A query for what the picker shows now; answers to earlier ones are dropped from now on.
    fn query_sessions(&mut self) -> Effect {
        self.generation += 1;
        self.loading = true;
        self.selected = 0;
        Effect::Request(Request::ListSessions {
            query: self.query.clone(),
            all: self.all,
            generation: self.generation,
        })
    }

    /// Takes an answer; returns false when it was stale.
    pub fn accept(&mut self, generation: u64, hits: Vec<SessionHit>) -> bool {
        if generation != self.generation {
            return false;
        }
        self.hits = hits;
        self.selected = self.selected.min(self.hits.len().saturating_sub(1));
        self.loading = false;
        true
    }

    pub fn selected_id(&self) -> Option<&str> {
        self.hits.get(self.selected).map(|h| h.session.id.as_str())
    }
}

impl Layer for Picker {
    fn focus(&self) -> Focus {
        Focus::Picker
    }

    fn update(&mut self, action: Action, shared: &Shared) -> Outcome {
        if let Some(chosen) = action.chosen(self.selected, self.hits.len()) {
            self.selected = chosen;
            return Outcome::done();
        }
        // Ctrl+C, the page keys and the wheel are the conversation's, under the picker.
        if action.is_the_conversations() {
            return Outcome::pass();
        }
        match action {
            Action::Close => Outcome::close(Vec::new()),
            Action::PickerToggleAll => {
                self.all = !self.all;
                Outcome::send(vec![self.query_sessions()])
            }
            Action::PickerResume => match self.selected_id() {
                Some(_) if shared.running => Outcome::done()
                    .flash("wait for the turn to end (or Esc) before switching sessions"),
                Some(id) => Outcome::close(vec![Effect::Request(Request::Resume(id.to_owned()))]),
                None => Outcome::done(),
            },
            // The query's own editing.
            Action::Edit(key) => {
                let changed = match key.code {
                    KeyCode::Char(c) if !key.modifiers.contains(KeyModifiers::CONTROL) => {
                        self.query.push(c);
                        true
                    }
                    KeyCode::Backspace => self.query.pop().is_some(),
                    _ => false,
                };
                if changed {
                    Outcome::send(vec![self.query_sessions()])
                } else {
                    Outcome::done()
                }
            }
            _ => Outcome::done(),
        }
    }

    fn draw(&self, shared: &Shared, frame: &mut Frame, area: Rect) {
        draw(self, shared.session_id, frame, area);
    }

    fn hints(&self) -> std::borrow::Cow<'static, str> {
        " type to search · ↑↓ choose · Enter resumes · Esc closes ".into()
    }
}

fn draw(picker: &Picker, current_session: &str, frame: &mut Frame, area: Rect) {
    let width = area.width.saturating_sub(4).clamp(30, 120);
    let height = area.height.saturating_sub(2).max(6);
    let rect = Rect::new(
        area.x + (area.width - width.min(area.width)) / 2,
        area.y + 1,
        width.min(area.width),
        height.min(area.height),
    );
    let rect = rect.intersection(area);
    frame.render_widget(Clear, rect);
    let scope = if picker.all {
        "every directory"
    } else {
        "this directory"
    };
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(Style::new().fg(super::theme::accent()))
        .title(truncate(
            &format!(" Resume a session · {scope} · Tab toggles · Enter resumes · Esc closes "),
            rect.width.saturating_sub(2) as usize,
        ));
    let inner = block.inner(rect);
    frame.render_widget(block, rect);
    let inner = Rect {
        x: inner.x + 1,
        width: inner.width.saturating_sub(1),
        ..inner
    };
    let accent = Style::new()
        .fg(super::theme::accent())
        .add_modifier(Modifier::BOLD);
    let dim = Style::new().fg(Color::DarkGray);
    let mut lines = vec![Line::from(vec![
        Span::styled("search › ", accent),
        Span::raw(picker.query.clone()),
        Span::styled("▏", accent),
        Span::styled(if picker.loading { "  searching…" } else { "" }, dim),
    ])];
    lines.push(Line::default());
    if picker.hits.is_empty() && !picker.loading {
        lines.push(Line::styled(
            if picker.query.is_empty() {
                "No sessions here yet (Tab shows every directory's)."
            } else {
                "No session matches."
            },
            dim,
        ));
    }
    let rows = (inner.height as usize).saturating_sub(2) / 2;
    let first = picker.selected.saturating_sub(rows.saturating_sub(1));
    let now = now_ms();
    for (i, hit) in picker.hits.iter().enumerate().skip(first).take(rows) {
        let s = &hit.session;
        let selected = i == picker.selected;
        let marker = if selected { "▶ " } else { "  " };
        let style = if selected {
            Style::new().add_modifier(Modifier::BOLD | Modifier::REVERSED)
        } else {
            Style::new().add_modifier(Modifier::BOLD)
        };
        let current = if s.id == current_session {
            "  (this session)"
        } else {
            ""
        };
        let facts = format!(
            "  {} · {} messages · {}{current}",
            age(now - s.updated_at),
            s.message_count,
            &s.id[..s.id.len().min(8)]
        );
        // Measured in cells: a CJK title or a flag is two cells per character, and nothing may
        // run past the frame's right edge.
        let width = inner.width as usize;
        let facts = truncate(&facts, width.saturating_sub(4));
        let room = width.saturating_sub(facts.width() + 2);
        lines.push(Line::from(vec![
            Span::styled(marker, accent),
            Span::styled(truncate(s.label(), room), style),
            Span::styled(facts, dim),
        ]));
        let detail = if !hit.snippet.is_empty() && hit.snippet != s.label() {
            hit.snippet.replace('\n', " ")
        } else if picker.all {
            s.workdir.clone()
        } else if s.name.is_some() {
            s.title.clone()
        } else {
            String::new()
        };
        lines.push(Line::styled(
            truncate(&format!("    {detail}"), inner.width as usize),
            dim,
        ));
    }
    frame.render_widget(Paragraph::new(lines), inner);
}
