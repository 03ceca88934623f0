//! The provider's own web search, shared by the protocols that have one: whether a request
//! declares it (ours `web_search` is replaced only when the engine marked it
//! `provider_may_run`, the catalogue says the model has it, and the history sent holds no call
//! of our own `web_search`: the APIs check a history's function calls against the tools
//! declared, and OpenAI refuses a `web_search` function call that no function tool declares), and
//! how its result reads in the transcript (the sources, numbered, or the error).

use serde_json::Value;

use crate::schema::{Message, ToolDefinition};

/// The name both our tool and the providers' server tools have.
pub(crate) const WEB_SEARCH: &str = "web_search";

/// The most searches the model may run in one call (Anthropic's `max_uses`).
pub(crate) const MAX_USES: u32 = 5;

/// Whether this request offers the provider's own search in place of our `web_search`.
pub(crate) fn offered(tools: &[ToolDefinition], model_has_it: bool, messages: &[Message]) -> bool {
    model_has_it
        && tools
            .iter()
            .any(|tool| tool.provider_may_run && tool.name == WEB_SEARCH)
        && !messages
            .iter()
            .any(|m| m.tool_calls.iter().any(|call| call.name == WEB_SEARCH))
}

/// Whether `tool` goes out as the provider's own search, when `offered` said it may.
pub(crate) fn replaces(tool: &ToolDefinition, offered: bool) -> bool {
    offered && tool.name == WEB_SEARCH
}

/// One source found, for the transcript.
pub(crate) struct Source<'a> {
    pub title: &'a str,
    pub url: &'a str,
    pub age: Option<&'a str>,
}

/// The sources as the transcript shows them.
pub(crate) fn render_sources(query: &str, sources: &[Source<'_>]) -> String {
    let mut out = if query.is_empty() {
        format!("{} sources (the provider's web search)", sources.len())
    } else {
        format!(
            "{} sources for `{query}` (the provider's web search)",
            sources.len()
        )
    };
    for (n, source) in sources.iter().enumerate() {
        out.push_str(&format!(
            "\n{}. {}\n   {}",
            n + 1,
            source.title.trim(),
            source.url
        ));
        if let Some(age) = source.age.filter(|a| !a.is_empty()) {
            out.push_str(&format!(" ({age})"));
        }
    }
    out
}

/// The `query` of a search call's input, if any.
pub(crate) fn query_of(input: &Value) -> &str {
    input
        .get("query")
        .and_then(Value::as_str)
        .unwrap_or_default()
}
