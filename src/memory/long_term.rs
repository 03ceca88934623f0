//! Long-term memories: durable facts kept in `sessions.db` across sessions, each `project`
//! (this working directory) or `user` (every session). A duplicate (the same content once
//! case, spacing and end punctuation are set aside) bumps the stored one's use count instead
//! of adding a row. Search is FTS5, ranked by relevance (bm25), then scope (this project
//! first), importance and recency. The digest is what the system prompt carries: the most
//! important entries for this project and user, bounded to `DIGEST_BYTES`.

use rusqlite::{Connection, OptionalExtension, params};

use super::MemoryError;
use super::store::{SessionStore, now_ms, store_time};

/// The most of the digest put in the system prompt.
pub const DIGEST_BYTES: usize = 4096;
/// The most characters of one memory's content.
pub const MAX_CONTENT: usize = 2000;
/// Importance: 1 (low, e.g. extracted) to 5 (high); written by the model: 3.
pub const DEFAULT_IMPORTANCE: i64 = 3;

/// Where a memory applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemoryScope {
    /// This working directory only.
    Project,
    /// Every session of this user.
    User,
}

impl MemoryScope {
    pub fn as_str(self) -> &'static str {
        match self {
            MemoryScope::Project => "project",
            MemoryScope::User => "user",
        }
    }

    pub fn parse(text: &str) -> Option<MemoryScope> {
        match text {
            "project" => Some(MemoryScope::Project),
            "user" => Some(MemoryScope::User),
            _ => None,
        }
    }
}

/// A memory to store.
#[derive(Debug, Clone)]
pub struct NewMemory {
    pub title: String,
    pub content: String,
    pub category: String,
    pub scope: MemoryScope,
    /// The project a `project` memory belongs to.
    pub workdir: String,
    pub importance: i64,
}

/// A stored memory.
#[derive(Debug, Clone, PartialEq)]
pub struct MemoryRecord {
    pub id: i64,
    pub title: String,
    pub content: String,
    pub category: String,
    pub scope: MemoryScope,
    /// '' for a `user` memory.
    pub workdir: String,
    pub importance: i64,
    pub created_at: i64,
    pub updated_at: i64,
    pub last_used_at: Option<i64>,
    pub use_count: i64,
}

/// What a write did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Written {
    New(i64),
    /// The same content was stored already: its use count went up.
    Duplicate(i64),
}

impl Written {
    pub fn id(self) -> i64 {
        match self {
            Written::New(id) | Written::Duplicate(id) => id,
        }
    }
}

const COLUMNS: &str = "m.id, m.title, m.content, m.category, m.scope, m.workdir, m.importance, \
                       m.created_at, m.updated_at, m.last_used_at, m.use_count";

fn from_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<MemoryRecord> {
    let scope: String = row.get(4)?;
    Ok(MemoryRecord {
        id: row.get(0)?,
        title: row.get(1)?,
        content: row.get(2)?,
        category: row.get(3)?,
        scope: MemoryScope::parse(&scope).unwrap_or(MemoryScope::Project),
        workdir: row.get(5)?,
        importance: row.get(6)?,
        created_at: row.get(7)?,
        updated_at: row.get(8)?,
        last_used_at: row.get(9)?,
        use_count: row.get(10)?,
    })
}

/// The content as duplicates are recognised: lower case, one space between words, no
/// punctuation at the end.
pub fn normalize(content: &str) -> String {
    content
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
        .trim_end_matches(|c: char| c.is_ascii_punctuation())
        .to_owned()
}

pub(super) fn write(conn: &Connection, new: &NewMemory) -> rusqlite::Result<Written> {
    let normalized = normalize(&new.content);
    let workdir = match new.scope {
        MemoryScope::Project => new.workdir.as_str(),
        MemoryScope::User => "",
    };
    let now = now_ms();
    let existing: Option<i64> = conn
        .query_row(
            "SELECT id FROM memories WHERE scope = ?1 AND workdir = ?2 AND normalized = ?3",
            params![new.scope.as_str(), workdir, normalized],
            |row| row.get(0),
        )
        .optional()?;
    if let Some(id) = existing {
        conn.execute(
            "UPDATE memories SET use_count = use_count + 1, updated_at = ?2,
                 importance = max(importance, ?3) WHERE id = ?1",
            params![id, now, new.importance],
        )?;
        return Ok(Written::Duplicate(id));
    }
    conn.execute(
        "INSERT INTO memories (title, content, normalized, category, scope, workdir, importance,
             created_at, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?8)",
        params![
            new.title,
            new.content,
            normalized,
            new.category,
            new.scope.as_str(),
            workdir,
            new.importance.clamp(1, 5),
            now
        ],
    )?;
    Ok(Written::New(conn.last_insert_rowid()))
}

/// A query as FTS5: any of its words, each quoted (so nothing in it is FTS syntax).
fn fts_query(text: &str) -> Option<String> {
    let words: Vec<String> = text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(|w| format!("\"{}\"", w.to_lowercase()))
        .collect();
    (!words.is_empty()).then(|| words.join(" OR "))
}

