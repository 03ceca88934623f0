//! Sub-agents' sessions: a `task` call's child is stored as a session of its own, linked to the
//! parent session and named by its agent, so its transcript can be opened from the parent. The
//! listings (`sessions`, the picker, `--continue`) leave such sessions out.

use rusqlite::params;

use super::store::{SESSION_COLUMNS, get, now_ms, session_from_row};
use super::{MemoryError, NewSession, SessionRecord, SessionStore};

/// A child session as the parent sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct ChildSession {
    pub session: SessionRecord,
    pub agent: String,
}

impl SessionStore {
    /// Creates the session of a sub-agent of `parent_id`, for its `task` call `task_call_id`,
    /// titled `title` (the task's description).
    pub async fn create_child(
        &self,
        new: NewSession,
        parent_id: &str,
        task_call_id: &str,
        agent: &str,
        title: &str,
    ) -> Result<SessionRecord, MemoryError> {
        let id = super::new_session_id();
        let (parent_id, agent, title) = (parent_id.to_owned(), agent.to_owned(), title.to_owned());
        let task_call_id = task_call_id.to_owned();
        self.call(move |conn| {
            let now = now_ms();
            conn.execute(
                "INSERT INTO sessions (id, workdir, provider, model, mode, created_at, updated_at,
                     parent_id, agent, title, task_call_id)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6, ?7, ?8, ?9, ?10)",
                params![
                    id,
                    new.workdir,
                    new.provider,
                    new.model,
                    new.mode,
                    now,
                    parent_id,
                    agent,
                    title,
                    task_call_id
                ],
            )?;
            get(conn, &id)?.ok_or(rusqlite::Error::QueryReturnedNoRows)
        })
        .await
    }

    /// The sub-agents' sessions of `parent_id`, oldest first.
    pub async fn children(&self, parent_id: &str) -> Result<Vec<ChildSession>, MemoryError> {
        let parent_id = parent_id.to_owned();
        self.call(move |conn| {
            let mut stmt = conn.prepare_cached(&format!(
                "SELECT {SESSION_COLUMNS}, agent FROM sessions WHERE parent_id = ?1
                 ORDER BY created_at, id"
            ))?;
            let rows = stmt.query_map(params![parent_id], |row| {
                Ok(ChildSession {
                    session: session_from_row(row)?,
                    agent: row.get::<_, Option<String>>(15)?.unwrap_or_default(),
                })
            })?;
            rows.collect()
        })
        .await
    }

    /// The sub-agents' sessions of `parent_id` by the `task` call each answers:
    /// (call id, child session id), oldest first. Children stored before the call id was kept
    /// are left out.
    pub async fn child_links(&self, parent_id: &str) -> Result<Vec<(String, String)>, MemoryError> {
        let parent_id = parent_id.to_owned();
        self.call(move |conn| {
            let mut stmt = conn.prepare_cached(
                "SELECT task_call_id, id FROM sessions
                 WHERE parent_id = ?1 AND task_call_id IS NOT NULL
                 ORDER BY created_at, id",
            )?;
            let rows = stmt.query_map(params![parent_id], |row| Ok((row.get(0)?, row.get(1)?)))?;
            rows.collect()
        })
        .await
    }

    /// The session a sub-agent's session belongs to, if `id` is one.
    pub async fn parent_of(&self, id: &str) -> Result<Option<String>, MemoryError> {
        let id = id.to_owned();
        self.call(move |conn| {
            use rusqlite::OptionalExtension;
            Ok(conn
                .query_row(
                    "SELECT parent_id FROM sessions WHERE id = ?1",
                    params![id],
                    |row| row.get::<_, Option<String>>(0),
                )
                .optional()?
                .flatten())
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::Message;

    fn new_session() -> NewSession {
        NewSession {
            workdir: "/w".into(),
            provider: "openai".into(),
            model: "gpt-4o".into(),
            mode: "default".into(),
        }
    }

    /// A child is linked to its parent, and no listing, search or `--continue` shows it.
    #[tokio::test]
    async fn a_child_session_is_linked_and_left_out_of_listings() {
        let store = SessionStore::open_in_memory().unwrap();
        let parent = store.create(new_session()).await.unwrap();
        store
            .append(&parent.id, &[Message::user("the parent's prompt")])
            .await
            .unwrap();
        let child = store
            .create_child(
                new_session(),
                &parent.id,
                "call-7",
                "explore",
                "find the parser",
            )
            .await
            .unwrap();
        store
            .append(&child.id, &[Message::user("zebra-word inside the child")])
            .await
            .unwrap();
        assert_eq!(child.title, "find the parser");
        let children = store.children(&parent.id).await.unwrap();
        assert_eq!(children.len(), 1);
        assert_eq!(children[0].agent, "explore");
        assert_eq!(children[0].session.id, child.id);
        assert_eq!(
            store.child_links(&parent.id).await.unwrap(),
            [("call-7".to_owned(), child.id.clone())]
        );
        assert_eq!(
            store.parent_of(&child.id).await.unwrap(),
            Some(parent.id.clone())
        );
        assert_eq!(store.parent_of(&parent.id).await.unwrap(), None);

        let listed: Vec<String> = store
            .list(None, 10)
            .await
            .unwrap()
            .into_iter()
            .map(|s| s.id)
            .collect();
        assert_eq!(listed, vec![parent.id.clone()]);
        assert_eq!(store.latest("/w").await.unwrap().unwrap().id, parent.id);
        assert!(store.search("zebra", None, 10).await.unwrap().is_empty());
        assert!(store.search("find the", None, 10).await.unwrap().is_empty());
        // Still reachable by its id (its transcript is opened from the parent).
        assert_eq!(store.resolve(&child.id).await.unwrap().id, child.id);
    }
}
