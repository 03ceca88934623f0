//! OpenAI Responses' own web search (the `web_search` tool): its declaration in place of ours,
//! each finished `web_search_call` output item shown as a `web_search` call with the sources
//! it read (`action.sources`, asked for with `include`), and those items kept to be sent back
//! verbatim as input on the next request (with `store: false` nothing is kept server-side).

use serde_json::{Value, json};

use crate::provider::server_search::{self, Source};
use crate::schema::{ProviderBlocks, ServerToolEvent, StreamChunk, ToolCall};

/// The protocol name `ProviderBlocks` carries.
pub(crate) const PROTOCOL: &str = "responses";

/// The `include` value that adds the sources to each search's `action`.
pub(crate) const SOURCES: &str = "web_search_call.action.sources";

pub(crate) fn declaration() -> Value {
    json!({"type": "web_search"})
}

/// The call and its result, for a finished `web_search_call` item.
pub(super) fn chunks(item: &Value) -> Vec<StreamChunk> {
    let id = item
        .get("id")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let action = item.get("action").unwrap_or(&Value::Null);
    let query = server_search::query_of(action);
    let call = ToolCall {
        id,
        name: server_search::WEB_SEARCH.to_owned(),
        arguments: json!({"query": query}).to_string(),
    };
    let status = item.get("status").and_then(Value::as_str).unwrap_or("");
    let (output, is_error) = if status == "failed" {
        ("the provider's web search failed".to_owned(), true)
    } else {
        let sources: Vec<Source<'_>> = action
            .get("sources")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|source| {
                let url = source.get("url").and_then(Value::as_str)?;
                Some(Source {
                    title: source.get("title").and_then(Value::as_str).unwrap_or(url),
                    url,
                    age: None,
                })
            })
            .collect();
        (server_search::render_sources(query, &sources), false)
    };
    vec![
        StreamChunk::ServerTool(ServerToolEvent::Start(call.clone())),
        StreamChunk::ServerTool(ServerToolEvent::Result {
            call,
            output,
            is_error,
        }),
    ]
}

pub(super) fn provider_blocks(searches: Vec<Value>) -> Option<ProviderBlocks> {
    (!searches.is_empty()).then(|| ProviderBlocks {
        protocol: PROTOCOL.to_owned(),
        blocks: searches,
    })
}
