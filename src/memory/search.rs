//! Finding sessions by their words: names and titles first, then full-text matches over every
//! message (FTS5), placed by their best bm25 score among the newest matches, with a snippet.
//! Bounded so that a query over a million messages stays fast however common its words are.

use rusqlite::{Connection, OptionalExtension, params};

use super::MemoryError;
use super::store::{SESSION_COLUMNS, SearchHit, SessionRecord, get, session_from_row};

/// Sessions whose name or title contains `text`, then those with messages matching it.
pub(super) fn search(
    conn: &Connection,
    text: &str,
    workdir: Option<&str>,
    limit: usize,
) -> rusqlite::Result<Vec<SearchHit>> {
    let limit = limit as i64;
    let mut hits: Vec<SearchHit> = Vec::new();
    if text.is_empty() {
        return Ok(hits);
    }
    let like = format!("%{}%", text.replace('%', "\\%").replace('_', "\\_"));
    let mut by_label = conn.prepare_cached(&format!(
        "SELECT {SESSION_COLUMNS} FROM sessions
         WHERE (name LIKE ?1 ESCAPE '\\' OR title LIKE ?1 ESCAPE '\\')
           AND (?2 IS NULL OR workdir = ?2) AND parent_id IS NULL
         ORDER BY updated_at DESC LIMIT ?3"
    ))?;
    for session in by_label.query_map(params![like, workdir, limit], session_from_row)? {
        let session = session?;
        hits.push(SearchHit {
            snippet: session.label().to_owned(),
            session,
        });
    }
    let Some(query) = fts_query(text) else {
        return Ok(hits);
    };
    // The newest matching messages first (FTS5 walks rowids cheaply, while ranking every match
    // of a common word would not), at most SCAN of them; each session is then placed by its
    // best bm25 score among those (lower is better), and only shown sessions get a snippet.
    const SCAN: i64 = 2000;
    // The FTS table alone, so that its rowid order (and the LIMIT) drive the scan.
    let mut candidates = conn.prepare_cached(
        "SELECT rowid, bm25(messages_fts) FROM messages_fts
         WHERE messages_fts MATCH ?1 ORDER BY rowid DESC LIMIT ?2",
    )?;
    let scan = if workdir.is_some() { SCAN * 4 } else { SCAN };
    let matches: Vec<(i64, f64)> = candidates
        .query_map(params![query, scan], |row| Ok((row.get(0)?, row.get(1)?)))?
        .collect::<rusqlite::Result<_>>()?;
    let mut owner = conn.prepare_cached(
        "SELECT m.session_id, s.workdir FROM messages m JOIN sessions s ON s.id = m.session_id
         WHERE m.id = ?1 AND s.parent_id IS NULL",
    )?;
    let mut best: Vec<(String, i64, f64)> = Vec::new();
    let mut position: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for (rowid, score) in matches {
        let Some((session, dir)) = owner
            .query_row(params![rowid], |row| {
                Ok((row.get::<_, String>(0)?, row.get::<_, String>(1)?))
            })
            .optional()?
        else {
            continue;
        };
        if workdir.is_some_and(|w| w != dir) {
            continue;
        }
        match position.get(&session) {
            Some(&at) if score < best[at].2 => best[at] = (session, rowid, score),
            Some(_) => {}
            None => {
                position.insert(session.clone(), best.len());
                best.push((session, rowid, score));
            }
        }
    }
    best.sort_by(|a, b| a.2.total_cmp(&b.2));
    // FTS5's snippet() would run the MATCH again for every hit; the message text is at hand.
    let mut content = conn.prepare_cached("SELECT content FROM messages WHERE id = ?1")?;
    let words = query_words(text);
    for (session_id, rowid, _) in best.into_iter().take(limit.max(0) as usize) {
        if hits.iter().any(|h| h.session.id == session_id) {
            continue;
        }
        let Some(session) = get(conn, &session_id)? else {
            continue;
        };
        let text: String = content
            .query_row(params![rowid], |row| row.get(0))
            .optional()?
            .unwrap_or_default();
        hits.push(SearchHit {
            session,
            snippet: snippet(&text, &words),
        });
    }
    hits.truncate(limit.max(0) as usize);
    Ok(hits)
}

