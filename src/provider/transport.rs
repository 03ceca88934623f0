//! The HTTP side shared by every protocol: one POST with timeouts, HTTP failures classified into
//! `ProviderError`s carrying the provider's own message, and the SSE decoding driver that turns a
//! byte stream into `StreamChunk`s with retries. Every body a server sends is read within a
//! bound (`limits`), and every error leaves through `redact`.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures_util::{Stream, StreamExt};
use reqwest::header::HeaderMap;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::Completion;
use super::api_error::{ApiErrorBody, classify_status, retry_after};
use super::limits::{
    MAX_ERROR_BODY_BYTES, MAX_RESPONSE_BYTES, MAX_SSE_EVENT_BYTES, MAX_SSE_LINE_BYTES,
    MAX_STREAM_BYTES, exceeded,
};
use super::redact::{redact, remember_key};
use super::retry::{AttemptError, RetryPolicy, with_retries};
use super::sse::{SseEvent, SseFramer};
use crate::schema::{ProviderError, ProviderErrorKind, RetryNotice, StreamChunk};

/// Chunks buffered between a provider task and its consumer before the provider waits.
const CHUNK_CHANNEL_CAPACITY: usize = 256;

/// Turns the events of one protocol's SSE stream into chunks and, at the end, a whole message.
pub(crate) trait StreamDecoder: Send + 'static {
    /// Feeds the data of one SSE event, trimmed and never empty (`decode_sse` skips an empty
    /// one: a keep-alive); pushes any deltas to `out`. Returns `true` once the stream is complete.
    fn on_event(&mut self, data: &str, out: &mut Vec<StreamChunk>) -> Result<bool, ProviderError>;

    /// Builds the final message; an error when the stream stopped before it was complete.
    fn finish(&mut self) -> Result<Completion, ProviderError>;
}

/// Everything needed to POST to one provider endpoint.
pub(crate) struct Transport {
    client: reqwest::Client,
    /// Which provider, for error text: "OpenAI", "Anthropic".
    pub label: &'static str,
    pub url: String,
    headers: HeaderMap,
    pub policy: RetryPolicy,
    pub idle_timeout: Duration,
}

/// Timeouts and retries of a transport.
#[derive(Debug, Clone, Copy)]
pub struct TransportOptions {
    pub connect_timeout: Duration,
    /// The longest silence tolerated while waiting for headers or the next bytes of a stream.
    pub idle_timeout: Duration,
    pub retry: RetryPolicy,
}

impl Default for TransportOptions {
    fn default() -> Self {
        TransportOptions {
            connect_timeout: Duration::from_secs(15),
            idle_timeout: Duration::from_secs(120),
            retry: RetryPolicy::default(),
        }
    }
}

impl Transport {
    pub fn new(
        label: &'static str,
        url: String,
        headers: HeaderMap,
        secret: String,
        options: TransportOptions,
    ) -> Result<Self, ProviderError> {
        let client = reqwest::Client::builder()
            .connect_timeout(options.connect_timeout)
            .user_agent(concat!("harness9/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| {
                ProviderError::new(
                    ProviderErrorKind::Connection,
                    format!("could not build the HTTP client: {e}"),
                )
            })?;
        remember_key(&secret);
        Ok(Transport {
            client,
            label,
            url,
            headers,
            policy: options.retry,
            idle_timeout: options.idle_timeout,
        })
    }

    fn redacted(&self, error: ProviderError) -> ProviderError {
        redacted(error)
    }

    /// One POST; a non-2xx answer becomes an error with the provider's own message.
    pub async fn post(&self, body: Bytes) -> Result<reqwest::Response, ProviderError> {
        let request = self
            .client
            .post(&self.url)
            .headers(self.headers.clone())
            .body(body)
            .send();
        let response = match tokio::time::timeout(self.idle_timeout, request).await {
            Err(_) => {
                return Err(ProviderError::new(
                    ProviderErrorKind::Timeout,
                    format!(
                        "{} did not answer within {}s",
                        self.label,
                        self.idle_timeout.as_secs()
                    ),
                ));
            }
            Ok(Err(e)) => return Err(self.redacted(self.request_error(&e))),
            Ok(Ok(response)) => response,
        };
        if response.status().is_success() {
            return Ok(response);
        }
        Err(self.redacted(self.error_from_response(response).await))
    }

    fn request_error(&self, error: &reqwest::Error) -> ProviderError {
        let kind = if error.is_timeout() {
            ProviderErrorKind::Timeout
        } else {
            ProviderErrorKind::Connection
        };
        let mut text = error.to_string();
        let mut source = std::error::Error::source(error);
        while let Some(cause) = source {
            text.push_str(": ");
            text.push_str(&cause.to_string());
            source = cause.source();
        }
        ProviderError::new(
            kind,
            format!("could not reach {} at {}: {text}", self.label, self.url),
        )
    }

