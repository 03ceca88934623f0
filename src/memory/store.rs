//! `SessionStore`: `$HARNESS9_HOME/sessions.db` behind one thread that owns the connection and
//! applies jobs in the order they were sent; callers await the replies. WAL mode and a busy
//! timeout let several harness9 processes share the file; each turn is one transaction.

use std::path::Path;
use std::sync::mpsc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rusqlite::{Connection, OptionalExtension, params};
use tokio::sync::oneshot;

use super::MemoryError;
use super::migrations;
use crate::schema::{Message, Role};

type Job = Box<dyn FnOnce(&mut Connection) + Send>;

/// How long a writer waits for another process's transaction before giving up.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);
/// Characters of the first user message kept as a session's title.
const TITLE_CHARS: usize = 80;

/// A handle on the store; clones share the one connection thread.
#[derive(Clone)]
pub struct SessionStore {
    jobs: mpsc::Sender<Job>,
}

/// What a session's model calls used and cost, summed over its life.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct SessionTotals {
    /// Prompt tokens not read from or written to a cache.
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cache_read_tokens: u64,
    pub cache_write_tokens: u64,
    /// The cost of the calls whose model had known prices.
    pub cost_usd: f64,
}

/// A session's row.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionRecord {
    pub id: String,
    pub name: Option<String>,
    pub title: String,
    pub workdir: String,
    pub provider: String,
    pub model: String,
    pub mode: String,
    /// Unix time in milliseconds.
    pub created_at: i64,
    pub updated_at: i64,
    pub message_count: u64,
    pub totals: SessionTotals,
}

impl SessionRecord {
    /// The name when it has one, else the title.
    pub fn label(&self) -> &str {
        self.name.as_deref().unwrap_or(&self.title)
    }
}

/// What a new session is created with.
#[derive(Debug, Clone)]
pub struct NewSession {
    pub workdir: String,
    pub provider: String,
    pub model: String,
    pub mode: String,
}

/// A search hit: the session and a piece of the matching text.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchHit {
    pub session: SessionRecord,
    pub snippet: String,
}

/// Whether SQLite refused for a lock held by another connection (worth another try).
///
/// Writes begin IMMEDIATE (taking the write lock first, so the busy timeout applies): a deferred
/// transaction that reads and then writes fails at once in WAL mode when another process wrote
/// in between.
fn is_busy(error: &rusqlite::Error) -> bool {
    matches!(
        error.sqlite_error_code(),
        Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
    )
}

/// A stored time (Unix milliseconds) as RFC 3339 in UTC.
pub fn store_time(ms: i64) -> String {
    let time = UNIX_EPOCH + Duration::from_millis(ms.max(0) as u64);
    humantime::format_rfc3339_millis(time).to_string()
}

/// Now, as the store keeps time: Unix milliseconds.
pub fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

pub(super) const SESSION_COLUMNS: &str = "id, name, title, workdir, provider, model, mode, created_at, updated_at, message_count, \
     input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, cost_usd";

pub(super) fn session_from_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<SessionRecord> {
    Ok(SessionRecord {
        id: row.get(0)?,
        name: row.get(1)?,
        title: row.get(2)?,
        workdir: row.get(3)?,
        provider: row.get(4)?,
        model: row.get(5)?,
        mode: row.get(6)?,
        created_at: row.get(7)?,
        updated_at: row.get(8)?,
        message_count: row.get::<_, i64>(9)?.max(0) as u64,
        totals: SessionTotals {
            input_tokens: row.get::<_, i64>(10)?.max(0) as u64,
            output_tokens: row.get::<_, i64>(11)?.max(0) as u64,
            cache_read_tokens: row.get::<_, i64>(12)?.max(0) as u64,
            cache_write_tokens: row.get::<_, i64>(13)?.max(0) as u64,
            cost_usd: row.get(14)?,
        },
    })
}

