//! The summary of a compaction keeps the todo list's open items, and its model call has a
//! deadline of its own, past which the token budget is used (issue 33 point 5).

use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use super::compaction_tests::{long_history, notices};
use super::tests::{builder, drain, text_reply};
use crate::memory::{InMemorySession, SUMMARY_MARKER, Summarization};
use crate::planning::{TodoItem, TodoStatus, TodoStore};
use crate::provider::{ScriptStep, ScriptedProvider};

fn item(content: &str, status: TodoStatus) -> TodoItem {
    TodoItem {
        content: content.into(),
        status,
    }
}

#[tokio::test]
async fn a_summary_keeps_the_open_todos_whatever_the_model_wrote() {
    let session = Arc::new(InMemorySession::with_messages("s", long_history()));
    let provider = Arc::new(ScriptedProvider::new([
        text_reply("The user asked forty questions."),
        text_reply("fresh answer"),
    ]));
    let todos = Arc::new(TodoStore::new(vec![
        item("read the parser", TodoStatus::Completed),
        item("fix split", TodoStatus::InProgress),
        item("add a test", TodoStatus::Pending),
    ]));
    let window = 4_000;
    let engine = Arc::new(
        builder(&provider, vec![])
            .session(session.clone())
            .context_window(window)
            .todo_store(todos)
            .compactor(Arc::new(Summarization::for_window(window)))
            .build(),
    );
    let events = drain(engine.run_stream("go on".into(), CancellationToken::new())).await;
    assert_eq!(events.last().unwrap().kind.type_name(), "done");
    let sent = &provider.calls()[1].messages;
    let summary = sent
        .iter()
        .find(|m| m.content.starts_with(SUMMARY_MARKER))
        .expect("the request starts from a summary");
    assert!(
        summary.content.contains("The user asked forty questions.")
            && summary.content.contains(
                "Active tasks (the todo list's open items):\n- [in_progress] fix split\n\
                 - [pending] add a test"
            )
            && !summary.content.contains("read the parser"),
        "{}",
        summary.content
    );
}

#[tokio::test(start_paused = true)]
async fn a_summary_that_never_comes_falls_back_to_the_token_budget_after_its_deadline() {
    let session = Arc::new(InMemorySession::with_messages("s", long_history()));
    let provider = Arc::new(ScriptedProvider::new([
        ScriptStep::Hang {
            text: String::new(),
        },
        text_reply("fresh answer"),
    ]));
    let window = 4_000;
    let engine = Arc::new(
        builder(&provider, vec![])
            .session(session.clone())
            .context_window(window)
            .compactor(Arc::new(Summarization::for_window(window)))
            .build(),
    );
    let started = tokio::time::Instant::now();
    // On the paused clock `drain`'s own 20 s would pass first: collect with a longer bound.
    let mut rx = engine.run_stream("go on".into(), CancellationToken::new());
    let mut events = Vec::new();
    tokio::time::timeout(std::time::Duration::from_secs(600), async {
        while let Some(event) = rx.recv().await {
            events.push(event);
        }
    })
    .await
    .expect("the run ends");
    assert_eq!(events.last().unwrap().kind.type_name(), "done");
    let waited = started.elapsed();
    assert!(
        waited >= super::compaction::SUMMARY_TIMEOUT
            && waited < 2 * super::compaction::SUMMARY_TIMEOUT,
        "{waited:?}"
    );
    let notice = notices(&events).join("\n");
    assert!(notice.contains("no summary within 60 s"), "{notice}");
    let sent = &provider.calls()[1].messages;
    assert_eq!(sent.last().unwrap().content, "go on");
}
