//! A session kept in memory only: for tests and for runs without a store.

use std::sync::Mutex;

use async_trait::async_trait;

use super::{MemoryError, PromptCount, Session};
use crate::schema::Message;

#[derive(Debug, Default)]
struct State {
    all: Vec<Message>,
    /// Messages of `all` hidden from the model by compaction, and the summary shown instead.
    hidden: usize,
    summary: Option<Message>,
    prompt_count: Option<PromptCount>,
}

#[derive(Debug)]
pub struct InMemorySession {
    id: String,
    state: Mutex<State>,
}

impl InMemorySession {
    pub fn new(id: impl Into<String>) -> Self {
        Self::with_messages(id, Vec::new())
    }

    pub fn with_messages(id: impl Into<String>, messages: Vec<Message>) -> Self {
        InMemorySession {
            id: id.into(),
            state: Mutex::new(State {
                all: messages,
                ..State::default()
            }),
        }
    }

    /// Every stored message.
    pub fn messages(&self) -> Vec<Message> {
        self.state.lock().map(|s| s.all.clone()).unwrap_or_default()
    }

    fn lock(&self) -> Result<std::sync::MutexGuard<'_, State>, MemoryError> {
        self.state
            .lock()
            .map_err(|_| MemoryError::Store("the in-memory session is poisoned".into()))
    }
}

#[async_trait]
impl Session for InMemorySession {
    fn id(&self) -> &str {
        &self.id
    }

    async fn load_messages(&self) -> Result<Vec<Message>, MemoryError> {
        let state = self.lock()?;
        let mut view: Vec<Message> = state.summary.iter().cloned().collect();
        view.extend_from_slice(&state.all[state.hidden.min(state.all.len())..]);
        Ok(view)
    }

    async fn load_transcript(&self) -> Result<Vec<Message>, MemoryError> {
        Ok(self.lock()?.all.clone())
    }

    async fn append_messages(&self, messages: &[Message]) -> Result<(), MemoryError> {
        self.lock()?.all.extend_from_slice(messages);
        Ok(())
    }

    async fn record_compaction(
        &self,
        dropped: usize,
        summary: Option<Message>,
    ) -> Result<(), MemoryError> {
        let mut state = self.lock()?;
        let rows = dropped.saturating_sub(usize::from(state.summary.is_some()));
        state.hidden = (state.hidden + rows).min(state.all.len());
        state.summary = summary;
        state.prompt_count = None;
        Ok(())
    }

    async fn prompt_count(&self) -> Result<Option<PromptCount>, MemoryError> {
        Ok(self.lock()?.prompt_count)
    }

    async fn record_prompt_count(&self, count: PromptCount) -> Result<(), MemoryError> {
        self.lock()?.prompt_count = Some(count);
        Ok(())
    }
}
