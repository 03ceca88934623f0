//! Keyed search APIs for `web_search`: Brave Search (`GET
//! https://api.search.brave.com/res/v1/web/search?q=QUERY&count=N` with the key in
//! `X-Subscription-Token`, answering `{"web": {"results": [{"title", "url", "description"}]}}`).
//! The key is read from the environment variable the user's settings name, at each search: it
//! is never written to the settings, a log or an error (the header is marked sensitive, and
//! every error is passed through the provider keys' redaction with this key added to it).

use serde::Deserialize;

use super::search::{Hit, client, read_answer};
use crate::provider::{redact, remember_key};
use crate::tools::ToolError;

/// Brave Search's web endpoint.
pub const BRAVE_URL: &str = "https://api.search.brave.com/res/v1/web/search";
/// The most results Brave returns per request.
const BRAVE_MAX_COUNT: usize = 20;

/// Which keyed API.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum KeyedApi {
    Brave,
}

/// `"web": {"search": {"api": "brave", "key_env": "BRAVE_API_KEY"}}`; `url` replaces the
/// API's own address (a proxy, or a test server).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KeyedSearch {
    pub api: KeyedApi,
    /// The name of the environment variable that holds the key (never the key itself).
    pub key_env: String,
    #[serde(default)]
    pub url: Option<String>,
}

#[derive(Deserialize)]
struct BraveAnswer {
    #[serde(default)]
    web: Option<BraveWeb>,
}

#[derive(Deserialize)]
struct BraveWeb {
    #[serde(default)]
    results: Vec<BraveResult>,
}

#[derive(Deserialize)]
struct BraveResult {
    #[serde(default)]
    title: String,
    #[serde(default)]
    url: String,
    #[serde(default)]
    description: String,
}

pub(super) async fn search(
    keyed: &KeyedSearch,
    query: &str,
    max: usize,
) -> Result<Vec<Hit>, ToolError> {
    let key = std::env::var(&keyed.key_env)
        .ok()
        .filter(|key| !key.trim().is_empty())
        .ok_or_else(|| {
            ToolError::new(format!(
                "web_search is set to use Brave Search with the key in ${}, which is not set: \
                 the user can export it before starting harness9",
                keyed.key_env
            ))
        })?;
    remember_key(&key);
    brave(keyed, &key, query, max)
        .await
        .map_err(|e| ToolError::new(redact(&e.0)))
}

async fn brave(
    keyed: &KeyedSearch,
    key: &str,
    query: &str,
    max: usize,
) -> Result<Vec<Hit>, ToolError> {
    let base = keyed.url.as_deref().unwrap_or(BRAVE_URL);
    let mut url = url::Url::parse(base).map_err(|e| {
        ToolError::new(format!(
            "the configured web.search url `{base}` is not a URL: {e}"
        ))
    })?;
    url.query_pairs_mut()
        .append_pair("q", query)
        .append_pair("count", &max.clamp(1, BRAVE_MAX_COUNT).to_string());
    let mut token = reqwest::header::HeaderValue::from_str(key).map_err(|_| {
        ToolError::new("the Brave Search key holds characters a header cannot carry")
    })?;
    token.set_sensitive(true);
    let response = client()?
        .get(url)
        .header(reqwest::header::ACCEPT, "application/json")
        .header("X-Subscription-Token", token)
        .send()
        .await
        .map_err(|e| ToolError::new(format!("Brave Search failed: {e}")))?;
    let body = read_answer(response).await?;
    let answer: BraveAnswer = serde_json::from_slice(&body)
        .map_err(|e| ToolError::new(format!("Brave Search's answer could not be read: {e}")))?;
    Ok(answer
        .web
        .map(|web| web.results)
        .unwrap_or_default()
        .into_iter()
        .map(|result| Hit {
            title: result.title,
            url: result.url,
            content: plain(&result.description),
        })
        .collect())
}

/// A Brave snippet without its highlighting (`<strong>`) and with its entities read.
fn plain(snippet: &str) -> String {
    snippet
        .replace("<strong>", "")
        .replace("</strong>", "")
        .replace("&#x27;", "'")
        .replace("&quot;", "\"")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}
