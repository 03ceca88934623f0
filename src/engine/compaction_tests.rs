//! Compaction through the real loop: a failed summary falls back to the token budget, a
//! compaction never loses turns that could not be saved yet, a "prompt too long" refusal
//! compacts harder and retries once, and the trigger follows the server's token counts.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use async_trait::async_trait;
use tokio_util::sync::CancellationToken;

use super::tests::{builder, call, calls_reply, drain, text_reply, tool};
use super::*;
use crate::context::estimate_tokens;
use crate::memory::{
    InMemorySession, MemoryError, NewSession, Session, SessionStore, SlidingWindow, SqliteSession,
    Summarization,
};
use crate::provider::{ScriptStep, ScriptedProvider};
use crate::schema::{Message, ProviderErrorKind, Role};
use crate::tools::ToolKind;

/// A stored session whose appends fail while `failing` says so (a full disk, a locked file).
struct FailingSaves {
    inner: SqliteSession,
    /// Append attempts still to fail.
    failing: AtomicUsize,
}

#[async_trait]
impl Session for FailingSaves {
    fn id(&self) -> &str {
        self.inner.id()
    }
    async fn load_messages(&self) -> Result<Vec<Message>, MemoryError> {
        self.inner.load_messages().await
    }
    async fn load_transcript(&self) -> Result<Vec<Message>, MemoryError> {
        self.inner.load_transcript().await
    }
    async fn append_messages(&self, messages: &[Message]) -> Result<(), MemoryError> {
        if self
            .failing
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
            .is_ok()
        {
            return Err(MemoryError::Store("database or disk is full".into()));
        }
        self.inner.append_messages(messages).await
    }
    async fn record_compaction(
        &self,
        dropped: usize,
        summary: Option<Message>,
    ) -> Result<(), MemoryError> {
        self.inner.record_compaction(dropped, summary).await
    }
}

async fn stored_session() -> SqliteSession {
    let store = SessionStore::open_in_memory().unwrap();
    let record = store
        .create(NewSession {
            workdir: "/w".into(),
            provider: "scripted".into(),
            model: "script".into(),
            mode: "default".into(),
        })
        .await
        .unwrap();
    SqliteSession::new(store, record.id)
}

/// 80 stored messages of about 50 tokens each.
fn long_history() -> Vec<Message> {
    (0..40)
        .flat_map(|i| {
            [
                Message::user(format!("old question {i} {}", "padding ".repeat(40))),
                Message::assistant(format!("old answer {i}")),
            ]
        })
        .collect()
}

fn notices(events: &[Event]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::Notice(n) => Some(n.clone()),
            _ => None,
        })
        .collect()
}

fn compactions(events: &[Event]) -> Vec<CompactionInfo> {
    events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::Compaction(c) => Some(*c),
            _ => None,
        })
        .collect()
}

fn refusal() -> ScriptStep {
    ScriptStep::Fail(
        crate::schema::ProviderError::new(
            ProviderErrorKind::ContextTooLong,
            "prompt is too long: 210000 tokens > 200000 maximum",
        )
        .with_status(400),
    )
}

