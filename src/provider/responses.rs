//! OpenAI's Responses API (`POST {base}/responses`), the protocol its reasoning models keep their
//! reasoning through: `convert_input` builds the one request both calls send (system prompt as
//! `instructions`, history as input items, each reasoning item replayed with its
//! `encrypted_content`, `store: false`), `ResponsesDecoder` (in `responses/decode.rs`) accumulates
//! a streamed answer by output item, `parse_response` reads a whole one.

mod decode;
mod web_search;

use std::sync::Arc;

use async_trait::async_trait;
use bytes::Bytes;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use tokio_util::sync::CancellationToken;

use super::transport::Transport;
use super::{ChunkReceiver, Completion, LlmProvider, ProviderConfig, sorted_tools};
use crate::schema::{Message, ProviderError, RetryNotice, Role, ThinkingBlock, ToolDefinition};
pub(crate) use decode::{ResponsesDecoder, parse_response};

/// Model families that reason: they get `reasoning` (with a summary to show) and send back their
/// encrypted reasoning.
const REASONING_FAMILIES: [&str; 5] = ["gpt-5", "o1", "o3", "o4", "codex"];

pub struct ResponsesProvider {
    config: ProviderConfig,
    transport: Arc<Transport>,
}

impl ResponsesProvider {
    pub fn new(config: ProviderConfig) -> Result<Self, ProviderError> {
        let transport = super::openai::openai_transport(&config, "responses")?;
        Ok(ResponsesProvider {
            config,
            transport: Arc::new(transport),
        })
    }

    fn reasons(&self) -> bool {
        let model = self.config.model.to_ascii_lowercase();
        self.config.reasoning_effort.is_some()
            || REASONING_FAMILIES.iter().any(|f| model.starts_with(f))
    }

    /// The JSON body of a request; `stream` selects the streamed form.
    pub fn request_body(
        &self,
        messages: &[Message],
        tools: &[ToolDefinition],
        stream: bool,
    ) -> Value {
        let (instructions, input) = convert_input(messages);
        let mut body = json!({
            "model": self.config.model,
            "input": input,
            "stream": stream,
            // Nothing is kept server-side: the conversation (and the encrypted reasoning) is
            // sent each time, as it is stored in sessions.db.
            "store": false,
            "parallel_tool_calls": true,
        });
        if !instructions.is_empty() {
            body["instructions"] = json!(instructions);
        }
        let searches = super::server_search::offered(tools, self.config.web_search, messages);
        let tools = convert_tools(tools, searches);
        if !tools.is_empty() {
            body["tools"] = Value::Array(tools);
        }
        let mut include = Vec::new();
        if self.reasons() {
            let effort = self.config.reasoning_effort.as_deref().unwrap_or("medium");
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
        if let Some(max) = self.config.max_tokens {
            body["max_output_tokens"] = json!(max);
        }
        if let Some(key) = cache_key(messages) {
            body["prompt_cache_key"] = json!(key);
        }
        body
    }

    fn body_bytes(&self, messages: &[Message], tools: &[ToolDefinition], stream: bool) -> Bytes {
        Bytes::from(self.request_body(messages, tools, stream).to_string())
    }
}

#[async_trait]
impl LlmProvider for ResponsesProvider {
    fn name(&self) -> &str {
        "responses"
    }

    fn model(&self) -> &str {
        &self.config.model
    }

    fn prices(&self) -> Option<super::catalogue::Prices> {
        self.config.prices
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
            .complete(body, cancel, on_retry, parse_response)
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
            .spawn_stream(body, ResponsesDecoder::default, cancel)
    }
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
                            Some(data) => json!({"type": "input_image",
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
                    input.push(json!({
                        "type": "message",
                        "role": "assistant",
                        "content": [{"type": "output_text", "text": message.content}],
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