pub(super) fn decode_message(body: &str) -> rusqlite::Result<Message> {
    serde_json::from_str(body).map_err(|e| {
        rusqlite::Error::FromSqlConversionFailure(0, rusqlite::types::Type::Text, Box::new(e))
    })
}

pub(super) fn encode<T: serde::Serialize>(value: &T) -> rusqlite::Result<String> {
    serde_json::to_string(value).map_err(|e| rusqlite::Error::ToSqlConversionFailure(Box::new(e)))
}

/// The title a session gets from its first prompt: its first non-empty line, shortened.
pub fn title_from(prompt: &str) -> String {
    let line = prompt
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("");
    match line.char_indices().nth(TITLE_CHARS) {
        Some((cut, _)) => format!("{}…", &line[..cut]),
        None => line.to_owned(),
    }
}

/// The text a message contributes to full-text search: its content and its tool calls.
fn search_text(message: &Message) -> String {
    let mut text = message.content.clone();
    for call in &message.tool_calls {
        text.push('\n');
        text.push_str(&call.name);
        text.push(' ');
        text.push_str(&call.arguments);
    }
    text
}

impl SessionStore {
    /// Opens (creating it when missing) the database at `path`, migrated to the current schema.
    pub fn open(path: &Path) -> Result<Self, MemoryError> {
        if let Some(dir) = path.parent() {
            crate::private_home::create_dir(dir).map_err(|e| MemoryError::Store(e.to_string()))?;
        }
        // Made 0600 before SQLite opens it: its `-wal` and `-shm` files take the database's mode.
        crate::private_home::create_file(path).map_err(|e| MemoryError::Store(e.to_string()))?;
        // Two processes opening a new file at once contend for the exclusive lock that switching
        // to WAL takes, and SQLite answers that with BUSY without always waiting: retry the whole
        // opening sequence, with jitter, up to the busy timeout.
        let deadline = std::time::Instant::now() + BUSY_TIMEOUT;
        let conn = loop {
            match Self::open_configured(path) {
                Ok(conn) => break conn,
                Err(error) if is_busy(&error) && std::time::Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(10 + fastrand::u64(0..40)));
                }
                Err(error) => return Err(error.into()),
            }
        };
        Self::spawn(conn)
    }

    fn open_configured(path: &Path) -> rusqlite::Result<Connection> {
        let mut conn = Connection::open(path)?;
        conn.busy_timeout(BUSY_TIMEOUT)?;
        let mode: String = conn.query_row("PRAGMA journal_mode", [], |row| row.get(0))?;
        if !mode.eq_ignore_ascii_case("wal") {
            conn.pragma_update(None, "journal_mode", "WAL")?;
        }
        // In WAL mode NORMAL is durable against a crash or kill of the process.
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        conn.pragma_update(None, "foreign_keys", true)?;
        migrations::migrate(&mut conn)?;
        Ok(conn)
    }

    /// A store that lives in memory only (tests; WAL is impossible there).
    pub fn open_in_memory() -> Result<Self, MemoryError> {
        let mut conn = Connection::open_in_memory()?;
        conn.pragma_update(None, "foreign_keys", true)?;
        migrations::migrate(&mut conn)?;
        Self::spawn(conn)
    }

    fn spawn(mut conn: Connection) -> Result<Self, MemoryError> {
        let (jobs, queue) = mpsc::channel::<Job>();
        std::thread::Builder::new()
            .name("harness9-store".into())
            .spawn(move || {
                while let Ok(job) = queue.recv() {
                    job(&mut conn);
                }
            })
            .map_err(|e| MemoryError::Store(format!("cannot start the store thread: {e}")))?;
        Ok(SessionStore { jobs })
    }

    /// Runs `work` on the store's thread and returns its result.
    pub async fn call<T, F>(&self, work: F) -> Result<T, MemoryError>
    where
        T: Send + 'static,
        F: FnOnce(&mut Connection) -> rusqlite::Result<T> + Send + 'static,
    {
        let (reply, answer) = oneshot::channel();
        self.jobs
            .send(Box::new(move |conn| {
                let _ = reply.send(work(conn));
            }))
            .map_err(|_| MemoryError::Store("the store thread has stopped".into()))?;
        answer
            .await
            .map_err(|_| MemoryError::Store("the store thread has stopped".into()))?
            .map_err(MemoryError::from)
    }

    /// Sends `work` without waiting for it; it still runs in order with everything else.
    pub fn submit<F>(&self, work: F)
    where
        F: FnOnce(&mut Connection) -> rusqlite::Result<()> + Send + 'static,
    {
        let _ = self.jobs.send(Box::new(move |conn| {
            if let Err(error) = work(conn) {
                tracing::error!("[store] a background write failed | error={error}");
            }
        }));
    }

    /// Waits until everything sent before has been applied.
    pub async fn flush(&self) -> Result<(), MemoryError> {
        self.call(|_| Ok(())).await
    }

    pub async fn create(&self, new: NewSession) -> Result<SessionRecord, MemoryError> {
        let id = super::new_session_id();
        self.call(move |conn| {
            let now = now_ms();
            conn.execute(
                "INSERT INTO sessions (id, workdir, provider, model, mode, created_at, updated_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6)",
                params![id, new.workdir, new.provider, new.model, new.mode, now],
            )?;
            get(conn, &id)?.ok_or(rusqlite::Error::QueryReturnedNoRows)
        })
        .await
    }

    pub async fn get(&self, id: &str) -> Result<Option<SessionRecord>, MemoryError> {
        let id = id.to_owned();
        self.call(move |conn| get(conn, &id)).await
    }

    /// Sessions newest first: of `workdir`, or of every directory; at most `limit`.
    pub async fn list(
        &self,
        workdir: Option<&str>,
        limit: usize,
    ) -> Result<Vec<SessionRecord>, MemoryError> {
        let workdir = workdir.map(str::to_owned);
        self.call(move |conn| {
            let limit = limit.min(i64::MAX as usize) as i64;
            let mut rows = Vec::new();
            match workdir {
                Some(dir) => {
                    let mut stmt = conn.prepare_cached(&format!(
                        "SELECT {SESSION_COLUMNS} FROM sessions WHERE workdir = ?1 AND message_count > 0 AND parent_id IS NULL
                         ORDER BY updated_at DESC LIMIT ?2"
                    ))?;
                    for row in stmt.query_map(params![dir, limit], session_from_row)? {
                        rows.push(row?);
                    }
                }
                None => {
                    let mut stmt = conn.prepare_cached(&format!(
                        "SELECT {SESSION_COLUMNS} FROM sessions WHERE message_count > 0 AND parent_id IS NULL
                         ORDER BY updated_at DESC LIMIT ?1"
                    ))?;
                    for row in stmt.query_map(params![limit], session_from_row)? {
                        rows.push(row?);
                    }
                }
            }
            Ok(rows)
        })
        .await
    }

    /// Sessions whose name or title contains `text`, then those with a message that matches it
    /// (full-text, every word as a prefix), best first.
    pub async fn search(
        &self,
        text: &str,
        workdir: Option<&str>,
        limit: usize,
    ) -> Result<Vec<SearchHit>, MemoryError> {
        let text = text.trim().to_owned();
        let workdir = workdir.map(str::to_owned);
        self.call(move |conn| super::search::search(conn, &text, workdir.as_deref(), limit))
            .await
    }

    /// What the picker and `harness9 sessions` show: the newest sessions when `text` is empty,
    /// else the search for it.
    pub async fn find(
        &self,
        text: &str,
        workdir: Option<&str>,
        limit: usize,
    ) -> Result<Vec<SearchHit>, MemoryError> {
        if !text.trim().is_empty() {
            return self.search(text, workdir, limit).await;
        }
        let sessions = self.list(workdir, limit).await?;
        Ok(sessions
            .into_iter()
            .map(|session| SearchHit {
                snippet: String::new(),
                session,
            })
            .collect())
    }

    /// Finds a session by id, name, or a unique prefix of its id.
    pub async fn resolve(&self, key: &str) -> Result<SessionRecord, MemoryError> {
        let key = key.trim().to_owned();
        self.call(move |conn| super::search::resolve(conn, &key))
            .await?
    }

    /// The most recently updated session of `workdir`.
    pub async fn latest(&self, workdir: &str) -> Result<Option<SessionRecord>, MemoryError> {
        Ok(self.list(Some(workdir), 1).await?.into_iter().next())
    }

    /// Appends messages in one transaction; the first user message titles an untitled session.
    pub async fn append(&self, id: &str, messages: &[Message]) -> Result<(), MemoryError> {
        let id = id.to_owned();
        let messages = messages.to_vec();
        self.call(move |conn| append(conn, &id, &messages)).await
    }

    /// What the model sees: the latest compaction's summary, then the messages after it.
    pub async fn load_view(&self, id: &str) -> Result<Vec<Message>, MemoryError> {
        let id = id.to_owned();
        self.call(move |conn| {
            let checkpoint: Option<(i64, Option<String>)> = conn
                .query_row(
                    "SELECT upto_seq, summary FROM compactions WHERE session_id = ?1",
                    params![id],
                    |row| Ok((row.get(0)?, row.get(1)?)),
                )
                .optional()?;
            let (upto, summary) = checkpoint.unwrap_or((0, None));
            let mut out = Vec::new();
            if let Some(summary) = summary {
                out.push(decode_message(&summary)?);
            }
            out.extend(messages_after(conn, &id, upto)?);
            Ok(out)
        })
        .await
    }

    /// Every stored message, for the transcript.
    pub async fn load_all(&self, id: &str) -> Result<Vec<Message>, MemoryError> {
        let id = id.to_owned();
        self.call(move |conn| messages_after(conn, &id, 0)).await
    }

    /// Records that the first `dropped` messages of the current view are replaced by `summary`.
    pub async fn record_compaction(
        &self,
        id: &str,
        dropped: usize,
        summary: Option<Message>,
    ) -> Result<(), MemoryError> {
        let id = id.to_owned();
        self.call(move |conn| {
            let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
            let previous: Option<(i64, Option<String>)> = tx
                .query_row(
                    "SELECT upto_seq, summary FROM compactions WHERE session_id = ?1",
                    params![id],
                    |row| Ok((row.get(0)?, row.get(1)?)),
                )
                .optional()?;
            let (upto, had_summary) = previous
                .map(|(upto, summary)| (upto, summary.is_some()))
                .unwrap_or((0, false));
            // The old summary is the view's first message; the rest are rows after `upto`.
            let rows_dropped = dropped.saturating_sub(usize::from(had_summary)) as i64;
            let new_upto: i64 = if rows_dropped == 0 {
                upto
            } else {
                tx.query_row(
                    "SELECT seq FROM messages WHERE session_id = ?1 AND seq > ?2 AND branch = 0
                     ORDER BY seq LIMIT 1 OFFSET ?3",
                    params![id, upto, rows_dropped - 1],
                    |row| row.get(0),
                )
                .optional()?
                .unwrap_or(upto)
            };
            let summary = summary.as_ref().map(encode).transpose()?;
            tx.execute(
                "INSERT INTO compactions (session_id, upto_seq, summary) VALUES (?1, ?2, ?3)
                 ON CONFLICT(session_id) DO UPDATE SET upto_seq = ?2, summary = ?3",
                params![id, new_upto, summary],
            )?;
            // The view changed shape: the server's last count no longer describes it.
            tx.execute(
                "UPDATE sessions SET prompt_tokens = NULL, prompt_messages = NULL WHERE id = ?1",
                params![id],
            )?;
            tx.commit()
        })
        .await
    }

    /// Names a session; a name belongs to one session only.
    pub async fn set_name(&self, id: &str, name: &str) -> Result<(), MemoryError> {
        let (id, name) = (id.to_owned(), name.trim().to_owned());
        self.call(move |conn| {
            let taken: Option<String> = conn
                .query_row(
                    "SELECT id FROM sessions WHERE name = ?1 AND id != ?2",
                    params![name, id],
                    |row| row.get(0),
                )
                .optional()?;
            if let Some(other) = taken {
                return Ok(Err(MemoryError::Store(format!(
                    "the name `{name}` is already used by session {}",
                    &other[..other.len().min(8)]
                ))));
            }
            conn.execute(
                "UPDATE sessions SET name = ?2, updated_at = ?3 WHERE id = ?1",
                params![id, name, now_ms()],
            )?;
            Ok(Ok(()))
        })
        .await?
    }

    pub async fn set_mode(&self, id: &str, mode: &str) -> Result<(), MemoryError> {
        let (id, mode) = (id.to_owned(), mode.to_owned());
        self.call(move |conn| {
            conn.execute(
                "UPDATE sessions SET mode = ?2 WHERE id = ?1",
                params![id, mode],
            )?;
            Ok(())
        })
        .await
    }

    /// Deletes the session if it never got a message (a TUI opened and closed without a
    /// prompt); returns whether it did.
    pub async fn delete_if_empty(&self, id: &str) -> Result<bool, MemoryError> {
        let id = id.to_owned();
        self.call(move |conn| {
            let deleted = conn.execute(
                "DELETE FROM sessions WHERE id = ?1 AND message_count = 0
                 AND NOT EXISTS (SELECT 1 FROM messages WHERE session_id = ?1)",
                params![id],
            )?;
            Ok(deleted > 0)
        })
        .await
    }
}