    async fn error_from_response(&self, response: reqwest::Response) -> ProviderError {
        let status = response.status().as_u16();
        let retry_after = retry_after(response.headers());
        // Only the start of an error body is read: enough for any provider's message.
        let body = match read_body(response, MAX_ERROR_BODY_BYTES, self.idle_timeout).await {
            Ok(Body::Whole(body) | Body::Cut(body)) => body,
            Err(_) => Vec::new(),
        };
        let detail = ApiErrorBody::parse(&body);
        let kind = classify_status(status, &detail);
        let mut message = format!("{} API error {status}", self.label);
        if let Some(label) = detail.label() {
            message.push_str(&format!(" ({label})"));
        }
        message.push_str(": ");
        message.push_str(detail.message.as_deref().unwrap_or(&body_excerpt(&body)));
        ProviderError {
            kind,
            message,
            status: Some(status),
            retry_after,
            retryable: false,
        }
    }

    /// Streams one request as chunks on a channel, retrying transient failures that strike
    /// before any output. The channel ends with exactly one `Done` or `Error`.
    pub fn spawn_stream<D, F>(
        self: &Arc<Self>,
        body: Bytes,
        new_decoder: F,
        cancel: CancellationToken,
    ) -> mpsc::Receiver<StreamChunk>
    where
        D: StreamDecoder,
        F: Fn() -> D + Send + Sync + 'static,
    {
        let (tx, rx) = mpsc::channel(CHUNK_CHANNEL_CAPACITY);
        let transport = Arc::clone(self);
        tokio::spawn(async move {
            let outcome = with_retries(
                &transport.policy,
                &cancel,
                |mut notice| {
                    notice.reason = redact(&notice.reason);
                    // A retry happens only while nothing of this call has been emitted, so the
                    // channel holds at most the earlier notices and can never be full here.
                    let _ = tx.try_send(StreamChunk::Retry(notice));
                },
                |_| transport.stream_attempt(body.clone(), new_decoder(), &tx),
            )
            .await;
            let last = match outcome {
                Ok(done) => {
                    if let Some(stop) = done.stop {
                        let _ = tx.send(StreamChunk::Stopped(stop)).await;
                    }
                    StreamChunk::done(done.message, done.usage)
                }
                Err(error) => StreamChunk::Error(transport.redacted(error)),
            };
            let _ = tx.send(last).await;
        });
        rx
    }

    async fn stream_attempt<D: StreamDecoder>(
        &self,
        body: Bytes,
        mut decoder: D,
        tx: &mpsc::Sender<StreamChunk>,
    ) -> Result<Completion, AttemptError> {
        let response = self.post(body).await?;
        decode_sse(
            response.bytes_stream(),
            &mut decoder,
            tx,
            self.idle_timeout,
            self.label,
        )
        .await
    }

    /// One non-streamed request with retries, its body parsed by `parse`.
    pub async fn complete<F>(
        &self,
        body: Bytes,
        cancel: &CancellationToken,
        on_retry: &(dyn Fn(RetryNotice) + Send + Sync),
        parse: F,
    ) -> Result<Completion, ProviderError>
    where
        F: Fn(&[u8]) -> Result<Completion, ProviderError>,
    {
        let outcome = with_retries(
            &self.policy,
            cancel,
            |notice: RetryNotice| {
                let mut notice = notice;
                notice.reason = redact(&notice.reason);
                on_retry(notice)
            },
            |_| async {
                let response = self.post(body.clone()).await?;
                let bytes = match read_body(response, MAX_RESPONSE_BYTES, self.idle_timeout).await {
                    Ok(Body::Whole(bytes)) => bytes,
                    Ok(Body::Cut(_)) => {
                        return Err(AttemptError::from(exceeded(
                            self.label,
                            format_args!(
                                "a response larger than {} MB",
                                MAX_RESPONSE_BYTES / (1024 * 1024)
                            ),
                        )));
                    }
                    Err(BodyError::Silent) => {
                        return Err(AttemptError::from(ProviderError::new(
                            ProviderErrorKind::Timeout,
                            format!("{} stopped sending its answer", self.label),
                        )));
                    }
                    Err(BodyError::Broken(e)) => {
                        return Err(AttemptError::from(self.request_error(&e)));
                    }
                };
                parse(&bytes).map_err(AttemptError::from)
            },
        )
        .await;
        outcome.map_err(|e| self.redacted(e))
    }
}

