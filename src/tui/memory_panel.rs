//! `/memory`: the long-term memories of this project and the user as a layer over the
//! transcript. Typing searches (an empty query lists them all, most important first), ↑↓
//! choose, Enter edits the chosen one's content (Enter saves, Esc goes back), Delete or Ctrl+D
//! asks to forget it (y forgets), Esc closes. The store is the session core's: the panel only
//! sends requests (`Command::ListMemories`, `Command::ChangeMemory`) and shows the answers,
//! each tagged with the generation of the query it answers so a late one is dropped.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui_textarea::TextArea;

use super::app::{App, Command};
use super::keymap::Layer;
use super::overlays::{boxed_scrolled, centered};
use super::view::DIM;
use super::wrap::truncate;
use crate::session::Memory;
use crate::terminal_text::sanitize;

/// The panel's state (`App::memory_panel`).
#[derive(Debug, Default)]
pub struct MemoryPanel {
    pub query: String,
    pub memories: Vec<Memory>,
    pub selected: usize,
    /// The generation of the latest request sent; older answers are stale.
    pub generation: u64,
    pub loading: bool,
    /// The chosen memory's content being edited.
    pub editing: Option<TextArea<'static>>,
    /// Asked to forget the chosen memory: `y` does.
    pub confirm_forget: bool,
}

impl MemoryPanel {
    fn selected(&self) -> Option<&Memory> {
        self.memories.get(self.selected)
    }

    /// The next request's generation (answers to earlier ones are dropped from now on).
    fn next_generation(&mut self) -> u64 {
        self.generation += 1;
        self.loading = true;
        self.generation
    }
}

/// `/memory`: opens the panel and asks for every memory.
pub fn open(app: &mut App) -> Vec<Command> {
    let mut panel = MemoryPanel::default();
    let generation = panel.next_generation();
    app.memory_panel = Some(panel);
    vec![Command::ListMemories {
        query: String::new(),
        generation,
    }]
}

/// An answer of the core; a stale one (an older query's) is dropped.
pub fn accept(app: &mut App, generation: u64, memories: Vec<Memory>) {
    let Some(panel) = &mut app.memory_panel else {
        return;
    };
    if generation != panel.generation {
        return;
    }
    panel.memories = memories;
    panel.selected = panel.selected.min(panel.memories.len().saturating_sub(1));
    panel.loading = false;
}

/// Keys while the panel has the focus; `None` when it is closed or a dialog is over it.
pub fn key(app: &mut App, key: KeyEvent) -> Option<Vec<Command>> {
    if app.memory_panel.is_none() || app.layer() != Layer::MemoryPanel {
        return None;
    }
    let panel = app.memory_panel.as_mut()?;
    let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
    if let Some(editing) = &mut panel.editing {
        return Some(match key.code {
            KeyCode::Esc => {
                panel.editing = None;
                Vec::new()
            }
            KeyCode::Enter => {
                let content = editing.lines().join("\n");
                panel.editing = None;
                match panel.selected().map(|m| m.id) {
                    Some(id) => change(panel, id, Some(content)),
                    None => Vec::new(),
                }
            }
            _ => {
                super::editing::edit(editing, key);
                Vec::new()
            }
        });
    }
    if panel.confirm_forget {
        panel.confirm_forget = false;
        let id = panel.selected().map(|m| m.id);
        return Some(match (key.code, id) {
            (KeyCode::Char('y'), Some(id)) => change(panel, id, None),
            _ => Vec::new(),
        });
    }
    let commands = match key.code {
        KeyCode::Esc => {
            app.memory_panel = None;
            Vec::new()
        }
        KeyCode::Up => {
            panel.selected = panel.selected.saturating_sub(1);
            Vec::new()
        }
        KeyCode::Down => {
            panel.selected = (panel.selected + 1).min(panel.memories.len().saturating_sub(1));
            Vec::new()
        }
        KeyCode::Enter => {
            if let Some(memory) = panel.selected() {
                let mut text = TextArea::default();
                text.set_cursor_line_style(Style::default());
                text.insert_str(&memory.content);
                panel.editing = Some(text);
            }
            Vec::new()
        }
        KeyCode::Delete | KeyCode::Char('d') if ctrl || key.code == KeyCode::Delete => {
            panel.confirm_forget = panel.selected().is_some();
            Vec::new()
        }
        KeyCode::Backspace => {
            panel.query.pop();
            search(panel)
        }
        KeyCode::Char(c) if !ctrl => {
            panel.query.push(c);
            search(panel)
        }
        _ => Vec::new(),
    };
    Some(commands)
}

fn search(panel: &mut MemoryPanel) -> Vec<Command> {
    panel.selected = 0;
    let generation = panel.next_generation();
    vec![Command::ListMemories {
        query: panel.query.clone(),
        generation,
    }]
}

fn change(panel: &mut MemoryPanel, id: i64, content: Option<String>) -> Vec<Command> {
    let generation = panel.next_generation();
    vec![Command::ChangeMemory {
        id,
        content,
        query: panel.query.clone(),
        generation,
    }]
}

/// The hints for the rule above the input while the panel has the focus.
pub fn hints(app: &App) -> &'static str {
    match &app.memory_panel {
        Some(panel) if panel.editing.is_some() => " Enter saves · Esc goes back ",
        Some(panel) if panel.confirm_forget => " y forgets it · any other key keeps it ",
        _ => " type to search · ↑↓ choose · Enter edits · Del forgets · Esc closes ",
    }
}

pub fn draw(panel: &MemoryPanel, frame: &mut Frame, area: Rect) {
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
