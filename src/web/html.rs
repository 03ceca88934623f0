//! HTML to readable Markdown: the page's main content (readability, `dom_smoothie`) rendered
//! as Markdown by `dom_query`, the same parser, so one HTML parser is compiled in. A page
//! readability cannot find an article in (short pages, link lists) falls back to its whole
//! body without scripts, styles and navigation.

use dom_smoothie::{Config, Readability, TextMode};

/// Elements never worth reading, skipped by the fallback.
const SKIPPED: &[&str] = &[
    "script", "style", "meta", "head", "noscript", "template", "svg", "nav", "footer", "iframe",
];

/// The page's title (if any) and its main content as Markdown.
pub fn to_markdown(html: &str, url: &str) -> (Option<String>, String) {
    let config = Config {
        text_mode: TextMode::Markdown,
        // A bound on the work for a hostile page: past this many elements, the fallback.
        max_elements_to_parse: 200_000,
        ..Config::default()
    };
    let article = Readability::new(html, Some(url), Some(config))
        .ok()
        .and_then(|mut reader| reader.parse().ok());
    match article {
        Some(article) if !article.text_content.trim().is_empty() => {
            let title = Some(article.title.trim().to_owned()).filter(|t| !t.is_empty());
            (title, article.text_content.trim().to_owned())
        }
        _ => {
            let document = dom_query::Document::from(html);
            let title = document.select("title").text().trim().to_owned();
            let body = document.select("body");
            let text = match body.nodes().first() {
                Some(node) => node.md(Some(SKIPPED)).to_string(),
                None => document.md(Some(SKIPPED)).to_string(),
            };
            (
                Some(title).filter(|t| !t.is_empty()),
                text.trim().to_owned(),
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_article_becomes_markdown_without_its_navigation() {
        let paragraph = "Rust's ownership model makes memory safety a compile-time property. \
                         The borrow checker enforces it without a garbage collector. "
            .repeat(6);
        let html = format!(
            "<html><head><title>Ownership</title><script>var x = 1;</script></head><body>\
             <nav><a href='/a'>Home</a> <a href='/b'>Blog</a></nav>\
             <article><h1>Ownership</h1><p>{paragraph}</p><h2>Borrowing</h2>\
             <p>Use <code>&amp;T</code> for a <strong>shared</strong> borrow. {paragraph}</p>\
             <ul><li>one</li><li>two</li></ul></article></body></html>"
        );
        let (title, text) = to_markdown(&html, "https://example.org/own");
        assert_eq!(title.as_deref(), Some("Ownership"));
        assert!(text.contains("## Borrowing"), "{text}");
        assert!(text.contains("**shared**"), "{text}");
        assert!(text.contains("`&T`"), "{text}");
        assert!(!text.contains("var x"), "{text}");
    }

    #[test]
    fn a_short_page_falls_back_to_its_body() {
        let html = "<html><head><title>Tiny</title><style>p{}</style></head>\
                    <body><p>Just <em>one</em> line.</p><script>alert(1)</script></body></html>";
        let (title, text) = to_markdown(html, "https://example.org/");
        assert_eq!(title.as_deref(), Some("Tiny"));
        assert!(text.contains("Just *one* line."), "{text}");
        assert!(!text.contains("alert"), "{text}");
    }
}