pub(super) fn get(conn: &Connection, id: &str) -> rusqlite::Result<Option<SessionRecord>> {
    conn.query_row(
        &format!("SELECT {SESSION_COLUMNS} FROM sessions WHERE id = ?1"),
        params![id],
        session_from_row,
    )
    .optional()
}

fn messages_after(conn: &Connection, id: &str, upto: i64) -> rusqlite::Result<Vec<Message>> {
    let mut stmt = conn.prepare_cached(
        "SELECT body FROM messages WHERE session_id = ?1 AND seq > ?2 AND branch = 0 ORDER BY seq",
    )?;
    let rows = stmt.query_map(params![id, upto], |row| row.get::<_, String>(0))?;
    rows.map(|body| decode_message(&body?)).collect()
}

fn append(conn: &mut Connection, id: &str, messages: &[Message]) -> rusqlite::Result<()> {
    if messages.is_empty() {
        return Ok(());
    }
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    let (title, mut seq): (String, i64) = tx.query_row(
        "SELECT title, (SELECT coalesce(max(seq), 0) FROM messages WHERE session_id = ?1)
         FROM sessions WHERE id = ?1",
        params![id],
        |row| Ok((row.get(0)?, row.get(1)?)),
    )?;
    let now = now_ms();
    {
        let mut insert = tx.prepare_cached(
            "INSERT INTO messages (session_id, seq, role, content, body, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        )?;
        let mut index =
            tx.prepare_cached("INSERT INTO messages_fts (rowid, text) VALUES (?1, ?2)")?;
        for message in messages {
            seq += 1;
            insert.execute(params![
                id,
                seq,
                message.role.as_str(),
                message.content,
                encode(message)?,
                now
            ])?;
            index.execute(params![tx.last_insert_rowid(), search_text(message)])?;
        }
    }
    let new_title = if title.is_empty() {
        messages
            .iter()
            .find(|m| m.role == Role::User && !m.is_tool_result())
            .map(|m| title_from(&m.content))
            .unwrap_or_default()
    } else {
        title
    };
    tx.execute(
        "UPDATE sessions SET updated_at = ?2, message_count = message_count + ?3, title = ?4
         WHERE id = ?1",
        params![id, now, messages.len() as i64, new_title],
    )?;
    tx.commit()
}
