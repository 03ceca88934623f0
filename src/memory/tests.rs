//! The store on real SQLite files, the compactors on long histories.

use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use super::*;
use crate::planning::{TodoItem, TodoStatus};
use crate::provider::{ScriptStep, ScriptedProvider};
use crate::schema::{Message, ThinkingBlock, ToolCall, ToolResult};

fn new_session(workdir: &str) -> NewSession {
    NewSession {
        workdir: workdir.into(),
        provider: "openai".into(),
        model: "gpt-4o".into(),
        mode: "default".into(),
    }
}

/// A turn with everything a message can carry: thinking with a signature, redacted thinking,
/// tool calls, an ok result and an error result.
fn rich_turn() -> Vec<Message> {
    let mut assistant = Message::assistant("Let me look.");
    assistant.thinking = vec![
        ThinkingBlock::Thinking {
            thinking: "hmm".into(),
            signature: "sig-1".into(),
        },
        ThinkingBlock::Redacted {
            data: "opaque".into(),
        },
    ];
    assistant.tool_calls = vec![
        ToolCall {
            id: "c1".into(),
            name: "bash".into(),
            arguments: r#"{"command":"ls"}"#.into(),
        },
        ToolCall {
            id: "c2".into(),
            name: "read_file".into(),
            arguments: "{\"path\": ".into(),
        },
    ];
    vec![
        Message::user("What is in src?\nSecond line."),
        assistant,
        Message::tool_result(&ToolResult::ok("c1", "main.rs\nzanzibar_marker.rs")),
        Message::tool_result(&ToolResult::error("c2", "arguments are not valid JSON")),
        Message::assistant("Two files."),
    ]
}

#[tokio::test]
async fn a_session_round_trips_byte_for_byte_across_reopening() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sessions.db");
    let id = {
        let store = SessionStore::open(&path).unwrap();
        let session = store.create(new_session("/w")).await.unwrap();
        let turn = rich_turn();
        store.append(&session.id, &turn[..2]).await.unwrap();
        store.append(&session.id, &turn[2..]).await.unwrap();
        session.id
    };
    let store = SessionStore::open(&path).unwrap();
    assert_eq!(store.load_all(&id).await.unwrap(), rich_turn());
    assert_eq!(store.load_view(&id).await.unwrap(), rich_turn());
    let record = store.get(&id).await.unwrap().unwrap();
    assert_eq!(record.title, "What is in src?");
    assert_eq!(record.message_count, 5);
    let journal: String = rusqlite::Connection::open(&path)
        .unwrap()
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .unwrap();
    assert_eq!(journal, "wal");
}

#[tokio::test]
async fn full_text_search_finds_a_word_from_a_tool_result() {
    let store = SessionStore::open_in_memory().unwrap();
    let one = store.create(new_session("/w")).await.unwrap();
    store.append(&one.id, &rich_turn()).await.unwrap();
    let two = store.create(new_session("/other")).await.unwrap();
    store
        .append(&two.id, &[Message::user("unrelated")])
        .await
        .unwrap();

    let hits = store.search("zanzibar", None, 10).await.unwrap();
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].session.id, one.id);
    assert!(
        hits[0].snippet.contains("[zanzibar]_marker"),
        "{}",
        hits[0].snippet
    );
    assert!(
        store.search("zanzi", None, 10).await.unwrap().len() == 1,
        "prefixes match"
    );
    assert!(
        store
            .search("zanzibar", Some("/other"), 10)
            .await
            .unwrap()
            .is_empty()
    );
    let by_title = store.search("unrelated", None, 10).await.unwrap();
    assert_eq!(by_title[0].session.id, two.id);
    assert!(
        store.search("\"(*", None, 10).await.unwrap().is_empty(),
        "odd input is harmless"
    );
}

