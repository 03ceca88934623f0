//! Syntax highlighting of fenced code with syntect. The syntax and theme sets load on a thread
//! of their own at start (never on the path to the first frame); until they are ready, and for
//! absurdly long lines or huge blocks, code is shown plain so rendering can never hang. The
//! colours come from `base16-ocean.dark` or `InspiredGitHub`, as the screen's theme is.

use std::sync::OnceLock;

use ratatui::style::{Color, Modifier, Style};
use ratatui::text::Span;
use syntect::easy::HighlightLines;
use syntect::highlighting::{FontStyle, Theme, ThemeSet};
use syntect::parsing::SyntaxSet;

/// Lines longer than this are not highlighted (minified files, data).
const MAX_LINE: usize = 400;
/// Blocks longer than this are not highlighted.
const MAX_LINES: usize = 2000;

struct Sets {
    syntaxes: SyntaxSet,
    dark: Theme,
    light: Theme,
}

static SETS: OnceLock<Sets> = OnceLock::new();

fn load() -> Sets {
    let syntaxes = SyntaxSet::load_defaults_newlines();
    let mut themes = ThemeSet::load_defaults();
    let dark = themes
        .themes
        .remove("base16-ocean.dark")
        .unwrap_or_default();
    let light = themes.themes.remove("InspiredGitHub").unwrap_or_default();
    Sets {
        syntaxes,
        dark,
        light,
    }
}

/// Starts loading the sets in the background.
pub fn warm_up() {
    if SETS.get().is_none() {
        std::thread::spawn(|| {
            SETS.get_or_init(load);
        });
    }
}

/// Loads the sets on the calling thread (tests and benchmarks).
pub fn load_now() {
    SETS.get_or_init(load);
}

/// Spans for each line of `code` in `language`; plain when highlighting is not possible.
pub fn highlight(code: &str, language: &str, plain: Style) -> Vec<Vec<Span<'static>>> {
    let lines: Vec<&str> = code.lines().collect();
    let plain_lines = || {
        lines
            .iter()
            .map(|l| vec![Span::styled(l.to_string(), plain)])
            .collect()
    };
    let Some(sets) = SETS.get() else {
        return plain_lines();
    };
    if lines.len() > MAX_LINES || lines.iter().any(|l| l.len() > MAX_LINE) {
        return plain_lines();
    }
    let token = language.split([',', ' ']).next().unwrap_or("").trim();
    let syntax = sets
        .syntaxes
        .find_syntax_by_token(token)
        .unwrap_or_else(|| sets.syntaxes.find_syntax_plain_text());
    // syntect's theme follows the screen's.
    let theme = match super::theme::current() {
        super::theme::Theme::Dark => &sets.dark,
        super::theme::Theme::Light => &sets.light,
    };
    let mut highlighter = HighlightLines::new(syntax, theme);
    let mut out = Vec::with_capacity(lines.len());
    for line in syntect::util::LinesWithEndings::from(code) {
        let Ok(ranges) = highlighter.highlight_line(line, &sets.syntaxes) else {
            return plain_lines();
        };
        out.push(
            ranges
                .into_iter()
                .map(|(style, text)| {
                    let mut s = Style::default().fg(Color::Rgb(
                        style.foreground.r,
                        style.foreground.g,
                        style.foreground.b,
                    ));
                    if style.font_style.contains(FontStyle::BOLD) {
                        s = s.add_modifier(Modifier::BOLD);
                    }
                    if style.font_style.contains(FontStyle::ITALIC) {
                        s = s.add_modifier(Modifier::ITALIC);
                    }
                    Span::styled(text.trim_end_matches(['\n', '\r']).to_owned(), s)
                })
                .collect(),
        );
    }
    out
}
