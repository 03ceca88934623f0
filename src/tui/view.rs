//! Drawing the app: the transcript, the input (with the terminal's cursor at its position), the
//! status line with its token gauge, the todo panel, then the layers over them in the order of
//! `App::layers` (`layers::draw_over`). `draw` is a function of the state (`&App`); what a
//! frame needs settled first, and what the app learns from it, are `frame.rs`'s.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};
use unicode_width::UnicodeWidthStr;

use super::app::App;
use super::status_line::draw_status;
use super::wrap::{truncate, wrap};
use crate::session::TodoStatus;

pub(super) const DIM: Style = Style::new().fg(Color::DarkGray);
/// Widest the todo panel gets beside the transcript.
const TODO_PANEL: u16 = 38;

/// A whole frame: what drawing needs is settled first (`App::prepare`: the viewport, where the
/// view is scrolled to), then the screen is drawn from the state alone (`draw`), then the app
/// takes in what the frame showed (`App::drawn`).
pub fn render(app: &mut App, frame: &mut Frame) {
    app.prepare(frame.area());
    draw(app, frame);
    app.drawn();
}

/// Where each part of the screen goes in `area`.
pub(super) struct Areas {
    pub body: Rect,
    queue: Rect,
    input: Rect,
    status: Rect,
    /// The transcript's part of the body, and the todo panel's beside it on a wide screen.
    pub transcript: Rect,
    todo: Option<Rect>,
}

/// The screen's parts for `app` in `area`, with the lines above the input.
pub(super) fn areas(app: &App, area: Rect) -> (Areas, Vec<Line<'static>>) {
    let input_lines = app.input_box().rows(area.width);
    let mut queue_lines = super::jobs::running_lines(app);
    queue_lines.extend(queue_lines_of(app));
    let [body, queue, input, status] = Layout::vertical([
        Constraint::Min(1),
        Constraint::Length(queue_lines.len() as u16),
        Constraint::Length(input_lines + 1),
        Constraint::Length(1),
    ])
    .areas(area);
    let (transcript, todo) = if app.plan().show_todos && body.width >= 100 {
        let [left, right] =
            Layout::horizontal([Constraint::Min(40), Constraint::Length(TODO_PANEL)]).areas(body);
        (left, Some(right))
    } else {
        (body, None)
    };
    let areas = Areas {
        body,
        queue,
        input,
        status,
        transcript,
        todo,
    };
    (areas, queue_lines)
}

/// Draws the app: a function of its state (the only things it fills are caches: the
/// transcript's layout, the frame's clock, where the cursor and the overlays' ends fell).
pub fn draw(app: &App, frame: &mut Frame) {
    let (areas, queue_lines) = areas(app, frame.area());
    let body = areas.body;
    frame.render_widget(Paragraph::new(queue_lines), areas.queue);
    draw_transcript(app, frame, areas.transcript);
    if let Some(todo_area) = areas.todo {
        draw_todos(app, frame, todo_area);
    } else if app.plan().show_todos {
        let width = TODO_PANEL.min(body.width);
        let height = (app.plan().todos.len() as u16 + 2).max(3).min(body.height);
        let overlay =
            Rect::new(body.right().saturating_sub(width), body.y, width, height).intersection(body);
        frame.render_widget(Clear, overlay);
        draw_todos(app, frame, overlay);
    }
    app.set_cursor(draw_input(app, frame, areas.input));
    draw_status(app, frame, areas.status);

    super::layers::draw_over(app, frame, body);
}

/// Queued prompts, shown above the input.
fn queue_lines_of(app: &App) -> Vec<Line<'static>> {
    const SHOWN: usize = 3;
    let mut lines: Vec<Line<'static>> = app
        .queue()
        .prompts()
        .iter()
        .take(SHOWN)
        .map(|prompt| {
            let first = prompt.lines().next().unwrap_or("");
            Line::from(vec![
                Span::styled("  » queued  ", Style::new().fg(super::theme::warn())),
                Span::styled(truncate(first, 100), DIM),
            ])
        })
        .collect();
    if app.queue().len() > SHOWN {
        lines.push(Line::styled(
            format!(
                "  … and {} more queued (Up edits the last)",
                app.queue().len() - SHOWN
            ),
            DIM,
        ));
    }
    lines
}