#[tokio::test]
async fn listing_is_newest_first_per_directory_or_all() {
    let store = SessionStore::open_in_memory().unwrap();
    let mut ids = Vec::new();
    for (i, dir) in ["/a", "/b", "/a"].iter().enumerate() {
        let s = store.create(new_session(dir)).await.unwrap();
        store
            .append(&s.id, &[Message::user(format!("prompt {i}"))])
            .await
            .unwrap();
        ids.push(s.id);
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    let a: Vec<_> = store
        .list(Some("/a"), 10)
        .await
        .unwrap()
        .into_iter()
        .map(|s| s.id)
        .collect();
    assert_eq!(a, [ids[2].clone(), ids[0].clone()]);
    assert_eq!(store.list(None, 10).await.unwrap().len(), 3);
    assert_eq!(store.latest("/b").await.unwrap().unwrap().id, ids[1]);
}

#[tokio::test]
async fn sessions_resolve_by_id_prefix_or_name() {
    let store = SessionStore::open_in_memory().unwrap();
    let s = store.create(new_session("/w")).await.unwrap();
    assert_eq!(store.resolve(&s.id).await.unwrap().id, s.id);
    assert_eq!(store.resolve(&s.id[..20]).await.unwrap().id, s.id);
    store.set_name(&s.id, "parser-work").await.unwrap();
    assert_eq!(store.resolve("parser-work").await.unwrap().id, s.id);
    let other = store.create(new_session("/w")).await.unwrap();
    let err = store.set_name(&other.id, "parser-work").await.unwrap_err();
    assert!(err.to_string().contains("already used"));
    // Ids made in the same millisecond share a long prefix: a short prefix is ambiguous.
    assert!(matches!(
        store.resolve(&s.id[..4]).await,
        Err(MemoryError::Ambiguous(_))
    ));
    assert!(matches!(
        store.resolve("nope").await,
        Err(MemoryError::NotFound(_))
    ));
}

#[tokio::test]
async fn todos_persist_with_the_session() {
    let store = SessionStore::open_in_memory().unwrap();
    let s = store.create(new_session("/w")).await.unwrap();
    let items = vec![
        TodoItem {
            content: "write the parser".into(),
            status: TodoStatus::Completed,
        },
        TodoItem {
            content: "test it".into(),
            status: TodoStatus::Pending,
        },
    ];
    store.save_todos(&s.id, &items);
    assert_eq!(store.load_todos(&s.id).await.unwrap(), items);
    let empty = store.create(new_session("/w")).await.unwrap();
    assert!(store.delete_if_empty(&empty.id).await.unwrap());
    assert!(store.get(&empty.id).await.unwrap().is_none());
    store
        .append(&s.id, &[Message::user("keep me")])
        .await
        .unwrap();
    assert!(
        !store.delete_if_empty(&s.id).await.unwrap(),
        "a session with messages stays"
    );
    store.save_queue(&s.id, &["next".into(), "then this".into()]);
    assert_eq!(
        store.load_queue(&s.id).await.unwrap(),
        ["next", "then this"]
    );
}

#[test]
fn an_older_schema_is_migrated_forward_with_its_data() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sessions.db");
    {
        let mut conn = rusqlite::Connection::open(&path).unwrap();
        migrations::migrate_to(&mut conn, 1).unwrap();
        conn.execute(
            "INSERT INTO sessions (id, workdir, title, created_at, updated_at) VALUES ('old1', '/w', 'old work', 1, 2)",
            [],
        )
        .unwrap();
        let body = serde_json::to_string(&Message::user("an ancient quokka")).unwrap();
        conn.execute(
            "INSERT INTO messages (session_id, seq, role, content, body, created_at) VALUES ('old1', 1, 'user', 'an ancient quokka', ?1, 1)",
            [body],
        )
        .unwrap();
        let version: i64 = conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .unwrap();
        assert_eq!(version, 1);
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    runtime.block_on(async {
        let store = SessionStore::open(&path).unwrap();
        let old = store.get("old1").await.unwrap().unwrap();
        assert_eq!(old.message_count, 1, "counts are backfilled");
        assert_eq!(old.name, None);
        let hits = store.search("quokka", None, 5).await.unwrap();
        assert_eq!(hits.len(), 1, "old messages are indexed");
        store
            .append("old1", &[Message::assistant("new reply")])
            .await
            .unwrap();
        assert_eq!(store.load_all("old1").await.unwrap().len(), 2);
    });
    let version: i64 = rusqlite::Connection::open(&path)
        .unwrap()
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(version, migrations::CURRENT);
}

#[tokio::test]
async fn a_compaction_checkpoint_changes_the_view_not_the_transcript() {
    let store = SessionStore::open_in_memory().unwrap();
    let s = store.create(new_session("/w")).await.unwrap();
    let session = SqliteSession::new(store.clone(), s.id.clone());
    session.append_messages(&rich_turn()).await.unwrap();
    session
        .record_compaction(2, Some(Message::user(format!("{SUMMARY_MARKER}\nfirst"))))
        .await
        .unwrap();
    let view = session.load_messages().await.unwrap();
    assert_eq!(view.len(), 4);
    assert!(view[0].content.contains("first"));
    assert_eq!(view[1], rich_turn()[2]);
    // A second compaction replaces the summary and drops one more stored message.
    session
        .record_compaction(2, Some(Message::user(format!("{SUMMARY_MARKER}\nsecond"))))
        .await
        .unwrap();
    let view = session.load_messages().await.unwrap();
    assert_eq!(view.len(), 3);
    assert!(view[0].content.contains("second"));
    assert_eq!(view[1], rich_turn()[3]);
    assert_eq!(session.load_transcript().await.unwrap(), rich_turn());

    let memory = InMemorySession::with_messages("m", rich_turn());
    memory
        .record_compaction(2, Some(Message::user("s1")))
        .await
        .unwrap();
    memory
        .record_compaction(2, Some(Message::user("s2")))
        .await
        .unwrap();
    assert_eq!(
        memory.load_messages().await.unwrap(),
        view.iter()
            .enumerate()
            .map(|(i, m)| if i == 0 {
                Message::user("s2")
            } else {
                m.clone()
            })
            .collect::<Vec<_>>()
    );
}

/// A system prompt and `turns` turns of: prompt, a call, its result, an answer.
fn long_history(turns: usize) -> Vec<Message> {
    let mut history = vec![Message::system("system prompt")];
    for t in 0..turns {
        history.push(Message::user(format!(
            "question {t} {}",
            "word ".repeat(40)
        )));
        let mut call = Message::assistant("");
        call.tool_calls = vec![ToolCall {
            id: format!("c{t}"),
            name: "read_file".into(),
            arguments: r#"{"path":"a"}"#.into(),
        }];
        history.push(call);
        history.push(Message::tool_result(&ToolResult::ok(
            format!("c{t}"),
            "content ".repeat(60),
        )));
        history.push(Message::assistant(format!("answer {t}")));
    }
    history
}

/// Every tool result in `history` follows the call that asked for it.
fn pairs_intact(history: &[Message]) -> bool {
    history
        .iter()
        .enumerate()
        .all(|(i, m)| match &m.tool_call_id {
            None => true,
            Some(id) => history[..i]
                .iter()
                .rev()
                .find(|p| !p.is_tool_result())
                .is_some_and(|p| p.tool_calls.iter().any(|c| &c.id == id)),
        })
}

#[tokio::test]
async fn every_compactor_shrinks_and_keeps_calls_with_their_results() {
    let history = long_history(30);
    let before = crate::context::estimate_tokens(&history, &[]);
    let provider = ScriptedProvider::new([ScriptStep::Reply(Message::assistant(
        "The user asked 30 questions about file a.",
    ))]);
    let cancel = CancellationToken::new();
    let compactors: Vec<Box<dyn Compactor>> = vec![
        Box::new(SlidingWindow { max_messages: 17 }),
        Box::new(TokenBudget {
            max_tokens: before / 3,
        }),
        Box::new(Summarization {
            keep_recent_tokens: before / 4,
        }),
    ];
    for compactor in compactors {
        let compaction = compactor
            .compact(&history, &provider, &cancel)
            .await
            .unwrap();
        let after = compaction.apply(&history);
        assert_eq!(
            after[0],
            history[0],
            "{}: the system prompt stays",
            compactor.strategy()
        );
        assert!(
            after.len() < history.len(),
            "{}: it shrinks",
            compactor.strategy()
        );
        assert!(
            crate::context::estimate_tokens(&after, &[]) < before,
            "{}",
            compactor.strategy()
        );
        assert!(
            pairs_intact(&after),
            "{}: a result lost its call",
            compactor.strategy()
        );
        assert!(!after[1 + usize::from(compaction.summary.is_some())].is_tool_result());
        assert_eq!(
            after.last(),
            history.last(),
            "the latest messages are kept verbatim"
        );
    }
    // With a window one short of a result, the cut moves back to keep the pair whole.
    let history = long_history(3);
    let window = SlidingWindow { max_messages: 6 };
    let compaction = window.compact(&history, &provider, &cancel).await.unwrap();
    assert!(pairs_intact(&compaction.apply(&history)));
}

#[tokio::test]
async fn summarization_updates_the_previous_summary() {
    let provider = Arc::new(ScriptedProvider::new([
        ScriptStep::Reply(Message::assistant("summary one")),
        ScriptStep::Reply(Message::assistant("summary two")),
    ]));
    let compactor = Summarization {
        keep_recent_tokens: 300,
    };
    let cancel = CancellationToken::new();
    let history = long_history(10);
    let first = compactor
        .compact(&history, provider.as_ref(), &cancel)
        .await
        .unwrap();
    let mut compacted = first.apply(&history);
    assert!(
        compacted[1].content.starts_with(SUMMARY_MARKER)
            && compacted[1].content.ends_with("summary one")
    );
    compacted.extend(long_history(10).into_iter().skip(1));
    let second = compactor
        .compact(&compacted, provider.as_ref(), &cancel)
        .await
        .unwrap();
    assert!(second.apply(&compacted)[1].content.ends_with("summary two"));
    let request = &provider.calls()[1].messages[1].content;
    assert!(
        request.starts_with("Previous summary:\nsummary one"),
        "{request}"
    );
    assert!(
        !request.contains(SUMMARY_MARKER),
        "the old summary is folded in, not repeated"
    );
}

#[tokio::test]
async fn an_unreadable_todo_list_or_queue_is_reported_and_kept_as_stored() {
    let dir = tempfile::tempdir().unwrap();
    let store = SessionStore::open(&dir.path().join("sessions.db")).unwrap();
    let s = store.create(new_session("/w")).await.unwrap();
    store.save_todos(
        &s.id,
        &[TodoItem {
            content: "keep me".into(),
            status: TodoStatus::Pending,
        }],
    );
    store.save_queue(&s.id, &["next".into()]);
    // A bad disk sector, a hand edit, a newer harness9's format: the JSON does not parse.
    let id = s.id.clone();
    store
        .call(move |conn| {
            conn.execute(
                "UPDATE todos SET items = '[{\"content\": \"keep me\", \"stat' WHERE session_id = ?1",
                [&id],
            )?;
            conn.execute("UPDATE sessions SET queued = '{\"v\": 2}' WHERE id = ?1", [&id])
        })
        .await
        .unwrap();

    let todos = store.load_todos(&s.id).await.unwrap_err();
    assert!(
        matches!(&todos, MemoryError::Corrupt(m) if m.contains("todo list") && m.contains("kept")),
        "{todos}"
    );
    let queue = store.load_queue(&s.id).await.unwrap_err();
    assert!(
        matches!(&queue, MemoryError::Corrupt(m) if m.contains("prompt queue")),
        "{queue}"
    );
    // Loading wrote nothing back: the stored values are exactly as they were.
    let id = s.id.clone();
    let stored: (String, String) = store
        .call(move |conn| {
            conn.query_row(
                "SELECT items, queued FROM todos JOIN sessions ON sessions.id = todos.session_id
                 WHERE sessions.id = ?1",
                [&id],
                |row| Ok((row.get(0)?, row.get(1)?)),
            )
        })
        .await
        .unwrap();
    assert_eq!(
        stored,
        (
            "[{\"content\": \"keep me\", \"stat".to_owned(),
            "{\"v\": 2}".to_owned()
        )
    );
}
