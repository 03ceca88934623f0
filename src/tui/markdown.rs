//! Markdown to terminal lines: headings, lists, emphasis, inline code, quotes, links, tables and
//! highlighted fenced code, wrapped to a width. `stable_prefix` finds where a streaming answer
//! can be cut so that the completed blocks are rendered once and only the open tail anew.

use pulldown_cmark::{CodeBlockKind, Event, HeadingLevel, Options, Parser, Tag, TagEnd};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use unicode_width::UnicodeWidthStr;

use super::highlight;
use super::wrap::wrap;

/// Inline and fenced code (the theme's warning colour reads on its background).
fn code_style() -> Style {
    Style::new().fg(super::theme::warn())
}
const QUOTE_STYLE: Style = Style::new().fg(Color::DarkGray);
fn link_style() -> Style {
    Style::new()
        .fg(super::theme::accent())
        .add_modifier(Modifier::UNDERLINED)
}

/// The length of the part of `source` made of complete blocks: up to the last blank line that is
/// outside a code fence and followed by an unindented line (so a list item's continuation is
/// never cut off from its item).
pub fn stable_prefix(source: &str) -> usize {
    let mut in_fence = false;
    let mut stable = 0;
    let mut offset = 0;
    let mut previous_blank = false;
    for line in source.split_inclusive('\n') {
        let trimmed = line.trim_start();
        let unindented = !line.starts_with([' ', '\t']);
        if !in_fence && previous_blank && unindented && !trimmed.is_empty() {
            stable = offset;
        }
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            in_fence = !in_fence;
        }
        previous_blank = !in_fence && line.trim().is_empty() && line.ends_with('\n');
        offset += line.len();
    }
    stable
}

/// Renders `source` to lines at most `width` cells wide.
pub fn render(source: &str, width: u16) -> Vec<Line<'static>> {
    let mut renderer = Renderer::new(width.max(8));
    let options =
        Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS;
    for event in Parser::new_ext(source, options) {
        renderer.event(event);
    }
    renderer.finish()
}

struct Table {
    rows: Vec<Vec<Vec<Span<'static>>>>,
    header_rows: usize,
}

struct Renderer {
    width: u16,
    out: Vec<Line<'static>>,
    inline: Vec<Span<'static>>,
    styles: Vec<Style>,
    /// For each open list: the next number, or `None` for bullets.
    lists: Vec<Option<u64>>,
    /// The marker of an item whose first line is not written yet.
    item_marker: Option<String>,
    quote_depth: usize,
    code: Option<(String, String)>,
    table: Option<Table>,
    links: Vec<String>,
    heading: Option<HeadingLevel>,
}

impl Renderer {
    fn new(width: u16) -> Self {
        Renderer {
            width,
            out: Vec::new(),
            inline: Vec::new(),
            styles: vec![Style::default()],
            lists: Vec::new(),
            item_marker: None,
            quote_depth: 0,
            code: None,
            table: None,
            links: Vec::new(),
            heading: None,
        }
    }

    fn style(&self) -> Style {
        self.styles.last().copied().unwrap_or_default()
    }

    fn push_style(&mut self, change: impl FnOnce(Style) -> Style) {
        let next = change(self.style());
        self.styles.push(next);
    }

    fn pop_style(&mut self) {
        if self.styles.len() > 1 {
            self.styles.pop();
        }
    }

    /// The prefixes of the current block: quote bars, list indentation, an item's marker.
    fn prefixes(&mut self) -> (Vec<Span<'static>>, Vec<Span<'static>>) {
        let mut base = Vec::new();
        for _ in 0..self.quote_depth {
            base.push(Span::styled("│ ", QUOTE_STYLE));
        }
        let indent = "  ".repeat(self.lists.len().saturating_sub(1));
        let mut first = base.clone();
        let mut rest = base;
        if !self.lists.is_empty() {
            match self.item_marker.take() {
                Some(marker) => {
                    first.push(Span::raw(format!("{indent}{marker}")));
                    rest.push(Span::raw(format!("{indent}{}", " ".repeat(marker.width()))));
                }
                None => {
                    let pad = format!("{indent}  ");
                    first.push(Span::raw(pad.clone()));
                    rest.push(Span::raw(pad));
                }
            }
        }
        (first, rest)
    }

