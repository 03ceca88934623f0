//! The OpenAI-compatible chat completions protocol (OpenAI, Ollama, llama.cpp, vLLM, routers):
//! `convert_messages` / `convert_tools` build the one request both calls send, `OpenAiDecoder`
//! accumulates a streamed answer (tool calls by `index`), `parse_completion` reads a whole one.

use std::borrow::Cow;
use std::collections::BTreeMap;

use bytes::Bytes;
use reqwest::header::{AUTHORIZATION, HeaderMap};
use serde::Deserialize;
use serde_json::{Value, json};

use super::limits::{
    PartialCall, check_argument_growth, check_index, finish_calls, finish_streamed_calls,
};
use super::protocol::{Call, Protocol, Wire, secret_header};
use super::transport::StreamDecoder;
use super::wire_error::{ended_early, in_stream, read_body, read_event};
use super::{Completion, ProviderConfig, sorted_tools};
use crate::schema::{
    Message, ProviderError, ProviderErrorKind, Role, StreamChunk, ThinkingBlock, ToolCall,
    ToolDefinition, Usage,
};

/// The chat completions API, `POST {base}/chat/completions`.
pub(crate) struct OpenAiChat;

impl Protocol for OpenAiChat {
    const WIRE: Wire = Wire::new("openai", "OpenAI", "chat/completions");
    type Decoder = OpenAiDecoder;

    fn headers(config: &ProviderConfig, headers: &mut HeaderMap) -> Result<(), ProviderError> {
        bearer_key(config, headers)
    }

    fn request_body(call: Call<'_>) -> Value {
        let mut body = json!({
            "model": call.config.model,
            "messages": convert_messages(&super::conversation::repaired(call.messages)),
            "stream": call.stream,
        });
        let tools = convert_tools(call.tools);
        if !tools.is_empty() {
            body["tools"] = Value::Array(tools);
        }
        if call.stream {
            body["stream_options"] = json!({"include_usage": true});
        }
        if let Some(effort) = &call.config.reasoning_effort {
            body["reasoning_effort"] = json!(effort);
            // Reasoning models refuse `max_tokens` and take `max_completion_tokens` instead.
            if let Some(max) = call.config.max_tokens {
                body["max_completion_tokens"] = json!(max);
            }
        } else if let Some(max) = call.config.max_tokens {
            body["max_tokens"] = json!(max);
        }
        body
    }

    /// `request_body` as bytes, its messages written straight from the history (`wire`).
    fn body_bytes(call: Call<'_>) -> Bytes {
        let envelope = Self::request_body(Call {
            messages: &[],
            ..call
        });
        let Value::Object(mut envelope) = envelope else {
            unreachable!("the body is an object")
        };
        envelope.remove("messages");
        let messages = super::conversation::repaired(call.messages);
        let body = wire::Body {
            envelope: &envelope,
            messages: wire::Messages(&messages),
        };
        let mut json = Vec::with_capacity(wire::capacity_hint(&envelope, &messages));
        // Writing plain data into a Vec cannot fail; were it to, the server says what is wrong.
        if serde_json::to_writer(&mut json, &body).is_err() {
            json.clear();
        }
        Bytes::from(json)
    }

    fn parse_completion(body: &[u8]) -> Result<Completion, ProviderError> {
        parse_completion(body)
    }
}

/// The key as a bearer token, as OpenAI's APIs take it (left out when there is none: a local
/// server).
pub(crate) fn bearer_key(
    config: &ProviderConfig,
    headers: &mut HeaderMap,
) -> Result<(), ProviderError> {
    let key = config.api_key.expose();
    if key.is_empty() {
        return Ok(());
    }
    secret_header(headers, config, AUTHORIZATION, &format!("Bearer {key}"))
}

mod wire;

/// Our history in the chat completions shape: tool results become `tool` messages.
pub(crate) fn convert_messages(messages: &[Message]) -> Vec<Value> {
    messages.iter().map(convert_message).collect()
}

