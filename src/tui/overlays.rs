//! What the overlays drawn over the transcript share: `boxed` draws their frame (scrolled when
//! the text does not fit), `choice_lines` a dialog's answers, `centered` where they go; and the
//! keys' help.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};
use unicode_width::UnicodeWidthStr;

use super::keymap::KEY_HINTS;
use super::view::DIM;
use super::wrap::{truncate, wrap};

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

/// A dialog's box for a typed reply (a denial's reason, a plan's feedback): a blank line, the
/// `question`, then what is typed, each line after a `> ` in `key`'s style.
pub(super) fn reply_lines(
    question: &'static str,
    typed: &[String],
    key: Style,
) -> Vec<Line<'static>> {
    let mut lines = vec![
        Line::default(),
        Line::styled(question, Style::new().fg(super::theme::warn())),
    ];
    lines.extend(
        typed
            .iter()
            .map(|line| Line::from(vec![Span::styled("> ", key), Span::raw(line.clone())])),
    );
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