    fn flush_inline(&mut self) {
        if self.inline.is_empty() && self.item_marker.is_none() {
            return;
        }
        let spans = std::mem::take(&mut self.inline);
        let (first, rest) = self.prefixes();
        self.out.extend(wrap(&spans, self.width, &first, &rest));
    }

    fn blank_line(&mut self) {
        if self.lists.is_empty() && self.out.last().is_some_and(|l| !l.spans.is_empty()) {
            self.out.push(Line::default());
        }
    }

    fn text(&mut self, text: &str) {
        if let Some((_, code)) = &mut self.code {
            code.push_str(text);
            return;
        }
        let span = Span::styled(text.to_owned(), self.style());
        match &mut self.table {
            Some(table) => {
                if let Some(cell) = table.rows.last_mut().and_then(|r| r.last_mut()) {
                    cell.push(span);
                }
            }
            None => self.inline.push(span),
        }
    }

    fn event(&mut self, event: Event<'_>) {
        match event {
            Event::Start(tag) => self.start(tag),
            Event::End(tag) => self.end(tag),
            Event::Text(text) => self.text(&text),
            Event::Code(code) => {
                self.push_style(|_| code_style());
                self.text(&code);
                self.pop_style();
            }
            Event::SoftBreak => self.text(" "),
            Event::HardBreak => self.text("\n"),
            Event::Rule => {
                self.flush_inline();
                self.blank_line();
                let rule = "─".repeat(self.width.min(60) as usize);
                self.out.push(Line::styled(rule, QUOTE_STYLE));
                self.out.push(Line::default());
            }
            Event::TaskListMarker(done) => self.text(if done { "[x] " } else { "[ ] " }),
            Event::Html(html) | Event::InlineHtml(html) => self.text(&html),
            Event::InlineMath(math) | Event::DisplayMath(math) => {
                self.push_style(|_| code_style());
                self.text(&math);
                self.pop_style();
            }
            Event::FootnoteReference(name) => self.text(&format!("[^{name}]")),
        }
    }

    fn start(&mut self, tag: Tag<'_>) {
        match tag {
            Tag::Paragraph => {}
            Tag::Heading { level, .. } => {
                self.flush_inline();
                self.blank_line();
                self.heading = Some(level);
                let style = match level {
                    HeadingLevel::H1 => Style::new()
                        .fg(Color::Magenta)
                        .add_modifier(Modifier::BOLD | Modifier::UNDERLINED),
                    HeadingLevel::H2 => Style::new()
                        .fg(super::theme::accent())
                        .add_modifier(Modifier::BOLD),
                    _ => Style::new().add_modifier(Modifier::BOLD),
                };
                self.push_style(|_| style);
            }
            Tag::BlockQuote(_) => {
                self.flush_inline();
                self.quote_depth += 1;
                self.push_style(|s| s.add_modifier(Modifier::ITALIC));
            }
            Tag::CodeBlock(kind) => {
                self.flush_inline();
                let language = match kind {
                    CodeBlockKind::Fenced(lang) => lang.to_string(),
                    CodeBlockKind::Indented => String::new(),
                };
                self.code = Some((language, String::new()));
            }
            Tag::List(start) => {
                self.flush_inline();
                if self.lists.is_empty() {
                    self.blank_line();
                }
                self.lists.push(start);
            }
            Tag::Item => {
                self.flush_inline();
                let marker = match self.lists.last_mut() {
                    Some(Some(number)) => {
                        let marker = format!("{number}. ");
                        *number += 1;
                        marker
                    }
                    _ => "• ".to_owned(),
                };
                self.item_marker = Some(marker);
            }
            Tag::Emphasis => self.push_style(|s| s.add_modifier(Modifier::ITALIC)),
            Tag::Strong => self.push_style(|s| s.add_modifier(Modifier::BOLD)),
            Tag::Strikethrough => self.push_style(|s| s.add_modifier(Modifier::CROSSED_OUT)),
            Tag::Link { dest_url, .. } | Tag::Image { dest_url, .. } => {
                self.links.push(dest_url.to_string());
                self.push_style(|_| link_style());
            }
            Tag::Table(_) => {
                self.flush_inline();
                self.blank_line();
                self.table = Some(Table {
                    rows: Vec::new(),
                    header_rows: 0,
                });
            }
            Tag::TableHead | Tag::TableRow => {
                if let Some(table) = &mut self.table {
                    table.rows.push(Vec::new());
                }
            }
            Tag::TableCell => {
                if let Some(row) = self.table.as_mut().and_then(|t| t.rows.last_mut()) {
                    row.push(Vec::new());
                }
            }
            _ => {}
        }
    }

