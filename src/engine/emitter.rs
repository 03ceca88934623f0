//! The output side of the loop (design §2): how a model call is made, where events go and who
//! answers approvals. `BlockingEmitter` waits for whole answers; both log `[engine]` lines;
//! `StreamEmitter` streams deltas as events and awaits the client's approval answers.

use async_trait::async_trait;
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use super::event::{ApprovalDecision, ApprovalRequest, Event, EventKind, RetryInfo};
use crate::provider::{Completion, LlmProvider};
use crate::schema::{
    Message, ProviderError, RetryNotice, ServerToolEvent, StreamChunk, ToolDefinition,
};

/// A failed model call and the text it had streamed before failing.
pub(crate) struct GenerateFailure {
    pub error: ProviderError,
    pub partial_text: String,
}

#[async_trait]
pub(crate) trait Emitter: Send {
    /// The log prefix: `[engine]` (CONTRACT: `exec` logs `[engine]` lines on stderr, whichever
    /// way its answer arrives).
    fn prefix(&self) -> &'static str;

    async fn emit(&mut self, event: Event);

    async fn generate(
        &mut self,
        provider: &dyn LlmProvider,
        turn: u32,
        messages: &[Message],
        tools: &[ToolDefinition],
        cancel: &CancellationToken,
    ) -> Result<Completion, GenerateFailure>;

    /// Shows a sub-agent's approval to whoever answers this run's, without waiting: the child
    /// waits for the answer itself.
    async fn forward_approval(&mut self, turn: u32, request: ApprovalRequest);

    /// Asks for an approval and waits; cancellation counts as a denial.
    async fn approve(
        &mut self,
        turn: u32,
        request: ApprovalRequest,
        answer: oneshot::Receiver<ApprovalDecision>,
        cancel: &CancellationToken,
    ) -> ApprovalDecision;
}

pub(crate) fn retry_info(notice: RetryNotice) -> RetryInfo {
    RetryInfo {
        attempt: notice.attempt,
        max_attempts: notice.max_attempts,
        reason: notice.reason,
        delay: notice.delay,
    }
}

/// Logs a retry the way CONTRACT.md wants it on stderr: the reason and the wait.
pub(crate) fn log_retry(prefix: &str, info: &RetryInfo) {
    tracing::warn!(
        "{prefix} retry | attempt={}/{} wait={:.1}s reason={}",
        info.attempt,
        info.max_attempts,
        info.delay.as_secs_f64(),
        info.reason
    );
}

pub(crate) struct BlockingEmitter<'a> {
    on_text: &'a (dyn Fn(&str) + Send + Sync),
}

impl<'a> BlockingEmitter<'a> {
    pub fn new(on_text: &'a (dyn Fn(&str) + Send + Sync)) -> Self {
        BlockingEmitter { on_text }
    }
}

#[async_trait]
impl Emitter for BlockingEmitter<'_> {
    fn prefix(&self) -> &'static str {
        "[engine]"
    }

    async fn emit(&mut self, event: Event) {
        match &event.kind {
            EventKind::Retry(info) => log_retry(self.prefix(), info),
            // Nobody watches events here: the user reads notices on stderr.
            EventKind::Notice(text) => tracing::warn!("{} notice | {text}", self.prefix()),
            _ => {}
        }
    }

    async fn generate(
        &mut self,
        provider: &dyn LlmProvider,
        _turn: u32,
        messages: &[Message],
        tools: &[ToolDefinition],
        cancel: &CancellationToken,
    ) -> Result<Completion, GenerateFailure> {
        let on_retry = |notice: RetryNotice| log_retry("[engine]", &retry_info(notice));
        match provider.generate(messages, tools, cancel, &on_retry).await {
            Ok(completion) => {
                if !completion.message.content.is_empty() {
                    (self.on_text)(&completion.message.content);
                }
                Ok(completion)
            }
            Err(error) => Err(GenerateFailure {
                error,
                partial_text: String::new(),
            }),
        }
    }

    async fn approve(
        &mut self,
        _turn: u32,
        _request: ApprovalRequest,
        _answer: oneshot::Receiver<ApprovalDecision>,
        _cancel: &CancellationToken,
    ) -> ApprovalDecision {
        ApprovalDecision::NoApprover
    }

    async fn forward_approval(&mut self, _turn: u32, request: ApprovalRequest) {
        request.respond(ApprovalDecision::NoApprover);
    }
}

