//! The overlays drawn as layers over the transcript: the approval (the call as a person reads
//! it, and exactly what each answer covers), the folder trust question and the keys. `boxed` draws the frame they share.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};
use unicode_width::UnicodeWidthStr;

use super::app::App;
use super::keymap::KEY_HINTS;
use super::view::DIM;
use super::wrap::{truncate, wrap};
use crate::engine::ApprovalRequest;

/// Clears `rect`, frames it with `title` in `border`, and draws `lines` inside with a margin.
pub(super) fn boxed(
    frame: &mut Frame,
    rect: Rect,
    title: Span<'static>,
    border: Style,
    lines: Vec<Line<'static>>,
) {
    boxed_scrolled(frame, rect, title, border, lines, 0);
}

/// `boxed` for text that may not fit: `scroll` lines are skipped, and the bottom edge says what
/// is above and below. Returns the largest useful scroll (the caller keeps its offset in it).
pub(super) fn boxed_scrolled(
    frame: &mut Frame,
    rect: Rect,
    title: Span<'static>,
    border: Style,
    lines: Vec<Line<'static>>,
    scroll: u16,
) -> u16 {
    // Never draw past the screen, however small it is.
    let rect = rect.intersection(frame.area());
    frame.render_widget(Clear, rect);
    let inner_height = rect.height.saturating_sub(2) as usize;
    let most = lines.len().saturating_sub(inner_height);
    let skip = (scroll as usize).min(most);
    let mut block = Block::default()
        .borders(Borders::ALL)
        .border_style(border)
        .title(truncate_span(title, rect.width.saturating_sub(2)));
    if most > 0 {
        let below = most - skip;
        let note = match (skip, below) {
            (0, b) => format!(" ↓ {b} more · ↑↓ scroll "),
            (a, 0) => format!(" ↑ {a} more · ↑↓ scroll "),
            (a, b) => format!(" ↑ {a} · ↓ {b} more "),
        };
        block = block.title_bottom(truncate(&note, rect.width.saturating_sub(2) as usize));
    }
    let inner = block.inner(rect);
    frame.render_widget(block, rect);
    let inner = Rect {
        x: inner.x + 1,
        width: inner.width.saturating_sub(1),
        ..inner
    };
    let shown: Vec<Line<'static>> = lines.into_iter().skip(skip).collect();
    frame.render_widget(Paragraph::new(shown), inner);
    most as u16
}