    fn end(&mut self, tag: TagEnd) {
        match tag {
            TagEnd::Paragraph => {
                self.flush_inline();
                self.blank_line();
            }
            TagEnd::Heading(_) => {
                if let Some(HeadingLevel::H1 | HeadingLevel::H2) = self.heading.take() {
                    // The heading's own colour is enough; no `#` marks.
                }
                self.flush_inline();
                self.pop_style();
                self.out.push(Line::default());
            }
            TagEnd::BlockQuote(_) => {
                self.flush_inline();
                self.quote_depth = self.quote_depth.saturating_sub(1);
                self.pop_style();
                self.blank_line();
            }
            TagEnd::CodeBlock => {
                if let Some((language, code)) = self.code.take() {
                    self.code_block(&language, &code);
                }
            }
            TagEnd::List(_) => {
                self.flush_inline();
                self.lists.pop();
                self.blank_line();
            }
            TagEnd::Item => self.flush_inline(),
            TagEnd::Emphasis | TagEnd::Strong | TagEnd::Strikethrough => self.pop_style(),
            TagEnd::Link | TagEnd::Image => {
                self.pop_style();
                if let Some(url) = self.links.pop() {
                    let shown: String = self
                        .inline
                        .iter()
                        .rev()
                        .take(1)
                        .map(|s| s.content.to_string())
                        .collect();
                    if !url.is_empty() && shown != url && !url.starts_with('#') {
                        let dim = Style::new().fg(Color::DarkGray);
                        self.inline.push(Span::styled(format!(" ({url})"), dim));
                    }
                }
            }
            TagEnd::Table => {
                if let Some(table) = self.table.take() {
                    self.table_lines(table);
                }
                self.blank_line();
            }
            TagEnd::TableHead => {
                if let Some(table) = &mut self.table {
                    table.header_rows = table.rows.len();
                }
            }
            _ => {}
        }
    }

    fn code_block(&mut self, language: &str, code: &str) {
        let gutter = Span::styled("▏ ", QUOTE_STYLE);
        let (mut first, mut rest) = self.prefixes();
        first.push(gutter.clone());
        rest.push(gutter);
        if !language.is_empty() {
            let label = Span::styled(language.to_owned(), Style::new().fg(Color::DarkGray));
            let mut line = rest.clone();
            line.push(label);
            self.out.push(Line::from(line));
        }
        for spans in highlight::highlight(code, language, code_style()) {
            self.out.extend(wrap(&spans, self.width, &rest, &rest));
        }
        let _ = first;
        self.blank_line();
    }

