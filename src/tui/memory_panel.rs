//! `/memory`: the long-term memories of this project and the user as a layer over the
//! transcript. Typing searches (an empty query lists them all, most important first), ↑↓
//! choose, Enter edits the chosen one's content (Enter saves, Esc goes back), Delete or Ctrl+D
//! asks to forget it (y forgets), Esc closes. The store is the session core's: the panel only
//! sends requests (`Request::ListMemories`, `Request::ChangeMemory`) and shows the answers,
//! each tagged with the generation of the query it answers so a late one is dropped.

use crossterm::event::KeyCode;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui_textarea::TextArea;

use super::app::Effect;
use super::compositor::{Layer, Outcome, Shared};
use super::keymap::{Action, Focus};
use super::overlays::{boxed_scrolled, centered};
use super::view::DIM;
use super::wrap::truncate;
use crate::session::Memory;
use crate::session::Request;
use crate::terminal_text::sanitize;

/// The `/memory` layer's state.
#[derive(Debug, Default)]
pub(super) struct MemoryPanel {
    query: String,
    memories: Vec<Memory>,
    selected: usize,
    /// The generation of the latest request sent; older answers are stale.
    generation: u64,
    loading: bool,
    /// The chosen memory's content being edited.
    editing: Option<TextArea<'static>>,
    /// Asked to forget the chosen memory: `y` does.
    confirm_forget: bool,
}

impl MemoryPanel {
    /// `/memory`: the panel, and its request for every memory.
    pub fn open() -> (Self, Vec<Effect>) {
        let mut panel = MemoryPanel::default();
        let generation = panel.next_generation();
        let commands = vec![Effect::Request(Request::ListMemories {
            query: String::new(),
            generation,
        })];
        (panel, commands)
    }

    fn selected(&self) -> Option<&Memory> {
        self.memories.get(self.selected)
    }

    /// The next request's generation (answers to earlier ones are dropped from now on).
    fn next_generation(&mut self) -> u64 {
        self.generation += 1;
        self.loading = true;
        self.generation
    }

    /// An answer of the core; a stale one (an older query's) is dropped.
    pub fn accept(&mut self, generation: u64, memories: Vec<Memory>) {
        if generation != self.generation {
            return;
        }
        self.memories = memories;
        self.selected = self.selected.min(self.memories.len().saturating_sub(1));
        self.loading = false;
    }

    fn search(&mut self) -> Vec<Effect> {
        self.selected = 0;
        let generation = self.next_generation();
        vec![Effect::Request(Request::ListMemories {
            query: self.query.clone(),
            generation,
        })]
    }

    fn change(&mut self, id: i64, content: Option<String>) -> Vec<Effect> {
        let generation = self.next_generation();
        vec![Effect::Request(Request::ChangeMemory {
            id,
            content,
            query: self.query.clone(),
            generation,
        })]
    }

    /// A key while the chosen memory is edited.
    fn edit_key(&mut self, action: Action) -> Vec<Effect> {
        let Some(editing) = &mut self.editing else {
            return Vec::new();
        };
        match action {
            Action::Close => self.editing = None,
            Action::Submit => {
                let content = editing.lines().join("\n");
                self.editing = None;
                if let Some(id) = self.selected().map(|m| m.id) {
                    return self.change(id, Some(content));
                }
            }
            Action::Edit(key) => super::editing::edit(editing, key),
            _ => {}
        }
        Vec::new()
    }
}

impl Layer for MemoryPanel {
    fn focus(&self) -> Focus {
        Focus::MemoryPanel
    }

    /// The list, the editor of the chosen memory, or the question.
    fn mode(&self) -> Focus {
        if self.editing.is_some() {
            Focus::MemoryEdit
        } else if self.confirm_forget {
            Focus::MemoryForget
        } else {
            Focus::MemoryPanel
        }
    }

