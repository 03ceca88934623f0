//! What a session keeps besides its messages: the prompts queued while the agent works, the
//! todo list, and the server's last count of the prompt. A stored value that cannot be read is
//! reported (`MemoryError::Corrupt`) and left in place: loading never rewrites it, so only a
//! deliberate change of the list or queue replaces it.

use rusqlite::{OptionalExtension, params};

use super::store::encode;
use super::{MemoryError, PromptCount, SessionStore};
use crate::planning::TodoItem;

/// Decodes a stored JSON value, or says which one could not be read and that it was kept.
fn decode_stored<T: serde::de::DeserializeOwned>(
    json: Option<String>,
    what: &str,
    id: &str,
) -> Result<Option<T>, MemoryError> {
    let Some(json) = json else {
        return Ok(None);
    };
    serde_json::from_str(&json).map(Some).map_err(|error| {
        MemoryError::Corrupt(format!(
            "the stored {what} of session {} cannot be read ({error}); it is kept in \
             sessions.db as it is, and this session starts with an empty one until you change it",
            &id[..id.len().min(8)]
        ))
    })
}

impl SessionStore {
    /// Saves the prompts queued for this session, in order with every other write.
    pub fn save_queue(&self, id: &str, prompts: &[String]) {
        let id = id.to_owned();
        let prompts = prompts.to_vec();
        self.submit(move |conn| {
            conn.execute(
                "UPDATE sessions SET queued = ?2 WHERE id = ?1",
                params![id, encode(&prompts)?],
            )?;
            Ok(())
        });
    }

    /// The queued prompts; `Corrupt` when the stored queue cannot be read.
    pub async fn load_queue(&self, id: &str) -> Result<Vec<String>, MemoryError> {
        let id = id.to_owned();
        let stored: Option<String> = {
            let id = id.clone();
            self.call(move |conn| {
                conn.query_row(
                    "SELECT queued FROM sessions WHERE id = ?1",
                    params![id],
                    |row| row.get(0),
                )
                .optional()
            })
            .await?
        };
        Ok(decode_stored(stored, "prompt queue", &id)?.unwrap_or_default())
    }

    /// Saves the todo list in order with every other write, without waiting.
    pub fn save_todos(&self, id: &str, items: &[TodoItem]) {
        let id = id.to_owned();
        let items = items.to_vec();
        self.submit(move |conn| {
            conn.execute(
                "INSERT INTO todos (session_id, items) VALUES (?1, ?2)
                 ON CONFLICT(session_id) DO UPDATE SET items = ?2",
                params![id, encode(&items)?],
            )?;
            Ok(())
        });
    }

    /// The todo list; `Corrupt` when the stored list cannot be read.
    pub async fn load_todos(&self, id: &str) -> Result<Vec<TodoItem>, MemoryError> {
        let id = id.to_owned();
        let stored: Option<String> = {
            let id = id.clone();
            self.call(move |conn| {
                conn.query_row(
                    "SELECT items FROM todos WHERE session_id = ?1",
                    params![id],
                    |row| row.get(0),
                )
                .optional()
            })
            .await?
        };
        Ok(decode_stored(stored, "todo list", &id)?.unwrap_or_default())
    }

    /// The server's last count of the session's prompt (see `PromptCount`).
    pub async fn prompt_count(&self, id: &str) -> Result<Option<PromptCount>, MemoryError> {
        let id = id.to_owned();
        self.call(move |conn| {
            let row: Option<(Option<i64>, Option<i64>)> = conn
                .query_row(
                    "SELECT prompt_tokens, prompt_messages FROM sessions WHERE id = ?1",
                    params![id],
                    |row| Ok((row.get(0)?, row.get(1)?)),
                )
                .optional()?;
            Ok(match row {
                Some((Some(tokens), Some(messages))) if tokens >= 0 && messages >= 0 => {
                    Some(PromptCount {
                        tokens: tokens as u64,
                        messages: messages as usize,
                    })
                }
                _ => None,
            })
        })
        .await
    }

    pub async fn record_prompt_count(
        &self,
        id: &str,
        count: PromptCount,
    ) -> Result<(), MemoryError> {
        let id = id.to_owned();
        let tokens = i64::try_from(count.tokens).unwrap_or(i64::MAX);
        let messages = i64::try_from(count.messages).unwrap_or(i64::MAX);
        self.call(move |conn| {
            conn.execute(
                "UPDATE sessions SET prompt_tokens = ?2, prompt_messages = ?3 WHERE id = ?1",
                params![id, tokens, messages],
            )?;
            Ok(())
        })
        .await
    }

    /// Adds to the session's usage totals.
    pub async fn record_usage(
        &self,
        id: &str,
        usage: crate::schema::Usage,
        cost_usd: f64,
    ) -> Result<(), MemoryError> {
        let id = id.to_owned();
        let count = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
        let values = [
            count(usage.input_tokens),
            count(usage.output_tokens),
            count(usage.cache_read_tokens),
            count(usage.cache_creation_tokens),
        ];
        let cost = if cost_usd.is_finite() { cost_usd } else { 0.0 };
        self.call(move |conn| {
            conn.execute(
                "UPDATE sessions SET input_tokens = input_tokens + ?2,
                    output_tokens = output_tokens + ?3,
                    cache_read_tokens = cache_read_tokens + ?4,
                    cache_write_tokens = cache_write_tokens + ?5,
                    cost_usd = cost_usd + ?6
                 WHERE id = ?1",
                params![id, values[0], values[1], values[2], values[3], cost],
            )?;
            Ok(())
        })
        .await
    }
}
