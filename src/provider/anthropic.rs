//! The Anthropic messages protocol: the system prompt lifted out of the messages, tool results as
//! `tool_result` blocks (all results of a turn in one user message), thinking blocks carried back
//! with their signatures, prompt-caching marks, and `AnthropicDecoder` for the event stream.

use std::sync::Arc;

use async_trait::async_trait;
use bytes::Bytes;
use reqwest::header::{CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use serde::Deserialize;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::transport::{ApiErrorBody, StreamDecoder, Transport, classify_status, excerpt};
use super::{
    ChunkReceiver, Completion, DEFAULT_MAX_TOKENS, LlmProvider, ProviderConfig, sorted_tools,
};
use crate::schema::{
    Message, ProviderError, ProviderErrorKind, RetryNotice, Role, StreamChunk, ThinkingBlock,
    ToolCall, ToolDefinition, Usage,
};

const API_VERSION: &str = "2023-06-01";

pub struct AnthropicProvider {
    config: ProviderConfig,
    transport: Arc<Transport>,
}

impl AnthropicProvider {
    pub fn new(config: ProviderConfig) -> Result<Self, ProviderError> {
        let mut headers = HeaderMap::new();
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        headers.insert(
            HeaderName::from_static("anthropic-version"),
            HeaderValue::from_static(API_VERSION),
        );
        let key = config.api_key.expose();
        let mut value = HeaderValue::from_str(key).map_err(|_| {
            ProviderError::new(
                ProviderErrorKind::Auth,
                "ANTHROPIC_API_KEY contains characters that cannot be sent in a header",
            )
        })?;
        value.set_sensitive(true);
        headers.insert(HeaderName::from_static("x-api-key"), value);
        let transport = Transport::new(
            "Anthropic",
            format!("{}/v1/messages", config.base_url),
            headers,
            key.to_owned(),
            config.transport,
        )?;
        Ok(AnthropicProvider {
            config,
            transport: Arc::new(transport),
        })
    }

    /// The JSON body of a request; `stream` selects the streamed form.
    pub fn request_body(
        &self,
        messages: &[Message],
        tools: &[ToolDefinition],
        stream: bool,
    ) -> Value {
        let max_tokens = self.config.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS);
        let (system, messages) = convert_messages(messages);
        let mut body = json!({
            "model": self.config.model,
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
        let tools = convert_tools(tools);
        if !tools.is_empty() {
            body["tools"] = Value::Array(tools);
        }
        if stream {
            body["stream"] = json!(true);
        }
        if self.config.thinking_budget > 0 {
            body["thinking"] = json!({
                "type": "enabled",
                "budget_tokens": self.config.thinking_budget,
            });
        }
        body
    }

    fn body_bytes(&self, messages: &[Message], tools: &[ToolDefinition], stream: bool) -> Bytes {
        Bytes::from(self.request_body(messages, tools, stream).to_string())
    }
}

#[async_trait]
impl LlmProvider for AnthropicProvider {
    fn name(&self) -> &str {
        "anthropic"
    }

    fn model(&self) -> &str {
        &self.config.model
    }

    async fn generate(
        &self,
        messages: &[Message],
        tools: &[ToolDefinition],
        cancel: &CancellationToken,
        on_retry: &(dyn Fn(RetryNotice) + Send + Sync),
    ) -> Result<Completion, ProviderError> {
        let body = self.body_bytes(messages, tools, false);
        self.transport
            .complete(body, cancel, on_retry, parse_completion)
            .await
    }

    fn generate_stream(
        &self,
        messages: &[Message],
        tools: &[ToolDefinition],
        cancel: CancellationToken,
    ) -> ChunkReceiver {
        let body = self.body_bytes(messages, tools, true);
        self.transport
            .spawn_stream(body, AnthropicDecoder::default, cancel)
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
        // The API rejects empty text blocks.
        None if message.content.is_empty() => Vec::new(),
        None => vec![json!({"type": "text", "text": message.content})],
    }
}

fn assistant_blocks(message: &Message) -> Vec<Value> {
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

/// Tool definitions, sorted by name, the last marked for prompt caching.
pub(crate) fn convert_tools(tools: &[ToolDefinition]) -> Vec<Value> {
    let mut wire: Vec<Value> = sorted_tools(tools)
        .into_iter()
        .map(|tool| {
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

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum WireEvent {
    MessageStart {
        message: WireMessageStart,
    },
    ContentBlockStart {
        index: usize,
        content_block: WireBlock,
    },
    ContentBlockDelta {
        index: usize,
        delta: WireDelta,
    },
    ContentBlockStop {},
    MessageDelta {
        #[serde(default)]
        delta: WireMessageDelta,
        #[serde(default)]
        usage: Option<WireUsage>,
    },
    MessageStop {},
    Ping {},
    Error {
        error: Value,
    },
}

#[derive(Deserialize)]
struct WireMessageStart {
    #[serde(default)]
    usage: Option<WireUsage>,
}

#[derive(Deserialize, Default)]
struct WireMessageDelta {
    #[serde(default)]
    stop_reason: Option<String>,
}

#[derive(Deserialize, Default, Clone, Copy)]
struct WireUsage {
    #[serde(default)]
    input_tokens: Option<u64>,
    #[serde(default)]
    output_tokens: Option<u64>,
    #[serde(default)]
    cache_creation_input_tokens: Option<u64>,
    #[serde(default)]
    cache_read_input_tokens: Option<u64>,
}

impl WireUsage {
    /// Later reports (`message_delta`) update the fields they carry and leave the rest.
    fn merge_into(self, usage: &mut Usage) {
        if let Some(v) = self.input_tokens {
            usage.input_tokens = v;
        }
        if let Some(v) = self.output_tokens {
            usage.output_tokens = v;
        }
        if let Some(v) = self.cache_creation_input_tokens {
            usage.cache_creation_tokens = v;
        }
        if let Some(v) = self.cache_read_input_tokens {
            usage.cache_read_tokens = v;
        }
    }
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum WireBlock {
    Text {
        #[serde(default)]
        text: String,
    },
    Thinking {
        #[serde(default)]
        thinking: String,
        #[serde(default)]
        signature: String,
    },
    RedactedThinking {
        #[serde(default)]
        data: String,
    },
    ToolUse {
        id: String,
        name: String,
        #[serde(default)]
        input: Value,
    },
    #[serde(other)]
    Unknown,
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum WireDelta {
    TextDelta {
        text: String,
    },
    ThinkingDelta {
        thinking: String,
    },
    SignatureDelta {
        signature: String,
    },
    InputJsonDelta {
        partial_json: String,
    },
    #[serde(other)]
    Unknown,
}

/// A content block being assembled.
enum Block {
    Text(String),
    Thinking {
        text: String,
        signature: String,
    },
    Redacted(String),
    ToolUse {
        id: String,
        name: String,
        /// The input as streamed; when no delta arrives, the start block's input.
        json: String,
        initial: Value,
    },
    Unknown,
}

/// Accumulates one streamed message.
#[derive(Default)]
pub(crate) struct AnthropicDecoder {
    blocks: Vec<Block>,
    usage: Usage,
    saw_usage: bool,
    stop_reason: Option<String>,
    stopped: bool,
}

impl AnthropicDecoder {
    fn block(&mut self, index: usize) -> Result<&mut Block, ProviderError> {
        self.blocks.get_mut(index).ok_or_else(|| {
            ProviderError::new(
                ProviderErrorKind::Protocol,
                format!(
                    "Anthropic sent a delta for content block {index}, which was never started"
                ),
            )
        })
    }
}

impl StreamDecoder for AnthropicDecoder {
    fn on_event(
        &mut self,
        _event: &str,
        data: &str,
        out: &mut Vec<StreamChunk>,
    ) -> Result<bool, ProviderError> {
        if data.trim().is_empty() {
            return Ok(false);
        }
        let event: WireEvent = match serde_json::from_str(data) {
            Ok(event) => event,
            Err(e) => {
                // Event types added to the API later are skipped, not fatal.
                if let Ok(value) = serde_json::from_str::<Value>(data)
                    && value.get("type").is_some_and(Value::is_string)
                {
                    let known = [
                        "message_start",
                        "content_block_start",
                        "content_block_delta",
                        "content_block_stop",
                        "message_delta",
                        "message_stop",
                        "ping",
                        "error",
                    ];
                    if !known.contains(&value["type"].as_str().unwrap_or_default()) {
                        return Ok(false);
                    }
                }
                return Err(ProviderError::new(
                    ProviderErrorKind::Protocol,
                    format!(
                        "Anthropic sent a stream event that could not be read ({e}): {}",
                        excerpt(data)
                    ),
                ));
            }
        };
        match event {
            WireEvent::MessageStart { message } => {
                if let Some(usage) = message.usage {
                    usage.merge_into(&mut self.usage);
                    self.saw_usage = true;
                }
            }
            WireEvent::ContentBlockStart {
                index,
                content_block,
            } => {
                let block = match content_block {
                    WireBlock::Text { text } => {
                        if !text.is_empty() {
                            out.push(StreamChunk::TextDelta(text.clone()));
                        }
                        Block::Text(text)
                    }
                    WireBlock::Thinking {
                        thinking,
                        signature,
                    } => {
                        if !thinking.is_empty() {
                            out.push(StreamChunk::ThinkingDelta(thinking.clone()));
                        }
                        Block::Thinking {
                            text: thinking,
                            signature,
                        }
                    }
                    WireBlock::RedactedThinking { data } => Block::Redacted(data),
                    WireBlock::ToolUse { id, name, input } => Block::ToolUse {
                        id,
                        name,
                        json: String::new(),
                        initial: input,
                    },
                    WireBlock::Unknown => Block::Unknown,
                };
                if self.blocks.len() <= index {
                    self.blocks.resize_with(index + 1, || Block::Unknown);
                }
                self.blocks[index] = block;
            }
            WireEvent::ContentBlockDelta { index, delta } => match (self.block(index)?, delta) {
                (Block::Text(text), WireDelta::TextDelta { text: piece }) => {
                    text.push_str(&piece);
                    out.push(StreamChunk::TextDelta(piece));
                }
                (Block::Thinking { text, .. }, WireDelta::ThinkingDelta { thinking }) => {
                    text.push_str(&thinking);
                    out.push(StreamChunk::ThinkingDelta(thinking));
                }
                (Block::Thinking { signature, .. }, WireDelta::SignatureDelta { signature: s }) => {
                    signature.push_str(&s);
                }
                (Block::ToolUse { json, .. }, WireDelta::InputJsonDelta { partial_json }) => {
                    json.push_str(&partial_json);
                }
                _ => {}
            },
            WireEvent::ContentBlockStop {} | WireEvent::Ping {} => {}
            WireEvent::MessageDelta { delta, usage } => {
                if let Some(reason) = delta.stop_reason {
                    self.stop_reason = Some(reason);
                }
                if let Some(usage) = usage {
                    usage.merge_into(&mut self.usage);
                    self.saw_usage = true;
                }
            }
            WireEvent::MessageStop {} => {
                self.stopped = true;
                return Ok(true);
            }
            WireEvent::Error { error } => return Err(stream_error(&error)),
        }
        Ok(false)
    }

    fn finish(&mut self) -> Result<Completion, ProviderError> {
        if !self.stopped {
            return Err(ProviderError::new(
                ProviderErrorKind::Connection,
                "Anthropic stream ended before message_stop",
            ));
        }
        let mut message = Message::assistant(String::new());
        for block in std::mem::take(&mut self.blocks) {
            match block {
                Block::Text(text) => message.content.push_str(&text),
                Block::Thinking { text, signature } => {
                    message.thinking.push(ThinkingBlock::Thinking {
                        thinking: text,
                        signature,
                    })
                }
                Block::Redacted(data) => message.thinking.push(ThinkingBlock::Redacted { data }),
                Block::ToolUse {
                    id,
                    name,
                    json,
                    initial,
                } => message.tool_calls.push(ToolCall {
                    id,
                    name,
                    arguments: if json.trim().is_empty() {
                        tool_input_text(&initial)
                    } else {
                        json
                    },
                }),
                Block::Unknown => {}
            }
        }
        Ok(Completion {
            message,
            usage: self.saw_usage.then_some(self.usage),
        })
    }
}

fn tool_input_text(input: &Value) -> String {
    if input.is_null() {
        "{}".to_owned()
    } else {
        input.to_string()
    }
}

/// An `event: error` inside the stream, e.g. `overloaded_error`.
fn stream_error(error: &Value) -> ProviderError {
    let detail = ApiErrorBody::from_value(&json!({ "error": error }));
    let kind_text = detail.kind.clone().unwrap_or_default();
    let kind = match kind_text.as_str() {
        "overloaded_error" => ProviderErrorKind::Overloaded,
        "rate_limit_error" => ProviderErrorKind::RateLimited,
        "api_error" | "timeout_error" => ProviderErrorKind::Server,
        "authentication_error" | "permission_error" => ProviderErrorKind::Auth,
        _ => classify_status(400, None),
    };
    let message = detail.message.unwrap_or_else(|| error.to_string());
    ProviderError::new(
        kind,
        format!("Anthropic stream error ({kind_text}): {message}"),
    )
}

#[derive(Deserialize)]
struct WireResponse {
    #[serde(default)]
    content: Vec<WireBlock>,
    #[serde(default)]
    usage: Option<WireUsage>,
}

/// A whole (non-streamed) message.
pub(crate) fn parse_completion(body: &[u8]) -> Result<Completion, ProviderError> {
    let wire: WireResponse = serde_json::from_slice(body).map_err(|e| {
        ProviderError::new(
            ProviderErrorKind::Protocol,
            format!(
                "Anthropic sent a response that is not a message ({e}): {}",
                excerpt(&String::from_utf8_lossy(body))
            ),
        )
    })?;
    let mut message = Message::assistant(String::new());
    for block in wire.content {
        match block {
            WireBlock::Text { text } => message.content.push_str(&text),
            WireBlock::Thinking {
                thinking,
                signature,
            } => message.thinking.push(ThinkingBlock::Thinking {
                thinking,
                signature,
            }),
            WireBlock::RedactedThinking { data } => {
                message.thinking.push(ThinkingBlock::Redacted { data })
            }
            WireBlock::ToolUse { id, name, input } => message.tool_calls.push(ToolCall {
                id,
                name,
                arguments: tool_input_text(&input),
            }),
            WireBlock::Unknown => {}
        }
    }
    let usage = wire.usage.map(|wire| {
        let mut usage = Usage::default();
        wire.merge_into(&mut usage);
        usage
    });
    Ok(Completion { message, usage })
}
