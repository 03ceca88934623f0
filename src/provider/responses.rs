//! OpenAI's Responses API (`POST {base}/responses`), the protocol its reasoning models keep their
//! reasoning through: `convert_input` builds the one request both calls send (system prompt as
//! `instructions`, history as input items, each reasoning item replayed with its
//! `encrypted_content`, `store: false`), `ResponsesDecoder` (in `responses/decode.rs`) accumulates
//! a streamed answer by output item, `parse_response` reads a whole one.

mod decode;
mod web_search;

use reqwest::header::HeaderMap;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::protocol::{Call, Protocol, Wire};
use super::{Completion, ProviderConfig, sorted_tools};
use crate::schema::{Message, ProviderError, Role, ThinkingBlock, ToolDefinition};
pub(crate) use decode::ResponsesDecoder;

/// Model families that reason: they get `reasoning` (with a summary to show) and send back their
/// encrypted reasoning.
const REASONING_FAMILIES: [&str; 5] = ["gpt-5", "o1", "o3", "o4", "codex"];

/// OpenAI's Responses API, `POST {base}/responses`.
pub(crate) struct Responses;

impl Protocol for Responses {
    const WIRE: Wire = Wire::new("responses", "OpenAI", "responses");
    type Decoder = ResponsesDecoder;
    const SERVER_SEARCH: bool = true;

    fn headers(config: &ProviderConfig, headers: &mut HeaderMap) -> Result<(), ProviderError> {
        super::openai::bearer_key(config, headers)
    }

    fn request_body(call: Call<'_>) -> Value {
        let (instructions, input) = convert_input(&super::conversation::repaired(call.messages));
        let mut body = json!({
            "model": call.config.model,
            "input": input,
            "stream": call.stream,
            // Nothing is kept server-side: the conversation (and the encrypted reasoning) is
            // sent each time, as it is stored in sessions.db.
            "store": false,
            "parallel_tool_calls": true,
        });
        if !instructions.is_empty() {
            body["instructions"] = json!(instructions);
        }
        let searches =
            super::server_search::offered(call.tools, call.config.web_search, call.messages);
        let tools = convert_tools(call.tools, searches);
        if !tools.is_empty() {
            body["tools"] = Value::Array(tools);
        }
        let mut include = Vec::new();
        if reasons(call.config) {
            let effort = call.config.reasoning_effort.as_deref().unwrap_or("medium");
            body["reasoning"] = json!({"effort": effort, "summary": "auto"});
            include.push("reasoning.encrypted_content");
        }
        if searches {
            // The pages a search read, to show them.
            include.push(web_search::SOURCES);
        }
        if !include.is_empty() {
            body["include"] = json!(include);
        }
        if let Some(max) = call.config.max_tokens {
            body["max_output_tokens"] = json!(max);
        }
        if let Some(key) = cache_key(call.messages) {
            body["prompt_cache_key"] = json!(key);
        }
        body
    }

    fn parse_completion(body: &[u8]) -> Result<Completion, ProviderError> {
        decode::parse_response(body)
    }
}

/// Whether the configured model reasons (it was given an effort, or its family does).
fn reasons(config: &ProviderConfig) -> bool {
    let model = config.model.to_ascii_lowercase();
    config.reasoning_effort.is_some() || REASONING_FAMILIES.iter().any(|f| model.starts_with(f))
}

/// A key that routes a conversation's requests to the same prompt cache: a hash of its first
/// user message, the same on every turn of one session (the provider is not told the session's
/// id) and different between sessions that start differently.
fn cache_key(messages: &[Message]) -> Option<String> {
    let first = messages
        .iter()
        .find(|m| m.role == Role::User && m.tool_call_id.is_none())?;
    let digest = Sha256::digest(first.content.as_bytes());
    Some(digest[..16].iter().map(|b| format!("{b:02x}")).collect())
}

/// Our history as Responses input items, and the system prompt as `instructions`.
pub(crate) fn convert_input(messages: &[Message]) -> (String, Vec<Value>) {
    let mut instructions = Vec::new();
    let mut input = Vec::new();
    for message in messages {
        match message.role {
            Role::System => instructions.push(message.content.as_str()),
            Role::User => match &message.tool_call_id {
                Some(id) => input.push(json!({
                    "type": "function_call_output",
                    "call_id": id,
                    "output": message.content,
                })),
                None => {
                    let mut content = vec![json!({"type": "input_text", "text": message.content})];
                    for image in &message.images {
                        content.push(match crate::images::base64_of(image) {
                            // `detail` is required by the API's published type.
                            Some(data) => json!({"type": "input_image", "detail": "auto",
                                "image_url": format!("data:{};base64,{data}", image.media_type)}),
                            None => json!({"type": "input_text",
                                "text": crate::images::missing_note(image)}),
                        });
                    }
                    input.push(json!({"type": "message", "role": "user", "content": content}));
                }
            },
            Role::Assistant => {
                let searches = message
                    .provider_blocks
                    .as_ref()
                    .filter(|kept| kept.protocol == web_search::PROTOCOL);
                for thinking in &message.thinking {
                    // Only this protocol's own reasoning can be replayed; its id is left out
                    // (nothing is stored under it), the encrypted content carries it.
                    if let ThinkingBlock::Encrypted {
                        summary,
                        encrypted_content,
                    } = thinking
                    {
                        let summary: Vec<Value> = if summary.is_empty() {
                            Vec::new()
                        } else {
                            vec![json!({"type": "summary_text", "text": summary})]
                        };
                        input.push(json!({
                            "type": "reasoning",
                            "summary": summary,
                            "encrypted_content": encrypted_content,
                        }));
                    }
                }
                // The searches the provider ran, verbatim, before the text that cites them.
                input.extend(
                    searches
                        .into_iter()
                        .flat_map(|kept| kept.blocks.iter().cloned()),
                );
                if !message.content.is_empty() {
                    // The easy input message: an `output_text` part would need the output
                    // message's `id` and `status` (the SDK's `ResponseOutputMessageParam`),
                    // which are not kept (`store: false`).
                    input.push(json!({
                        "type": "message",
                        "role": "assistant",
                        "content": message.content,
                    }));
                }
                for call in &message.tool_calls {
                    let arguments = if call.arguments.trim().is_empty() {
                        "{}"
                    } else {
                        &call.arguments
                    };
                    input.push(json!({
                        "type": "function_call",
                        "call_id": call.id,
                        "name": call.name,
                        "arguments": arguments,
                    }));
                }
            }
        }
    }
    (instructions.join("\n\n"), input)
}

/// Tool definitions as Responses `function` tools (flat, not nested as in chat completions),
/// sorted by name; `web_search` is OpenAI's own search when `searches`
/// (`server_search::offered`).
pub(crate) fn convert_tools(tools: &[ToolDefinition], searches: bool) -> Vec<Value> {
    sorted_tools(tools)
        .into_iter()
        .map(|tool| {
            if super::server_search::replaces(tool, searches) {
                return web_search::declaration();
            }
            json!({
                "type": "function",
                "name": tool.name,
                "description": tool.description,
                "parameters": tool.input_schema,
                "strict": false,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests;