/// Memories matching `text` visible from `workdir` (its project's and the user's), best
/// first; the ones returned are marked used.
pub(super) fn search(
    conn: &Connection,
    text: &str,
    workdir: &str,
    limit: usize,
) -> rusqlite::Result<Vec<MemoryRecord>> {
    let hits = matching(conn, text, workdir, limit)?;
    let now = now_ms();
    let mut used = conn.prepare_cached("UPDATE memories SET last_used_at = ?2 WHERE id = ?1")?;
    for hit in &hits {
        used.execute(params![hit.id, now])?;
    }
    Ok(hits)
}

/// `search` without marking anything used (a person browsing is not the model using them).
fn matching(
    conn: &Connection,
    text: &str,
    workdir: &str,
    limit: usize,
) -> rusqlite::Result<Vec<MemoryRecord>> {
    let Some(query) = fts_query(text) else {
        return Ok(Vec::new());
    };
    let now = now_ms();
    // bm25 is negative, lower is better: the factors (> 1) make a match better for this
    // project's scope and for importance, and worse with age (a 90-day half-weight).
    let mut statement = conn.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM memories_fts f JOIN memories m ON m.id = f.rowid
         WHERE memories_fts MATCH ?1 AND (m.scope = 'user' OR m.workdir = ?2)
         ORDER BY bm25(memories_fts)
             * (CASE WHEN m.scope = 'project' THEN 1.5 ELSE 1.0 END)
             * (1.0 + m.importance / 5.0)
             / (1.0 + (?3 - max(m.updated_at, coalesce(m.last_used_at, 0))) / 7776000000.0)
         LIMIT ?4"
    ))?;
    statement
        .query_map(params![query, workdir, now, limit as i64], from_row)?
        .collect()
}

/// What an update changes of a memory; `None` keeps it.
#[derive(Debug, Clone, Default)]
pub struct MemoryChange {
    pub content: Option<String>,
    pub title: Option<String>,
    pub importance: Option<i64>,
}

fn get(conn: &Connection, id: i64) -> rusqlite::Result<Option<MemoryRecord>> {
    conn.query_row(
        &format!("SELECT {COLUMNS} FROM memories m WHERE m.id = ?1"),
        [id],
        from_row,
    )
    .optional()
}

/// Applies `change` to memory `id` in one transaction; whether there was one.
fn update(conn: &mut Connection, id: i64, change: &MemoryChange) -> Result<bool, MemoryError> {
    let tx = conn.transaction()?;
    if let Some(content) = &change.content
        && !edit(&tx, id, content)?
    {
        return Ok(false);
    }
    let mut found = change.content.is_some();
    if let Some(title) = &change.title {
        found |= tx.execute(
            "UPDATE memories SET title = ?2, updated_at = ?3 WHERE id = ?1",
            params![id, title, now_ms()],
        )? > 0;
    }
    if let Some(importance) = change.importance {
        found |= tx.execute(
            "UPDATE memories SET importance = ?2, updated_at = ?3 WHERE id = ?1",
            params![id, importance.clamp(1, 5), now_ms()],
        )? > 0;
    }
    tx.commit()?;
    Ok(found)
}

/// Sets memory `id`'s content (its title, scope and counts stay); whether there was one.
fn edit(conn: &Connection, id: i64, content: &str) -> Result<bool, MemoryError> {
    let content = content.trim();
    if content.is_empty() || content.chars().count() > MAX_CONTENT {
        return Err(MemoryError::Store(format!(
            "a memory holds 1 to {MAX_CONTENT} characters"
        )));
    }
    let changed = conn.execute(
        "UPDATE memories SET content = ?2, normalized = ?3, updated_at = ?4 WHERE id = ?1",
        params![id, content, normalize(content), now_ms()],
    );
    match changed {
        Ok(rows) => Ok(rows > 0),
        // UNIQUE(scope, workdir, normalized): the scope has that memory already.
        Err(rusqlite::Error::SqliteFailure(error, _))
            if error.code == rusqlite::ErrorCode::ConstraintViolation =>
        {
            Err(MemoryError::Store(
                "the same memory is stored already; delete this one instead".into(),
            ))
        }
        Err(error) => Err(error.into()),
    }
}

/// Every memory (`workdir` `None`) or those visible from `workdir`, most important first.
pub(super) fn list(
    conn: &Connection,
    workdir: Option<&str>,
) -> rusqlite::Result<Vec<MemoryRecord>> {
    let mut statement = conn.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM memories m
         WHERE ?1 IS NULL OR m.scope = 'user' OR m.workdir = ?1
         ORDER BY m.importance DESC, m.use_count DESC, m.updated_at DESC, m.id"
    ))?;
    statement.query_map(params![workdir], from_row)?.collect()
}

/// The digest for the system prompt: the most important memories visible from `workdir`,
/// one line each, at most `DIGEST_BYTES`; `None` when there are none. Extracted memories
/// (importance 1, see `extract`) are left out: nobody chose them.
pub fn digest(memories: &[MemoryRecord]) -> Option<String> {
    let mut out = String::new();
    for memory in memories.iter().filter(|m| m.importance > 1) {
        let line = format!("{}\n", line_of(memory));
        if out.len() + line.len() > DIGEST_BYTES {
            break;
        }
        out.push_str(&line);
    }
    (!out.is_empty()).then(|| out.trim_end().to_owned())
}

