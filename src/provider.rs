//! The model side: the `LlmProvider` trait the engine depends on, and one provider
//! (`protocol::ApiProvider`) over its three wire protocols (OpenAI-compatible chat completions,
//! Anthropic messages, OpenAI Responses). Each protocol has one conversion layer shared by the
//! blocking and the streaming call, so both always send the same request.

mod anthropic;
mod api_error;
pub mod catalogue;
pub(crate) mod conversation;
mod limits;
mod openai;
mod protocol;
mod redact;
mod responses;
mod retry;
mod scripted;
mod server_search;
pub(crate) mod sse;
mod transport;
mod wire_error;

use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

pub use redact::{REDACTED, redact, remember_key};
pub use retry::RetryPolicy;
pub use scripted::{ScriptStep, ScriptedCall, ScriptedProvider};
pub use transport::TransportOptions;

use anthropic::Anthropic;
use openai::OpenAiChat;
use protocol::{ApiProvider, Protocol};
use responses::Responses;

use crate::schema::{Message, ProviderError, RetryNotice, StreamChunk, ToolDefinition, Usage};

/// A finished model call.
#[derive(Debug, Clone, PartialEq)]
pub struct Completion {
    pub message: Message,
    pub usage: Option<Usage>,
    /// The model stopped other than by its own choice (the token limit, a refusal).
    pub stop: Option<crate::schema::ModelStop>,
}

/// The receiving end of a streamed call: deltas, retry notices, then one `Done` or `Error`.
pub type ChunkReceiver = mpsc::Receiver<StreamChunk>;

/// A language model behind some wire protocol.
#[async_trait]
pub trait LlmProvider: Send + Sync {
    /// The protocol's name as the command line spells it: `openai`, `anthropic`.
    fn name(&self) -> &str;

    /// The model requests are sent for.
    fn model(&self) -> &str;

    /// The model's prices (from the catalogue), so a run can say what it cost.
    fn prices(&self) -> Option<catalogue::Prices> {
        None
    }

    /// Whether the provider searches the web itself for this model (the catalogue's
    /// `web_search`), in place of our `web_search` when a request marks it.
    fn searches_web(&self) -> bool {
        false
    }

    /// One call, waiting for the whole answer. `on_retry` hears of each retry before its wait.
    async fn generate(
        &self,
        messages: &[Message],
        tools: &[ToolDefinition],
        cancel: &CancellationToken,
        on_retry: &(dyn Fn(RetryNotice) + Send + Sync),
    ) -> Result<Completion, ProviderError>;

    /// One call, streamed. The request is built before this returns; the network work runs on
    /// a task that stops when `cancel` fires or the receiver is dropped.
    fn generate_stream(
        &self,
        messages: &[Message],
        tools: &[ToolDefinition],
        cancel: CancellationToken,
    ) -> ChunkReceiver;
}

/// Which wire protocol to speak.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ProviderKind {
    #[value(name = "openai")]
    OpenAi,
    Anthropic,
    /// OpenAI's Responses API (reasoning kept between calls).
    Responses,
}

impl ProviderKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ProviderKind::OpenAi => "openai",
            ProviderKind::Anthropic => "anthropic",
            ProviderKind::Responses => "responses",
        }
    }

    pub fn default_model(self) -> &'static str {
        match self {
            ProviderKind::OpenAi => "gpt-4o",
            ProviderKind::Responses => "gpt-5",
            ProviderKind::Anthropic => "claude-sonnet-4-20250514",
        }
    }

    pub fn default_base_url(self) -> &'static str {
        match self {
            ProviderKind::OpenAi | ProviderKind::Responses => "https://api.openai.com/v1",
            ProviderKind::Anthropic => "https://api.anthropic.com",
        }
    }

    pub fn key_variable(self) -> &'static str {
        match self {
            ProviderKind::OpenAi | ProviderKind::Responses => "OPENAI_API_KEY",
            ProviderKind::Anthropic => "ANTHROPIC_API_KEY",
        }
    }

    pub fn base_url_variable(self) -> &'static str {
        match self {
            ProviderKind::OpenAi | ProviderKind::Responses => "OPENAI_BASE_URL",
            ProviderKind::Anthropic => "ANTHROPIC_BASE_URL",
        }
    }
}