/// A title cut to `width` cells, so it never runs over the frame's corner.
fn truncate_span(title: Span<'static>, width: u16) -> Span<'static> {
    Span::styled(truncate(&title.content, width as usize), title.style)
}

/// A dialog's answers, one each: its key in `key`'s style, then what it does, wrapped to
/// `width` under itself.
pub(super) fn choice_lines(
    choices: impl IntoIterator<Item = (&'static str, String)>,
    width: u16,
    key: Style,
) -> Vec<Line<'static>> {
    let mut lines = Vec::new();
    for (k, what) in choices {
        lines.extend(wrap(
            &[Span::raw(what)],
            width,
            &[Span::styled(format!(" {k}  "), key)],
            &[Span::raw("    ")],
        ));
    }
    lines
}

/// A rectangle of `width` × `height` centred in `area`.
pub(super) fn centered(area: Rect, width: u16, height: u16) -> Rect {
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
        "edit_file" | "write_file" if request.preview.is_some() => {
            let head = if call.name == "edit_file" {
                format!("edit {}", text("path"))
            } else {
                let content = text("content");
                format!(
                    "write {} · {} lines, {} bytes",
                    text("path"),
                    content.lines().count(),
                    content.len()
                )
            };
            lines.push(Line::styled(
                head,
                Style::new().add_modifier(Modifier::BOLD),
            ));
            lines.extend(preview_lines(
                request.preview.as_deref().unwrap_or(""),
                width,
            ));
        }
        "bash" => {
            let style = Style::new()
                .fg(super::theme::warn())
                .add_modifier(Modifier::BOLD);
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
                        similar::ChangeTag::Insert => ("+", Style::new().fg(super::theme::ok())),
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
                    format!(
                        "… {} of the diff",
                        super::transcript::more_lines(total - 14)
                    ),
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

/// Diff lines an approval shows, at most.
const PREVIEW_LINES: usize = 14;

/// An edit's preview (a unified diff of the file as it is now) with each line's number in its
/// file, the hunks apart, at most `PREVIEW_LINES`.
fn preview_lines(preview: &str, width: u16) -> Vec<Line<'static>> {
    let clean = super::tool_view::expand_tabs(&crate::terminal_text::sanitize(preview));
    let body: Vec<&str> = clean.lines().collect();
    let mut lines = Vec::new();
    let mut hunks = 0;
    for (number, line) in super::tool_view::numbered_diff(&body, false) {
        if line.starts_with("@@ ") {
            hunks += 1;
            if hunks > 1 {
                lines.push(Line::styled("     ⋮", DIM));
            }
            continue;
        }
        let style = match line.chars().next() {
            Some('-') => Style::new().fg(Color::Red),
            Some('+') => Style::new().fg(super::theme::ok()),
            _ => DIM,
        };
        lines.push(Line::styled(
            truncate(&format!("{number:>4} {line}"), width as usize),
            style,
        ));
    }
    let total = lines.len();
    lines.truncate(PREVIEW_LINES);
    if total > PREVIEW_LINES {
        lines.push(Line::styled(
            format!(
                "… {} of the diff",
                super::transcript::more_lines(total - PREVIEW_LINES)
            ),
            DIM,
        ));
    }
    lines
}

pub(super) fn draw_approval(
    app: &App,
    request: &ApprovalRequest,
    overlay_scroll: u16,
    frame: &mut Frame,
    area: Rect,
) -> u16 {
    let width = area.width.saturating_sub(4).clamp(20, 100);
    let inner_width = width.saturating_sub(4);
    let call = describe_call(request, inner_width);
    let mut lines = Vec::new();
    lines.push(Line::default());
    // A sub-agent's call says who asks: the user is not answering the main agent.
    if let Some(agent) = &request.agent {
        lines.extend(wrap(
            &[Span::styled(
                format!(
                    "the sub-agent {agent} wants to run {}",
                    request.tool_call.name
                ),
                Style::new().add_modifier(Modifier::BOLD),
            )],
            inner_width,
            &[],
            &[],
        ));
    }
    // Wrapped: a background command's reason says what its sandbox allows, a long line.
    lines.extend(wrap(
        &[Span::styled(
            format!("needs approval: {}", request.reason),
            Style::new().fg(super::theme::warn()),
        )],
        inner_width,
        &[],
        &[],
    ));
    lines.push(Line::default());
    let key = Style::new()
        .fg(super::theme::accent())
        .add_modifier(Modifier::BOLD);
    let mut choices: Vec<(&'static str, String)> = vec![
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
                format!(
                    "always allow calls like this: writes `{rule}` to .harness9/settings.local.json"
                ),
            ),
        );
    }
    lines.extend(choice_lines(choices, inner_width, key));
    if let Some(reason) = &app.approvals().deny_reason {
        lines.push(Line::default());
        lines.push(Line::styled(
            "What should the model do instead? (Enter sends, Esc goes back)",
            Style::new().fg(super::theme::warn()),
        ));
        for line in reason.lines() {
            lines.push(Line::from(vec![
                Span::styled("> ", key),
                Span::raw(line.clone()),
            ]));
        }
    }
    let pending = app.approvals().requests.len();
    let asks = match &request.agent {
        Some(agent) => format!(" for {agent}"),
        None => String::new(),
    };
    let title = if pending > 1 {
        format!(
            " Approve {}{asks}? (1 of {pending}) ",
            request.tool_call.name
        )
    } else {
        format!(" Approve {}{asks}? ", request.tool_call.name)
    };
    let title = Span::styled(title, Style::new().add_modifier(Modifier::BOLD));
    // The answers stay on screen: when the whole does not fit, the call above them scrolls
    // (cut to the room left, with a line saying how to see the rest); on a screen too small
    // even for the answers, everything scrolls.
    let room = (area.height as usize).saturating_sub(2 + lines.len());
    let (lines, scroll, most) = if call.len() + lines.len() + 2 <= area.height as usize {
        ([call, lines].concat(), 0, 0)
    } else if room >= 3 {
        let most = call.len() - (room - 1);
        let skip = (overlay_scroll as usize).min(most);
        let mut shown: Vec<Line<'static>> = call.into_iter().skip(skip).take(room - 1).collect();
        shown.push(Line::styled(
            format!(
                "  ↑↓ scroll the call: {skip} lines above, {} below",
                most - skip
            ),
            DIM,
        ));
        ([shown, lines].concat(), 0, most)
    } else {
        ([call, lines].concat(), overlay_scroll, 0)
    };
    let height = (lines.len() as u16 + 2).min(area.height);
    let rect = centered(area, width, height);
    let all_scroll = boxed_scrolled(
        frame,
        rect,
        title,
        Style::new().fg(super::theme::warn()),
        lines,
        scroll,
    );
    (most as u16).max(all_scroll)
}

