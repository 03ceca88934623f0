//! Anthropic's own web search (`web_search_20250305`): its declaration in place of our
//! `web_search` tool, its `server_tool_use` and `web_search_tool_result` blocks shown as a
//! `web_search` call and its sources, and the message's blocks kept whole when it searched:
//! the API wants them (results with their `encrypted_content`, text with its citations) back
//! verbatim on the next request.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::decode::Block;
use crate::provider::server_search::{self, Source};
use crate::schema::{
    ProviderBlocks, ProviderError, ProviderErrorKind, ServerToolEvent, StreamChunk, ToolCall,
};

/// The protocol name `ProviderBlocks` carries.
pub(crate) const PROTOCOL: &str = "anthropic";

/// Citations one text block may collect: a stream that sends more is not an answer.
const MAX_CITATIONS: usize = 4096;

/// The server tool's declaration.
pub(crate) fn declaration() -> Value {
    json!({
        "type": "web_search_20250305",
        "name": server_search::WEB_SEARCH,
        "max_uses": server_search::MAX_USES,
    })
}

pub(super) fn check_citations(count: usize) -> Result<(), ProviderError> {
    if count >= MAX_CITATIONS {
        return Err(ProviderError::new(
            ProviderErrorKind::Protocol,
            format!("Anthropic sent more than {MAX_CITATIONS} citations for one text block"),
        ));
    }
    Ok(())
}

fn call_of(block: &Block) -> Option<ToolCall> {
    let Block::ServerToolUse {
        id,
        name,
        json,
        initial,
    } = block
    else {
        return None;
    };
    Some(ToolCall {
        id: id.clone(),
        name: name.clone(),
        arguments: super::decode::call_arguments(json.clone(), initial),
    })
}

/// The call shown when a `server_tool_use` block is complete.
pub(super) fn start_chunk(block: &Block) -> Option<StreamChunk> {
    call_of(block).map(|call| StreamChunk::ServerTool(ServerToolEvent::Start(call)))
}

/// The sources (or the error) of a `web_search_tool_result` block, for the call it answers.
pub(super) fn result_chunk(raw: &Value, blocks: &BTreeMap<u32, Block>) -> Option<StreamChunk> {
    let id = raw.get("tool_use_id").and_then(Value::as_str)?;
    let call = blocks
        .values()
        .filter_map(call_of)
        .find(|call| call.id == id)
        .unwrap_or_else(|| ToolCall {
            id: id.to_owned(),
            name: server_search::WEB_SEARCH.to_owned(),
            arguments: "{}".to_owned(),
        });
    let (output, is_error) = result_text(raw, &call);
    Some(StreamChunk::ServerTool(ServerToolEvent::Result {
        call,
        output,
        is_error,
    }))
}

/// A result block in words: `content` is a list of `web_search_result`s, or one
/// `web_search_tool_result_error` with an `error_code`.
fn result_text(raw: &Value, call: &ToolCall) -> (String, bool) {
    let content = raw.get("content").unwrap_or(&Value::Null);
    if let Some(results) = content.as_array() {
        let sources: Vec<Source<'_>> = results
            .iter()
            .filter(|r| r.get("type").and_then(Value::as_str) == Some("web_search_result"))
            .map(|r| Source {
                title: r.get("title").and_then(Value::as_str).unwrap_or_default(),
                url: r.get("url").and_then(Value::as_str).unwrap_or_default(),
                age: r.get("page_age").and_then(Value::as_str),
            })
            .collect();
        let input = call.arguments_value();
        return (
            server_search::render_sources(server_search::query_of(&input), &sources),
            false,
        );
    }
    let code = content
        .get("error_code")
        .and_then(Value::as_str)
        .unwrap_or("unknown");
    (format!("the provider's web search failed: {code}"), true)
}

/// When the message used the provider's own tools, all its blocks as the API sent them.
pub(super) fn provider_blocks(blocks: &[Block]) -> Option<ProviderBlocks> {
    if !blocks
        .iter()
        .any(|b| matches!(b, Block::ServerToolUse { .. }))
    {
        return None;
    }
    Some(ProviderBlocks {
        protocol: PROTOCOL.to_owned(),
        blocks: blocks.iter().filter_map(wire).collect(),
    })
}

/// A block as the API wants it back.
fn wire(block: &Block) -> Option<Value> {
    let input = |json: &str, initial: &Value| {
        serde_json::from_str::<Value>(json)
            .ok()
            .or_else(|| Some(initial.clone()))
            .filter(Value::is_object)
            .unwrap_or_else(|| json!({}))
    };
    Some(match block {
        // The API refuses empty text blocks.
        Block::Text { text, citations } if text.is_empty() && citations.is_empty() => {
            return None;
        }
        Block::Text { text, citations } if citations.is_empty() => {
            json!({"type": "text", "text": text})
        }
        Block::Text { text, citations } => {
            json!({"type": "text", "text": text, "citations": citations})
        }
        Block::Thinking { text, signature } => {
            json!({"type": "thinking", "thinking": text, "signature": signature})
        }
        Block::Redacted(data) => json!({"type": "redacted_thinking", "data": data}),
        Block::ToolUse {
            id,
            name,
            json,
            initial,
        } => json!({"type": "tool_use", "id": id, "name": name, "input": input(json, initial)}),
        Block::ServerToolUse {
            id,
            name,
            json,
            initial,
        } => json!({"type": "server_tool_use", "id": id, "name": name,
            "input": input(json, initial)}),
        Block::Opaque(raw) => raw.clone(),
    })
}
