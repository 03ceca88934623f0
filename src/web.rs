//! The web tools: `web_fetch` (one page, as Markdown, behind the SSRF guard) and `web_search`
//! (a configured SearXNG-compatible backend or a keyed API). Their settings are the `"web"` section of the
//! user's own `$HARNESS9_HOME/settings.json` only: a project's files are untrusted and could
//! otherwise turn the guard off (`allow_private`) or send every query to a server of its
//! choosing (`search`).

mod address;
mod charset;
mod fetch;
mod html;
mod keyed;
mod search;

pub use address::refused;
pub use fetch::{AddressPolicy, WebFetch};
pub use keyed::{BRAVE_URL, KeyedApi, KeyedSearch};
pub use search::WebSearch;

use std::path::Path;
use std::sync::Arc;

use serde::Deserialize;

/// The `"web"` section of the user's settings.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct WebSettings {
    /// Let `web_fetch` reach loopback, private, link-local and metadata addresses.
    pub allow_private: bool,
    /// Where `web_search` asks.
    pub search: Option<SearchBackend>,
}

/// `web.search`: a SearXNG-compatible URL (`https://host/search`, asked with
/// `?q=QUERY&format=json`), or a keyed API.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(untagged)]
pub enum SearchBackend {
    Searx(String),
    Keyed(KeyedSearch),
}

#[derive(Deserialize)]
struct File {
    #[serde(default)]
    web: Option<WebSettings>,
}

impl WebSettings {
    /// Reads `$HARNESS9_HOME/settings.json`'s `"web"` section. A missing file or section is the
    /// strict default; a broken one is the default too, with a notice.
    pub fn read(home: &Path, notices: &mut Vec<String>) -> WebSettings {
        let path = home.join("settings.json");
        let Ok(text) = std::fs::read_to_string(&path) else {
            return WebSettings::default();
        };
        match serde_json::from_str::<File>(&text) {
            Ok(file) => file.web.unwrap_or_default(),
            Err(e) => {
                notices.push(format!(
                    "{}: its \"web\" settings were ignored: {e}",
                    path.display()
                ));
                WebSettings::default()
            }
        }
    }
}

/// Adds `web_fetch` and `web_search` to `registry`.
pub fn register(registry: &mut crate::tools::Registry, settings: &WebSettings) {
    let policy = AddressPolicy {
        allow_private: settings.allow_private,
        ..AddressPolicy::default()
    };
    // Distinct names, registered once: a clash is a programming error the tests catch.
    let _ = registry.register(Arc::new(WebFetch::new(policy)));
    let _ = registry.register(Arc::new(WebSearch::with_backend(settings.search.clone())));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_users_file_is_read_and_a_broken_one_is_the_strict_default() {
        let home = tempfile::tempdir().expect("tempdir");
        let mut notices = Vec::new();
        assert_eq!(
            WebSettings::read(home.path(), &mut notices),
            WebSettings::default()
        );
        std::fs::write(
            home.path().join("settings.json"),
            r#"{"web": {"allow_private": true, "search": "http://127.0.0.1:8888/search"}}"#,
        )
        .expect("write");
        let read = WebSettings::read(home.path(), &mut notices);
        assert!(read.allow_private);
        assert_eq!(
            read.search,
            Some(SearchBackend::Searx("http://127.0.0.1:8888/search".into()))
        );
        std::fs::write(
            home.path().join("settings.json"),
            r#"{"web": {"search": {"api": "brave", "key_env": "BRAVE_API_KEY"}}}"#,
        )
        .expect("write");
        assert_eq!(
            WebSettings::read(home.path(), &mut notices).search,
            Some(SearchBackend::Keyed(KeyedSearch {
                api: KeyedApi::Brave,
                key_env: "BRAVE_API_KEY".into(),
                url: None,
            }))
        );
        // A key written into the settings instead of a variable's name is refused whole.
        std::fs::write(
            home.path().join("settings.json"),
            r#"{"web": {"search": {"api": "brave", "key": "BSA-secret"}}}"#,
        )
        .expect("write");
        assert_eq!(
            WebSettings::read(home.path(), &mut notices),
            WebSettings::default()
        );
        notices.clear();
        std::fs::write(home.path().join("settings.json"), "{not json").expect("write");
        assert_eq!(
            WebSettings::read(home.path(), &mut notices),
            WebSettings::default()
        );
        assert_eq!(notices.len(), 1);
    }
}
