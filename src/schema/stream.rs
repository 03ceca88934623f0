//! What a provider's stream yields: deltas as they arrive, retry notices while it waits, and
//! exactly one terminal `Done` or `Error`.

use std::time::Duration;

use super::{Message, Usage};

/// One increment of a streamed model call.
#[derive(Debug, Clone, PartialEq)]
pub enum StreamChunk {
    TextDelta(String),
    ThinkingDelta(String),
    /// A tool the provider ran on its own servers (its web search): shown like our tools' calls,
    /// never run here.
    ServerTool(ServerToolEvent),
    /// The provider is about to wait and try again; nothing of the failed attempt was emitted.
    Retry(RetryNotice),
    /// The call finished: the whole message (tool calls accumulated) and the usage, if reported.
    Done {
        message: Message,
        usage: Option<super::Usage>,
    },
    /// Sent just before `Done` when the model stopped other than by its own choice.
    Stopped(ModelStop),
    Error(ProviderError),
}

/// Why the model stopped when it was not its own choice to end or to call tools: what a front
/// end that names stop reasons (ACP) tells apart from an answer's end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModelStop {
    /// The answer reached the output token limit.
    MaxTokens,
    /// The model, or the provider's filter, refused to answer.
    Refusal,
}

impl ModelStop {
    /// From a provider's finish or stop reason (OpenAI's `finish_reason`, Anthropic's
    /// `stop_reason`, the Responses API's `incomplete_details.reason`).
    pub fn from_reason(reason: &str) -> Option<ModelStop> {
        match reason {
            "length" | "max_tokens" | "max_output_tokens" => Some(ModelStop::MaxTokens),
            "content_filter" | "refusal" => Some(ModelStop::Refusal),
            _ => None,
        }
    }
}

impl StreamChunk {
    pub fn done(message: Message, usage: Option<Usage>) -> Self {
        StreamChunk::Done { message, usage }
    }

    pub fn is_terminal(&self) -> bool {
        matches!(self, StreamChunk::Done { .. } | StreamChunk::Error(_))
    }
}

/// A server-side tool call as it starts and as its result arrives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServerToolEvent {
    Start(super::ToolCall),
    /// The result, in words for the transcript (the sources found, or the error).
    Result {
        call: super::ToolCall,
        output: String,
        is_error: bool,
    },
}

/// Why and how long a provider waits before its next attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetryNotice {
    /// The attempt that is about to start (2 for the first retry).
    pub attempt: u32,
    pub max_attempts: u32,
    pub reason: String,
    pub delay: Duration,
}

/// The broad class of a provider failure, which decides whether it is worth retrying.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProviderErrorKind {
    /// 429.
    RateLimited,
    /// 529 or an `overloaded_error`.
    Overloaded,
    /// 408 or 5xx.
    Server,
    /// The connection could not be made or broke before a response.
    Connection,
    /// No bytes arrived within the idle timeout.
    Timeout,
    /// The stream broke after part of the answer had been emitted.
    StreamCut,
    /// 401 / 403: the key is missing, wrong or lacks permission.
    Auth,
    /// 400 / 404 / other 4xx: the request itself is wrong.
    InvalidRequest,
    /// The server refused the request because the prompt does not fit the model's context
    /// window (Anthropic's `prompt is too long`, OpenAI's `context_length_exceeded`): compacting
    /// the history and sending it again may cure it.
    ContextTooLong,
    /// The server sent something that is not the protocol (bad SSE, bad JSON).
    Protocol,
    Cancelled,
}

impl ProviderErrorKind {
    /// Failures that another attempt may cure.
    pub fn is_transient(self) -> bool {
        matches!(
            self,
            ProviderErrorKind::RateLimited
                | ProviderErrorKind::Overloaded
                | ProviderErrorKind::Server
                | ProviderErrorKind::Connection
                | ProviderErrorKind::Timeout
                | ProviderErrorKind::StreamCut
        )
    }
}

/// A failed model call, with the provider's own words where it gave any.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ProviderError {
    pub kind: ProviderErrorKind,
    pub message: String,
    /// The HTTP status, when the failure was one.
    pub status: Option<u16>,
    /// The server's `retry-after`, when it sent one.
    pub retry_after: Option<Duration>,
    /// Whether the caller should restart the whole turn: set when a transient failure struck
    /// after output had already been emitted, so the provider could not retry by itself.
    pub retryable: bool,
}

impl ProviderError {
    pub fn new(kind: ProviderErrorKind, message: impl Into<String>) -> Self {
        ProviderError {
            kind,
            message: message.into(),
            status: None,
            retry_after: None,
            retryable: false,
        }
    }

    pub fn with_status(mut self, status: u16) -> Self {
        self.status = Some(status);
        self
    }

    pub fn cancelled() -> Self {
        Self::new(ProviderErrorKind::Cancelled, "the request was cancelled")
    }
}