pub(crate) struct StreamEmitter {
    tx: mpsc::Sender<Event>,
    /// Cancelled when the client stops listening, so the run does not work for nobody.
    cancel: CancellationToken,
}

impl StreamEmitter {
    pub fn new(tx: mpsc::Sender<Event>, cancel: CancellationToken) -> Self {
        StreamEmitter { tx, cancel }
    }
}

#[async_trait]
impl Emitter for StreamEmitter {
    fn prefix(&self) -> &'static str {
        "[engine]"
    }

    async fn emit(&mut self, event: Event) {
        if let EventKind::Retry(info) = &event.kind {
            log_retry(self.prefix(), info);
        }
        if self.tx.send(event).await.is_err() {
            self.cancel.cancel();
        }
    }

    async fn generate(
        &mut self,
        provider: &dyn LlmProvider,
        turn: u32,
        messages: &[Message],
        tools: &[ToolDefinition],
        cancel: &CancellationToken,
    ) -> Result<Completion, GenerateFailure> {
        generate_streamed(self, provider, turn, messages, tools, cancel).await
    }

    async fn forward_approval(&mut self, turn: u32, request: ApprovalRequest) {
        self.emit(Event {
            turn,
            kind: EventKind::ApprovalRequired(request),
        })
        .await;
    }

    async fn approve(
        &mut self,
        turn: u32,
        request: ApprovalRequest,
        answer: oneshot::Receiver<ApprovalDecision>,
        cancel: &CancellationToken,
    ) -> ApprovalDecision {
        self.emit(Event {
            turn,
            kind: EventKind::ApprovalRequired(request),
        })
        .await;
        tokio::select! {
            biased;
            _ = cancel.cancelled() => ApprovalDecision::Interrupted,
            decision = answer => decision.unwrap_or(ApprovalDecision::Deny {
                reason: Some("the approval was abandoned".into()),
            }),
        }
    }
}

/// One model call, streamed: deltas and retries become events of `em` as they arrive.
pub(crate) async fn generate_streamed<E: Emitter + ?Sized>(
    em: &mut E,
    provider: &dyn LlmProvider,
    turn: u32,
    messages: &[Message],
    tools: &[ToolDefinition],
    cancel: &CancellationToken,
) -> Result<Completion, GenerateFailure> {
    let mut chunks = provider.generate_stream(messages, tools, cancel.clone());
    let mut partial_text = String::new();
    let mut server_started = std::collections::HashMap::new();
    let mut stop = None;
    while let Some(chunk) = chunks.recv().await {
        let kind = match chunk {
            StreamChunk::TextDelta(text) => {
                partial_text.push_str(&text);
                EventKind::ActionDelta(text)
            }
            StreamChunk::ThinkingDelta(text) => EventKind::ThinkingDelta(text),
            // The provider's own search: drawn as a tool call and its result.
            StreamChunk::ServerTool(ServerToolEvent::Start(call)) => {
                server_started.insert(call.id.clone(), std::time::Instant::now());
                EventKind::ToolStart(call)
            }
            StreamChunk::ServerTool(ServerToolEvent::Result {
                call,
                output,
                is_error,
            }) => EventKind::ToolResult(super::event::ToolOutcome {
                duration: server_started
                    .remove(&call.id)
                    .map(|at| at.elapsed())
                    .unwrap_or_default(),
                result: crate::schema::ToolResult {
                    tool_call_id: call.id,
                    output,
                    is_error,
                },
                name: call.name,
            }),
            StreamChunk::Retry(notice) => EventKind::Retry(retry_info(notice)),
            StreamChunk::Stopped(why) => {
                stop = Some(why);
                continue;
            }
            StreamChunk::Done { message, usage } => {
                return Ok(Completion {
                    message,
                    usage,
                    stop,
                });
            }
            StreamChunk::Error(error) => {
                return Err(GenerateFailure {
                    error,
                    partial_text,
                });
            }
        };
        em.emit(Event { turn, kind }).await;
    }
    let error = if cancel.is_cancelled() {
        ProviderError::cancelled()
    } else {
        ProviderError::new(
            crate::schema::ProviderErrorKind::Connection,
            "the model stream ended without an answer",
        )
    };
    Err(GenerateFailure {
        error,
        partial_text,
    })
}
