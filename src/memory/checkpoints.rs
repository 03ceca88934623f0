//! What `sessions.db` keeps for checkpoints and branches (issue 21): the checkpoint rows the
//! recorder writes as a prompt changes files, the prompts `/rewind` lists, and the move of a
//! conversation's later messages to a branch of their own (kept, never deleted). The files'
//! meaning is `checkpoint`'s: here they are JSON text.

use rusqlite::{OptionalExtension, params};

use super::store::{decode_message, now_ms};
use super::{MemoryError, SessionStore};
use crate::schema::Role;

/// A stored checkpoint row.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckpointRow {
    pub id: i64,
    pub after_seq: i64,
    pub prompt: String,
    /// `checkpoint::Changes` as JSON.
    pub files: String,
}

fn row(r: &rusqlite::Row<'_>) -> rusqlite::Result<CheckpointRow> {
    Ok(CheckpointRow {
        id: r.get(0)?,
        after_seq: r.get(1)?,
        prompt: r.get(2)?,
        files: r.get(3)?,
    })
}

impl SessionStore {
    /// The place of the last message stored in the session, in any branch (0: none).
    pub async fn last_seq(&self, id: &str) -> Result<i64, MemoryError> {
        let id = id.to_owned();
        self.call(move |conn| {
            conn.query_row(
                "SELECT coalesce(max(seq), 0) FROM messages WHERE session_id = ?1",
                params![id],
                |r| r.get(0),
            )
        })
        .await
    }

    /// The files JSON of the checkpoint at `after_seq`, if one was stored and not undone.
    pub async fn checkpoint_at(
        &self,
        id: &str,
        after_seq: i64,
    ) -> Result<Option<String>, MemoryError> {
        let id = id.to_owned();
        self.call(move |conn| {
            conn.query_row(
                "SELECT files FROM checkpoints WHERE session_id = ?1 AND after_seq = ?2
                 AND undone = 0",
                params![id, after_seq],
                |r| r.get(0),
            )
            .optional()
        })
        .await
    }

    /// Stores (or replaces) the checkpoint of the prompt after `after_seq`, in order with the
    /// session's other writes, without waiting.
    pub fn save_checkpoint(&self, id: &str, after_seq: i64, prompt: &str, files: String) {
        let (id, prompt) = (id.to_owned(), prompt.to_owned());
        self.submit(move |conn| {
            conn.execute(
                "INSERT INTO checkpoints (session_id, after_seq, prompt, files, created_at)
                 VALUES (?1, ?2, ?3, ?4, ?5)
                 ON CONFLICT(session_id, after_seq) DO UPDATE SET files = ?4, undone = 0",
                params![id, after_seq, prompt, files, now_ms()],
            )?;
            Ok(())
        });
    }

    /// The checkpoints not yet undone of the prompts after `from_seq` (every one with 0),
    /// newest first.
    pub async fn checkpoints_since(
        &self,
        id: &str,
        from_seq: i64,
    ) -> Result<Vec<CheckpointRow>, MemoryError> {
        let id = id.to_owned();
        self.call(move |conn| {
            let mut stmt = conn.prepare_cached(
                "SELECT id, after_seq, prompt, files FROM checkpoints
                 WHERE session_id = ?1 AND after_seq >= ?2 AND undone = 0
                 ORDER BY after_seq DESC",
            )?;
            stmt.query_map(params![id, from_seq], row)?.collect()
        })
        .await
    }

    /// Forgets the checkpoints stored before `cutoff_ms` (milliseconds since the epoch);
    /// returns how many went.
    pub async fn forget_checkpoints_before(&self, cutoff_ms: i64) -> Result<usize, MemoryError> {
        self.call(move |conn| {
            conn.execute(
                "DELETE FROM checkpoints WHERE created_at < ?1",
                params![cutoff_ms],
            )
        })
        .await
    }

    /// The files JSON of every checkpoint that can still be restored, in any session: what
    /// the kept contents must still hold.
    pub async fn restorable_checkpoints(&self) -> Result<Vec<String>, MemoryError> {
        self.call(|conn| {
            let mut stmt = conn.prepare("SELECT files FROM checkpoints WHERE undone = 0")?;
            stmt.query_map([], |r| r.get(0))?.collect()
        })
        .await
    }

    /// Marks checkpoints as restored: they are not restored again.
    pub async fn mark_undone(&self, ids: Vec<i64>) -> Result<(), MemoryError> {
        self.call(move |conn| {
            let tx = conn.transaction()?;
            for id in ids {
                tx.execute(
                    "UPDATE checkpoints SET undone = 1 WHERE id = ?1",
                    params![id],
                )?;
            }
            tx.commit()
        })
        .await
    }

    /// The prompts of the current conversation (branch 0), oldest first, as (place, text).
    pub async fn prompts(&self, id: &str) -> Result<Vec<(i64, String)>, MemoryError> {
        let id = id.to_owned();
        self.call(move |conn| {
            let mut stmt = conn.prepare_cached(
                "SELECT seq, body FROM messages WHERE session_id = ?1 AND branch = 0
                 AND role = ?2 ORDER BY seq",
            )?;
            let rows = stmt.query_map(params![id, Role::User.as_str()], |r| {
                Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?))
            })?;
            let mut out = Vec::new();
            for entry in rows {
                let (seq, body) = entry?;
                let message = decode_message(&body)?;
                if !message.is_tool_result() {
                    out.push((seq, message.content));
                }
            }
            Ok(out)
        })
        .await
    }

    /// Moves the current conversation's messages from `seq` on to a new branch (kept, not
    /// deleted), so the conversation goes on from before them; returns how many moved. A
    /// compaction that summarised any of them is dropped (the next run compacts again if it
    /// must), and the server's last count no longer describes the view.
    pub async fn branch_from(&self, id: &str, seq: i64) -> Result<usize, MemoryError> {
        let id = id.to_owned();
        self.call(move |conn| {
            let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
            let branch: i64 = tx.query_row(
                "SELECT coalesce(max(branch), 0) + 1 FROM messages WHERE session_id = ?1",
                params![id],
                |r| r.get(0),
            )?;
            let moved = tx.execute(
                "UPDATE messages SET branch = ?3 WHERE session_id = ?1 AND branch = 0
                 AND seq >= ?2",
                params![id, seq, branch],
            )?;
            tx.execute(
                "DELETE FROM compactions WHERE session_id = ?1 AND upto_seq >= ?2",
                params![id, seq],
            )?;
            tx.execute(
                "UPDATE sessions SET prompt_tokens = NULL, prompt_messages = NULL,
                 updated_at = ?2 WHERE id = ?1",
                params![id, now_ms()],
            )?;
            tx.commit()?;
            Ok(moved)
        })
        .await
    }

    /// The messages of a branch `/rewind` set aside, oldest first (tests, and a later viewer).
    pub async fn branch_messages(
        &self,
        id: &str,
        branch: i64,
    ) -> Result<Vec<crate::schema::Message>, MemoryError> {
        let id = id.to_owned();
        self.call(move |conn| {
            let mut stmt = conn.prepare_cached(
                "SELECT body FROM messages WHERE session_id = ?1 AND branch = ?2 ORDER BY seq",
            )?;
            let rows = stmt.query_map(params![id, branch], |r| r.get::<_, String>(0))?;
            rows.map(|body| decode_message(&body?)).collect()
        })
        .await
    }
}
