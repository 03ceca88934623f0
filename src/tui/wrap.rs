//! Word wrapping of styled text to a width in terminal cells, with a prefix for the first line
//! and another for the rest (list bullets, quote bars, tool output gutters).

use ratatui::text::{Line, Span};
use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

/// Wraps `spans` into lines no wider than `width`, each starting with `first` (the first line)
/// or `rest` (the following ones). Words longer than a line are split.
pub fn wrap(
    spans: &[Span<'static>],
    width: u16,
    first: &[Span<'static>],
    rest: &[Span<'static>],
) -> Vec<Line<'static>> {
    let width = width.max(1) as usize;
    let prefix_width = |p: &[Span<'static>]| p.iter().map(|s| s.content.width()).sum::<usize>();
    let mut lines = Vec::new();
    let mut current: Vec<Span<'static>> = first.to_vec();
    let mut prefix_spans = first.len();
    let mut used = prefix_width(first);
    let mut room = width.saturating_sub(used).max(1) + used;
    let mut at_line_start = true;
    // Spaces are dropped only where a wrap broke the line, never the text's own indentation.
    let mut after_wrap = false;

    for span in spans {
        for piece in split_keep_spaces(&span.content) {
            let piece_width = piece.width();
            if piece == "\n" {
                lines.push(Line::from(std::mem::take(&mut current)));
                current = rest.to_vec();
                prefix_spans = rest.len();
                used = prefix_width(rest);
                room = width.max(used + 1);
                at_line_start = true;
                after_wrap = false;
                continue;
            }
            let is_space = piece.chars().all(char::is_whitespace);
            if is_space && at_line_start && after_wrap {
                continue;
            }
            if used + piece_width > room && !at_line_start {
                // The space a wrap breaks at belongs to neither line.
                trim_end(&mut current, prefix_spans);
                lines.push(Line::from(std::mem::take(&mut current)));
                current = rest.to_vec();
                prefix_spans = rest.len();
                used = prefix_width(rest);
                room = width.max(used + 1);
                at_line_start = true;
                after_wrap = true;
                if is_space {
                    continue;
                }
            }
            if used + piece_width > room {
                // A word longer than the whole line: cut it where the line ends.
                let mut chunk = String::new();
                for ch in piece.chars() {
                    let w = ch.width().unwrap_or(0);
                    if used + w > room && !chunk.is_empty() {
                        push_piece(&mut current, prefix_spans, &chunk, span.style);
                        chunk.clear();
                        lines.push(Line::from(std::mem::take(&mut current)));
                        current = rest.to_vec();
                        prefix_spans = rest.len();
                        used = prefix_width(rest);
                        room = width.max(used + 1);
                    }
                    chunk.push(ch);
                    used += w;
                }
                if !chunk.is_empty() {
                    push_piece(&mut current, prefix_spans, &chunk, span.style);
                }
                at_line_start = false;
                continue;
            }
            push_piece(&mut current, prefix_spans, piece, span.style);
            used += piece_width;
            at_line_start = false;
            after_wrap = false;
        }
    }
    if !current.is_empty() || lines.is_empty() {
        lines.push(Line::from(current));
    }
    lines
}

/// Adds `text` to the line being built: to its last span when that one is of this line's text
/// (not the prefix) and has the same style, else as a new span. A line is a few spans, not one
/// per word: laid-out lines are cached for the whole transcript, and each span is an allocation.
fn push_piece(
    current: &mut Vec<Span<'static>>,
    prefix_spans: usize,
    text: &str,
    style: ratatui::style::Style,
) {
    if current.len() > prefix_spans
        && let Some(last) = current.last_mut()
        && last.style == style
    {
        last.content.to_mut().push_str(text);
        return;
    }
    current.push(Span::styled(text.to_owned(), style));
}

/// Drops the whitespace at the end of the line's own text (where a wrap breaks it).
fn trim_end(current: &mut Vec<Span<'static>>, prefix_spans: usize) {
    while current.len() > prefix_spans {
        let Some(last) = current.last_mut() else {
            break;
        };
        let kept = last.content.trim_end().len();
        if kept == 0 {
            current.pop();
            continue;
        }
        if kept < last.content.len() {
            last.content.to_mut().truncate(kept);
        }
        break;
    }
}

/// Words, runs of spaces and newlines, in order.
fn split_keep_spaces(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut kind = None;
    for (i, ch) in text.char_indices() {
        let this = if ch == '\n' {
            2
        } else if ch.is_whitespace() {
            1
        } else {
            0
        };
        if kind != Some(this) || this == 2 {
            if i > start {
                out.push(&text[start..i]);
            }
            start = i;
            kind = Some(this);
        }
    }
    if start < text.len() {
        out.push(&text[start..]);
    }
    out
}

/// Cuts `text` to at most `width` cells, ending with `…` when it was cut.
pub fn truncate(text: &str, width: usize) -> String {
    if text.width() <= width {
        return text.to_owned();
    }
    let mut out = String::new();
    let mut used = 0;
    for ch in text.chars() {
        let w = ch.width().unwrap_or(0);
        if used + w + 1 > width {
            break;
        }
        out.push(ch);
        used += w;
    }
    out.push('…');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(lines: &[Line<'_>]) -> Vec<String> {
        lines
            .iter()
            .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
            .collect()
    }

    #[test]
    fn wraps_words_with_prefixes() {
        let spans = [Span::raw("the quick brown fox jumps over the lazy dog")];
        let lines = wrap(&spans, 16, &[Span::raw("- ")], &[Span::raw("  ")]);
        assert_eq!(
            text(&lines),
            [
                "- the quick",
                "  brown fox",
                "  jumps over the",
                "  lazy dog"
            ]
        );
    }

    #[test]
    fn splits_long_words_and_keeps_wide_characters_whole() {
        let lines = wrap(&[Span::raw("abcdefghij")], 4, &[], &[]);
        assert_eq!(text(&lines), ["abcd", "efgh", "ij"]);
        let lines = wrap(&[Span::raw("北京今天天气")], 5, &[], &[]);
        assert_eq!(text(&lines), ["北京", "今天", "天气"]);
    }

    #[test]
    fn truncates_with_an_ellipsis() {
        assert_eq!(truncate("hello world", 6), "hello…");
        assert_eq!(truncate("short", 10), "short");
    }
}
