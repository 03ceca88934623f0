//! What a compaction produces, where a history may be cut, and the two compactors that need no
//! model: `SlidingWindow` (a message count) and `TokenBudget` (a token estimate).

use async_trait::async_trait;
use tokio_util::sync::CancellationToken;

use super::{Compactor, MemoryError};
use crate::context::estimate_tokens;
use crate::provider::LlmProvider;
use crate::schema::Message;

/// The outcome of a compaction of `messages`: keep `messages[0]` (the system prompt), then the
/// summary if any, then `messages[keep_from..]` verbatim.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Compaction {
    pub summary: Option<Message>,
    pub keep_from: usize,
}

impl Compaction {
    /// Nothing to do.
    pub fn unchanged() -> Self {
        Compaction {
            summary: None,
            keep_from: 1,
        }
    }

    pub fn is_unchanged(&self) -> bool {
        self.summary.is_none() && self.keep_from <= 1
    }

    /// The compacted history.
    pub fn apply(&self, messages: &[Message]) -> Vec<Message> {
        let mut out = Vec::with_capacity(messages.len());
        out.extend(messages.first().cloned());
        out.extend(self.summary.iter().cloned());
        out.extend_from_slice(&messages[self.keep_from.clamp(1, messages.len().max(1))..]);
        out
    }
}

/// The nearest index at or before `wanted` where a history can be cut without separating a
/// tool call from its results: a kept suffix never starts with a tool result.
pub fn cut_point(messages: &[Message], wanted: usize) -> usize {
    let mut at = wanted.clamp(1, messages.len());
    while at > 1 && messages.get(at).is_some_and(Message::is_tool_result) {
        at -= 1;
    }
    at
}

/// Keeps the last `max_messages` messages (and the system prompt).
#[derive(Debug, Clone, Copy)]
pub struct SlidingWindow {
    pub max_messages: usize,
}

#[async_trait]
impl Compactor for SlidingWindow {
    fn strategy(&self) -> &'static str {
        "sliding_window"
    }

    async fn compact(
        &self,
        messages: &[Message],
        _provider: &dyn LlmProvider,
        _cancel: &CancellationToken,
    ) -> Result<Compaction, MemoryError> {
        let body = messages.len().saturating_sub(1);
        if body <= self.max_messages {
            return Ok(Compaction::unchanged());
        }
        Ok(Compaction {
            summary: None,
            keep_from: cut_point(messages, messages.len() - self.max_messages),
        })
    }
}

/// Keeps as many of the latest messages as fit in `max_tokens` (with the system prompt).
#[derive(Debug, Clone, Copy)]
pub struct TokenBudget {
    pub max_tokens: u64,
}

/// The first index of the longest suffix of `messages[1..]` within `budget` tokens.
pub(crate) fn suffix_within(messages: &[Message], budget: u64) -> usize {
    let mut used = 0;
    let mut start = messages.len();
    while start > 1 {
        let cost = estimate_tokens(&messages[start - 1..start], &[]);
        if used + cost > budget {
            break;
        }
        used += cost;
        start -= 1;
    }
    start
}

#[async_trait]
impl Compactor for TokenBudget {
    fn strategy(&self) -> &'static str {
        "token_budget"
    }

    async fn compact(
        &self,
        messages: &[Message],
        _provider: &dyn LlmProvider,
        _cancel: &CancellationToken,
    ) -> Result<Compaction, MemoryError> {
        let system = estimate_tokens(&messages[..messages.len().min(1)], &[]);
        let start = suffix_within(messages, self.max_tokens.saturating_sub(system));
        if start <= 1 {
            return Ok(Compaction::unchanged());
        }
        Ok(Compaction {
            summary: None,
            keep_from: cut_point(messages, start),
        })
    }
}
