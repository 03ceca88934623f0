//! The data model every other module speaks: messages, tool calls and results, tool definitions,
//! token usage and the provider's stream chunks. Nothing here knows about a wire protocol.

mod outside;
mod stream;
mod tool_kind;
mod tool_names;

pub use outside::{fence_outside, outside_nonces};
pub use stream::{
    ModelStop, ProviderError, ProviderErrorKind, RetryNotice, ServerToolEvent, StreamChunk,
};
pub use tool_kind::ToolKind;
pub use tool_names::{TASK_TOOL, is_mcp_tool};

use serde::{Deserialize, Serialize};

/// Who wrote a message. Tool results travel as `User` messages carrying a `tool_call_id`
/// (design §3.1); each provider maps that onto its own wire shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    System,
    User,
    Assistant,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::System => "system",
            Role::User => "user",
            Role::Assistant => "assistant",
        }
    }
}

/// Reasoning content that a provider must get back verbatim on the next turn.
///
/// Anthropic rejects a follow-up request whose thinking blocks lost their signature, so the
/// signature (or the opaque redacted payload) is kept exactly as it arrived.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ThinkingBlock {
    Thinking {
        thinking: String,
        #[serde(default)]
        signature: String,
    },
    Redacted {
        data: String,
    },
    /// An OpenAI Responses reasoning item: its summary (shown as thinking) and the encrypted
    /// reasoning the API needs back to go on from it (`store: false` keeps nothing server-side).
    Encrypted {
        #[serde(default)]
        summary: String,
        encrypted_content: String,
    },
}

impl ThinkingBlock {
    /// The human-readable text of the block; redacted blocks have none.
    pub fn text(&self) -> &str {
        match self {
            ThinkingBlock::Thinking { thinking, .. } => thinking,
            ThinkingBlock::Encrypted { summary, .. } => summary,
            ThinkingBlock::Redacted { .. } => "",
        }
    }
}

/// One entry of a conversation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Message {
    pub role: Role,
    #[serde(default)]
    pub content: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    /// Set on a tool result: the id of the call it answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// Set on a tool result that reports a failure, so the model can correct itself.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub is_error: bool,
    /// Reasoning the model produced before this message's text (assistant messages only).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub thinking: Vec<ThinkingBlock>,
    /// Images attached to a user's prompt (`@shot.png`), by reference to their stored copy.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub images: Vec<ImageRef>,
    /// The assistant message exactly as one protocol sent it, when it holds blocks that protocol
    /// needs back verbatim (the provider's own web search and its cited text); only that
    /// protocol replays them, any other reads `content` and `tool_calls`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider_blocks: Option<ProviderBlocks>,
}

/// The wire blocks of an assistant message, for the protocol that produced them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProviderBlocks {
    /// `anthropic` or `responses`.
    pub protocol: String,
    /// Anthropic: the message's `content` blocks; Responses: its output items.
    pub blocks: Vec<serde_json::Value>,
}

/// An image attached to a prompt: a copy stored once under `$HARNESS9_HOME/images/` by its
/// content's hash (sessions.db keeps only this reference), read again for each request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImageRef {
    /// The stored copy.
    pub path: std::path::PathBuf,
    /// `image/png`, `image/jpeg`, `image/gif` or `image/webp`.
    pub media_type: String,
    /// The name the user gave (`shot.png`).
    pub name: String,
    pub width: u32,
    pub height: u32,
}

impl Message {
    fn with_role(role: Role, content: impl Into<String>) -> Self {
        Message {
            role,
            content: content.into(),
            tool_calls: Vec::new(),
            tool_call_id: None,
            is_error: false,
            thinking: Vec::new(),
            images: Vec::new(),
            provider_blocks: None,
        }
    }

    pub fn system(content: impl Into<String>) -> Self {
        Self::with_role(Role::System, content)
    }

    pub fn user(content: impl Into<String>) -> Self {
        Self::with_role(Role::User, content)
    }

    pub fn assistant(content: impl Into<String>) -> Self {
        Self::with_role(Role::Assistant, content)
    }

