//! The schema of `sessions.db`, versioned with `PRAGMA user_version`: each step moves one version
//! forward, all in one transaction, so a database written by any older harness9 opens and
//! upgrades, or stays as it was.

use rusqlite::Connection;

/// Step N takes a database from version N to N+1.
const STEPS: &[&str] = &[
    // 0 → 1: sessions and their messages; `body` is the whole `schema::Message` as JSON, so a
    // resumed session is exactly the history the model saw.
    "CREATE TABLE sessions (
         id TEXT PRIMARY KEY,
         workdir TEXT NOT NULL,
         title TEXT NOT NULL DEFAULT '',
         provider TEXT NOT NULL DEFAULT '',
         model TEXT NOT NULL DEFAULT '',
         mode TEXT NOT NULL DEFAULT 'default',
         created_at INTEGER NOT NULL,
         updated_at INTEGER NOT NULL
     );
     CREATE INDEX sessions_by_workdir ON sessions(workdir, updated_at DESC);
     CREATE INDEX sessions_by_update ON sessions(updated_at DESC);
     CREATE TABLE messages (
         id INTEGER PRIMARY KEY,
         session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
         seq INTEGER NOT NULL,
         role TEXT NOT NULL,
         content TEXT NOT NULL,
         body TEXT NOT NULL,
         created_at INTEGER NOT NULL,
         UNIQUE(session_id, seq)
     );",
    // 1 → 2: names, a stored message count (listing 10,000 sessions must not count rows),
    // todo lists, compaction checkpoints, and full-text search over every message.
    "ALTER TABLE sessions ADD COLUMN name TEXT;
     ALTER TABLE sessions ADD COLUMN message_count INTEGER NOT NULL DEFAULT 0;
     UPDATE sessions SET message_count =
         (SELECT count(*) FROM messages WHERE messages.session_id = sessions.id);
     CREATE UNIQUE INDEX sessions_by_name ON sessions(name) WHERE name IS NOT NULL;
     CREATE TABLE todos (
         session_id TEXT PRIMARY KEY REFERENCES sessions(id) ON DELETE CASCADE,
         items TEXT NOT NULL
     );
     CREATE TABLE compactions (
         session_id TEXT PRIMARY KEY REFERENCES sessions(id) ON DELETE CASCADE,
         upto_seq INTEGER NOT NULL,
         summary TEXT
     );
     CREATE VIRTUAL TABLE messages_fts USING fts5(text, tokenize = 'unicode61 remove_diacritics 2');
     INSERT INTO messages_fts(rowid, text) SELECT id, content FROM messages;
     CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages BEGIN
         DELETE FROM messages_fts WHERE rowid = old.id;
     END;",
    // 2 → 3: prompts queued while the agent works, kept so that a crash does not lose them.
    "ALTER TABLE sessions ADD COLUMN queued TEXT NOT NULL DEFAULT '[]';",
    // 3 → 4: the server's last count of the prompt and how many view messages it covered,
    // so the next run's compaction decision starts from the truth rather than an estimate.
    "ALTER TABLE sessions ADD COLUMN prompt_tokens INTEGER;
     ALTER TABLE sessions ADD COLUMN prompt_messages INTEGER;",
    // 4 → 5: what the session's model calls used and cost, summed as they are made.
    "ALTER TABLE sessions ADD COLUMN input_tokens INTEGER NOT NULL DEFAULT 0;
     ALTER TABLE sessions ADD COLUMN output_tokens INTEGER NOT NULL DEFAULT 0;
     ALTER TABLE sessions ADD COLUMN cache_read_tokens INTEGER NOT NULL DEFAULT 0;
     ALTER TABLE sessions ADD COLUMN cache_write_tokens INTEGER NOT NULL DEFAULT 0;
     ALTER TABLE sessions ADD COLUMN cost_usd REAL NOT NULL DEFAULT 0;",
    // 5 → 6: long-term memories (`memory::long_term`): `workdir` is the project a `project`
    // memory belongs to ('' for `user`), `normalized` the content as duplicates are recognised,
    // and full-text search over title and content kept in step by triggers.
    "CREATE TABLE memories (
         id INTEGER PRIMARY KEY,
         title TEXT NOT NULL DEFAULT '',
         content TEXT NOT NULL,
         normalized TEXT NOT NULL,
         category TEXT NOT NULL DEFAULT '',
         scope TEXT NOT NULL CHECK (scope IN ('project', 'user')),
         workdir TEXT NOT NULL DEFAULT '',
         importance INTEGER NOT NULL DEFAULT 3,
         created_at INTEGER NOT NULL,
         updated_at INTEGER NOT NULL,
         last_used_at INTEGER,
         use_count INTEGER NOT NULL DEFAULT 1,
         UNIQUE(scope, workdir, normalized)
     );
     CREATE INDEX memories_by_rank ON memories(importance DESC, use_count DESC, updated_at DESC);
     CREATE VIRTUAL TABLE memories_fts USING fts5(title, content, content = 'memories',
         content_rowid = 'id', tokenize = 'unicode61 remove_diacritics 2');
     CREATE TRIGGER memories_fts_insert AFTER INSERT ON memories BEGIN
         INSERT INTO memories_fts(rowid, title, content) VALUES (new.id, new.title, new.content);
     END;
     CREATE TRIGGER memories_fts_delete AFTER DELETE ON memories BEGIN
         INSERT INTO memories_fts(memories_fts, rowid, title, content)
             VALUES ('delete', old.id, old.title, old.content);
     END;
     CREATE TRIGGER memories_fts_update AFTER UPDATE OF title, content ON memories BEGIN
         INSERT INTO memories_fts(memories_fts, rowid, title, content)
             VALUES ('delete', old.id, old.title, old.content);
         INSERT INTO memories_fts(rowid, title, content) VALUES (new.id, new.title, new.content);
     END;",
    // 6 → 7: sub-agents' sessions (`memory::children`): the session of the `task` call that
    // started one, and the agent's name. Listings leave them out.
    "ALTER TABLE sessions ADD COLUMN parent_id TEXT;
     ALTER TABLE sessions ADD COLUMN agent TEXT;
     CREATE INDEX sessions_by_parent ON sessions(parent_id) WHERE parent_id IS NOT NULL;",
    // 7 → 8: checkpoints and branches (issue 21). `branch` 0 is the conversation as it goes
    // on; `/rewind` moves the messages after a prompt to a new branch number, kept, not
    // deleted. A checkpoint is the files one prompt changed (JSON, contents kept by hash in
    // `$HARNESS9_HOME/checkpoints/`), tied to the last message stored before the prompt.
    "ALTER TABLE messages ADD COLUMN branch INTEGER NOT NULL DEFAULT 0;
     CREATE TABLE checkpoints (
         id INTEGER PRIMARY KEY,
         session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
         after_seq INTEGER NOT NULL,
         prompt TEXT NOT NULL DEFAULT '',
         files TEXT NOT NULL,
         undone INTEGER NOT NULL DEFAULT 0,
         created_at INTEGER NOT NULL,
         UNIQUE(session_id, after_seq)
     );",
    // The `task` call a sub-agent's session answers, so a resumed parent's task block finds
    // its child's transcript.
    "ALTER TABLE sessions ADD COLUMN task_call_id TEXT;",
];

