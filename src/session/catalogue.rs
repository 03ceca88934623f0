//! The stored sessions and long-term memories as front ends that run no session of their own
//! see them: `harness9 sessions`, `harness9 memory`, and `serve`'s list and transcripts. They
//! reach `sessions.db` only through here (each running session's core keeps its own store), and
//! get the session's view types and typed failures back, never the store's records.

use std::path::Path;

use super::views::{Memory, SessionHit, SessionSummary};
use crate::engine::Failure;
use crate::memory::SessionStore;
use crate::schema::Message;

/// `sessions.db` of one `$HARNESS9_HOME`, opened once.
pub struct Catalogue {
    store: SessionStore,
}

impl Catalogue {
    /// Opens (and creates, when missing) `home`'s `sessions.db`.
    pub fn open(home: &Path) -> Result<Catalogue, Failure> {
        let path = home.join("sessions.db");
        SessionStore::open(&path)
            .map(|store| Catalogue { store })
            .map_err(|e| Failure::from(&e).context(&format!("cannot open {}", path.display())))
    }

    /// Sessions newest first, at most `limit`: those of `workdir` (every one when `None`), and
    /// with `text` not blank those whose messages match it, each with a snippet of the match.
    pub async fn find_sessions(
        &self,
        text: &str,
        workdir: Option<&str>,
        limit: usize,
    ) -> Result<Vec<SessionHit>, Failure> {
        let hits = self.store.find(text, workdir, limit).await;
        let hits = hits.map_err(|e| Failure::from(&e))?;
        Ok(hits.into_iter().map(SessionHit::from).collect())
    }

    /// The session a key names: a unique prefix of its id, or its name.
    pub async fn resolve(&self, key: &str) -> Result<SessionSummary, Failure> {
        let record = self.store.resolve(key).await;
        record
            .map(SessionSummary::from)
            .map_err(|e| Failure::from(&e))
    }

    /// Session `id`'s whole stored conversation, branches included; `None` when there is no
    /// such session.
    pub async fn transcript(&self, id: &str) -> Result<Option<Vec<Message>>, Failure> {
        let storage = |e: crate::memory::MemoryError| Failure::from(&e);
        if self.store.get(id).await.map_err(storage)?.is_none() {
            return Ok(None);
        }
        self.store.load_all(id).await.map(Some).map_err(storage)
    }

    /// The memories of `workdir` and the user's (every one when `None`).
    pub async fn memories(&self, workdir: Option<&str>) -> Result<Vec<Memory>, Failure> {
        let listed = self.store.memory_list(workdir).await;
        memories(listed)
    }

    /// The memories visible from `workdir` that match `text`, best first, at most `limit`.
    pub async fn search_memories(
        &self,
        text: &str,
        workdir: &str,
        limit: usize,
    ) -> Result<Vec<Memory>, Failure> {
        memories(self.store.memory_search(text, workdir, limit).await)
    }

    /// Forgets memory `id` and writes `home`'s `MEMORY.md` again; whether there was one. The
    /// rewrite's failure is the second part: the memory is gone either way.
    pub async fn remove_memory(
        &self,
        id: i64,
        home: &Path,
    ) -> Result<(bool, Option<Failure>), Failure> {
        let removed = self.store.memory_remove(id).await;
        if !removed.map_err(|e| Failure::from(&e))? {
            return Ok((false, None));
        }
        let exported = self.store.memory_export(home).await;
        Ok((true, exported.err().map(|e| Failure::from(&e))))
    }
}

fn memories(
    listed: Result<Vec<crate::memory::long_term::MemoryRecord>, crate::memory::MemoryError>,
) -> Result<Vec<Memory>, Failure> {
    match listed {
        Ok(records) => Ok(records.into_iter().map(Memory::from).collect()),
        Err(error) => Err(Failure::from(&error)),
    }
}
