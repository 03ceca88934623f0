//! A `Session` that remembers whether what the engine gave it is on disk: the front ends ask
//! it at the end of a run, so a run whose turns could not be saved never ends as if it had
//! been (CONTRACT "Runs and faults").

use std::sync::Mutex;

use async_trait::async_trait;

use crate::memory::{MemoryError, Session};
use crate::schema::Message;

/// What could not be stored, as of the last write.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Unsaved {
    /// Messages the engine handed over that are not in the store: the engine hands every
    /// unstored message again at each save, so the last failed append holds them all.
    pub messages: usize,
    /// A compaction that could not be recorded.
    pub compaction: bool,
    /// The last store error.
    pub error: Option<String>,
}

impl Unsaved {
    pub fn is_empty(&self) -> bool {
        self.messages == 0 && !self.compaction
    }
}

/// Wraps the stored session and tracks its failed writes.
pub struct SavingSession<S> {
    inner: S,
    unsaved: Mutex<Unsaved>,
}

impl<S: Session> SavingSession<S> {
    pub fn new(inner: S) -> Self {
        SavingSession {
            inner,
            unsaved: Mutex::new(Unsaved::default()),
        }
    }

    /// What is not on disk now.
    pub fn unsaved(&self) -> Unsaved {
        self.unsaved
            .lock()
            .map(|u| u.clone())
            .unwrap_or_else(|poisoned| poisoned.into_inner().clone())
    }

    fn update(&self, change: impl FnOnce(&mut Unsaved)) {
        let mut guard = self
            .unsaved
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        change(&mut guard);
    }
}

#[async_trait]
impl<S: Session> Session for SavingSession<S> {
    fn id(&self) -> &str {
        self.inner.id()
    }

    async fn load_messages(&self) -> Result<Vec<Message>, MemoryError> {
        self.inner.load_messages().await
    }

    async fn load_transcript(&self) -> Result<Vec<Message>, MemoryError> {
        self.inner.load_transcript().await
    }

    async fn append_messages(&self, messages: &[Message]) -> Result<(), MemoryError> {
        let result = self.inner.append_messages(messages).await;
        let count = messages.len();
        self.update(|unsaved| match &result {
            Ok(()) => unsaved.messages = 0,
            Err(error) => {
                unsaved.messages = count;
                unsaved.error = Some(error.to_string());
            }
        });
        result
    }

    async fn record_compaction(
        &self,
        dropped: usize,
        summary: Option<Message>,
    ) -> Result<(), MemoryError> {
        let result = self.inner.record_compaction(dropped, summary).await;
        self.update(|unsaved| match &result {
            Ok(()) => unsaved.compaction = false,
            Err(error) => {
                unsaved.compaction = true;
                unsaved.error = Some(error.to_string());
            }
        });
        result
    }

    // The trait's defaults do nothing: every method is passed on, or the wrapped store would
    // silently never get it.
    async fn prompt_count(&self) -> Result<Option<crate::memory::PromptCount>, MemoryError> {
        self.inner.prompt_count().await
    }

    async fn record_prompt_count(
        &self,
        count: crate::memory::PromptCount,
    ) -> Result<(), MemoryError> {
        self.inner.record_prompt_count(count).await
    }

    async fn record_usage(
        &self,
        usage: crate::schema::Usage,
        cost_usd: f64,
    ) -> Result<(), MemoryError> {
        self.inner.record_usage(usage, cost_usd).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::{NewSession, PromptCount, SessionStore, SqliteSession};
    use crate::schema::Usage;

    /// A wrapper that forgot a method would leave it to the trait's default, which stores
    /// nothing: the prompt's count (the gauge after `--continue`) and the usage totals were lost
    /// this way once.
    #[tokio::test]
    async fn every_write_reaches_the_store_through_the_wrapper() {
        let store = SessionStore::open_in_memory().unwrap();
        let record = store
            .create(NewSession {
                workdir: "/w".into(),
                provider: "openai".into(),
                model: "gpt-4o".into(),
                mode: "default".into(),
            })
            .await
            .unwrap();
        let session = SavingSession::new(SqliteSession::new(store.clone(), &record.id));
        let count = PromptCount {
            tokens: 1234,
            messages: 3,
        };
        session.record_prompt_count(count).await.unwrap();
        let usage = Usage {
            input_tokens: 10,
            output_tokens: 5,
            cache_read_tokens: 100,
            cache_creation_tokens: 1,
        };
        session.record_usage(usage, 0.5).await.unwrap();
        session.record_usage(usage, 0.25).await.unwrap();
        assert_eq!(session.prompt_count().await.unwrap(), Some(count));
        assert_eq!(store.prompt_count(&record.id).await.unwrap(), Some(count));
        let totals = store.get(&record.id).await.unwrap().unwrap().totals;
        assert_eq!(
            (
                totals.input_tokens,
                totals.output_tokens,
                totals.cache_read_tokens
            ),
            (20, 10, 200)
        );
        assert_eq!(totals.cache_write_tokens, 2);
        assert_eq!(totals.cost_usd, 0.75);
    }
}