impl fmt::Display for ProviderKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An API key. Its `Debug` never shows it, so a logged configuration cannot leak it.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    pub fn new(key: impl Into<String>) -> Self {
        ApiKey(key.into())
    }

    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey([redacted])")
    }
}

/// Everything a provider needs to send requests.
#[derive(Debug, Clone)]
pub struct ProviderConfig {
    pub kind: ProviderKind,
    pub api_key: ApiKey,
    /// Without a trailing slash; `/chat/completions` or `/v1/messages` is appended.
    pub base_url: String,
    pub model: String,
    /// Output tokens per call. Anthropic requires a value; OpenAI gets one only when set.
    pub max_tokens: Option<u32>,
    /// Anthropic extended thinking budget; 0 is off.
    pub thinking_budget: u32,
    /// OpenAI-compatible reasoning models: `low`, `medium`, `high`.
    pub reasoning_effort: Option<String>,
    pub transport: TransportOptions,
    /// The model's prices, when the catalogue knows them.
    pub prices: Option<catalogue::Prices>,
    /// The catalogue says the provider can search the web itself for this model (`web_search`).
    pub web_search: bool,
}

/// Output tokens per call when none is configured (CONTRACT: `--max-tokens` default).
pub const DEFAULT_MAX_TOKENS: u32 = 8192;

impl ProviderConfig {
    pub fn new(kind: ProviderKind, api_key: ApiKey, base_url: impl Into<String>) -> Self {
        ProviderConfig {
            kind,
            api_key,
            base_url: base_url.into().trim_end_matches('/').to_owned(),
            model: kind.default_model().to_owned(),
            max_tokens: None,
            thinking_budget: 0,
            reasoning_effort: None,
            transport: TransportOptions::default(),
            prices: None,
            web_search: false,
        }
    }

    /// Builds the provider this configuration describes.
    pub fn build(&self) -> Result<Arc<dyn LlmProvider>, ProviderError> {
        Ok(match self.kind {
            ProviderKind::OpenAi => Arc::new(ApiProvider::<OpenAiChat>::new(self.clone())?),
            ProviderKind::Anthropic => Arc::new(ApiProvider::<Anthropic>::new(self.clone())?),
            ProviderKind::Responses => Arc::new(ApiProvider::<Responses>::new(self.clone())?),
        })
    }
}

/// Sorts tool definitions by name: a stable order keeps request prefixes cacheable.
pub(crate) fn sorted_tools(tools: &[ToolDefinition]) -> Vec<&ToolDefinition> {
    let mut sorted: Vec<&ToolDefinition> = tools.iter().collect();
    sorted.sort_by(|a, b| a.name.cmp(&b.name));
    sorted
}

/// Decodes a recorded (or live) SSE body of `kind` into chunks sent to `tx`, and the final
/// completion. This is the exact path a streamed call takes once its response has arrived.
pub async fn decode_stream<S, B, E>(
    kind: ProviderKind,
    bytes: S,
    tx: &mpsc::Sender<StreamChunk>,
) -> Result<Completion, ProviderError>
where
    S: futures_util::Stream<Item = Result<B, E>> + Unpin,
    B: AsRef<[u8]>,
    E: std::fmt::Display,
{
    match kind {
        ProviderKind::OpenAi => decode_as::<OpenAiChat, _, _, _>(bytes, tx).await,
        ProviderKind::Anthropic => decode_as::<Anthropic, _, _, _>(bytes, tx).await,
        ProviderKind::Responses => decode_as::<Responses, _, _, _>(bytes, tx).await,
    }
}

/// `decode_stream` for protocol `P`.
async fn decode_as<P, S, B, E>(
    bytes: S,
    tx: &mpsc::Sender<StreamChunk>,
) -> Result<Completion, ProviderError>
where
    P: Protocol,
    S: futures_util::Stream<Item = Result<B, E>> + Unpin,
    B: AsRef<[u8]>,
    E: std::fmt::Display,
{
    let idle = std::time::Duration::from_secs(3600);
    let mut decoder = P::Decoder::default();
    transport::decode_sse(bytes, &mut decoder, tx, idle, P::WIRE.label)
        .await
        .map_err(|failure| transport::redacted(failure.error))
}
