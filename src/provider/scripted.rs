//! A provider that plays a script instead of calling a model: for tests, benchmarks and demos.
//! Each call takes the next step; every request it received is kept for inspection.

use std::collections::VecDeque;
use std::sync::Mutex;

use async_trait::async_trait;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::{ChunkReceiver, Completion, LlmProvider};
use crate::schema::{
    Message, ProviderError, RetryNotice, StreamChunk, ThinkingBlock, ToolDefinition, Usage,
};

/// What one model call does.
#[derive(Debug, Clone)]
pub enum ScriptStep {
    /// Streams the message's thinking and text in word-sized deltas, then finishes with it.
    Reply(Message),
    /// Fails before any output.
    Fail(ProviderError),
    /// Streams `text`, then fails with `error` (mark it `retryable` for a cut mid-answer).
    FailAfter { text: String, error: ProviderError },
    /// Streams `text`, then waits until the call is cancelled.
    Hang { text: String },
}

/// A request the scripted provider received.
#[derive(Debug, Clone)]
pub struct ScriptedCall {
    pub messages: Vec<Message>,
    pub tools: Vec<String>,
    /// The tools the engine let the provider run itself (`provider_may_run`).
    pub provider_may_run: Vec<String>,
}

pub struct ScriptedProvider {
    steps: Mutex<VecDeque<ScriptStep>>,
    /// Played when the script has run out; `None` makes such a call fail.
    repeat: Option<ScriptStep>,
    calls: Mutex<Vec<ScriptedCall>>,
    usage: Usage,
    /// Reports our own estimate of each request as its input tokens, as a real server counts
    /// a growing conversation (otherwise every call reports the same 100).
    counts_prompts: bool,
    /// Says it searches the web itself (as a model with the provider's own search).
    searches_web: bool,
    /// Sends no usage at all, as llama.cpp's server and some proxies do.
    sends_usage: bool,
}

impl ScriptedProvider {
    pub fn new(steps: impl IntoIterator<Item = ScriptStep>) -> Self {
        ScriptedProvider {
            steps: Mutex::new(steps.into_iter().collect()),
            repeat: None,
            calls: Mutex::new(Vec::new()),
            usage: Usage {
                input_tokens: 100,
                output_tokens: 10,
                ..Usage::default()
            },
            counts_prompts: false,
            searches_web: false,
            sends_usage: true,
        }
    }

    /// Says it searches the web itself, as a provider whose model has its own web search.
    pub fn searching_the_web(mut self) -> Self {
        self.searches_web = true;
        self
    }

    /// Sends no usage with its answers, as a server that does not count.
    pub fn without_usage(mut self) -> Self {
        self.sends_usage = false;
        self
    }

    /// Reports each request's estimated size as its input tokens.
    pub fn counting_prompts(mut self) -> Self {
        self.counts_prompts = true;
        self
    }

    /// A rough count (four bytes a token) is enough: only the growth matters, and the
    /// provider layer may not reach the context's estimator.
    fn usage_of(&self, messages: &[Message], tools: &[ToolDefinition]) -> Usage {
        let mut usage = self.usage;
        if self.counts_prompts {
            let bytes: usize = messages.iter().map(|m| m.content.len() + 16).sum::<usize>()
                + tools
                    .iter()
                    .map(|t| t.description.len() + 64)
                    .sum::<usize>();
            usage.input_tokens = (bytes / 4) as u64;
        }
        usage
    }

    /// Plays `step` forever once the script has run out.
    pub fn repeating(mut self, step: ScriptStep) -> Self {
        self.repeat = Some(step);
        self
    }

    pub fn calls(&self) -> Vec<ScriptedCall> {
        self.calls.lock().map(|c| c.clone()).unwrap_or_default()
    }

