//! The session picker (Ctrl+R, `/resume`, `harness9 --resume`): this directory's sessions newest
//! first, Tab for every directory's, typing filters by name, title and full text. Queries run off
//! the UI task; each carries a generation and answers to an older one are dropped.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};

use unicode_width::UnicodeWidthStr;

use super::wrap::truncate;
use crate::session::SessionHit;
use crate::session::text::{age, now_ms};

#[derive(Debug, Default)]
pub struct Picker {
    pub query: String,
    /// Every directory's sessions, not only this one's.
    pub all: bool,
    pub hits: Vec<SessionHit>,
    pub selected: usize,
    /// The generation of the latest query sent; older answers are stale.
    pub generation: u64,
    pub loading: bool,
}

impl Picker {
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

pub fn draw(picker: &Picker, current_session: &str, frame: &mut Frame, area: Rect) {
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
