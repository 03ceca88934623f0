//! The approval drawn: the call as a person reads it (the command, the whole diff, the path
//! and size), who asks and why, exactly what each answer covers, and the reason being typed for
//! a denial. When the whole does not fit, the call scrolls and the answers stay on screen.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};

use super::approval::Approval;
use super::overlays::{boxed_scrolled, centered, choice_lines, reply_lines};
use super::view::DIM;
use super::wrap::{truncate, wrap};
use crate::engine::ApprovalRequest;

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
            lines.extend(cut(diff, " of the diff"));
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
            let content: Vec<Line<'static>> = content
                .lines()
                .map(|line| Line::styled(truncate(&format!("  {line}"), width as usize), DIM))
                .collect();
            lines.extend(cut(content, ""));
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

/// Lines of a call (a diff, a file's content) an approval shows at most; it scrolls when they
/// do not fit, so the user reads the whole call before answering.
const CALL_LINES: usize = 1000;

/// `lines` cut to `CALL_LINES`, with a line saying how many more there were (`… 12 more
/// lines{what}`).
fn cut(mut lines: Vec<Line<'static>>, what: &str) -> Vec<Line<'static>> {
    let total = lines.len();
    lines.truncate(CALL_LINES);
    if total > CALL_LINES {
        lines.push(Line::styled(
            format!(
                "… {}{what}",
                super::transcript::more_lines(total - CALL_LINES)
            ),
            DIM,
        ));
    }
    lines
}

/// An edit's preview (a unified diff of the file as it is now) with each line's number in its
/// file, the hunks apart, at most `CALL_LINES`.
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
    cut(lines, " of the diff")
}

/// The approval laid out in an area: its box, title and lines, how far the whole box is
/// scrolled, and the furthest the call (or, on a screen too small for the answers, the whole)
/// may scroll.
pub(super) struct Laid {
    rect: Rect,
    title: Span<'static>,
    lines: Vec<Line<'static>>,
    scroll: u16,
    pub most: u16,
}

/// The answers of `request`, each with what it really does.
fn choices(request: &ApprovalRequest) -> Vec<(&'static str, String)> {
    let mut choices: Vec<(&'static str, String)> =
        vec![("y", "allow once: run this call only".into())];
    if request.always_offered {
        choices.push((
            "a",
            format!(
                "allow for the rest of this session: {}",
                request.always_scope
            ),
        ));
    }
    if let Some(rule) = &request.suggested_rule {
        choices.push((
            "r",
            format!(
                "always allow calls like this: writes `{rule}` to .harness9/settings.local.json"
            ),
        ));
    }
    choices.push(("n", "deny (Esc): the model is told you said no".into()));
    choices.push(("d", "deny and tell the model what to do instead".into()));
    choices
}

/// The approval shown by `approval`, laid out in `area` with its scroll; `None` when no call
/// waits.
pub(super) fn lay_out(approval: &Approval, area: Rect) -> Option<Laid> {
    let request = approval.shown()?;
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
    // No grant for the session is offered: say why, in the scope's words.
    if !request.always_offered {
        lines.extend(wrap(
            &[Span::styled(
                format!("no allow for the session: {}", request.always_scope),
                DIM,
            )],
            inner_width,
            &[],
            &[],
        ));
    }
    lines.push(Line::default());
    let key = Style::new()
        .fg(super::theme::accent())
        .add_modifier(Modifier::BOLD);
    lines.extend(choice_lines(choices(request), inner_width, key));
    if let Some(reason) = approval.deny_reason() {
        lines.extend(reply_lines(
            "What should the model do instead? (Enter sends, Esc goes back)",
            reason.lines(),
            key,
        ));
    }
    let pending = approval.waiting();
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
    let scrolled = approval.scroll_top();
    // The answers stay on screen: when the whole does not fit, the call above them scrolls
    // (cut to the room left, with a line saying how to see the rest); on a screen too small
    // even for the answers, everything scrolls.
    let room = (area.height as usize).saturating_sub(2 + lines.len());
    let (lines, scroll, most) = if call.len() + lines.len() + 2 <= area.height as usize {
        ([call, lines].concat(), 0, 0)
    } else if room >= 3 {
        let most = call.len() - (room - 1);
        let skip = (scrolled as usize).min(most);
        let mut shown: Vec<Line<'static>> = call.into_iter().skip(skip).take(room - 1).collect();
        shown.push(Line::styled(
            format!(
                "  ↑↓ PgUp PgDn scroll the call: {skip} lines above, {} below",
                most - skip
            ),
            DIM,
        ));
        ([shown, lines].concat(), 0, most)
    } else {
        let lines = [call, lines].concat();
        let most = lines
            .len()
            .saturating_sub((area.height as usize).saturating_sub(2));
        (lines, scrolled, most)
    };
    let height = (lines.len() as u16 + 2).min(area.height);
    Some(Laid {
        rect: centered(area, width, height),
        title,
        lines,
        scroll,
        most: u16::try_from(most).unwrap_or(u16::MAX),
    })
}

/// Draws the approval in `area`.
pub(super) fn draw(approval: &Approval, frame: &mut Frame, area: Rect) {
    let Some(laid) = lay_out(approval, area) else {
        return;
    };
    boxed_scrolled(
        frame,
        laid.rect,
        laid.title,
        Style::new().fg(super::theme::warn()),
        laid.lines,
        laid.scroll,
    );
}