    fn next_step(&self, messages: &[Message], tools: &[ToolDefinition]) -> Option<ScriptStep> {
        #[cfg(test)]
        check_conversation(messages, tools);
        if let Ok(mut calls) = self.calls.lock() {
            calls.push(ScriptedCall {
                messages: messages.to_vec(),
                tools: tools.iter().map(|t| t.name.clone()).collect(),
                provider_may_run: tools
                    .iter()
                    .filter(|t| t.provider_may_run)
                    .map(|t| t.name.clone())
                    .collect(),
            });
        }
        let next = self
            .steps
            .lock()
            .ok()
            .and_then(|mut steps| steps.pop_front());
        next.or_else(|| self.repeat.clone())
    }
}

/// Every scripted scenario of the suite checks every request it makes: the history the engine
/// sends keeps the conversation rules, and so does each protocol's body built from it (the one
/// place that sees every request of every scenario, so a new scenario is checked without
/// being listed anywhere).
#[cfg(test)]
fn check_conversation(messages: &[Message], tools: &[ToolDefinition]) {
    if let Err(broken) = super::conversation::check::every_protocol(messages, tools) {
        panic!("a request breaks the conversation rules: {broken}\n{messages:#?}");
    }
    assert!(
        super::conversation::keeps_rules(messages),
        "the engine sent a history that breaks the conversation rules:\n{messages:#?}"
    );
}

fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split_inclusive(' ')
}

#[async_trait]
impl LlmProvider for ScriptedProvider {
    fn name(&self) -> &str {
        "scripted"
    }

    fn model(&self) -> &str {
        "script"
    }

    fn searches_web(&self) -> bool {
        self.searches_web
    }

    async fn generate(
        &self,
        messages: &[Message],
        tools: &[ToolDefinition],
        cancel: &CancellationToken,
        _on_retry: &(dyn Fn(RetryNotice) + Send + Sync),
    ) -> Result<Completion, ProviderError> {
        match self.next_step(messages, tools) {
            Some(ScriptStep::Reply(message)) => Ok(Completion {
                message,
                usage: self.sends_usage.then(|| self.usage_of(messages, tools)),
                stop: None,
            }),
            Some(ScriptStep::Fail(error)) | Some(ScriptStep::FailAfter { error, .. }) => Err(error),
            Some(ScriptStep::Hang { .. }) => {
                cancel.cancelled().await;
                Err(ProviderError::cancelled())
            }
            None => Err(exhausted()),
        }
    }

    fn generate_stream(
        &self,
        messages: &[Message],
        tools: &[ToolDefinition],
        cancel: CancellationToken,
    ) -> ChunkReceiver {
        let step = self.next_step(messages, tools);
        let usage = self.sends_usage.then(|| self.usage_of(messages, tools));
        let (tx, rx) = mpsc::channel(64);
        tokio::spawn(async move {
            let send_text = |text: String, tx: mpsc::Sender<StreamChunk>| async move {
                for word in words(&text) {
                    if tx
                        .send(StreamChunk::TextDelta(word.to_owned()))
                        .await
                        .is_err()
                    {
                        return false;
                    }
                }
                true
            };
            let last = match step {
                Some(ScriptStep::Reply(message)) => {
                    for block in &message.thinking {
                        if let ThinkingBlock::Thinking { thinking, .. } = block {
                            for word in words(thinking) {
                                let _ = tx.send(StreamChunk::ThinkingDelta(word.to_owned())).await;
                            }
                        }
                    }
                    if !send_text(message.content.clone(), tx.clone()).await {
                        return;
                    }
                    StreamChunk::done(message, usage)
                }
                Some(ScriptStep::Fail(error)) => StreamChunk::Error(error),
                Some(ScriptStep::FailAfter { text, error }) => {
                    send_text(text, tx.clone()).await;
                    StreamChunk::Error(error)
                }
                Some(ScriptStep::Hang { text }) => {
                    send_text(text, tx.clone()).await;
                    cancel.cancelled().await;
                    StreamChunk::Error(ProviderError::cancelled())
                }
                None => StreamChunk::Error(exhausted()),
            };
            let _ = tx.send(last).await;
        });
        rx
    }
}

fn exhausted() -> ProviderError {
    ProviderError::new(
        crate::schema::ProviderErrorKind::InvalidRequest,
        "the scripted provider has no step left",
    )
}