/// The words of a user's query, as the FTS tokenizer splits them.
fn query_words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// A query as an FTS5 expression: every word must appear; the last one, still being typed,
/// as a prefix (prefixes of common words are what makes a query slow, so only that one).
fn fts_query(text: &str) -> Option<String> {
    let words = query_words(text);
    let last = words.len().checked_sub(1)?;
    let terms: Vec<String> = words
        .iter()
        .enumerate()
        .map(|(i, w)| {
            if i == last {
                format!("\"{w}\"*")
            } else {
                format!("\"{w}\"")
            }
        })
        .collect();
    Some(terms.join(" "))
}

/// A short excerpt of `text` around the first query word, with the words in brackets.
fn snippet(text: &str, words: &[String]) -> String {
    const AROUND: usize = 40;
    let lower = text.to_lowercase();
    let at = words
        .iter()
        .filter_map(|w| lower.find(w.as_str()))
        .min()
        .unwrap_or(0);
    let start = lower[..at]
        .char_indices()
        .rev()
        .nth(AROUND)
        .map_or(0, |(i, _)| i);
    let end = lower[at..]
        .char_indices()
        .nth(AROUND * 2)
        .map_or(lower.len(), |(i, _)| at + i);
    // `lower` and `text` can differ in length for a few scripts; cut `text` safely.
    let (start, end) = if lower.len() == text.len() {
        (start, end)
    } else {
        (0, text.len().min(AROUND * 3))
    };
    let cut = |i: usize| text.is_char_boundary(i);
    let (start, end) = (
        if cut(start) { start } else { 0 },
        if cut(end) { end } else { text.len() },
    );
    let mut out = String::new();
    if start > 0 {
        out.push('…');
    }
    let piece = text[start..end].replace('\n', " ");
    let mut marked = piece.clone();
    for word in words {
        let lower_piece = marked.to_lowercase();
        if let Some(i) = lower_piece.find(word.as_str())
            && lower_piece.len() == marked.len()
            && marked.is_char_boundary(i)
            && marked.is_char_boundary(i + word.len())
        {
            marked = format!(
                "{}[{}]{}",
                &marked[..i],
                &marked[i..i + word.len()],
                &marked[i + word.len()..]
            );
        }
    }
    out.push_str(&marked);
    if end < text.len() {
        out.push('…');
    }
    out
}

/// A session by exact id, name, or a unique prefix of its id.
pub(super) fn resolve(
    conn: &Connection,
    key: &str,
) -> rusqlite::Result<Result<SessionRecord, MemoryError>> {
    if key.is_empty() {
        return Ok(Err(MemoryError::NotFound("an empty session id".into())));
    }
    if let Some(found) = get(conn, key)? {
        return Ok(Ok(found));
    }
    let by_name = conn
        .query_row(
            &format!("SELECT {SESSION_COLUMNS} FROM sessions WHERE name = ?1"),
            params![key],
            session_from_row,
        )
        .optional()?;
    if let Some(found) = by_name {
        return Ok(Ok(found));
    }
    let pattern = format!("{}%", key.replace('%', "").replace('_', "\\_"));
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {SESSION_COLUMNS} FROM sessions WHERE id LIKE ?1 ESCAPE '\\' ORDER BY updated_at DESC LIMIT 6"
    ))?;
    let matches: Vec<SessionRecord> = stmt
        .query_map(params![pattern], session_from_row)?
        .collect::<rusqlite::Result<_>>()?;
    Ok(match matches.len() {
        0 => Err(MemoryError::NotFound(format!(
            "no session has the id or name `{key}`"
        ))),
        1 => matches
            .into_iter()
            .next()
            .ok_or_else(|| MemoryError::NotFound(format!("no session has the id `{key}`"))),
        _ => Err(MemoryError::Ambiguous(format!(
            "`{key}` starts several session ids: {}; give more of it",
            matches
                .iter()
                .map(|s| format!("{} ({})", &s.id[..s.id.len().min(12)], s.label()))
                .collect::<Vec<_>>()
                .join(", ")
        ))),
    })
}
