//! The request after a compaction, as each of the three protocols would send it: it opens with
//! the user's turn carrying the task (or the summary) and keeps every tool call with its result,
//! whether the compaction summarised, fell back to the token budget, or answered a "prompt too
//! long" refusal. The run is the one of issue 33: one task, then a long loop of tool calls.

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::tests::{builder, call, calls_reply, drain, text_reply, tool};
use super::*;
use crate::memory::{Compaction, Compactor, MemoryError, SUMMARY_MARKER, Summarization};
use crate::provider::conversation::check::{bodies, every_protocol};
use crate::provider::{LlmProvider, ScriptStep, ScriptedProvider};
use crate::schema::{Message, ProviderErrorKind, ToolKind};

const TASK: &str = "fix the parser so the tests pass";

/// A compactor whose summary call fails, so the token budget takes over.
struct FailingSummary;

#[async_trait]
impl Compactor for FailingSummary {
    fn strategy(&self) -> &'static str {
        "summarization"
    }
    async fn compact(
        &self,
        _: &[Message],
        _: &dyn LlmProvider,
        _: &CancellationToken,
    ) -> Result<Compaction, MemoryError> {
        Err(MemoryError::Compaction("500 internal error".into()))
    }
}

/// `Summarization` answered by a summariser of its own, so the run's script stays the loop's.
struct SummaryBy(Arc<ScriptedProvider>);

#[async_trait]
impl Compactor for SummaryBy {
    fn strategy(&self) -> &'static str {
        "summarization"
    }
    async fn compact(
        &self,
        messages: &[Message],
        _: &dyn LlmProvider,
        cancel: &CancellationToken,
    ) -> Result<Compaction, MemoryError> {
        Summarization {
            keep_recent_tokens: 1_000,
        }
        .compact(messages, self.0.as_ref(), cancel)
        .await
    }
}

fn summariser() -> Arc<ScriptedProvider> {
    Arc::new(ScriptedProvider::new([]).repeating(text_reply(
        "The user asked to fix the parser; files were read.",
    )))
}

/// Eight turns of tool calls with about 500 tokens of output each, then the answer; a refusal
/// as too long before turn `refused_at` when given.
fn tool_loop(refused_at: Option<usize>) -> Arc<ScriptedProvider> {
    let mut steps: Vec<ScriptStep> = (1..=8)
        .map(|i| calls_reply("", vec![call(&format!("c{i}"), "big_output", "{}")]))
        .collect();
    if let Some(at) = refused_at {
        steps.insert(
            at,
            ScriptStep::Fail(
                crate::schema::ProviderError::new(
                    ProviderErrorKind::ContextTooLong,
                    "prompt is too long: 210000 tokens > 200000 maximum",
                )
                .with_status(400),
            ),
        );
    }
    steps.push(text_reply("Fixed."));
    Arc::new(ScriptedProvider::new(steps).counting_prompts())
}

/// Runs the task; returns every request the engine sent.
async fn run(provider: &Arc<ScriptedProvider>, engine: AgentEngineBuilder) -> Vec<Vec<Message>> {
    let events =
        drain(Arc::new(engine.build()).run_stream(TASK.into(), CancellationToken::new())).await;
    assert_eq!(
        events.last().map(|e| e.kind.type_name()),
        Some("done"),
        "{:?}",
        events.last()
    );
    provider.calls().into_iter().map(|c| c.messages).collect()
}

fn big() -> Arc<dyn crate::tools::Tool> {
    tool("big_output", ToolKind::ReadOnly, |_, _| async {
        Ok("word ".repeat(500))
    })
}

/// The text of the first message of each protocol's body for `messages`, after checking the
/// rules of each.
fn opening_texts(messages: &[Message]) -> [String; 3] {
    if let Err(broken) = every_protocol(messages, &[]) {
        panic!("{broken}\n{messages:#?}");
    }
    let [anthropic, chat, responses] = bodies(messages, &[]);
    let text = |v: &Value| v.to_string();
    [
        text(&anthropic["messages"][0]["content"]),
        text(&chat["messages"][1]["content"]),
        text(&responses["input"][0]["content"]),
    ]
}

/// Every request of the run keeps the rules and opens with `expected` in the user's turn.
fn assert_requests_open_with(requests: &[Vec<Message>], expected: &str) {
    for (i, messages) in requests.iter().enumerate() {
        for text in opening_texts(messages) {
            assert!(text.contains(expected), "request {i} opens with {text}");
        }
    }
}

#[tokio::test]
async fn after_a_summary_every_protocol_opens_with_the_summary() {
    let provider = tool_loop(None);
    let engine = builder(&provider, vec![big()])
        .context_window(6_000)
        .compactor(Arc::new(SummaryBy(summariser())));
    let requests = run(&provider, engine).await;
    let last = requests.last().unwrap();
    assert!(last[1].content.starts_with(SUMMARY_MARKER), "{last:#?}");
    assert_requests_open_with(&requests[..1], TASK);
    assert_requests_open_with(&requests[requests.len() - 1..], "fix the parser");
}

#[tokio::test]
async fn after_a_fallback_to_the_budget_every_protocol_opens_with_the_task() {
    let provider = tool_loop(None);
    let engine = builder(&provider, vec![big()])
        .context_window(6_000)
        .compactor(Arc::new(FailingSummary));
    let requests = run(&provider, engine).await;
    assert!(
        requests.windows(2).any(|w| w[1].len() < w[0].len()),
        "the run compacted"
    );
    assert_requests_open_with(&requests, TASK);
}

#[tokio::test]
async fn after_a_prompt_too_long_retry_every_protocol_opens_with_the_task() {
    let provider = tool_loop(Some(6));
    let engine = builder(&provider, vec![big()]).context_window(100_000);
    let requests = run(&provider, engine).await;
    assert!(
        requests[7].len() < requests[6].len(),
        "the retry was compacted"
    );
    assert_requests_open_with(&requests, TASK);
}

#[tokio::test]
async fn a_prompt_too_long_retry_after_a_summary_keeps_the_summary() {
    let provider = tool_loop(Some(6));
    let engine = builder(&provider, vec![big()])
        .context_window(100_000)
        .compactor(Arc::new(SummaryBy(summariser())));
    let requests = run(&provider, engine).await;
    assert!(
        requests[7].len() < requests[6].len(),
        "the retry was compacted"
    );
    assert!(requests[7][1].content.starts_with(SUMMARY_MARKER));
    assert_requests_open_with(&requests[7..], "fix the parser");
}
