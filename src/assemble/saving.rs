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
}