/// One message in the chat completions shape (`wire` writes the same without a copy).
fn convert_message(message: &Message) -> Value {
    match message.role {
        Role::System => json!({"role": "system", "content": message.content}),
        Role::User => match &message.tool_call_id {
            Some(id) => json!({"role": "tool", "tool_call_id": id, "content": message.content}),
            None if message.images.is_empty() => {
                json!({"role": "user", "content": message.content})
            }
            None => {
                let mut parts = vec![json!({"type": "text", "text": message.content})];
                for image in &message.images {
                    parts.push(match crate::images::base64_of(image) {
                        Some(data) => json!({"type": "image_url", "image_url": {
                                "url": format!("data:{};base64,{data}", image.media_type)}}),
                        None => json!({"type": "text",
                                "text": crate::images::missing_note(image)}),
                    });
                }
                json!({"role": "user", "content": parts})
            }
        },
        Role::Assistant => {
            let mut wire = json!({"role": "assistant"});
            wire["content"] = if message.content.is_empty() && !message.tool_calls.is_empty() {
                Value::Null
            } else {
                json!(message.content)
            };
            if !message.tool_calls.is_empty() {
                wire["tool_calls"] = message.tool_calls.iter().map(wire_call).collect();
            }
            wire
        }
    }
}

/// One tool call of an assistant message.
fn wire_call(call: &ToolCall) -> Value {
    json!({
        "id": call.id,
        "type": "function",
        "function": {"name": call.name, "arguments": wire_arguments(call)},
    })
}

/// The arguments as the API wants them: a JSON string, `{}` when the model sent nothing.
fn wire_arguments(call: &ToolCall) -> &str {
    if call.arguments.trim().is_empty() {
        "{}"
    } else {
        &call.arguments
    }
}

/// Tool definitions as `function` tools, sorted by name.
pub(crate) fn convert_tools(tools: &[ToolDefinition]) -> Vec<Value> {
    sorted_tools(tools)
        .into_iter()
        .map(|tool| {
            json!({
                "type": "function",
                "function": {
                    "name": tool.name,
                    "description": tool.description,
                    "parameters": tool.input_schema,
                },
            })
        })
        .collect()
}

#[derive(Deserialize)]
struct WireChunk<'a> {
    #[serde(default, borrow)]
    choices: Vec<WireChoice<'a>>,
    #[serde(default)]
    usage: Option<WireUsage>,
    #[serde(default)]
    error: Option<Value>,
}

#[derive(Deserialize)]
struct WireChoice<'a> {
    #[serde(default, borrow)]
    delta: Option<WireDelta<'a>>,
    #[serde(default, borrow)]
    finish_reason: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct WireDelta<'a> {
    #[serde(default, borrow)]
    content: Option<Cow<'a, str>>,
    /// DeepSeek, vLLM (older) and others.
    #[serde(default, borrow)]
    reasoning_content: Option<Cow<'a, str>>,
    /// OpenRouter and newer vLLM; some servers send an object here, which is ignored.
    #[serde(default)]
    reasoning: Option<Value>,
    #[serde(default, borrow)]
    tool_calls: Option<Vec<WireToolCallDelta<'a>>>,
}

#[derive(Deserialize)]
struct WireToolCallDelta<'a> {
    /// Chosen by the server, so any number up to `u64::MAX`: checked before it is used.
    #[serde(default)]
    index: Option<u64>,
    #[serde(default, borrow)]
    id: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    function: Option<WireFunctionDelta<'a>>,
}

#[derive(Deserialize)]
struct WireFunctionDelta<'a> {
    #[serde(default, borrow)]
    name: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    arguments: Option<Cow<'a, str>>,
}

