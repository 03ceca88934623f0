//! Drawing the app: the transcript, the input, the status line with its token gauge, the todo
//! panel, and the overlays (approval, help) as layers over the transcript. A function of the
//! state; the only thing it changes is the transcript's layout cache and the scroll position.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};
use unicode_width::UnicodeWidthStr;

use super::app::{App, Scroll};
use super::keymap::KEY_HINTS;
use super::tool_view::{format_duration, spinner};
use super::wrap::{truncate, wrap};
use crate::engine::ApprovalRequest;
use crate::planning::{Mode, TodoStatus};

const DIM: Style = Style::new().fg(Color::DarkGray);
/// Widest the todo panel gets beside the transcript.
const TODO_PANEL: u16 = 38;

pub fn draw(app: &mut App, frame: &mut Frame) {
    let area = frame.area();
    let input_lines = app.input.lines().len().clamp(1, 6) as u16;
    let queue_lines = queue_lines(app);
    let [body, queue_area, input_area, status_area] = Layout::vertical([
        Constraint::Min(1),
        Constraint::Length(queue_lines.len() as u16),
        Constraint::Length(input_lines + 1),
        Constraint::Length(1),
    ])
    .areas(area);
    frame.render_widget(Paragraph::new(queue_lines), queue_area);

    let (transcript_area, todo_area) = if app.show_todos && body.width >= 100 {
        let [left, right] =
            Layout::horizontal([Constraint::Min(40), Constraint::Length(TODO_PANEL)]).areas(body);
        (left, Some(right))
    } else {
        (body, None)
    };
    draw_transcript(app, frame, transcript_area);
    if let Some(todo_area) = todo_area {
        draw_todos(app, frame, todo_area);
    } else if app.show_todos {
        let width = TODO_PANEL.min(body.width);
        let height = (app.todos.len() as u16 + 2).clamp(3, body.height);
        let overlay = Rect::new(body.right().saturating_sub(width), body.y, width, height);
        frame.render_widget(Clear, overlay);
        draw_todos(app, frame, overlay);
    }
    draw_input(app, frame, input_area);
    draw_status(app, frame, status_area);

    draw_popup(app, frame, body);
    if let Some(picker) = &app.picker {
        super::picker::draw(picker, &app.session.session_id, frame, body);
    }
    if app.layer() == super::keymap::Layer::PlanReview {
        super::plan_review::draw(app, frame, body);
    }
    if let Some(request) = app.approvals.front().cloned() {
        draw_approval(app, &request, frame, body);
    }
    if app.help {
        draw_help(frame, body);
    }
}

/// Queued prompts, shown above the input.
fn queue_lines(app: &App) -> Vec<Line<'static>> {
    const SHOWN: usize = 3;
    let mut lines: Vec<Line<'static>> = app
        .queue
        .iter()
        .take(SHOWN)
        .map(|prompt| {
            let first = prompt.lines().next().unwrap_or("");
            Line::from(vec![
                Span::styled("  » queued  ", Style::new().fg(Color::Yellow)),
                Span::styled(truncate(first, 100), DIM),
            ])
        })
        .collect();
    if app.queue.len() > SHOWN {
        lines.push(Line::styled(
            format!(
                "  … and {} more queued (Up edits the last)",
                app.queue.len() - SHOWN
            ),
            DIM,
        ));
    }
    lines
}

/// The completion popup for `/` and `@`, just above the input.
fn draw_popup(app: &App, frame: &mut Frame, body: Rect) {
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
    );
    frame.render_widget(Clear, rect);
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(DIM)
        .title(" Tab completes · ↑↓ choose ");
    let inner = block.inner(rect);
    frame.render_widget(block, rect);
    let selected = app.popup_selected.min(popup.len() - 1);
    let lines: Vec<Line> = popup
        .iter()
        .take(rows as usize)
        .enumerate()
        .map(|(i, c)| {
            let style = if i == selected {
                Style::new().fg(Color::Black).bg(Color::Cyan)
            } else {
                Style::new().fg(Color::Cyan)
            };
            Line::from(vec![
                Span::styled(format!(" {:<28}", c.label), style),
                Span::styled(format!(" {}", c.help), DIM),
            ])
        })
        .collect();
    frame.render_widget(Paragraph::new(lines), inner);
}

