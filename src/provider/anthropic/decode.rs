//! Reading Anthropic's answers: the event stream (`message_start` … `message_stop`, thinking and
//! redacted thinking with signatures, `input_json_delta`, `citations_delta`, `ping`, `error`)
//! accumulated into one message, and the whole non-streamed response. Blocks of Anthropic's own
//! web search (`server_tool_use`, `web_search_tool_result`) are shown and kept by `web_search`.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

use super::super::Completion;
use super::super::api_error::classify_status;
use super::super::limits::{check_argument_growth, check_index, check_tool_calls};
use super::super::transport::StreamDecoder;
use super::super::wire_error::{ended_early, in_stream, read_body, unreadable};
use super::web_search;
use crate::schema::{
    Message, ModelStop, ProviderError, ProviderErrorKind, StreamChunk, ThinkingBlock, ToolCall,
    Usage,
};

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum WireEvent {
    MessageStart {
        message: WireMessageStart,
    },
    /// `index` is chosen by the server, so any number up to `u64::MAX`: checked before use.
    ContentBlockStart {
        index: u64,
        /// Kept as sent: blocks of the provider's own tools are replayed verbatim.
        content_block: Value,
    },
    ContentBlockDelta {
        index: u64,
        delta: WireDelta,
    },
    ContentBlockStop {
        #[serde(default)]
        index: Option<u64>,
    },
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
pub(super) enum WireBlock {
    Text {
        #[serde(default)]
        text: String,
        #[serde(default)]
        citations: Option<Vec<Value>>,
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
    /// A call of the provider's own tool (its web search).
    ServerToolUse {
        id: String,
        name: String,
        #[serde(default)]
        input: Value,
    },
    WebSearchToolResult {},
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
    CitationsDelta {
        citation: Value,
    },
    #[serde(other)]
    Unknown,
}

/// A content block being assembled.
pub(super) enum Block {
    Text {
        text: String,
        /// Where its words come from (the provider's search results), replayed as sent.
        citations: Vec<Value>,
    },
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
    /// The provider's own tool's call; its input streams like a tool's.
    ServerToolUse {
        id: String,
        name: String,
        json: String,
        initial: Value,
    },
    /// A block that only the provider reads (a search result, or a type added later): kept
    /// whole, as it came.
    Opaque(Value),
}

impl Block {
    /// The block `wire` (read from `raw`) starts: whole in a whole response, to be completed
    /// by deltas in a stream.
    fn started(wire: WireBlock, raw: Value) -> Block {
        match wire {
            WireBlock::Text { text, citations } => Block::Text {
                text,
                citations: citations.unwrap_or_default(),
            },
            WireBlock::Thinking {
                thinking,
                signature,
            } => Block::Thinking {
                text: thinking,
                signature,
            },
            WireBlock::RedactedThinking { data } => Block::Redacted(data),
            WireBlock::ToolUse { id, name, input } => Block::ToolUse {
                id,
                name,
                json: String::new(),
                initial: input,
            },
            WireBlock::ServerToolUse { id, name, input } => Block::ServerToolUse {
                id,
                name,
                json: String::new(),
                initial: input,
            },
            WireBlock::WebSearchToolResult {} | WireBlock::Unknown => Block::Opaque(raw),
        }
    }
}

/// Accumulates one streamed message.
#[derive(Default)]
pub(crate) struct AnthropicDecoder {
    /// Blocks by the server's `index`: a map, so a large index costs one entry, not a vector of
    /// that length.
    blocks: BTreeMap<u32, Block>,
    usage: Usage,
    saw_usage: bool,
    stop_reason: Option<String>,
    stopped: bool,
}

impl AnthropicDecoder {
    fn block(&mut self, index: u64) -> Result<&mut Block, ProviderError> {
        let index = check_index("Anthropic", index)?;
        self.blocks.get_mut(&index).ok_or_else(|| {
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
    fn on_event(&mut self, data: &str, out: &mut Vec<StreamChunk>) -> Result<bool, ProviderError> {
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
                return Err(unreadable(
                    "Anthropic",
                    "a stream event that could not be read",
                    e,
                    data,
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
                let wire = read_block(&content_block)?;
                // What a block starts with is shown at once; the rest comes in deltas.
                match &wire {
                    WireBlock::Text { text, .. } if !text.is_empty() => {
                        out.push(StreamChunk::TextDelta(text.clone()));
                    }
                    WireBlock::Thinking { thinking, .. } if !thinking.is_empty() => {
                        out.push(StreamChunk::ThinkingDelta(thinking.clone()));
                    }
                    WireBlock::WebSearchToolResult {} => {
                        out.extend(web_search::result_chunk(&content_block, &self.blocks));
                    }
                    _ => {}
                }
                let block = Block::started(wire, content_block);
                let index = check_index("Anthropic", index)?;
                self.blocks.insert(index, block);
            }
            WireEvent::ContentBlockDelta { index, delta } => match (self.block(index)?, delta) {
                (Block::Text { text, .. }, WireDelta::TextDelta { text: piece }) => {
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
                (
                    Block::ToolUse { json, .. } | Block::ServerToolUse { json, .. },
                    WireDelta::InputJsonDelta { partial_json },
                ) => {
                    check_argument_growth("Anthropic", json.len(), partial_json.len())?;
                    json.push_str(&partial_json);
                }
                (Block::Text { citations, .. }, WireDelta::CitationsDelta { citation }) => {
                    web_search::check_citations(citations.len())?;
                    citations.push(citation);
                }
                _ => {}
            },
            WireEvent::ContentBlockStop { index } => {
                // A server tool's input is whole now: its call is shown.
                if let Some(index) = index
                    && let Ok(index) = check_index("Anthropic", index)
                    && let Some(block) = self.blocks.get(&index)
                {
                    out.extend(web_search::start_chunk(block));
                }
            }
            WireEvent::Ping {} => {}
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
            return Err(ended_early("Anthropic", "message_stop"));
        }
        let blocks: Vec<Block> = std::mem::take(&mut self.blocks).into_values().collect();
        let message = message_of(blocks)?;
        Ok(Completion {
            message,
            usage: self.saw_usage.then_some(self.usage),
            stop: self.stop_reason.as_deref().and_then(ModelStop::from_reason),
        })
    }
}

/// The message the blocks make; when the provider's own tools took part, the blocks
/// themselves too, to be sent back verbatim.
fn message_of(blocks: Vec<Block>) -> Result<Message, ProviderError> {
    let mut message = Message::assistant(String::new());
    message.provider_blocks = web_search::provider_blocks(&blocks);
    for block in blocks {
        match block {
            Block::Text { text, .. } => message.content.push_str(&text),
            Block::Thinking { text, signature } => message.thinking.push(ThinkingBlock::Thinking {
                thinking: text,
                signature,
            }),
            Block::Redacted(data) => message.thinking.push(ThinkingBlock::Redacted { data }),
            Block::ToolUse {
                id,
                name,
                json,
                initial,
            } => message.tool_calls.push(ToolCall {
                id,
                name,
                arguments: call_arguments(json, &initial),
            }),
            Block::ServerToolUse { .. } | Block::Opaque(_) => {}
        }
    }
    check_tool_calls("Anthropic", &message.tool_calls)?;
    Ok(message)
}

pub(super) fn tool_input_text(input: &Value) -> String {
    if input.is_null() {
        "{}".to_owned()
    } else {
        input.to_string()
    }
}

/// An `event: error` inside the stream, e.g. `overloaded_error`.
fn stream_error(error: &Value) -> ProviderError {
    in_stream("Anthropic", error, |detail| {
        match detail.label().unwrap_or_default() {
            "overloaded_error" => ProviderErrorKind::Overloaded,
            "rate_limit_error" => ProviderErrorKind::RateLimited,
            "api_error" | "timeout_error" => ProviderErrorKind::Server,
            "authentication_error" | "permission_error" => ProviderErrorKind::Auth,
            _ => classify_status(400, detail),
        }
    })
}

#[derive(Deserialize)]
struct WireResponse {
    #[serde(default)]
    content: Vec<Value>,
    #[serde(default)]
    usage: Option<WireUsage>,
    #[serde(default)]
    stop_reason: Option<String>,
}

/// A whole (non-streamed) message.
pub(crate) fn parse_completion(body: &[u8]) -> Result<Completion, ProviderError> {
    let wire: WireResponse = read_body("Anthropic", "a response that is not a message", body)?;
    let mut blocks = Vec::new();
    for raw in wire.content {
        blocks.push(Block::started(read_block(&raw)?, raw));
    }
    let message = message_of(blocks)?;
    let usage = wire.usage.map(|wire| {
        let mut usage = Usage::default();
        wire.merge_into(&mut usage);
        usage
    });
    let stop = wire.stop_reason.as_deref().and_then(ModelStop::from_reason);
    Ok(Completion {
        message,
        usage,
        stop,
    })
}

/// A content block as its type says, read in place (a text block is not copied first).
fn read_block(raw: &Value) -> Result<WireBlock, ProviderError> {
    WireBlock::deserialize(raw).map_err(|e| {
        ProviderError::new(
            ProviderErrorKind::Protocol,
            format!("Anthropic sent a content block that could not be read: {e}"),
        )
    })
}

/// A tool call's arguments: the streamed JSON, or the block's `input` when none streamed (a
/// whole response, or a call without arguments).
pub(super) fn call_arguments(json: String, initial: &Value) -> String {
    if json.trim().is_empty() {
        tool_input_text(initial)
    } else {
        json
    }
}
