//! One provider over any wire protocol: `Protocol` is what differs between them (the endpoint and
//! its headers, the request body, the stream decoder, the whole-answer parser), `ApiProvider`
//! is everything they share (the transport with its retries and redaction, the two calls of
//! `LlmProvider`). A new protocol is one file implementing `Protocol` and one line in
//! `ProviderConfig::build` and `decode_stream`.

use std::marker::PhantomData;
use std::sync::Arc;

use async_trait::async_trait;
use bytes::Bytes;
use reqwest::header::{CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::transport::{StreamDecoder, Transport};
use super::{ChunkReceiver, Completion, LlmProvider, ProviderConfig, catalogue};
use crate::schema::{Message, ProviderError, ProviderErrorKind, RetryNotice, ToolDefinition};

/// What one wire protocol is. Implemented by a unit type; every function is told the
/// configuration, so the same request always comes out of the same configuration.
pub(crate) trait Protocol: Send + Sync + 'static {
    /// Its name, who answers and where.
    const WIRE: Wire;
    /// Accumulates one streamed answer.
    type Decoder: StreamDecoder + Default;
    /// Whether the API has a web search of its own that can stand in for our `web_search`.
    const SERVER_SEARCH: bool = false;

    /// Adds the headers besides `content-type` to `headers`, the key among them (when there is
    /// one).
    fn headers(config: &ProviderConfig, headers: &mut HeaderMap) -> Result<(), ProviderError>;

    /// The JSON body of a request.
    fn request_body(call: Call<'_>) -> Value;

    /// `request_body` as the bytes sent; a protocol may write them without the `Value`.
    fn body_bytes(call: Call<'_>) -> Bytes {
        Bytes::from(Self::request_body(call).to_string())
    }

    /// A whole (non-streamed) answer.
    fn parse_completion(body: &[u8]) -> Result<Completion, ProviderError>;
}

/// The names and the place of a protocol.
pub(crate) struct Wire {
    /// As the command line spells it: `openai`, `anthropic`.
    pub name: &'static str,
    /// Who answers, in error text: "OpenAI", "Anthropic".
    pub label: &'static str,
    /// The path after the base URL that requests are posted to.
    pub endpoint: &'static str,
}

impl Wire {
    pub const fn new(name: &'static str, label: &'static str, endpoint: &'static str) -> Wire {
        Wire {
            name,
            label,
            endpoint,
        }
    }
}

/// One request to build: the configuration, the conversation and its tools, and which form
/// (`stream`) of the call.
#[derive(Clone, Copy)]
pub(crate) struct Call<'a> {
    pub config: &'a ProviderConfig,
    pub messages: &'a [Message],
    pub tools: &'a [ToolDefinition],
    pub stream: bool,
}

/// A language model reached over protocol `P`.
pub(crate) struct ApiProvider<P> {
    config: ProviderConfig,
    transport: Arc<Transport>,
    protocol: PhantomData<P>,
}

impl<P: Protocol> ApiProvider<P> {
    pub fn new(config: ProviderConfig) -> Result<Self, ProviderError> {
        let mut headers = HeaderMap::new();
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        P::headers(&config, &mut headers)?;
        let transport = Transport::new(
            P::WIRE.label,
            format!("{}/{}", config.base_url, P::WIRE.endpoint),
            headers,
            config.api_key.expose().to_owned(),
            config.transport,
        )?;
        Ok(ApiProvider {
            config,
            transport: Arc::new(transport),
            protocol: PhantomData,
        })
    }

    /// The JSON body of a request; `stream` selects the streamed form.
    #[cfg(test)]
    pub fn request_body(
        &self,
        messages: &[Message],
        tools: &[ToolDefinition],
        stream: bool,
    ) -> Value {
        P::request_body(self.call(messages, tools, stream))
    }

    fn call<'a>(
        &'a self,
        messages: &'a [Message],
        tools: &'a [ToolDefinition],
        stream: bool,
    ) -> Call<'a> {
        Call {
            config: &self.config,
            messages,
            tools,
            stream,
        }
    }
}

#[async_trait]
impl<P: Protocol> LlmProvider for ApiProvider<P> {
    fn name(&self) -> &str {
        P::WIRE.name
    }

    fn model(&self) -> &str {
        &self.config.model
    }

    fn prices(&self) -> Option<catalogue::Prices> {
        self.config.prices
    }

    fn searches_web(&self) -> bool {
        self.config.web_search && P::SERVER_SEARCH
    }

    async fn generate(
        &self,
        messages: &[Message],
        tools: &[ToolDefinition],
        cancel: &CancellationToken,
        on_retry: &(dyn Fn(RetryNotice) + Send + Sync),
    ) -> Result<Completion, ProviderError> {
        let body = P::body_bytes(self.call(messages, tools, false));
        self.transport
            .complete(body, cancel, on_retry, P::parse_completion)
            .await
    }

    fn generate_stream(
        &self,
        messages: &[Message],
        tools: &[ToolDefinition],
        cancel: CancellationToken,
    ) -> ChunkReceiver {
        let body = P::body_bytes(self.call(messages, tools, true));
        self.transport
            .spawn_stream(body, P::Decoder::default, cancel)
    }
}

/// `text` (the key, or a header made of it) as the value of header `name`, marked sensitive so
/// it is never logged; an error naming the key's variable when it cannot be sent in a header.
pub(crate) fn secret_header(
    headers: &mut HeaderMap,
    config: &ProviderConfig,
    name: HeaderName,
    text: &str,
) -> Result<(), ProviderError> {
    let mut value = HeaderValue::from_str(text).map_err(|_| {
        ProviderError::new(
            ProviderErrorKind::Auth,
            format!(
                "{} contains characters that cannot be sent in a header",
                config.kind.key_variable()
            ),
        )
    })?;
    value.set_sensitive(true);
    headers.insert(name, value);
    Ok(())
}
