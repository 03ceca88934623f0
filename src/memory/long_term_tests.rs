//! The long-term memory store: deduplication, scopes, ranking, the digest's bound, MEMORY.md,
//! and the 5 → 6 migration of a database that has sessions.

use super::long_term::*;
use super::{SessionStore, migrations};

fn memory(content: &str, scope: MemoryScope, workdir: &str) -> NewMemory {
    NewMemory {
        title: String::new(),
        content: content.into(),
        category: String::new(),
        scope,
        workdir: workdir.into(),
        importance: DEFAULT_IMPORTANCE,
    }
}

#[tokio::test]
async fn the_same_content_again_counts_up_instead_of_adding_a_row() {
    let store = SessionStore::open_in_memory().unwrap();
    let first = store
        .memory_write(memory("Use tabs in Makefiles.", MemoryScope::Project, "/a"))
        .await
        .unwrap();
    let again = store
        .memory_write(memory(
            "  use TABS in   makefiles ",
            MemoryScope::Project,
            "/a",
        ))
        .await
        .unwrap();
    assert!(matches!(first, Written::New(_)));
    assert_eq!(again, Written::Duplicate(first.id()));
    // Another project's identical fact is its own memory.
    let elsewhere = store
        .memory_write(memory("Use tabs in Makefiles.", MemoryScope::Project, "/b"))
        .await
        .unwrap();
    assert!(matches!(elsewhere, Written::New(_)));
    let listed = store.memory_list(Some("/a")).await.unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].use_count, 2);
    assert_eq!(listed[0].content, "Use tabs in Makefiles.");
}

#[tokio::test]
async fn project_memories_stay_in_their_project_and_user_ones_reach_all() {
    let store = SessionStore::open_in_memory().unwrap();
    for (content, scope, dir) in [
        (
            "alpha project builds with cargo xtask",
            MemoryScope::Project,
            "/a",
        ),
        ("beta project builds with make", MemoryScope::Project, "/b"),
        (
            "the user prefers short answers when builds fail",
            MemoryScope::User,
            "/a",
        ),
    ] {
        store
            .memory_write(memory(content, scope, dir))
            .await
            .unwrap();
    }
    let from_b = store.memory_search("builds", "/b", 10).await.unwrap();
    let contents: Vec<&str> = from_b.iter().map(|m| m.content.as_str()).collect();
    assert_eq!(contents.len(), 2, "{contents:?}");
    assert!(
        !contents.iter().any(|c| c.contains("alpha")),
        "{contents:?}"
    );
    // This project's match ranks before the user's of the same relevance.
    assert!(contents[0].contains("beta"), "{contents:?}");
    assert!(
        from_b.iter().all(|m| m.last_used_at.is_none()),
        "returned before marking"
    );
    let listed = store.memory_list(Some("/b")).await.unwrap();
    assert!(
        listed.iter().all(|m| m.last_used_at.is_some()),
        "found ones are marked used"
    );
    assert_eq!(store.memory_list(None).await.unwrap().len(), 3);
    // FTS syntax in a query is only words.
    assert!(
        store
            .memory_search("\"builds* OR NEAR(", "/b", 10)
            .await
            .unwrap()
            .len()
            == 2
    );
    assert!(
        store
            .memory_search("  ", "/b", 10)
            .await
            .unwrap()
            .is_empty()
    );
}

#[tokio::test]
async fn the_digest_puts_important_ones_first_within_its_bound() {
    let store = SessionStore::open_in_memory().unwrap();
    let mut important = memory("always run the linter", MemoryScope::Project, "/a");
    important.importance = 5;
    for n in 0..200 {
        store
            .memory_write(memory(
                &format!("fact number {n} about the codebase and its many modules"),
                MemoryScope::Project,
                "/a",
            ))
            .await
            .unwrap();
    }
    store.memory_write(important).await.unwrap();
    let digest = digest(&store.memory_list(Some("/a")).await.unwrap()).unwrap();
    assert!(digest.len() <= DIGEST_BYTES, "{}", digest.len());
    assert!(digest.len() > DIGEST_BYTES - 100, "{}", digest.len());
    assert!(
        digest.starts_with("- [project] always run the linter"),
        "{digest}"
    );
    assert_eq!(super::long_term::digest(&[]), None);
}

#[tokio::test]
async fn memory_md_is_rewritten_and_removal_takes_the_search_entry_too() {
    let home = tempfile::tempdir().unwrap();
    let store = SessionStore::open_in_memory().unwrap();
    let id = store
        .memory_write(memory(
            "deploys go through staging",
            MemoryScope::User,
            "/a",
        ))
        .await
        .unwrap()
        .id();
    store.memory_export(home.path()).await.unwrap();
    let text = std::fs::read_to_string(home.path().join("memory/MEMORY.md")).unwrap();
    assert!(
        text.contains("## User\n\n- [user] deploys go through staging"),
        "{text}"
    );
    assert!(store.memory_remove(id).await.unwrap());
    assert!(!store.memory_remove(id).await.unwrap());
    assert!(
        store
            .memory_search("staging", "/a", 5)
            .await
            .unwrap()
            .is_empty()
    );
    store.memory_export(home.path()).await.unwrap();
    let text = std::fs::read_to_string(home.path().join("memory/MEMORY.md")).unwrap();
    assert!(!text.contains("staging"), "{text}");
}