    fn table_lines(&mut self, table: Table) {
        let columns = table.rows.iter().map(Vec::len).max().unwrap_or(0);
        if columns == 0 {
            return;
        }
        let cell_text = |cell: &Vec<Span<'static>>| -> String {
            cell.iter().map(|s| s.content.as_ref()).collect::<String>()
        };
        let mut widths = vec![0usize; columns];
        for row in &table.rows {
            for (i, cell) in row.iter().enumerate() {
                widths[i] = widths[i].max(cell_text(cell).width());
            }
        }
        // Shrink the widest columns until the table fits: 3 cells of separator per column.
        let available = (self.width as usize)
            .saturating_sub(columns * 3 + 1)
            .max(columns);
        while widths.iter().sum::<usize>() > available {
            let Some((i, _)) = widths.iter().enumerate().max_by_key(|(_, w)| **w) else {
                break;
            };
            if widths[i] <= 3 {
                break;
            }
            widths[i] -= 1;
        }
        let border = Style::new().fg(Color::DarkGray);
        let rule = |left: &str, mid: &str, right: &str| {
            let body: Vec<String> = widths.iter().map(|w| "─".repeat(w + 2)).collect();
            Line::styled(format!("{left}{}{right}", body.join(mid)), border)
        };
        self.out.push(rule("┌", "┬", "┐"));
        // Long cells wrap inside their column (never cut): a row is as tall as its tallest cell.
        for (r, row) in table.rows.iter().enumerate() {
            let cells: Vec<Vec<Line<'static>>> = widths
                .iter()
                .enumerate()
                .map(|(i, width)| {
                    let mut spans = row.get(i).cloned().unwrap_or_default();
                    if r < table.header_rows {
                        for span in &mut spans {
                            span.style = span.style.add_modifier(Modifier::BOLD);
                        }
                    }
                    wrap(&spans, (*width).max(1) as u16, &[], &[])
                })
                .collect();
            let height = cells.iter().map(Vec::len).max().unwrap_or(1);
            for line_index in 0..height {
                let mut spans = vec![Span::styled("│", border)];
                for (cell, width) in cells.iter().zip(&widths) {
                    spans.push(Span::raw(" "));
                    let mut used = 0;
                    if let Some(line) = cell.get(line_index) {
                        for span in &line.spans {
                            used += span.content.width();
                            spans.push(span.clone());
                        }
                    }
                    spans.push(Span::raw(" ".repeat(width.saturating_sub(used) + 1)));
                    spans.push(Span::styled("│", border));
                }
                self.out.push(Line::from(spans));
            }
            if r + 1 == table.header_rows {
                self.out.push(rule("├", "┼", "┤"));
            }
        }
        self.out.push(rule("└", "┴", "┘"));
    }

    fn finish(mut self) -> Vec<Line<'static>> {
        self.flush_inline();
        if let Some((language, code)) = self.code.take() {
            // An unclosed fence while streaming: show what there is.
            self.code_block(&language, &code);
        }
        while self.out.last().is_some_and(|l| l.spans.is_empty()) {
            self.out.pop();
        }
        self.out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain(lines: &[Line<'_>]) -> Vec<String> {
        lines
            .iter()
            .map(|l| {
                l.spans
                    .iter()
                    .map(|s| s.content.as_ref())
                    .collect::<String>()
                    .trim_end()
                    .to_owned()
            })
            .collect()
    }

    #[test]
    fn renders_the_common_blocks() {
        let source = "# Title\n\nSome *emphasis* and `code`.\n\n- one\n- two\n  1. nested\n\n> quoted\n\n| a | b |\n|---|---|\n| 1 | 22 |\n\n```rust\nfn main() {}\n```\n";
        let lines = plain(&render(source, 40));
        assert_eq!(
            lines,
            [
                "Title",
                "",
                "Some emphasis and code.",
                "",
                "• one",
                "• two",
                "  1. nested",
                "",
                "│ quoted",
                "",
                "┌───┬────┐",
                "│ a │ b  │",
                "├───┼────┤",
                "│ 1 │ 22 │",
                "└───┴────┘",
                "",
                "▏ rust",
                "▏ fn main() {}",
            ]
        );
    }

    #[test]
    fn links_show_their_target() {
        let lines = plain(&render("See [the docs](https://example.com/x).", 80));
        assert_eq!(lines, ["See the docs (https://example.com/x)."]);
    }

    #[test]
    fn the_stable_prefix_never_cuts_inside_a_fence_or_an_item() {
        let source = "Para one.\n\n```\ncode\n\nmore code\n```\n\n- item\n\n  continued\n\nTail";
        let stable = stable_prefix(source);
        assert_eq!(&source[stable..], "Tail");
        assert_eq!(stable_prefix("one paragraph still streaming"), 0);
        let open = "Intro.\n\n```rust\nfn a() {}\n\nfn b";
        assert_eq!(&open[stable_prefix(open)..], "```rust\nfn a() {}\n\nfn b");
    }
}
