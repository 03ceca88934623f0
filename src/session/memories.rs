//! `/memory`'s side of the core: a person browsing, editing and deleting the long-term
//! memories (`memory::long_term`) of this project and the user. Each request runs on a task of
//! its own; the answer is the list as it stands afterwards, so a front end never shows a list
//! older than its own change. A change rewrites `MEMORY.md`, as the model's writes do.

use std::path::PathBuf;
use std::sync::Arc;

use super::hub::Hub;
use super::protocol::Update;
use crate::engine::Failure;
use crate::memory::SessionStore;

/// Where the memories are and whom to tell.
pub(super) struct Memories {
    pub store: SessionStore,
    pub workdir: String,
    pub home: PathBuf,
    pub hub: Arc<Hub>,
}

impl Memories {
    /// Publishes the memories visible here that match `query` (all when it is blank).
    pub async fn list(&self, query: &str, generation: u64) {
        match self.store.memory_browse(query, &self.workdir).await {
            Ok(memories) => self.hub.publish(Update::Memories {
                generation,
                memories: memories.into_iter().map(Into::into).collect(),
            }),
            Err(error) => self.fail(&error, "cannot read the memories"),
        }
    }

    /// Sets memory `id`'s content, or forgets it (`None`); then lists again.
    pub async fn change(&self, id: i64, content: Option<String>, query: &str, generation: u64) {
        let changed = match &content {
            Some(content) => self.store.memory_edit(id, content).await,
            None => self.store.memory_remove(id).await,
        };
        match changed {
            Ok(true) => {
                if let Err(error) = self.store.memory_export(&self.home).await {
                    self.fail(&error, "cannot rewrite MEMORY.md");
                }
            }
            Ok(false) => self.hub.publish(Update::Failed(Failure::new(
                crate::engine::FailureKind::NotFound,
                format!("memory #{id} is gone already"),
            ))),
            Err(error) => self.fail(&error, "cannot change the memory"),
        }
        self.list(query, generation).await;
    }

    fn fail(&self, error: &crate::memory::MemoryError, what: &str) {
        self.hub
            .publish(Update::Failed(Failure::from(error).context(what)));
    }
}
