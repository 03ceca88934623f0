//! What a compaction produces, where a history may be cut, and the two compactors that need no
//! model: `SlidingWindow` (a message count) and `TokenBudget` (a token estimate).

use async_trait::async_trait;
use tokio_util::sync::CancellationToken;

use super::summarize::{SUMMARY_MARKER, is_summary};
use super::{Compactor, MemoryError};
use crate::context::estimate_tokens;
use crate::provider::LlmProvider;
use crate::schema::{Message, Role};

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

impl Compaction {
    /// The one way a history is cut without a summary: at `cut_point(messages, wanted)`, and
    /// with the user's turn carried over when the cut would lose it. Every protocol needs the
    /// conversation to open with the user's turn (Anthropic refuses anything else), and the
    /// model needs the task: when the kept part does not open with a request of the user's, or
    /// the cut drops an earlier summary, the summary slot carries the dropped summary and the
    /// user's latest request before the cut.
    pub fn cut(messages: &[Message], wanted: usize) -> Compaction {
        let keep_from = cut_point(messages, wanted);
        Compaction {
            summary: carried_turn(messages, keep_from),
            keep_from,
        }
    }
}

/// Whether `message` is a turn the user wrote (or a summary standing for them), not a tool result.
fn is_user_turn(message: &Message) -> bool {
    message.role == Role::User && !message.is_tool_result()
}

/// The user's turn a cut at `keep_from` must carry over, if any (see `Compaction::cut`).
fn carried_turn(messages: &[Message], keep_from: usize) -> Option<Message> {
    let dropped = messages.get(1..keep_from.min(messages.len()))?;
    if dropped.is_empty() {
        return None;
    }
    let summary = dropped.first().filter(|first| is_summary(first));
    let opens_with_user = messages.get(keep_from).is_some_and(is_user_turn);
    let request = dropped
        .iter()
        .rev()
        .find(|m| is_user_turn(m) && !is_summary(m))
        .filter(|_| !opens_with_user);
    if summary.is_none() && (opens_with_user || keep_from >= messages.len()) {
        return None;
    }
    let mut text = String::from(SUMMARY_MARKER);
    text.push('\n');
    match summary {
        Some(summary) => text.push_str(summary.content.trim_start_matches(SUMMARY_MARKER).trim()),
        None => text.push_str("The earlier conversation was left out to fit the context window."),
    }
    let mut turn = Message::user(String::new());
    if let Some(request) = request {
        text.push_str("\n\nThe user's request, which the conversation below continues:\n");
        text.push_str(&request.content);
        turn.images = request.images.clone();
    }
    turn.content = text;
    Some(turn)
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
        Ok(Compaction::cut(
            messages,
            messages.len() - self.max_messages,
        ))
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
        let mut start = suffix_within(messages, self.max_tokens.saturating_sub(system));
        if start <= 1 {
            return Ok(Compaction::unchanged());
        }
        // The carried turn counts against the budget too: cut later until both fit.
        loop {
            let step = Compaction::cut(messages, start);
            let carried = estimate_tokens(step.summary.as_slice(), &[]);
            let kept = estimate_tokens(&messages[step.keep_from..], &[]);
            if system + carried + kept <= self.max_tokens || start + 1 >= messages.len() {
                return Ok(step);
            }
            start += 1;
            while start + 1 < messages.len() && messages[start].is_tool_result() {
                start += 1;
            }
        }
    }
}