fn draw_transcript(app: &mut App, frame: &mut Frame, area: Rect) {
    let width = area.width.saturating_sub(1).max(1);
    let height = area.height as usize;
    app.viewport = area.height;
    let (expanded, spinner) = (app.expanded, app.spinner);
    // Resolve scrolling now that the width is known.
    if app.pending_top {
        app.pending_top = false;
        app.scroll = Scroll::Anchored { top: 0 };
    }
    if app.pending_scroll != 0 || matches!(app.scroll, Scroll::Anchored { .. }) {
        let total = app.transcript.total_height(width, expanded, spinner);
        let bottom_top = total.saturating_sub(height);
        let top = match app.scroll {
            Scroll::Follow => bottom_top,
            Scroll::Anchored { top } => top.min(bottom_top),
        } as i64;
        let top = (top + app.pending_scroll).clamp(0, bottom_top as i64) as usize;
        app.pending_scroll = 0;
        app.scroll = if top >= bottom_top {
            Scroll::Follow
        } else {
            Scroll::Anchored { top }
        };
    }
    let offset = match app.scroll {
        Scroll::Follow => 0,
        Scroll::Anchored { top } => {
            let total = app.transcript.total_height(width, expanded, spinner);
            total.saturating_sub(top + height)
        }
    };
    let (mut lines, _) = app
        .transcript
        .window(width, height, offset, expanded, spinner);
    if app.transcript.is_empty() {
        lines = welcome(app, width);
    }
    let view = Rect { width, ..area };
    frame.render_widget(Paragraph::new(lines), view);
    if offset > 0 {
        let note = format!(" ↓ {offset} more lines · End to follow ");
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

fn welcome(app: &App, width: u16) -> Vec<Line<'static>> {
    let mut lines = vec![Line::from(vec![
        Span::styled(
            "harness9",
            Style::new().fg(Color::Cyan).add_modifier(Modifier::BOLD),
        ),
        Span::styled(format!("  {}", app.session.workdir), DIM),
    ])];
    for text in [
        "Describe a task: harness9 reads, edits and runs commands here, asking before anything risky.",
        "Shift+Tab switches mode · ? shows the keys · Ctrl+C twice quits",
    ] {
        lines.extend(wrap(&[Span::styled(text, DIM)], width, &[], &[]));
    }
    lines
}

fn draw_input(app: &App, frame: &mut Frame, area: Rect) {
    let [rule, text] = Layout::vertical([Constraint::Length(1), Constraint::Min(1)]).areas(area);
    let hint = if app.approvals.is_empty() {
        " Enter send · Shift+Enter newline · Esc interrupt · ? keys "
    } else {
        " answer the approval above first "
    };
    let fill = "─".repeat(rule.width as usize);
    let ruled: String = format!("─{hint}{fill}")
        .chars()
        .take(rule.width as usize)
        .collect();
    let line = Line::from(vec![Span::styled(ruled, DIM)]);
    frame.render_widget(Paragraph::new(line), rule);
    let [prompt, field] =
        Layout::horizontal([Constraint::Length(2), Constraint::Min(1)]).areas(text);
    frame.render_widget(
        Paragraph::new(Span::styled(
            "› ",
            Style::new().fg(Color::Cyan).add_modifier(Modifier::BOLD),
        )),
        prompt,
    );
    frame.render_widget(&app.input, field);
}

pub fn mode_style(mode: Mode) -> Style {
    let color = match mode {
        Mode::Default => Color::Blue,
        Mode::AutoEdit => Color::Green,
        Mode::Plan => Color::Magenta,
        Mode::Yolo => Color::Red,
    };
    Style::new()
        .fg(Color::Black)
        .bg(color)
        .add_modifier(Modifier::BOLD)
}

/// `~` for the home directory, and the tail of a long path.
fn short_path(path: &str, max: usize) -> String {
    let home = std::env::var("HOME").unwrap_or_default();
    let path = match path.strip_prefix(&home) {
        Some(rest) if !home.is_empty() => format!("~{rest}"),
        _ => path.to_owned(),
    };
    if path.chars().count() <= max {
        return path;
    }
    let tail: String = path
        .chars()
        .rev()
        .take(max.saturating_sub(1))
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    format!("…{tail}")
}

fn gauge(app: &App) -> Vec<Span<'static>> {
    let window = app
        .tokens
        .map(|t| t.context_window)
        .filter(|w| *w > 0)
        .unwrap_or(app.session.context_window);
    let used = app
        .tokens
        .map(|t| t.input_tokens + t.output_tokens)
        .unwrap_or(0);
    if window == 0 {
        return Vec::new();
    }
    let share = used as f64 / window as f64;
    let color = if share >= 0.8 {
        Color::Red
    } else if share >= 0.5 {
        Color::Yellow
    } else {
        Color::Green
    };
    let cells = 10usize;
    let filled = ((share * cells as f64).round() as usize).min(cells);
    let estimated = app.tokens.is_some_and(|t| t.estimated);
    vec![
        Span::styled("█".repeat(filled), Style::new().fg(color)),
        Span::styled("░".repeat(cells - filled), DIM),
        Span::styled(
            format!(
                " {}{:.0}% {}/{}",
                if estimated { "~" } else { "" },
                share * 100.0,
                compact(used),
                compact(window)
            ),
            Style::new().fg(color),
        ),
    ]
}

