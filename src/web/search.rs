//! `web_search`: a query to the search backend the user configured in their own settings:
//! `"web": {"search": "https://searx.example/search"}`, any SearXNG-compatible JSON API
//! (`GET URL?q=QUERY&format=json` answering `{"results": [{"title", "url", "content"}]}`), or
//! a keyed API (`"web": {"search": {"api": "brave", "key_env": "BRAVE_API_KEY"}}`, in
//! `keyed.rs`). Without one it says how to configure one. The backend is the user's choice, so
//! it is not put behind the SSRF guard (a local SearXNG is the usual setup). When the model's
//! provider searches itself, the engine may offer its search instead (`provider::server_search`).

use std::time::Duration;

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::{Value, json};

use super::SearchBackend;
use super::keyed;
use crate::schema::ToolKind;
use crate::tools::{Tool, ToolContext, ToolError, parse_args};

const DEFAULT_RESULTS: usize = 8;
const MAX_RESULTS: usize = 20;
/// The most of the backend's answer read.
const MAX_BYTES: usize = 2 * 1024 * 1024;

pub struct WebSearch {
    backend: Option<SearchBackend>,
    timeout: Duration,
}

impl WebSearch {
    /// A SearXNG-compatible backend at `url`, or none.
    pub fn new(url: Option<String>) -> Self {
        Self::with_backend(url.map(SearchBackend::Searx))
    }

    pub fn with_backend(backend: Option<SearchBackend>) -> Self {
        WebSearch {
            backend,
            timeout: Duration::from_secs(20),
        }
    }
}

#[derive(Deserialize)]
struct Args {
    query: String,
    max_results: Option<usize>,
}

#[derive(Deserialize)]
struct Answer {
    #[serde(default)]
    results: Vec<Hit>,
}

/// One result, whichever backend found it.
#[derive(Deserialize)]
pub(super) struct Hit {
    #[serde(default)]
    pub title: String,
    #[serde(default)]
    pub url: String,
    #[serde(default)]
    pub content: String,
}

/// The message when no backend is configured.
pub const NOT_CONFIGURED: &str = "web_search has no search backend: the user can set one in \
     their own $HARNESS9_HOME/settings.json, e.g. {\"web\": {\"search\": \
     \"https://searx.example.org/search\"}} (any SearXNG-compatible JSON API) or {\"web\": \
     {\"search\": {\"api\": \"brave\", \"key_env\": \"BRAVE_API_KEY\"}}} (Brave Search, its key \
     in that environment variable). With a model whose provider searches the web itself \
     (Anthropic, OpenAI Responses), the permission rule `web_search` in the settings lets the \
     provider search in a new conversation instead. Until then, use `web_fetch` on a page you \
     know.";

#[async_trait]
impl Tool for WebSearch {
    fn name(&self) -> &'static str {
        "web_search"
    }

    fn description(&self) -> &'static str {
        "Search the web and get a list of results (title, URL, snippet). Read a result with \
         `web_fetch`. `max_results` defaults to 8 (at most 20)."
    }

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "query": {"type": "string"},
                "max_results": {"type": "integer", "minimum": 1}
            },
            "required": ["query"],
            "additionalProperties": false
        })
    }

    fn works_here(&self) -> bool {
        self.backend.is_some()
    }

    fn kind(&self) -> ToolKind {
        ToolKind::Network
    }

    fn bounds_own_output(&self) -> bool {
        true
    }

    async fn execute(&self, arguments: Value, ctx: &ToolContext) -> Result<String, ToolError> {
        let args: Args = parse_args(arguments)?;
        let backend = self
            .backend
            .as_ref()
            .ok_or_else(|| ToolError::new(NOT_CONFIGURED))?;
        let max = args.max_results.unwrap_or(DEFAULT_RESULTS).min(MAX_RESULTS);
        let search = async {
            let hits = match backend {
                SearchBackend::Searx(url) => searx(url, &args.query).await?,
                SearchBackend::Keyed(keyed) => keyed::search(keyed, &args.query, max).await?,
            };
            Ok(render(&args.query, &hits, max))
        };
        tokio::select! {
            _ = ctx.cancel.cancelled() => Err(ToolError::new("the search was interrupted")),
            outcome = tokio::time::timeout(self.timeout, search) => {
                outcome.unwrap_or_else(|_| Err(ToolError::new("the search backend did not answer in time")))
            }
        }
    }
}

/// The HTTP client every backend uses.
pub(super) fn client() -> Result<reqwest::Client, ToolError> {
    reqwest::Client::builder()
        .user_agent(concat!(
            "harness9/",
            env!("CARGO_PKG_VERSION"),
            " (web_search)"
        ))
        .build()
        .map_err(|e| ToolError::new(format!("cannot set up the HTTP client: {e}")))
}

/// A successful answer's body, at most `MAX_BYTES` of it.
pub(super) async fn read_answer(response: reqwest::Response) -> Result<Vec<u8>, ToolError> {
    let status = response.status();
    if !status.is_success() {
        return Err(ToolError::new(format!(
            "the search backend answered HTTP {status}"
        )));
    }
    let mut body = Vec::new();
    let mut stream = response.bytes_stream();
    use futures_util::StreamExt;
    while let Some(chunk) = stream.next().await {
        let chunk =
            chunk.map_err(|e| ToolError::new(format!("reading the results failed: {e}")))?;
        if body.len() + chunk.len() > MAX_BYTES {
            return Err(ToolError::new("the search backend's answer is too large"));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

async fn searx(backend: &str, query: &str) -> Result<Vec<Hit>, ToolError> {
    let mut url = url::Url::parse(backend).map_err(|e| {
        ToolError::new(format!(
            "the configured web.search `{backend}` is not a URL: {e}"
        ))
    })?;
    url.query_pairs_mut()
        .append_pair("q", query)
        .append_pair("format", "json");
    let response = client()?
        .get(url)
        .send()
        .await
        .map_err(|e| ToolError::new(format!("the search backend failed: {e}")))?;
    let body = read_answer(response).await?;
    let answer: Answer = serde_json::from_slice(&body).map_err(|e| {
        ToolError::new(format!(
            "the search backend's answer is not SearXNG JSON (is `format=json` enabled?): {e}"
        ))
    })?;
    Ok(answer.results)
}

fn render(query: &str, hits: &[Hit], max: usize) -> String {
    if hits.is_empty() {
        return format!("No results for `{query}`.");
    }
    let mut out = String::new();
    for (n, hit) in hits.iter().take(max).enumerate() {
        let snippet: String = hit.content.split_whitespace().collect::<Vec<_>>().join(" ");
        let snippet: String = snippet.chars().take(300).collect();
        out.push_str(&format!(
            "\n{}. {}\n   {}\n",
            n + 1,
            hit.title.trim(),
            hit.url
        ));
        if !snippet.is_empty() {
            out.push_str(&format!("   {snippet}\n"));
        }
    }
    // Titles and snippets are the pages' own words: data (issue 29 point 15).
    format!(
        "Results for `{query}`:\n{}",
        crate::schema::fence_outside("web_search results", &out)
    )
}
