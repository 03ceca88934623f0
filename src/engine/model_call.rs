//! Calling the model for a turn: a stream cut mid-answer restarts the call after a backoff; a
//! refusal of the prompt as too long compacts the history to half the window and sends it once
//! more; a cancelled call keeps the text the user already saw. The history sent carries the
//! memory nudge on its turns, which the stored history never does.

use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use super::emitter::{Emitter, GenerateFailure, retry_info};
use super::event::{Event, EventKind};
use super::run_loop::RunState;
use super::{AgentEngine, EngineError};
use crate::provider::Completion;
use crate::schema::{Message, ProviderErrorKind, RetryNotice, ToolDefinition};

impl AgentEngine {
    /// Calls the model with the run's history. A refusal for a prompt too long (our count is
    /// only an estimate) compacts harder than the threshold would, to half the window, and
    /// sends it once more; a second refusal ends the run.
    pub(super) async fn call_model(
        &self,
        turn: u32,
        tools: &[ToolDefinition],
        cancel: &CancellationToken,
        em: &mut dyn Emitter,
        state: &mut RunState,
    ) -> Result<Completion, EngineError> {
        let mut compacted_for_refusal = false;
        loop {
            let attempt = {
                let outgoing = self.with_nudge(turn, &state.history);
                self.generate_with_restarts(turn, &outgoing, tools, cancel, em)
                    .await
            };
            let failure = match attempt {
                Ok(completion) => return Ok(completion),
                Err(failure) => failure,
            };
            if failure.error.kind == ProviderErrorKind::Cancelled || cancel.is_cancelled() {
                // Keep what the user already saw; the turn is marked as interrupted.
                if !failure.partial_text.is_empty() {
                    state.history.push(Message::assistant(failure.partial_text));
                    self.save(state, em).await;
                }
                return Err(EngineError::Cancelled);
            }
            if failure.error.kind != ProviderErrorKind::ContextTooLong {
                return Err(EngineError::Provider(failure.error));
            }
            let before = state.prompt_estimate(tools);
            if compacted_for_refusal {
                return Err(EngineError::ContextTooLong {
                    tokens: before,
                    message: failure.error.message,
                });
            }
            compacted_for_refusal = true;
            let window = self.options.context_window;
            // Half the window; when our estimate is already below that, it is wrong by at
            // least as much, so halve what is sent.
            let target = if window > 0 && before > window / 2 {
                window / 2
            } else {
                before / 2
            };
            tracing::warn!(
                "{} the model refused the prompt as too long | estimate={before} target={target} error={}",
                em.prefix(),
                failure.error.message
            );
            em.emit(Event {
                turn,
                kind: EventKind::Notice(format!(
                    "the model refused the prompt as too long ({}); compacting to about \
                     {target} tokens and sending it again",
                    failure.error.message
                )),
            })
            .await;
            if !self
                .compact_run(turn, tools, Some(target), cancel, em, state)
                .await
            {
                return Err(EngineError::ContextTooLong {
                    tokens: before,
                    message: failure.error.message,
                });
            }
        }
    }

    /// Calls the model; a stream cut mid-answer restarts the turn after a backoff, discarding
    /// the partial output, up to the policy's attempts.
    async fn generate_with_restarts(
        &self,
        turn: u32,
        messages: &[Message],
        tools: &[ToolDefinition],
        cancel: &CancellationToken,
        em: &mut dyn Emitter,
    ) -> Result<Completion, GenerateFailure> {
        let policy = self.options.turn_retry;
        let max_attempts = policy.max_attempts.max(1);
        let mut attempt = 1;
        loop {
            let provider = self.provider();
            let span = tracing::info_span!(
                "llm_call",
                provider = provider.name(),
                model = provider.model(),
                attempt
            );
            let failure = match em
                .generate(provider.as_ref(), turn, messages, tools, cancel)
                .instrument(span)
                .await
            {
                Ok(completion) => return Ok(completion),
                Err(failure) => failure,
            };
            if !failure.error.retryable || attempt >= max_attempts || cancel.is_cancelled() {
                return Err(failure);
            }
            attempt += 1;
            let delay = policy.delay(attempt, failure.error.retry_after);
            em.emit(Event {
                turn,
                kind: EventKind::Retry(retry_info(RetryNotice {
                    attempt,
                    max_attempts,
                    reason: failure.error.message.clone(),
                    delay,
                })),
            })
            .await;
            tokio::select! {
                biased;
                _ = cancel.cancelled() => return Err(GenerateFailure {
                    error: crate::schema::ProviderError::cancelled(),
                    partial_text: String::new(),
                }),
                _ = tokio::time::sleep(delay) => {}
            }
        }
    }

    /// The history as sent to the model: with the memory nudge appended on its turns. The
    /// stored history never contains the nudge.
    fn with_nudge<'a>(&self, turn: u32, history: &'a [Message]) -> std::borrow::Cow<'a, [Message]> {
        match &self.options.memory_nudge {
            Some((every, text)) if turn.is_multiple_of(*every) => {
                let mut copy = history.to_vec();
                copy.push(Message::user(format!(
                    "<system-reminder>\n{text}\n</system-reminder>"
                )));
                std::borrow::Cow::Owned(copy)
            }
            _ => std::borrow::Cow::Borrowed(history),
        }
    }
}