#[test]
fn a_version_5_database_gains_the_memory_tables_and_keeps_its_sessions() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sessions.db");
    {
        let mut conn = rusqlite::Connection::open(&path).unwrap();
        migrations::migrate_to(&mut conn, 5).unwrap();
        conn.execute(
            "INSERT INTO sessions (id, workdir, title, created_at, updated_at) \
             VALUES ('s5', '/w', 'kept', 1, 2)",
            [],
        )
        .unwrap();
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    runtime.block_on(async {
        let store = SessionStore::open(&path).unwrap();
        assert_eq!(store.get("s5").await.unwrap().unwrap().title, "kept");
        store
            .memory_write(memory("migrated fine", MemoryScope::Project, "/w"))
            .await
            .unwrap();
        assert_eq!(
            store
                .memory_search("migrated", "/w", 5)
                .await
                .unwrap()
                .len(),
            1
        );
    });
    let version: i64 = rusqlite::Connection::open(&path)
        .unwrap()
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(version, crate::memory::migrations::CURRENT);
}

mod extraction {
    use std::time::Duration;

    use tokio_util::sync::CancellationToken;

    use super::super::extract::{EXTRACTED_IMPORTANCE, ExtractingSummarization, parse_facts};
    use super::super::{Compactor, SUMMARY_MARKER, SessionStore, Summarization};
    use super::*;
    use crate::provider::{ScriptStep, ScriptedProvider};
    use crate::schema::{Message, ProviderError, ProviderErrorKind};

    fn history() -> Vec<Message> {
        let mut messages = vec![Message::system("system prompt")];
        for n in 0..6 {
            messages.push(Message::user(format!(
                "question {n} about the build, at length"
            )));
            messages.push(Message::assistant(format!(
                "answer {n}: run make check first"
            )));
        }
        messages
    }

    fn compactor(store: &SessionStore, home: &std::path::Path) -> ExtractingSummarization {
        ExtractingSummarization {
            inner: Summarization {
                keep_recent_tokens: 10,
            },
            store: store.clone(),
            workdir: "/w".into(),
            home: home.to_path_buf(),
            timeout: Duration::from_millis(300),
        }
    }

    #[tokio::test]
    async fn facts_from_the_folded_part_are_stored_low_and_kept_out_of_the_digest() {
        let home = tempfile::tempdir().unwrap();
        let store = SessionStore::open_in_memory().unwrap();
        let provider = ScriptedProvider::new([
            ScriptStep::Reply(Message::assistant(
                "- Run `make check` before pushing.\n- The CI uses Rust 1.95.\nnot a fact line",
            )),
            ScriptStep::Reply(Message::assistant("the summary")),
        ]);
        let compaction = compactor(&store, home.path())
            .compact(&history(), &provider, &CancellationToken::new())
            .await
            .unwrap();
        let summary = compaction.summary.expect("summarised").content;
        assert!(summary.starts_with(SUMMARY_MARKER) && summary.ends_with("the summary"));
        let calls = provider.calls();
        assert!(
            calls[0].messages[1].content.contains("question 0"),
            "the folded part is read"
        );
        let stored = store.memory_list(Some("/w")).await.unwrap();
        assert_eq!(stored.len(), 2);
        assert!(stored.iter().all(|m| m.importance == EXTRACTED_IMPORTANCE
            && m.category == "extracted"
            && m.scope == MemoryScope::Project));
        assert_eq!(
            digest(&stored),
            None,
            "extracted memories stay out of the prompt"
        );
        assert_eq!(
            store.memory_search("CI rust", "/w", 5).await.unwrap().len(),
            1
        );
        assert!(
            std::fs::read_to_string(home.path().join("memory/MEMORY.md"))
                .unwrap()
                .contains("Run `make check` before pushing.")
        );
    }

    #[tokio::test]
    async fn a_failed_or_slow_extraction_does_not_stop_the_compaction() {
        let home = tempfile::tempdir().unwrap();
        let store = SessionStore::open_in_memory().unwrap();
        for first in [
            ScriptStep::Fail(ProviderError::new(ProviderErrorKind::Server, "500 down")),
            ScriptStep::Hang {
                text: "- half".into(),
            },
            ScriptStep::Reply(Message::assistant("NONE")),
        ] {
            let provider =
                ScriptedProvider::new([first, ScriptStep::Reply(Message::assistant("summary"))]);
            let compaction = compactor(&store, home.path())
                .compact(&history(), &provider, &CancellationToken::new())
                .await
                .unwrap();
            assert!(compaction.summary.is_some());
        }
        assert!(store.memory_list(None).await.unwrap().is_empty());
    }

    #[test]
    fn only_dash_lines_are_facts_and_at_most_five() {
        let answer = "Facts:\n- one\n-two\n - three \n- \n- four\n- five\n- six\n- seven";
        assert_eq!(parse_facts(answer), ["one", "three", "four", "five", "six"]);
    }
}