/// One row of the help: `keys` in the left column and what they do beside it, wrapped under its
/// own column, or (`stacked`) `keys` on a line and what they do indented below.
fn help_row(
    lines: &mut Vec<Line<'static>>,
    keys: &str,
    what: &str,
    key_width: usize,
    text_width: u16,
    stacked: bool,
) {
    let key_style = Style::new()
        .fg(super::theme::accent())
        .add_modifier(Modifier::BOLD);
    let what = Span::raw(what.to_owned());
    if stacked {
        let keys = [Span::styled(keys.to_owned(), key_style)];
        lines.extend(wrap(&keys, text_width, &[], &[]));
        let indent = [Span::raw("  ")];
        lines.extend(wrap(&[what], text_width, &indent, &indent));
        return;
    }
    let first = [Span::styled(format!("{keys:<key_width$}"), key_style)];
    let rest = [Span::raw(" ".repeat(key_width))];
    lines.extend(wrap(&[what], text_width, &first, &rest));
}

pub(super) fn draw_help(overlay_scroll: u16, frame: &mut Frame, area: Rect) -> u16 {
    let key_width = KEY_HINTS.iter().map(|(k, _)| k.width()).max().unwrap_or(10) + 2;
    let width = ((key_width + 56) as u16 + 4).min(area.width);
    // Descriptions wrap under their own column when the screen is narrow.
    let text_width = width.saturating_sub(4);
    let mut lines: Vec<Line<'static>> = Vec::new();
    // Too narrow for two columns: each key on its line, what it does indented below.
    let stacked = (text_width as usize) < key_width + 24;
    for (keys, what) in KEY_HINTS {
        help_row(&mut lines, keys, what, key_width, text_width, stacked);
    }
    // The commands, from the one table the `/` popup offers.
    lines.push(Line::default());
    lines.extend(wrap(
        &[Span::styled("Commands:", DIM)],
        text_width,
        &[],
        &[],
    ));
    for command in super::slash::COMMANDS {
        let label = if command.args.is_empty() {
            command.name.to_owned()
        } else {
            format!("{} {}", command.name, command.args)
        };
        // A command whose arguments take more than the keys' column stands on its own line.
        let stacked = stacked || label.width() + 2 > key_width;
        help_row(
            &mut lines,
            &label,
            command.help,
            key_width,
            text_width,
            stacked,
        );
    }
    lines.push(Line::default());
    // Each mode in its one description (yolo is entered only with --mode yolo or /mode yolo).
    lines.extend(wrap(&[Span::styled("Modes:", DIM)], text_width, &[], &[]));
    for mode in crate::session::Mode::ALL {
        let text = format!("{mode}: {}", mode.behaviour());
        let indent = [Span::raw("  ")];
        lines.extend(wrap(
            &[Span::styled(text, DIM)],
            text_width,
            &indent,
            &indent,
        ));
    }
    let rect = centered(area, width, lines.len() as u16 + 2);
    boxed_scrolled(
        frame,
        rect,
        Span::raw(" Keys and commands · Esc closes "),
        Style::new(),
        lines,
        overlay_scroll,
    )
}
