//! The Anthropic messages protocol: the system prompt lifted out of the messages, tool results as
//! `tool_result` blocks (all results of a turn in one user message), thinking blocks carried back
//! with their signatures, prompt-caching marks, and `AnthropicDecoder` for the event stream.

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde_json::{Value, json};

mod decode;
mod web_search;

pub(crate) use decode::AnthropicDecoder;

use super::protocol::{Call, Protocol, Wire, secret_header};
use super::{Completion, DEFAULT_MAX_TOKENS, ProviderConfig, sorted_tools};
use crate::schema::{Message, ProviderError, Role, ThinkingBlock, ToolDefinition};

const API_VERSION: &str = "2023-06-01";

/// Anthropic's messages API, `POST {base}/v1/messages`.
pub(crate) struct Anthropic;

impl Protocol for Anthropic {
    const WIRE: Wire = Wire::new("anthropic", "Anthropic", "v1/messages");
    type Decoder = AnthropicDecoder;
    const SERVER_SEARCH: bool = true;

    fn headers(config: &ProviderConfig, headers: &mut HeaderMap) -> Result<(), ProviderError> {
        headers.insert(
            HeaderName::from_static("anthropic-version"),
            HeaderValue::from_static(API_VERSION),
        );
        let key = config.api_key.expose();
        secret_header(headers, config, HeaderName::from_static("x-api-key"), key)
    }

    fn request_body(call: Call<'_>) -> Value {
        let max_tokens = call.config.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS);
        let searches =
            super::server_search::offered(call.tools, call.config.web_search, call.messages);
        let (system, messages) = convert_messages(&super::conversation::repaired(call.messages));
        let mut body = json!({
            "model": call.config.model,
            "max_tokens": max_tokens,
            "messages": messages,
        });
        if !system.is_empty() {
            body["system"] = json!([{
                "type": "text",
                "text": system,
                "cache_control": {"type": "ephemeral"},
            }]);
        }
        let tools = convert_tools(call.tools, searches);
        if !tools.is_empty() {
            body["tools"] = Value::Array(tools);
        }
        if call.stream {
            body["stream"] = json!(true);
        }
        if call.config.thinking_budget > 0 {
            body["thinking"] = json!({
                "type": "enabled",
                "budget_tokens": call.config.thinking_budget,
            });
        }
        body
    }

    fn parse_completion(body: &[u8]) -> Result<Completion, ProviderError> {
        decode::parse_completion(body)
    }
}

/// Splits off the system prompt and converts the rest to alternating user/assistant messages.
///
/// Consecutive messages of one role are merged (the API requires alternation), which puts all
/// tool results of one assistant turn into a single user message, in the model's order. The last
/// block of the last message is marked for prompt caching.
pub(crate) fn convert_messages(messages: &[Message]) -> (String, Vec<Value>) {
    let mut system = String::new();
    let mut wire: Vec<(Role, Vec<Value>)> = Vec::new();
    for message in messages {
        let blocks = match message.role {
            Role::System => {
                if !system.is_empty() {
                    system.push_str("\n\n");
                }
                system.push_str(&message.content);
                continue;
            }
            Role::User => user_blocks(message),
            Role::Assistant => assistant_blocks(message),
        };
        if blocks.is_empty() {
            continue;
        }
        match wire.last_mut() {
            Some((role, existing)) if *role == message.role => existing.extend(blocks),
            _ => wire.push((message.role, blocks)),
        }
    }
    if let Some(block) = wire
        .last_mut()
        .and_then(|(_, blocks)| blocks.last_mut())
        .and_then(Value::as_object_mut)
    {
        block.insert("cache_control".into(), json!({"type": "ephemeral"}));
    }
    let messages = wire
        .into_iter()
        .map(|(role, content)| json!({"role": role.as_str(), "content": content}))
        .collect();
    (system, messages)
}

fn user_blocks(message: &Message) -> Vec<Value> {
    match &message.tool_call_id {
        Some(id) => {
            let mut block = json!({
                "type": "tool_result",
                "tool_use_id": id,
                "content": message.content,
            });
            if message.is_error {
                block["is_error"] = json!(true);
            }
            vec![block]
        }
        None => {
            // Images first, as Anthropic advises, then the text.
            let mut blocks: Vec<Value> = message
                .images
                .iter()
                .map(|image| match crate::images::base64_of(image) {
                    Some(data) => json!({"type": "image", "source": {
                        "type": "base64", "media_type": image.media_type, "data": data}}),
                    None => json!({"type": "text",
                        "text": crate::images::missing_note(image)}),
                })
                .collect();
            // The API rejects empty text blocks.
            if !message.content.is_empty() {
                blocks.push(json!({"type": "text", "text": message.content}));
            }
            blocks
        }
    }
}

fn assistant_blocks(message: &Message) -> Vec<Value> {
    // A message that used Anthropic's own search goes back exactly as it came.
    if let Some(kept) = &message.provider_blocks
        && kept.protocol == web_search::PROTOCOL
    {
        return kept.blocks.clone();
    }
    let mut blocks = Vec::new();
    for thinking in &message.thinking {
        match thinking {
            // Chat-completions reasoning has no signature and cannot be replayed here.
            ThinkingBlock::Thinking { signature, .. } if signature.is_empty() => {}
            ThinkingBlock::Thinking {
                thinking,
                signature,
            } => blocks.push(json!({
                "type": "thinking",
                "thinking": thinking,
                "signature": signature,
            })),
            ThinkingBlock::Redacted { data } => {
                blocks.push(json!({"type": "redacted_thinking", "data": data}))
            }
            // OpenAI's encrypted reasoning means nothing to Anthropic.
            ThinkingBlock::Encrypted { .. } => {}
        }
    }
    if !message.content.is_empty() {
        blocks.push(json!({"type": "text", "text": message.content}));
    }
    for call in &message.tool_calls {
        // `input` must be an object; a malformed argument text from the model cannot be, so the
        // call is replayed with no input (its error result already told the model what was wrong).
        let input = serde_json::from_str::<Value>(&call.arguments)
            .ok()
            .filter(Value::is_object)
            .unwrap_or_else(|| json!({}));
        blocks.push(json!({
            "type": "tool_use",
            "id": call.id,
            "name": call.name,
            "input": input,
        }));
    }
    blocks
}

/// Tool definitions, sorted by name, the last marked for prompt caching. `web_search` becomes
/// Anthropic's own search when `searches` (`server_search::offered`).
pub(crate) fn convert_tools(tools: &[ToolDefinition], searches: bool) -> Vec<Value> {
    let mut wire: Vec<Value> = sorted_tools(tools)
        .into_iter()
        .map(|tool| {
            if super::server_search::replaces(tool, searches) {
                return web_search::declaration();
            }
            json!({
                "name": tool.name,
                "description": tool.description,
                "input_schema": tool.input_schema,
            })
        })
        .collect();
    if let Some(last) = wire.last_mut() {
        last["cache_control"] = json!({"type": "ephemeral"});
    }
    wire
}