/// The version a fully migrated database has.
pub const CURRENT: i64 = STEPS.len() as i64;

/// Brings `conn` to `CURRENT`; a database newer than this build is refused.
///
/// The version is read inside an IMMEDIATE transaction, which holds the write lock: when two
/// processes open a new database at once, the second waits, then finds it already migrated.
pub fn migrate(conn: &mut Connection) -> rusqlite::Result<()> {
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    let version: i64 = tx.query_row("PRAGMA user_version", [], |row| row.get(0))?;
    if version > CURRENT {
        return Err(rusqlite::Error::InvalidParameterName(format!(
            "sessions.db has schema version {version}, newer than this harness9 ({CURRENT}); upgrade harness9"
        )));
    }
    for step in STEPS.iter().skip(version.max(0) as usize) {
        tx.execute_batch(step)?;
    }
    if version < CURRENT {
        tx.pragma_update(None, "user_version", CURRENT)?;
    }
    tx.commit()
}

/// Applies the steps up to `version` only (tests of the migration path).
#[doc(hidden)]
pub fn migrate_to(conn: &mut Connection, version: i64) -> rusqlite::Result<()> {
    for (from, step) in STEPS.iter().enumerate().take(version as usize) {
        let tx = conn.transaction()?;
        tx.execute_batch(step)?;
        tx.pragma_update(None, "user_version", from as i64 + 1)?;
        tx.commit()?;
    }
    Ok(())
}