/// Decodes an SSE byte stream with `decoder`, sending deltas to `tx`.
///
/// The error says whether any delta had been sent, which decides if a retry is still silent.
/// The stream, each of its lines and each event are bounded (`limits`); past a bound the answer
/// is refused with an error that is not retried.
pub(crate) async fn decode_sse<S, B, E, D>(
    mut bytes: S,
    decoder: &mut D,
    tx: &mpsc::Sender<StreamChunk>,
    idle_timeout: Duration,
    label: &str,
) -> Result<Completion, AttemptError>
where
    S: Stream<Item = Result<B, E>> + Unpin,
    B: AsRef<[u8]>,
    E: std::fmt::Display,
    D: StreamDecoder,
{
    let mut framer = SseFramer::new(MAX_SSE_LINE_BYTES, MAX_SSE_EVENT_BYTES);
    let mut events: Vec<SseEvent> = Vec::new();
    let mut received = 0usize;
    let mut emitted = false;
    let mut out = Vec::new();
    let fail = |error: ProviderError, emitted: bool| AttemptError { error, emitted };
    loop {
        let next = match tokio::time::timeout(idle_timeout, bytes.next()).await {
            Ok(next) => next,
            Err(_) => {
                let error = ProviderError::new(
                    ProviderErrorKind::Timeout,
                    format!("{label} stream went silent for {}s", idle_timeout.as_secs()),
                );
                return Err(fail(stream_cut(error, emitted), emitted));
            }
        };
        let piece = match next {
            None => {
                return decoder
                    .finish()
                    .map_err(|e| fail(stream_cut(e, emitted), emitted));
            }
            Some(Err(error)) => {
                let error = sse_error(label, &error.to_string());
                return Err(fail(stream_cut(error, emitted), emitted));
            }
            Some(Ok(piece)) => piece,
        };
        let piece = piece.as_ref();
        received = received.saturating_add(piece.len());
        if received > MAX_STREAM_BYTES {
            let error = exceeded(
                label,
                format_args!(
                    "a streamed answer larger than {} MB",
                    MAX_STREAM_BYTES / (1024 * 1024)
                ),
            );
            return Err(fail(error, emitted));
        }
        framer
            .push(piece, &mut events)
            .map_err(|e| fail(exceeded(label, e), emitted))?;
        for event in events.drain(..) {
            let data = event.data.trim();
            if data.is_empty() {
                continue;
            }
            let finished = decoder
                .on_event(data, &mut out)
                .map_err(|e| fail(e, emitted))?;
            for chunk in out.drain(..) {
                emitted = true;
                if tx.send(chunk).await.is_err() {
                    // The consumer went away: nothing more to do for anyone.
                    return Err(fail(ProviderError::cancelled(), emitted));
                }
            }
            if finished {
                return decoder.finish().map_err(|e| fail(e, emitted));
            }
        }
    }
}

/// `error` with every secret removed from its text.
pub(crate) fn redacted(mut error: ProviderError) -> ProviderError {
    error.message = redact(&error.message);
    error
}

/// A broken stream after output is a cut: the turn must restart, never end truncated.
fn stream_cut(mut error: ProviderError, emitted: bool) -> ProviderError {
    if emitted && error.kind.is_transient() {
        error.kind = ProviderErrorKind::StreamCut;
        error.message = format!("stream cut mid-answer: {}", error.message);
    }
    error
}

fn sse_error(label: &str, detail: &str) -> ProviderError {
    // The transport failed mid-body: the connection can no longer be trusted.
    ProviderError::new(
        ProviderErrorKind::Connection,
        format!("{label} stream broke: {detail}"),
    )
}

fn body_excerpt(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body);
    let text = text.trim();
    if text.is_empty() {
        return "(empty response body)".to_owned();
    }
    excerpt(text)
}

/// The start of a text that is quoted in an error message.
pub(crate) fn excerpt(text: &str) -> String {
    const MAX_CHARS: usize = 160;
    match text.char_indices().nth(MAX_CHARS) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}

/// A response body read up to a bound.
enum Body {
    Whole(Vec<u8>),
    /// The first `limit` bytes of a longer body; the rest was never read.
    Cut(Vec<u8>),
}

enum BodyError {
    /// No bytes arrived within the idle timeout.
    Silent,
    Broken(reqwest::Error),
}

/// Reads at most `limit` bytes of `response`, each piece within `idle`: a server cannot make
/// this allocate more than `limit` (plus one network read) or wait forever.
async fn read_body(
    mut response: reqwest::Response,
    limit: usize,
    idle: Duration,
) -> Result<Body, BodyError> {
    // The declared length only sizes the first allocation; what arrives is counted.
    let declared = response.content_length().unwrap_or(0);
    let mut body = Vec::with_capacity(declared.min(limit as u64) as usize);
    loop {
        let piece = tokio::time::timeout(idle, response.chunk())
            .await
            .map_err(|_| BodyError::Silent)?
            .map_err(BodyError::Broken)?;
        let Some(piece) = piece else {
            return Ok(Body::Whole(body));
        };
        if body.len() + piece.len() > limit {
            body.extend_from_slice(&piece[..limit - body.len()]);
            return Ok(Body::Cut(body));
        }
        body.extend_from_slice(&piece);
    }
}