#[tokio::test]
async fn a_failed_summary_falls_back_to_the_token_budget_and_says_so() {
    let session = Arc::new(InMemorySession::with_messages("s", long_history()));
    // The first call is the summary request: the server fails it.
    let provider = Arc::new(ScriptedProvider::new([
        ScriptStep::Fail(crate::schema::ProviderError::new(
            ProviderErrorKind::Server,
            "500 internal error",
        )),
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
    let events = drain(engine.run_stream("new question".into(), CancellationToken::new())).await;
    assert_eq!(events.last().unwrap().kind.type_name(), "done");

    let notice = notices(&events).join("\n");
    assert!(
        notice.contains("summarization could not compact") && notice.contains("500 internal"),
        "{notice}"
    );
    let compaction = compactions(&events);
    assert_eq!(compaction.len(), 1, "{compaction:?}");
    assert_eq!(compaction[0].strategy, "token_budget");
    // The request that went to the model fits in half the window, and ends with the prompt.
    let sent = &provider.calls()[1].messages;
    assert!(
        estimate_tokens(sent, &[]) <= window / 2,
        "{} tokens sent",
        estimate_tokens(sent, &[])
    );
    assert_eq!(sent.last().unwrap().content, "new question");
    // Stored: everything; the next run starts from the checkpoint.
    assert_eq!(session.messages().len(), 80 + 2);
    assert_eq!(
        session.load_messages().await.unwrap(),
        sent[1..]
            .iter()
            .cloned()
            .chain([Message::assistant("fresh answer")])
            .collect::<Vec<_>>()
    );
}

#[tokio::test]
async fn turns_that_could_not_be_saved_survive_a_compaction_and_are_saved_later() {
    let big = tool("big_output", ToolKind::ReadOnly, |_, _| async {
        Ok("word ".repeat(2_000))
    });
    let provider = Arc::new(ScriptedProvider::new([
        calls_reply("Looking.", vec![call("c1", "big_output", "{}")]),
        text_reply("Done."),
    ]));
    // The saves of the prompt and of turn 1 fail (three attempts each); later ones succeed.
    let session = Arc::new(FailingSaves {
        inner: stored_session().await,
        failing: AtomicUsize::new(6),
    });
    let engine = Arc::new(
        builder(&provider, vec![big])
            .session(session.clone())
            .context_window(2_000)
            .compactor(Arc::new(SlidingWindow { max_messages: 2 }))
            .build(),
    );
    let events = drain(engine.run_stream("question".into(), CancellationToken::new())).await;
    assert_eq!(events.last().unwrap().kind.type_name(), "done");
    assert_eq!(
        notices(&events)
            .iter()
            .filter(|n| n.contains("could not be saved"))
            .count(),
        2
    );
    // Turn 2's compaction (too small a saving to report) hid the prompt from the model before it was stored...
    let second = &provider.calls()[1].messages;
    assert!(second.iter().all(|m| m.content != "question"));

    // ...yet every message of the run is stored, in order.
    let transcript = session.load_transcript().await.unwrap();
    let contents: Vec<(Role, &str)> = transcript
        .iter()
        .map(|m| (m.role, &m.content[..m.content.len().min(10)]))
        .collect();
    assert_eq!(
        contents,
        [
            (Role::User, "question"),
            (Role::Assistant, "Looking."),
            (Role::User, "word word "),
            (Role::Assistant, "Done."),
        ]
    );
    assert_eq!(transcript[2].tool_call_id.as_deref(), Some("c1"));
    // And what a resumed session shows the model is what this one saw last.
    let view = session.load_messages().await.unwrap();
    assert_eq!(view.len(), 3);
    assert!(
        view[..2] == second[1..],
        "the view is the compacted history"
    );
    assert_eq!(view[2].content, "Done.");
}

#[tokio::test]
async fn a_prompt_too_long_refusal_compacts_to_half_and_retries_once() {
    let session = Arc::new(InMemorySession::with_messages("s", long_history()));
    let provider = Arc::new(ScriptedProvider::new([refusal(), text_reply("fits now")]));
    // A window our estimate is far below: only the server knows the prompt does not fit.
    let engine = Arc::new(
        builder(&provider, vec![])
            .session(session.clone())
            .context_window(100_000)
            .build(),
    );
    let events = drain(engine.run_stream("new question".into(), CancellationToken::new())).await;
    assert_eq!(
        events.last().unwrap().kind.type_name(),
        "done",
        "{:?}",
        events.last()
    );
    let calls = provider.calls();
    assert_eq!(calls.len(), 2, "sent once more after compacting");
    let (first, second) = (
        estimate_tokens(&calls[0].messages, &[]),
        estimate_tokens(&calls[1].messages, &[]),
    );
    assert!(second <= first / 2, "{first} → {second}");
    assert_eq!(calls[1].messages.last().unwrap().content, "new question");
    assert!(
        notices(&events)
            .iter()
            .any(|n| n.contains("refused the prompt as too long")),
        "{:?}",
        notices(&events)
    );
    assert_eq!(compactions(&events)[0].strategy, "token_budget");
    assert_eq!(session.messages().len(), 80 + 2, "nothing stored is lost");
}

#[tokio::test]
async fn a_second_refusal_ends_the_run_with_a_clear_error() {
    let session = Arc::new(InMemorySession::with_messages("s", long_history()));
    let provider = Arc::new(ScriptedProvider::new([refusal(), refusal(), refusal()]));
    let engine = builder(&provider, vec![])
        .session(session.clone())
        .context_window(100_000)
        .compactor(Arc::new(SlidingWindow { max_messages: 100 }))
        .build();
    let error = engine
        .run("new question", CancellationToken::new(), &|_| {})
        .await
        .unwrap_err();
    assert!(
        matches!(error, EngineError::ContextTooLong { .. }),
        "{error}"
    );
    let text = error.to_string();
    assert!(
        text.contains("even after compacting") && text.contains("prompt is too long"),
        "{text}"
    );
    assert_eq!(provider.calls().len(), 2, "retried exactly once");
}
