//! What the engine remembers between turns and runs: the `Session` a conversation is stored in,
//! and the `Compactor` that keeps a long history inside the model's window.
//! Stores save only new messages, one turn per call, so a kill never loses a finished turn.

use std::sync::Mutex;

use async_trait::async_trait;
use tokio_util::sync::CancellationToken;

use crate::provider::LlmProvider;
use crate::schema::Message;

#[derive(Debug, thiserror::Error)]
pub enum MemoryError {
    #[error("session store: {0}")]
    Store(String),
    #[error("compaction failed: {0}")]
    Compaction(String),
}

/// A stored conversation.
#[async_trait]
pub trait Session: Send + Sync {
    fn id(&self) -> &str;

    /// Every stored message, oldest first (never the system prompt).
    async fn load_messages(&self) -> Result<Vec<Message>, MemoryError>;

    /// Appends the new messages of one turn, all or nothing.
    async fn append_messages(&self, messages: &[Message]) -> Result<(), MemoryError>;
}

/// A session kept in memory only: for tests and for runs without a store.
#[derive(Debug)]
pub struct InMemorySession {
    id: String,
    messages: Mutex<Vec<Message>>,
}

impl InMemorySession {
    pub fn new(id: impl Into<String>) -> Self {
        InMemorySession {
            id: id.into(),
            messages: Mutex::new(Vec::new()),
        }
    }

    pub fn with_messages(id: impl Into<String>, messages: Vec<Message>) -> Self {
        InMemorySession {
            id: id.into(),
            messages: Mutex::new(messages),
        }
    }

    pub fn messages(&self) -> Vec<Message> {
        self.messages.lock().map(|m| m.clone()).unwrap_or_default()
    }
}

#[async_trait]
impl Session for InMemorySession {
    fn id(&self) -> &str {
        &self.id
    }

    async fn load_messages(&self) -> Result<Vec<Message>, MemoryError> {
        Ok(self.messages())
    }

    async fn append_messages(&self, messages: &[Message]) -> Result<(), MemoryError> {
        self.messages
            .lock()
            .map_err(|_| MemoryError::Store("the in-memory session is poisoned".into()))?
            .extend_from_slice(messages);
        Ok(())
    }
}

/// Shrinks a history that no longer fits: keeps the system prompt first and never separates a
/// tool call from its result.
#[async_trait]
pub trait Compactor: Send + Sync {
    /// The strategy's name, as the `compaction` event reports it.
    fn strategy(&self) -> &'static str;

    async fn compact(
        &self,
        messages: &[Message],
        provider: &dyn LlmProvider,
        cancel: &CancellationToken,
    ) -> Result<Vec<Message>, MemoryError>;
}

/// A new session id: time-ordered, so ids sort by creation.
pub fn new_session_id() -> String {
    uuid::Uuid::now_v7().simple().to_string()
}