fn compact(tokens: u64) -> String {
    if tokens >= 1_000_000 {
        format!("{:.1}M", tokens as f64 / 1e6)
    } else if tokens >= 1000 {
        format!("{}k", tokens / 1000)
    } else {
        tokens.to_string()
    }
}

fn draw_status(app: &App, frame: &mut Frame, area: Rect) {
    // Segments in display order with a priority: when the line is too narrow, the lowest
    // priorities go first, so the mode, the work in progress and a retry reason always show.
    let mut segments: Vec<(u8, Vec<Span<'static>>)> = vec![
        (
            9,
            vec![
                Span::styled(
                    format!(" {} ", app.session.mode),
                    mode_style(app.session.mode),
                ),
                Span::raw(" "),
            ],
        ),
        (
            3,
            vec![Span::styled(
                format!("{}/", app.session.provider),
                Style::new().fg(Color::Cyan),
            )],
        ),
        (
            5,
            vec![Span::styled(
                app.session.model.clone(),
                Style::new().fg(Color::Cyan),
            )],
        ),
        (
            1,
            vec![
                Span::styled(" · ", DIM),
                Span::raw(short_path(&app.session.workdir, 30)),
            ],
        ),
    ];
    if app.turn > 0 {
        segments.push((2, vec![Span::styled(format!(" · turn {}", app.turn), DIM)]));
    }
    if let Some(since) = app.working_since {
        let elapsed = format_duration(std::time::Duration::from_secs(since.elapsed().as_secs()));
        segments.push((
            8,
            vec![Span::styled(
                format!(" · {} {elapsed}", spinner(app.spinner)),
                Style::new().fg(Color::Cyan),
            )],
        ));
    }
    if let Some(reason) = &app.retry {
        segments.push((
            7,
            vec![Span::styled(
                format!(" · retrying: {reason}"),
                Style::new().fg(Color::Yellow),
            )],
        ));
    }
    if app.auto_continue {
        segments.push((
            7,
            vec![Span::styled(
                " · auto-continue (Esc stops)",
                Style::new().fg(Color::Magenta),
            )],
        ));
    }
    if !app.mouse_captured {
        segments.push((
            7,
            vec![Span::styled(
                " · mouse: select (F2)",
                Style::new().fg(Color::Magenta),
            )],
        ));
    }
    if let Some(flash) = &app.flash {
        segments.push((
            6,
            vec![Span::styled(
                format!(" · {flash}"),
                Style::new().fg(Color::Yellow),
            )],
        ));
    }
    let right = gauge(app);
    let right_width: usize = right.iter().map(|s| s.content.width()).sum::<usize>() + 1;
    let room = (area.width as usize).saturating_sub(right_width + 1);
    let width_of = |segments: &[(u8, Vec<Span<'static>>)]| -> usize {
        segments
            .iter()
            .flat_map(|(_, spans)| spans)
            .map(|s| s.content.width())
            .sum()
    };
    while width_of(&segments) > room && segments.len() > 1 {
        let Some((lowest, _)) = segments.iter().enumerate().min_by_key(|(_, (p, _))| *p) else {
            break;
        };
        segments.remove(lowest);
    }
    let mut used = 0;
    let mut spans = Vec::new();
    for span in segments.into_iter().flat_map(|(_, spans)| spans) {
        let w = span.content.width();
        if used + w > room {
            spans.push(Span::styled(
                truncate(&span.content, room.saturating_sub(used)),
                span.style,
            ));
            used = room;
            break;
        }
        used += w;
        spans.push(span);
    }
    spans.push(Span::raw(" ".repeat(room.saturating_sub(used) + 1)));
    spans.extend(right);
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
}

fn draw_todos(app: &App, frame: &mut Frame, area: Rect) {
    let done = app
        .todos
        .iter()
        .filter(|t| t.status == TodoStatus::Completed)
        .count();
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(DIM)
        .title(format!(" todos {done}/{} · Ctrl+T ", app.todos.len()));
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let mut lines = Vec::new();
    if app.todos.is_empty() {
        lines.push(Line::styled("no todo list yet", DIM));
    }
    for todo in &app.todos {
        let (mark, style) = match todo.status {
            TodoStatus::Completed => (
                "✓ ",
                Style::new()
                    .fg(Color::Green)
                    .add_modifier(Modifier::CROSSED_OUT),
            ),
            TodoStatus::InProgress => (
                "▶ ",
                Style::new().fg(Color::Yellow).add_modifier(Modifier::BOLD),
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

/// A rectangle of `width` × `height` centred in `area`.
fn centered(area: Rect, width: u16, height: u16) -> Rect {
    let width = width.min(area.width);
    let height = height.min(area.height);
    Rect::new(
        area.x + (area.width - width) / 2,
        area.y + (area.height - height) / 2,
        width,
        height,
    )
}

/// The call as a person reads it: the command, the diff, the path and size.
pub fn describe_call(request: &ApprovalRequest, width: u16) -> Vec<Line<'static>> {
    let call = &request.tool_call;
    let args = call.arguments_value();
    let text = |key: &str| {
        args.get(key)
            .and_then(|v| v.as_str())
            .unwrap_or("")
            .to_owned()
    };
    let mut lines = Vec::new();
    match call.name.as_str() {
        "bash" => {
            let style = Style::new().fg(Color::Yellow).add_modifier(Modifier::BOLD);
            for (i, line) in text("command").lines().enumerate() {
                let first = if i == 0 { "$ " } else { "  " };
                lines.extend(wrap(
                    &[Span::styled(line.to_owned(), style)],
                    width,
                    &[Span::styled(first, DIM)],
                    &[Span::raw("  ")],
                ));
            }
        }
        "edit_file" => {
            lines.push(Line::styled(
                format!("edit {}", text("path")),
                Style::new().add_modifier(Modifier::BOLD),
            ));
            let (old, new) = (text("old_string"), text("new_string"));
            let diff = similar::TextDiff::from_lines(old.as_str(), new.as_str())
                .iter_all_changes()
                .map(|change| {
                    let (sign, style) = match change.tag() {
                        similar::ChangeTag::Delete => ("-", Style::new().fg(Color::Red)),
                        similar::ChangeTag::Insert => ("+", Style::new().fg(Color::Green)),
                        similar::ChangeTag::Equal => (" ", DIM),
                    };
                    Line::styled(
                        truncate(
                            &format!("{sign} {}", change.value().trim_end_matches('\n')),
                            width as usize,
                        ),
                        style,
                    )
                })
                .collect::<Vec<_>>();
            let total = diff.len();
            lines.extend(diff.into_iter().take(14));
            if total > 14 {
                lines.push(Line::styled(
                    format!("… {} more diff lines", total - 14),
                    DIM,
                ));
            }
            if args.get("replace_all").and_then(|v| v.as_bool()) == Some(true) {
                lines.push(Line::styled("(every occurrence)", DIM));
            }
        }
        "write_file" => {
            let content = text("content");
            lines.push(Line::styled(
                format!(
                    "write {} · {} lines, {} bytes",
                    text("path"),
                    content.lines().count(),
                    content.len()
                ),
                Style::new().add_modifier(Modifier::BOLD),
            ));
            for line in content.lines().take(6) {
                lines.push(Line::styled(
                    truncate(&format!("  {line}"), width as usize),
                    DIM,
                ));
            }
        }
        _ => {
            let pretty = serde_json::to_string_pretty(&args).unwrap_or_default();
            for line in pretty.lines().take(12) {
                lines.push(Line::styled(truncate(line, width as usize), Style::new()));
            }
        }
    }
    lines
}

fn draw_approval(app: &App, request: &ApprovalRequest, frame: &mut Frame, area: Rect) {
    let width = area.width.saturating_sub(4).clamp(20, 100);
    let inner_width = width.saturating_sub(4);
    let mut lines = describe_call(request, inner_width);
    lines.push(Line::default());
    lines.push(Line::styled(
        format!("needs approval: {}", request.reason),
        Style::new().fg(Color::Yellow),
    ));
    lines.push(Line::default());
    let key = Style::new().fg(Color::Cyan).add_modifier(Modifier::BOLD);
    let mut choices: Vec<(&str, String)> = vec![
        ("y", "allow once: run this call only".into()),
        (
            "a",
            format!(
                "allow for the rest of this session: {}",
                request.always_scope
            ),
        ),
        ("n", "deny (Esc): the model is told you said no".into()),
        ("d", "deny and tell the model what to do instead".into()),
    ];
    if let Some(rule) = &request.suggested_rule {
        choices.insert(
            2,
            (
                "r",
                format!("always allow calls like this: writes `{rule}` to .harness9/settings.json"),
            ),
        );
    }
    for (k, what) in choices {
        lines.extend(wrap(
            &[Span::raw(what)],
            inner_width,
            &[Span::styled(format!(" {k}  "), key)],
            &[Span::raw("    ")],
        ));
    }
    if let Some(reason) = &app.deny_reason {
        lines.push(Line::default());
        lines.push(Line::styled(
            "What should the model do instead? (Enter sends, Esc goes back)",
            Style::new().fg(Color::Yellow),
        ));
        for line in reason.lines() {
            lines.push(Line::from(vec![
                Span::styled("> ", key),
                Span::raw(line.clone()),
            ]));
        }
    }
    let pending = app.approvals.len();
    let title = if pending > 1 {
        format!(" Approve {}? (1 of {pending}) ", request.tool_call.name)
    } else {
        format!(" Approve {}? ", request.tool_call.name)
    };
    let height = (lines.len() as u16 + 2).min(area.height);
    let rect = centered(area, width, height);
    frame.render_widget(Clear, rect);
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(Style::new().fg(Color::Yellow))
        .title(Span::styled(
            title,
            Style::new().add_modifier(Modifier::BOLD),
        ));
    let inner = block.inner(rect);
    frame.render_widget(block, rect);
    let inner = Rect {
        x: inner.x + 1,
        width: inner.width.saturating_sub(1),
        ..inner
    };
    frame.render_widget(Paragraph::new(lines), inner);
}

fn draw_help(frame: &mut Frame, area: Rect) {
    let key_width = KEY_HINTS.iter().map(|(k, _)| k.width()).max().unwrap_or(10) + 2;
    let mut lines: Vec<Line> = KEY_HINTS
        .iter()
        .map(|(keys, what)| {
            Line::from(vec![
                Span::styled(
                    format!("{keys:<key_width$}"),
                    Style::new().fg(Color::Cyan).add_modifier(Modifier::BOLD),
                ),
                Span::raw(*what),
            ])
        })
        .collect();
    lines.push(Line::default());
    lines.push(Line::styled(
        "Modes: default asks before edits and commands; auto-edit runs edits;",
        DIM,
    ));
    lines.push(Line::styled(
        "plan only reads and plans; yolo runs everything (--mode yolo).",
        DIM,
    ));
    let width = (key_width + 50) as u16 + 4;
    let rect = centered(area, width, lines.len() as u16 + 2);
    frame.render_widget(Clear, rect);
    let block = Block::default()
        .borders(Borders::ALL)
        .title(" Keys · Esc closes ");
    let inner = block.inner(rect);
    frame.render_widget(block, rect);
    frame.render_widget(
        Paragraph::new(lines),
        Rect {
            x: inner.x + 1,
            width: inner.width.saturating_sub(1),
            ..inner
        },
    );
}
