//! The `lsp` tool's answers as text for the model: locations with their line's text (leaving
//! out what the read guard withholds), hover texts and symbol trees, each bounded, and the
//! whole fenced as data from outside.

use async_lsp::lsp_types as types;

use crate::tools::ToolContext;

/// The most locations or symbols an answer lists.
pub const MAX_ITEMS: usize = 50;
/// The most characters of a hover text.
const MAX_HOVER: usize = 4000;

/// Lines for `locations`: `path:line:column: the line's text`, leaving out what the read guard
/// withholds.
pub fn location_lines(locations: &[types::Location], ctx: &ToolContext) -> String {
    let mut out = Vec::new();
    let mut withheld = 0;
    for location in locations {
        let Ok(path) = location.uri.to_file_path() else {
            continue;
        };
        if ctx.read_guard.withholds(&path) {
            withheld += 1;
            continue;
        }
        let start = location.range.start;
        let text = std::fs::read_to_string(&path)
            .ok()
            .and_then(|text| {
                text.lines()
                    .nth(start.line as usize)
                    .map(str::trim)
                    .map(str::to_owned)
            })
            .unwrap_or_default();
        let shown: String = text.chars().take(200).collect();
        out.push(format!(
            "{}:{}:{}: {shown}",
            crate::files::paths::display(&ctx.workdir, &path),
            start.line + 1,
            start.character + 1
        ));
    }
    let total = out.len();
    let mut text: String = out
        .into_iter()
        .take(MAX_ITEMS)
        .collect::<Vec<_>>()
        .join("\n");
    if total > MAX_ITEMS {
        text.push_str(&format!("\n… and {} more", total - MAX_ITEMS));
    }
    if withheld > 0 {
        text.push_str(&format!(
            "\n({withheld} location(s) in files you may not read left out)"
        ));
    }
    text
}

pub fn hover_text(hover: types::Hover) -> String {
    let marked = |m: types::MarkedString| match m {
        types::MarkedString::String(s) => s,
        types::MarkedString::LanguageString(l) => l.value,
    };
    let text = match hover.contents {
        types::HoverContents::Scalar(m) => marked(m),
        types::HoverContents::Array(items) => {
            items.into_iter().map(marked).collect::<Vec<_>>().join("\n")
        }
        types::HoverContents::Markup(markup) => markup.value,
    };
    text.chars().take(MAX_HOVER).collect()
}

pub fn symbol_lines(symbols: &[types::DocumentSymbol], depth: usize, out: &mut Vec<String>) {
    for symbol in symbols {
        out.push(format!(
            "{}{} {:?} (line {})",
            "  ".repeat(depth),
            symbol.name,
            symbol.kind,
            symbol.selection_range.start.line + 1
        ));
        if let Some(children) = &symbol.children {
            symbol_lines(children, depth + 1, out);
        }
    }
}

/// The answer fenced as data from outside; an empty one says so plainly.
pub fn answer(what: &str, text: &str) -> String {
    if text.trim().is_empty() {
        return format!("The language server found nothing ({what}).");
    }
    crate::schema::fence_outside(&format!("language server, {what}"), text)
}