/// One memory as a line (the digest, MEMORY.md, search results).
pub fn line_of(memory: &MemoryRecord) -> String {
    line(memory.scope.as_str(), &memory.title, &memory.content)
}

/// A memory of `scope` with `title` and `content` as one line (`line_of`, and the session's
/// view of a memory).
pub fn line(scope: &str, title: &str, content: &str) -> String {
    let content: String = content.split_whitespace().collect::<Vec<_>>().join(" ");
    if title.is_empty() {
        format!("- [{scope}] {content}")
    } else {
        format!("- [{scope}] {title}: {content}")
    }
}

/// `MEMORY.md`: every memory, for people to read (they live in `sessions.db`).
pub fn markdown(memories: &[MemoryRecord]) -> String {
    let mut out = String::from(
        "# harness9 memories\n\nWritten by harness9 from sessions.db; edits here are not read \
         back. Use `harness9 memory list|search|rm`.\n",
    );
    let mut user: Vec<&MemoryRecord> = Vec::new();
    let mut projects: std::collections::BTreeMap<&str, Vec<&MemoryRecord>> = Default::default();
    for memory in memories {
        match memory.scope {
            MemoryScope::User => user.push(memory),
            MemoryScope::Project => projects.entry(&memory.workdir).or_default().push(memory),
        }
    }
    let mut section = |heading: String, entries: &[&MemoryRecord]| {
        out.push_str(&format!("\n## {heading}\n\n"));
        for memory in entries {
            out.push_str(&format!(
                "{} (#{}, importance {}, used {}, {})\n",
                line_of(memory),
                memory.id,
                memory.importance,
                memory.use_count,
                store_time(memory.updated_at)
            ));
        }
    };
    if !user.is_empty() {
        section("User".into(), &user);
    }
    for (workdir, entries) in &projects {
        section(format!("Project {workdir}"), entries);
    }
    out
}

impl SessionStore {
    pub async fn memory_write(&self, new: NewMemory) -> Result<Written, MemoryError> {
        self.call(move |conn| write(conn, &new)).await
    }

    pub async fn memory_search(
        &self,
        text: &str,
        workdir: &str,
        limit: usize,
    ) -> Result<Vec<MemoryRecord>, MemoryError> {
        let (text, workdir) = (text.to_owned(), workdir.to_owned());
        self.call(move |conn| search(conn, &text, &workdir, limit))
            .await
    }

    pub async fn memory_list(
        &self,
        workdir: Option<&str>,
    ) -> Result<Vec<MemoryRecord>, MemoryError> {
        let workdir = workdir.map(str::to_owned);
        self.call(move |conn| list(conn, workdir.as_deref())).await
    }

    /// What a person browsing sees (`/memory`): the memories visible from `workdir`, all of
    /// them when `query` is blank, else the best 200 matches; nothing is marked used.
    pub async fn memory_browse(
        &self,
        query: &str,
        workdir: &str,
    ) -> Result<Vec<MemoryRecord>, MemoryError> {
        let (query, workdir) = (query.to_owned(), workdir.to_owned());
        self.call(move |conn| {
            if query.trim().is_empty() {
                list(conn, Some(&workdir))
            } else {
                matching(conn, &query, &workdir, 200)
            }
        })
        .await
    }

    /// Sets memory `id`'s content; whether there was one.
    pub async fn memory_edit(&self, id: i64, content: &str) -> Result<bool, MemoryError> {
        let content = content.to_owned();
        self.call(move |conn| Ok(edit(conn, id, &content))).await?
    }

    /// Memory `id`, if there is one.
    pub async fn memory_get(&self, id: i64) -> Result<Option<MemoryRecord>, MemoryError> {
        self.call(move |conn| get(conn, id)).await
    }

    /// Changes memory `id` (content, title, importance); whether there was one.
    pub async fn memory_update(&self, id: i64, change: MemoryChange) -> Result<bool, MemoryError> {
        self.call(move |conn| Ok(update(conn, id, &change))).await?
    }

    /// Removes memory `id`; whether there was one.
    pub async fn memory_remove(&self, id: i64) -> Result<bool, MemoryError> {
        self.call(move |conn| Ok(conn.execute("DELETE FROM memories WHERE id = ?1", [id])? > 0))
            .await
    }

    /// Rewrites `$HARNESS9_HOME/memory/MEMORY.md` from the store (atomically: a reader never
    /// sees half a file).
    pub async fn memory_export(&self, home: &std::path::Path) -> Result<(), MemoryError> {
        let text = markdown(&self.memory_list(None).await?);
        let path = home.join("memory").join("MEMORY.md");
        crate::files::write_atomic(&path, text.as_bytes())
            .map_err(|e| MemoryError::Store(format!("cannot write {}: {e}", path.display())))
    }
}