/// The completion popup for `/` and `@`, just above the input. It scrolls with its selection,
/// and every label is cut to the popup's width by display width.
pub(super) fn draw_popup(app: &App, frame: &mut Frame, body: Rect) {
    let popup = app.popup();
    if popup.is_empty() {
        return;
    }
    let rows = popup.len().min(super::workflows::POPUP_ROWS) as u16;
    let width = body.width.min(90);
    let rect = Rect::new(
        body.x + 1,
        body.bottom().saturating_sub(rows + 2),
        width.saturating_sub(2),
        rows + 2,
    )
    .intersection(body);
    frame.render_widget(Clear, rect);
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(DIM)
        .title(truncate(
            " Tab completes · Enter runs · ↑↓ choose · Esc closes ",
            rect.width.saturating_sub(2) as usize,
        ));
    let inner = block.inner(rect);
    frame.render_widget(block, rect);
    let selected = app.input_box().popup_selected.min(popup.len() - 1);
    // The window of entries follows the selection.
    let first = selected.saturating_sub(rows.saturating_sub(1) as usize);
    let room = inner.width as usize;
    let label_width = 28.min(room.saturating_sub(1));
    let lines: Vec<Line> = popup
        .iter()
        .enumerate()
        .skip(first)
        .take(rows as usize)
        .map(|(i, c)| {
            let style = if i == selected {
                Style::new().fg(Color::Black).bg(Color::Cyan)
            } else {
                Style::new().fg(super::theme::accent())
            };
            let label = truncate(&c.label, label_width);
            let pad = label_width.saturating_sub(label.width());
            let label = format!(" {label}{}", " ".repeat(pad));
            let help = truncate(&format!(" {}", c.help), room.saturating_sub(label.width()));
            Line::from(vec![Span::styled(label, style), Span::styled(help, DIM)])
        })
        .collect();
    frame.render_widget(Paragraph::new(lines), inner);
}

fn draw_transcript(app: &App, frame: &mut Frame, area: Rect) {
    let width = area.width.saturating_sub(1).max(1);
    let height = area.height as usize;
    let (expanded, spinner) = (app.view().expanded, app.screen().spinner);
    app.transcript().set_now(app.clock().now());
    if app.screen().inline {
        return draw_live(app, frame, Rect { width, ..area });
    }
    // Where the view is was settled before the frame (`App::prepare`).
    let offset = app.scroll_offset();
    let (mut lines, _) = app
        .transcript()
        .window(width, height, offset, expanded, spinner);
    if app.transcript().is_empty() {
        lines = welcome(app, width);
    }
    let view = Rect { width, ..area };
    frame.render_widget(Paragraph::new(lines), view);
    if offset > 0 {
        let note = format!(
            " ↓ {} · End to follow ",
            super::transcript::more_lines(offset)
        );
        let w = note.width() as u16;
        if area.width > w {
            let at = Rect::new(area.right() - w - 1, area.bottom().saturating_sub(1), w, 1);
            frame.render_widget(
                Paragraph::new(Span::styled(
                    note,
                    Style::new().fg(Color::Black).bg(Color::Yellow),
                )),
                at,
            );
        }
    }
}

/// Inline: what is not in the scrollback yet, at the bottom of the body, right above the
/// input (the body can be taller while a popup is open). The terminal scrolls, not the view.
fn draw_live(app: &App, frame: &mut Frame, area: Rect) {
    let lines = if app.transcript().is_empty() {
        welcome(app, area.width)
    } else {
        let (expanded, spinner) = (app.view().expanded, app.screen().spinner);
        app.transcript()
            .live_window(area.width, area.height as usize, expanded, spinner)
    };
    let height = (lines.len() as u16).min(area.height);
    let at = Rect {
        y: area.bottom() - height,
        height,
        ..area
    };
    frame.render_widget(Paragraph::new(lines), at);
}

/// The width transcript lines are laid out at in a body `width` wide: one column short of the
/// transcript's part of it (the todo panel takes the right of a wide body). The full screen,
/// the inline live area and what inline mode writes above it all lay out at this width, so an
/// entry's cached layout is made once per frame.
pub(super) fn transcript_width(app: &App, width: u16) -> u16 {
    let part = if app.plan().show_todos && width >= 100 {
        width.saturating_sub(TODO_PANEL)
    } else {
        width
    };
    part.saturating_sub(1).max(1)
}