    /// The observation message that carries a tool result back to the model.
    pub fn tool_result(result: &ToolResult) -> Self {
        Message {
            tool_call_id: Some(result.tool_call_id.clone()),
            is_error: result.is_error,
            ..Self::with_role(Role::User, result.output.clone())
        }
    }

    pub fn is_tool_result(&self) -> bool {
        self.tool_call_id.is_some()
    }

    /// All thinking text of the message, concatenated.
    pub fn thinking_text(&self) -> String {
        self.thinking.iter().map(ThinkingBlock::text).collect()
    }
}

/// A tool invocation requested by the model.
///
/// `arguments` is the raw JSON text exactly as the model produced it: it may be malformed, and
/// parsing it is the tool's job, so that a bad call becomes an error result the model can fix.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    pub arguments: String,
}

impl ToolCall {
    /// The arguments as a JSON value; text that does not parse is returned as a JSON string.
    pub fn arguments_value(&self) -> serde_json::Value {
        if self.arguments.trim().is_empty() {
            return serde_json::Value::Object(Default::default());
        }
        serde_json::from_str(&self.arguments)
            .unwrap_or_else(|_| serde_json::Value::String(self.arguments.clone()))
    }
}

/// The outcome of one tool call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolResult {
    pub tool_call_id: String,
    pub output: String,
    #[serde(default)]
    pub is_error: bool,
}

impl ToolResult {
    pub fn ok(tool_call_id: impl Into<String>, output: impl Into<String>) -> Self {
        ToolResult {
            tool_call_id: tool_call_id.into(),
            output: output.into(),
            is_error: false,
        }
    }

    pub fn error(tool_call_id: impl Into<String>, output: impl Into<String>) -> Self {
        ToolResult {
            tool_call_id: tool_call_id.into(),
            output: output.into(),
            is_error: true,
        }
    }
}

/// What the model is told about a tool: its name, when to use it, and a JSON Schema of its input.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolDefinition {
    pub name: String,
    pub description: String,
    pub input_schema: serde_json::Value,
    /// The provider may offer its own server-side tool of this name instead (only `web_search`
    /// has one): set by the engine only when the call would run without asking.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub provider_may_run: bool,
}

/// Token accounting reported by a provider for one call.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
    #[serde(default)]
    pub cache_read_tokens: u64,
    #[serde(default)]
    pub cache_creation_tokens: u64,
}

impl Usage {
    /// Every token of the prompt, cached or not: what the context window has to hold.
    pub fn prompt_tokens(&self) -> u64 {
        self.input_tokens + self.cache_read_tokens + self.cache_creation_tokens
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn message_round_trips_every_field() {
        let msg = Message {
            role: Role::Assistant,
            content: "text".into(),
            tool_calls: vec![ToolCall {
                id: "c1".into(),
                name: "bash".into(),
                arguments: "{\"command\":\"ls\"}".into(),
            }],
            tool_call_id: None,
            is_error: false,
            thinking: vec![
                ThinkingBlock::Thinking {
                    thinking: "hm".into(),
                    signature: "sig".into(),
                },
                ThinkingBlock::Redacted { data: "xx".into() },
            ],
            images: vec![ImageRef {
                path: "/h/images/ab.png".into(),
                media_type: "image/png".into(),
                name: "shot.png".into(),
                width: 3,
                height: 2,
            }],
            provider_blocks: Some(ProviderBlocks {
                protocol: "anthropic".into(),
                blocks: vec![serde_json::json!({"type": "text", "text": "text"})],
            }),
        };
        let json = serde_json::to_string(&msg).unwrap();
        let back: Message = serde_json::from_str(&json).unwrap();
        assert_eq!(back, msg);
    }

    #[test]
    fn malformed_arguments_survive_as_a_string() {
        let call = ToolCall {
            id: "c".into(),
            name: "bash".into(),
            arguments: "{\"command\": ".into(),
        };
        assert_eq!(
            call.arguments_value(),
            serde_json::Value::String("{\"command\": ".into())
        );
    }
}
