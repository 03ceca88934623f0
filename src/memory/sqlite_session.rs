//! A `Session` stored in `sessions.db` through the `SessionStore`.

use async_trait::async_trait;

use super::{MemoryError, PromptCount, Session, SessionStore};
use crate::schema::Message;

#[derive(Clone)]
pub struct SqliteSession {
    store: SessionStore,
    id: String,
}

impl SqliteSession {
    pub fn new(store: SessionStore, id: impl Into<String>) -> Self {
        SqliteSession {
            store,
            id: id.into(),
        }
    }

    pub fn store(&self) -> &SessionStore {
        &self.store
    }
}

#[async_trait]
impl Session for SqliteSession {
    fn id(&self) -> &str {
        &self.id
    }

    async fn load_messages(&self) -> Result<Vec<Message>, MemoryError> {
        self.store.load_view(&self.id).await
    }

    async fn load_transcript(&self) -> Result<Vec<Message>, MemoryError> {
        self.store.load_all(&self.id).await
    }

    async fn append_messages(&self, messages: &[Message]) -> Result<(), MemoryError> {
        self.store.append(&self.id, messages).await
    }

    async fn record_compaction(
        &self,
        dropped: usize,
        summary: Option<Message>,
    ) -> Result<(), MemoryError> {
        self.store
            .record_compaction(&self.id, dropped, summary)
            .await
    }

    async fn prompt_count(&self) -> Result<Option<PromptCount>, MemoryError> {
        self.store.prompt_count(&self.id).await
    }

    async fn record_prompt_count(&self, count: PromptCount) -> Result<(), MemoryError> {
        self.store.record_prompt_count(&self.id, count).await
    }

    async fn record_usage(
        &self,
        usage: crate::schema::Usage,
        cost_usd: f64,
    ) -> Result<(), MemoryError> {
        self.store.record_usage(&self.id, usage, cost_usd).await
    }
}