/// Inline: the live area's height at `width` (at most `rows`), and the height it wants while
/// the completion popup or the todo panel needs more room over the conversation above it.
pub(super) fn inline_heights(app: &App, width: u16, rows: u16) -> (u16, u16) {
    let input_lines = usize::from(app.input_box().rows(width));
    let queue = super::jobs::running_lines(app).len() + queue_lines_of(app).len();
    let fixed = queue + input_lines + 2;
    let text_width = transcript_width(app, width);
    let body = if app.transcript().is_empty() {
        welcome(app, text_width).len()
    } else {
        let (expanded, spinner) = (app.view().expanded, app.screen().spinner);
        app.transcript().live_height(text_width, expanded, spinner)
    }
    .max(1);
    let mut wanted = body;
    let popup = app.popup().len();
    if popup > 0 {
        wanted = wanted.max(popup.min(super::workflows::POPUP_ROWS) + 2);
    }
    if app.plan().show_todos {
        wanted = wanted.max(app.plan().todos.len().max(1) + 2);
    }
    let clamp = |n: usize| n.min(usize::from(rows)) as u16;
    (clamp(fixed + body), clamp(fixed + wanted))
}

fn welcome(app: &App, width: u16) -> Vec<Line<'static>> {
    let mut lines = vec![Line::from(vec![
        Span::styled(
            "harness9",
            Style::new()
                .fg(super::theme::accent())
                .add_modifier(Modifier::BOLD),
        ),
        Span::styled(format!("  {}", app.session().workdir), DIM),
    ])];
    // What the mode will do (its one description), so yolo never promises to ask.
    let mode = app.session().mode;
    let promise = format!("Describe a task. Mode {mode}: {}.", mode.behaviour());
    for text in [
        promise,
        "Shift+Tab switches mode · ? shows the keys · Ctrl+C twice quits".to_owned(),
    ] {
        lines.extend(wrap(&[Span::styled(text, DIM)], width, &[], &[]));
    }
    lines
}

/// Draws the input; returns where the terminal's cursor is put, if anywhere.
fn draw_input(app: &App, frame: &mut Frame, area: Rect) -> Option<(u16, u16)> {
    let [rule, text] = Layout::vertical([Constraint::Length(1), Constraint::Min(1)]).areas(area);
    let hint = app.hints();
    let fill = "─".repeat(rule.width as usize);
    let ruled: String = format!("─{hint}{fill}")
        .chars()
        .take(rule.width as usize)
        .collect();
    let line = Line::from(vec![Span::styled(ruled, DIM)]);
    frame.render_widget(Paragraph::new(line), rule);
    let [prompt, field] =
        Layout::horizontal([Constraint::Length(2), Constraint::Min(1)]).areas(text);
    // The text is laid out as the box's height was measured (`InputBox::rows`).
    let field = Rect {
        width: super::input_box::input_field_width(text.width),
        ..field
    };
    frame.render_widget(
        Paragraph::new(Span::styled(
            "› ",
            Style::new()
                .fg(super::theme::accent())
                .add_modifier(Modifier::BOLD),
        )),
        prompt,
    );
    frame.render_widget(&app.input_box().input, field);
    // The terminal's own cursor sits where the next character goes, so an input method places
    // its window there.
    if app.layer() == super::keymap::Focus::Main {
        let cursor = app.input_box().input.screen_cursor();
        let (top, left) = app.input_box().input.scroll_offset();
        let row = (cursor.row as u16).saturating_sub(top);
        let col = (cursor.col as u16).saturating_sub(left);
        // The column right of the field is kept for a cursor after a full row.
        if row < field.height && field.x + col < text.right() {
            let at = (field.x + col, field.y + row);
            frame.set_cursor_position(at);
            return Some(at);
        }
    }
    None
}

fn draw_todos(app: &App, frame: &mut Frame, area: Rect) {
    let done = app
        .plan()
        .todos
        .iter()
        .filter(|t| t.status == TodoStatus::Completed)
        .count();
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(DIM)
        .title(format!(
            " todos {done}/{} · Ctrl+T ",
            app.plan().todos.len()
        ));
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let mut lines = Vec::new();
    if app.plan().todos.is_empty() {
        lines.push(Line::styled("no todo list yet", DIM));
    }
    for todo in &app.plan().todos {
        let (mark, style) = match todo.status {
            TodoStatus::Completed => (
                "✓ ",
                Style::new()
                    .fg(super::theme::ok())
                    .add_modifier(Modifier::CROSSED_OUT),
            ),
            TodoStatus::InProgress => (
                "▶ ",
                Style::new()
                    .fg(super::theme::warn())
                    .add_modifier(Modifier::BOLD),
            ),
            TodoStatus::Pending => ("○ ", Style::new()),
        };
        lines.extend(wrap(
            &[Span::styled(todo.content.clone(), style)],
            inner.width,
            &[Span::styled(mark, style)],
            &[Span::raw("  ")],
        ));
    }
    frame.render_widget(Paragraph::new(lines), inner);
}