#[derive(Deserialize, Default)]
struct WireUsage {
    #[serde(default)]
    prompt_tokens: u64,
    #[serde(default)]
    completion_tokens: u64,
    #[serde(default)]
    prompt_tokens_details: Option<WirePromptDetails>,
    /// DeepSeek's count of the prompt tokens read from its cache (it sends no
    /// `prompt_tokens_details`).
    #[serde(default)]
    prompt_cache_hit_tokens: Option<u64>,
}

#[derive(Deserialize, Default)]
struct WirePromptDetails {
    #[serde(default)]
    cached_tokens: Option<u64>,
}

impl WireUsage {
    /// `prompt_tokens` includes cached tokens; ours keeps them apart, as Anthropic does.
    fn to_usage(&self) -> Usage {
        let cached = self
            .prompt_tokens_details
            .as_ref()
            .and_then(|d| d.cached_tokens)
            .or(self.prompt_cache_hit_tokens)
            .unwrap_or(0)
            .min(self.prompt_tokens);
        Usage {
            input_tokens: self.prompt_tokens - cached,
            output_tokens: self.completion_tokens,
            cache_read_tokens: cached,
            cache_creation_tokens: 0,
        }
    }
}

/// Accumulates one streamed chat completion.
#[derive(Default)]
pub(crate) struct OpenAiDecoder {
    text: String,
    reasoning: String,
    /// Calls by the server's `index`: a map, so a large index costs one entry, not a vector
    /// of that length.
    calls: BTreeMap<u32, PartialCall>,
    finish_reason: Option<String>,
    usage: Option<Usage>,
    saw_done: bool,
}

impl OpenAiDecoder {
    fn call_slot(
        &mut self,
        delta: &WireToolCallDelta<'_>,
    ) -> Result<&mut PartialCall, ProviderError> {
        let last = self.calls.last_key_value();
        // Servers that omit `index` start a new call whenever a new id appears.
        let index = match (delta.index, &delta.id) {
            (Some(index), _) => index,
            (None, Some(id)) if !id.is_empty() && last.is_none_or(|(_, c)| c.id != **id) => {
                last.map_or(0, |(index, _)| u64::from(*index) + 1)
            }
            (None, _) => last.map_or(0, |(index, _)| u64::from(*index)),
        };
        let index = check_index("OpenAI", index)?;
        Ok(self.calls.entry(index).or_default())
    }
}

impl StreamDecoder for OpenAiDecoder {
    fn on_event(&mut self, data: &str, out: &mut Vec<StreamChunk>) -> Result<bool, ProviderError> {
        if data == "[DONE]" {
            self.saw_done = true;
            return Ok(true);
        }
        let chunk: WireChunk<'_> = read_event("OpenAI", data)?;
        if let Some(error) = &chunk.error {
            return Err(stream_error(error));
        }
        if let Some(usage) = &chunk.usage {
            self.usage = Some(usage.to_usage());
        }
        for choice in &chunk.choices {
            if let Some(reason) = &choice.finish_reason {
                self.finish_reason = Some(reason.to_string());
            }
            let Some(delta) = &choice.delta else { continue };
            let reasoning = delta
                .reasoning_content
                .as_deref()
                .or_else(|| delta.reasoning.as_ref().and_then(Value::as_str));
            if let Some(reasoning) = reasoning.filter(|r| !r.is_empty()) {
                self.reasoning.push_str(reasoning);
                out.push(StreamChunk::ThinkingDelta(reasoning.to_owned()));
            }
            if let Some(content) = delta.content.as_deref().filter(|c| !c.is_empty()) {
                self.text.push_str(content);
                out.push(StreamChunk::TextDelta(content.to_owned()));
            }
            for call_delta in delta.tool_calls.iter().flatten() {
                let slot = self.call_slot(call_delta)?;
                if let Some(id) = call_delta.id.as_deref().filter(|id| !id.is_empty()) {
                    slot.id = id.to_owned();
                }
                if let Some(function) = &call_delta.function {
                    if let Some(name) = function.name.as_deref().filter(|n| !n.is_empty())
                        && slot.name.is_empty()
                    {
                        slot.name = name.to_owned();
                    }
                    if let Some(arguments) = &function.arguments {
                        check_argument_growth("OpenAI", slot.arguments.len(), arguments.len())?;
                        slot.arguments.push_str(arguments);
                    }
                }
            }
        }
        Ok(false)
    }

