//! What the engine remembers between turns and runs: the `Session` a conversation is stored in
//! (SQLite in `$HARNESS9_HOME/sessions.db`, or memory), and the `Compactor`s that keep a long
//! history inside the model's window. Stores save only new messages, one turn per transaction,
//! so a kill never loses a finished turn; compaction changes what the model sees, never what is
//! stored.

mod checkpoints;
mod children;
mod compact;
pub mod extract;
mod in_memory;
pub mod long_term;
#[cfg(test)]
mod long_term_tests;
pub mod migrations;
mod search;
mod session_state;
mod sqlite_session;
mod store;
mod summarize;

use async_trait::async_trait;
use tokio_util::sync::CancellationToken;

pub use checkpoints::CheckpointRow;
pub use children::ChildSession;
pub use compact::{Compaction, SlidingWindow, TokenBudget, cut_point};
pub use in_memory::InMemorySession;
pub use sqlite_session::SqliteSession;
pub use store::{
    NewSession, SearchHit, SessionRecord, SessionStore, SessionTotals, now_ms, store_time,
    title_from,
};
pub use summarize::{SUMMARY_MARKER, Summarization};

use crate::provider::LlmProvider;
use crate::schema::Message;

#[derive(Debug, thiserror::Error)]
pub enum MemoryError {
    #[error("session store: {0}")]
    Store(String),
    #[error("{0}")]
    NotFound(String),
    #[error("{0}")]
    Ambiguous(String),
    #[error("compaction failed: {0}")]
    Compaction(String),
    /// A stored value (todo list, prompt queue) that cannot be read; it was left in place.
    #[error("{0}")]
    Corrupt(String),
}

impl From<rusqlite::Error> for MemoryError {
    fn from(error: rusqlite::Error) -> Self {
        MemoryError::Store(error.to_string())
    }
}

/// How big the server said the prompt was: `tokens` (its input plus the answer's output) for
/// the first `messages` messages of the session's view. The next compaction decision starts
/// from it and estimates only what came after, since our own count is only an estimate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PromptCount {
    pub tokens: u64,
    pub messages: usize,
}

/// A stored conversation.
#[async_trait]
pub trait Session: Send + Sync {
    fn id(&self) -> &str;

    /// What the model is shown, oldest first (never the system prompt): after a compaction, its
    /// summary and the messages that followed it.
    async fn load_messages(&self) -> Result<Vec<Message>, MemoryError>;

    /// Every message ever stored, for the transcript.
    async fn load_transcript(&self) -> Result<Vec<Message>, MemoryError> {
        self.load_messages().await
    }

    /// Appends the new messages of one turn, all or nothing.
    async fn append_messages(&self, messages: &[Message]) -> Result<(), MemoryError>;

    /// Records that the first `dropped` messages of the current view are replaced by `summary`
    /// (or simply left out, without one). The view changes, so any `PromptCount` is forgotten.
    async fn record_compaction(
        &self,
        dropped: usize,
        summary: Option<Message>,
    ) -> Result<(), MemoryError>;

    /// The server's last count of the view's prompt, if any was recorded since the view last
    /// changed shape.
    async fn prompt_count(&self) -> Result<Option<PromptCount>, MemoryError> {
        Ok(None)
    }

    async fn record_prompt_count(&self, _count: PromptCount) -> Result<(), MemoryError> {
        Ok(())
    }

    /// Adds model calls' usage (and the cost of those with known prices) to the session's totals.
    async fn record_usage(
        &self,
        _usage: crate::schema::Usage,
        _cost_usd: f64,
    ) -> Result<(), MemoryError> {
        Ok(())
    }
}

/// Shrinks a history that no longer fits. `messages[0]` is the system prompt and is always kept;
/// what is kept after it is a verbatim suffix that never starts inside a tool call's results.
#[async_trait]
pub trait Compactor: Send + Sync {
    /// The strategy's name, as the `compaction` event reports it.
    fn strategy(&self) -> &'static str;

    async fn compact(
        &self,
        messages: &[Message],
        provider: &dyn LlmProvider,
        cancel: &CancellationToken,
    ) -> Result<Compaction, MemoryError>;

    /// `/compact`, asked by the user: everything before the last exchange is compacted,
    /// however short the conversation (issue 32 point 7). By default what `compact` does.
    async fn compact_requested(
        &self,
        messages: &[Message],
        provider: &dyn LlmProvider,
        cancel: &CancellationToken,
    ) -> Result<Compaction, MemoryError> {
        self.compact(messages, provider, cancel).await
    }
}

/// A new session id: time-ordered, so ids sort by creation.
pub fn new_session_id() -> String {
    uuid::Uuid::now_v7().simple().to_string()
}

#[cfg(test)]
mod compact_tests;
#[cfg(test)]
mod tests;
