//! `Summarization`, the default compactor: the older part of the history is folded into a
//! summary written by the model, starting from the previous summary rather than from scratch,
//! and the most recent messages are kept verbatim.

use async_trait::async_trait;
use tokio_util::sync::CancellationToken;

use super::compact::{Compaction, cut_point, suffix_within};
use super::{Compactor, MemoryError};
use crate::provider::LlmProvider;
use crate::schema::{Message, Role};

/// The first line of a summary message; it marks the message as a summary in any history.
pub const SUMMARY_MARKER: &str = "[Summary of the earlier conversation]";
/// Characters of one tool result shown to the summariser.
const RESULT_CHARS: usize = 2000;

const INSTRUCTIONS: &str = "You compress a coding agent's conversation so the work can go on \
with less context. Write a dense summary that the agent will read instead of the conversation: \
the user's goals and constraints, decisions made, files read or changed (with paths), commands \
run and what they showed, errors met and how they were resolved, and what was left to do. Keep \
names, paths, numbers and exact error messages. When a previous summary is given, update it \
with the new part: keep what still matters, drop what was superseded. Answer with the summary \
only.";

#[derive(Debug, Clone, Copy)]
pub struct Summarization {
    /// Tokens of the latest messages kept verbatim.
    pub keep_recent_tokens: u64,
}

impl Summarization {
    /// Keeps about a quarter of the window verbatim.
    pub fn for_window(context_window: u64) -> Self {
        Summarization {
            keep_recent_tokens: (context_window / 4).max(2_000),
        }
    }
}

impl Summarization {
    /// The range of `messages` a compaction would fold into the summary (after the system
    /// prompt and any previous summary, before the recent part kept verbatim), if any.
    pub fn folded(&self, messages: &[Message]) -> Option<(usize, usize)> {
        let older_start = match messages.get(1) {
            Some(first) if is_summary(first) => 2,
            _ => 1,
        };
        let keep_from = cut_point(messages, suffix_within(messages, self.keep_recent_tokens));
        (keep_from > older_start).then_some((older_start, keep_from))
    }

    /// The range `/compact` folds: everything after the system prompt and any previous summary,
    /// up to the last exchange (the user's latest prompt and what followed it), if anything.
    pub fn folded_requested(&self, messages: &[Message]) -> Option<(usize, usize)> {
        let older_start = match messages.get(1) {
            Some(first) if is_summary(first) => 2,
            _ => 1,
        };
        let keep_from = messages
            .iter()
            .rposition(|m| m.role == Role::User && !m.is_tool_result() && !is_summary(m))?;
        (keep_from > older_start).then_some((older_start, keep_from))
    }

    /// Folds `range` of `messages` into the summary (starting from a previous one).
    async fn fold(
        &self,
        messages: &[Message],
        range: Option<(usize, usize)>,
        provider: &dyn LlmProvider,
        cancel: &CancellationToken,
    ) -> Result<Compaction, MemoryError> {
        let previous = messages
            .get(1)
            .filter(|first| is_summary(first))
            .map(|first| first.content.as_str());
        let Some((older_start, keep_from)) = range else {
            return Ok(Compaction::unchanged());
        };
        let mut request = String::new();
        if let Some(previous) = previous {
            let body = previous.trim_start_matches(SUMMARY_MARKER).trim();
            request.push_str(&format!("Previous summary:\n{body}\n\n"));
        }
        request.push_str(&format!(
            "Conversation to fold in:\n\n{}",
            transcript(&messages[older_start..keep_from])
        ));
        let completion = provider
            .generate(
                &[Message::system(INSTRUCTIONS), Message::user(request)],
                &[],
                cancel,
                &|_| {},
            )
            .await
            .map_err(|e| MemoryError::Compaction(e.to_string()))?;
        let text = completion.message.content.trim();
        if text.is_empty() {
            return Err(MemoryError::Compaction(
                "the model returned an empty summary".into(),
            ));
        }
        Ok(Compaction {
            summary: Some(Message::user(format!("{SUMMARY_MARKER}\n{text}"))),
            keep_from,
        })
    }
}

pub(super) fn is_summary(message: &Message) -> bool {
    message.role == Role::User && message.content.starts_with(SUMMARY_MARKER)
}

/// The messages as plain text for the summariser.
pub(super) fn transcript(messages: &[Message]) -> String {
    let mut out = String::new();
    for message in messages {
        match (message.role, message.is_tool_result()) {
            (Role::User, true) => {
                let text: String = message.content.chars().take(RESULT_CHARS).collect();
                let cut = if text.len() < message.content.len() {
                    " …(cut)"
                } else {
                    ""
                };
                let label = if message.is_error {
                    "tool error"
                } else {
                    "tool result"
                };
                out.push_str(&format!("[{label}]\n{text}{cut}\n\n"));
            }
            (Role::User, false) => out.push_str(&format!("User: {}\n\n", message.content)),
            (Role::Assistant, _) => {
                if !message.content.is_empty() {
                    out.push_str(&format!("Assistant: {}\n\n", message.content));
                }
                for call in &message.tool_calls {
                    out.push_str(&format!("[tool call {} {}]\n\n", call.name, call.arguments));
                }
            }
            (Role::System, _) => {}
        }
    }
    out
}

#[async_trait]
impl Compactor for Summarization {
    fn strategy(&self) -> &'static str {
        "summarization"
    }

    async fn compact(
        &self,
        messages: &[Message],
        provider: &dyn LlmProvider,
        cancel: &CancellationToken,
    ) -> Result<Compaction, MemoryError> {
        self.fold(messages, self.folded(messages), provider, cancel)
            .await
    }

    async fn compact_requested(
        &self,
        messages: &[Message],
        provider: &dyn LlmProvider,
        cancel: &CancellationToken,
    ) -> Result<Compaction, MemoryError> {
        self.fold(messages, self.folded_requested(messages), provider, cancel)
            .await
    }
}