    fn finish(&mut self) -> Result<Completion, ProviderError> {
        if !self.saw_done && self.finish_reason.is_none() {
            return Err(ended_early(
                "OpenAI",
                "the answer was complete (no finish_reason)",
            ));
        }
        let calls = finish_streamed_calls("OpenAI", std::mem::take(&mut self.calls))?;
        Ok(Completion {
            message: assistant_message(
                std::mem::take(&mut self.text),
                std::mem::take(&mut self.reasoning),
                calls,
            ),
            usage: self.usage,
            stop: self
                .finish_reason
                .as_deref()
                .and_then(crate::schema::ModelStop::from_reason),
        })
    }
}

fn assistant_message(text: String, reasoning: String, tool_calls: Vec<ToolCall>) -> Message {
    let mut message = Message::assistant(text);
    message.tool_calls = tool_calls;
    if !reasoning.is_empty() {
        // Chat completions has no signature; the text is kept for display and resume only.
        message.thinking.push(ThinkingBlock::Thinking {
            thinking: reasoning,
            signature: String::new(),
        });
    }
    message
}

/// An `{"error": ...}` object sent inside the stream.
fn stream_error(error: &Value) -> ProviderError {
    in_stream("OpenAI", error, |detail| {
        let label = detail.label().unwrap_or_default();
        if label.contains("rate_limit") {
            ProviderErrorKind::RateLimited
        } else if label.contains("overloaded") {
            ProviderErrorKind::Overloaded
        } else if label.contains("server_error") || label.is_empty() {
            ProviderErrorKind::Server
        } else {
            ProviderErrorKind::InvalidRequest
        }
    })
}

#[derive(Deserialize)]
struct WireCompletion {
    #[serde(default)]
    choices: Vec<WireCompletionChoice>,
    #[serde(default)]
    usage: Option<WireUsage>,
}

#[derive(Deserialize)]
struct WireCompletionChoice {
    message: WireCompletionMessage,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct WireCompletionMessage {
    #[serde(default)]
    content: Option<String>,
    #[serde(default)]
    reasoning_content: Option<String>,
    #[serde(default)]
    tool_calls: Vec<WireCompletionCall>,
}

#[derive(Deserialize)]
struct WireCompletionCall {
    #[serde(default)]
    id: String,
    function: WireCompletionFunction,
}

#[derive(Deserialize)]
struct WireCompletionFunction {
    name: String,
    #[serde(default)]
    arguments: String,
}

/// A whole (non-streamed) chat completion.
pub(crate) fn parse_completion(body: &[u8]) -> Result<Completion, ProviderError> {
    let wire: WireCompletion =
        read_body("OpenAI", "a response that is not a chat completion", body)?;
    let choice = wire.choices.into_iter().next().ok_or_else(|| {
        ProviderError::new(
            ProviderErrorKind::Protocol,
            "OpenAI sent a response with no choices",
        )
    })?;
    let calls = finish_calls(
        "OpenAI",
        choice
            .message
            .tool_calls
            .into_iter()
            .map(|call| (call.id, call.function.name, call.function.arguments)),
    )?;
    Ok(Completion {
        message: assistant_message(
            choice.message.content.unwrap_or_default(),
            choice.message.reasoning_content.unwrap_or_default(),
            calls,
        ),
        usage: wire.usage.map(|u| u.to_usage()),
        stop: choice
            .finish_reason
            .as_deref()
            .and_then(crate::schema::ModelStop::from_reason),
    })
}