    fn update(&mut self, action: Action, _: &Shared) -> Outcome {
        // The wheel scrolls the conversation under the panel, whatever it is doing.
        if matches!(action, Action::ScrollUp(_) | Action::ScrollDown(_)) {
            return Outcome::pass();
        }
        let mode = self.mode();
        let commands = match mode {
            Focus::MemoryEdit => self.edit_key(action),
            Focus::MemoryForget => {
                // Any other key keeps it.
                self.confirm_forget = false;
                match (action, self.selected().map(|m| m.id)) {
                    (Action::Confirm, Some(id)) => self.change(id, None),
                    _ => Vec::new(),
                }
            }
            _ => match action {
                Action::Close => return Outcome::close(Vec::new()),
                Action::Prev | Action::Next => {
                    if let Some(chosen) = action.chosen(self.selected, self.memories.len()) {
                        self.selected = chosen;
                    }
                    Vec::new()
                }
                Action::Choose => {
                    if let Some(memory) = self.selected() {
                        let mut text = TextArea::default();
                        text.set_cursor_line_style(Style::default());
                        text.insert_str(&memory.content);
                        self.editing = Some(text);
                    }
                    Vec::new()
                }
                Action::Forget => {
                    self.confirm_forget = self.selected().is_some();
                    Vec::new()
                }
                Action::Edit(key) => match key.code {
                    KeyCode::Backspace => {
                        self.query.pop();
                        self.search()
                    }
                    KeyCode::Char(c) => {
                        self.query.push(c);
                        self.search()
                    }
                    _ => Vec::new(),
                },
                _ => Vec::new(),
            },
        };
        Outcome::send(commands)
    }

    fn draw(&self, _: &Shared, frame: &mut Frame, area: Rect) {
        draw(self, frame, area);
    }

    fn hints(&self) -> std::borrow::Cow<'static, str> {
        let hints = match self.mode() {
            Focus::MemoryEdit => " Enter saves · Esc goes back ",
            Focus::MemoryForget => " y forgets it · any other key keeps it ",
            _ => " type to search · ↑↓ choose · Enter edits · Del forgets · Esc closes ",
        };
        hints.into()
    }
}

fn draw(panel: &MemoryPanel, frame: &mut Frame, area: Rect) {
    let width = area.width.saturating_sub(4).min(100);
    let text = width.saturating_sub(4) as usize;
    let accent = Style::new()
        .fg(super::theme::accent())
        .add_modifier(Modifier::BOLD);
    let mut lines: Vec<Line<'static>> = vec![Line::from(vec![
        Span::styled("search › ", accent),
        Span::raw(sanitize(&panel.query)),
        Span::styled("▏", accent),
        Span::styled(if panel.loading { "  searching…" } else { "" }, DIM),
    ])];
    lines.push(Line::default());
    if panel.memories.is_empty() && !panel.loading {
        lines.push(Line::styled(
            if panel.query.is_empty() {
                "No memories yet: the model keeps durable facts with memory_write."
            } else {
                "No memory matches."
            },
            DIM,
        ));
    }
    for (index, memory) in panel.memories.iter().enumerate() {
        let chosen = index == panel.selected;
        let marker = if chosen { "› " } else { "  " };
        let style = if chosen {
            Style::new().add_modifier(Modifier::BOLD)
        } else {
            Style::new()
        };
        // What the model wrote is untrusted: no escape sequences reach the terminal.
        let line = sanitize(&memory.line());
        let line = line.strip_prefix("- ").unwrap_or(&line);
        lines.push(Line::styled(
            truncate(&format!("{marker}{line}"), text),
            style,
        ));
        if !chosen {
            continue;
        }
        lines.push(Line::styled(
            format!(
                "    #{} · importance {} · used {} · {}",
                memory.id,
                memory.importance,
                memory.use_count,
                sanitize(&memory.category)
            )
            .trim_end_matches(" · ")
            .to_owned(),
            DIM,
        ));
        if let Some(editing) = &panel.editing {
            for (row, edited) in editing.lines().iter().enumerate() {
                let lead = if row == 0 {
                    "    edit › "
                } else {
                    "           "
                };
                lines.push(Line::from(vec![
                    Span::styled(lead, accent),
                    Span::raw(sanitize(edited)),
                ]));
            }
        }
        if panel.confirm_forget {
            lines.push(Line::styled(
                "    Forget this memory? y forgets it, any other key keeps it",
                Style::new().fg(super::theme::warn()),
            ));
        }
    }
    let height = (lines.len() as u16 + 2).min(area.height);
    // Keep the chosen memory in view: scroll so its lines are inside the box.
    let chosen_row = 2 + panel.selected as u16;
    let inner = height.saturating_sub(2);
    let scroll = (chosen_row + 4).saturating_sub(inner);
    boxed_scrolled(
        frame,
        centered(area, width, height),
        Span::raw(" Memories · this project and yours "),
        Style::new(),
        lines,
        scroll,
    );
}
