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
use crate::schema::ToolKind;
use crate::schema::{Message, ProviderErrorKind, Role};

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
pub(super) fn long_history() -> Vec<Message> {
    (0..40)
        .flat_map(|i| {
            [
                Message::user(format!("old question {i} {}", "padding ".repeat(40))),
                Message::assistant(format!("old answer {i}")),
            ]
        })
        .collect()
}

pub(super) fn notices(events: &[Event]) -> Vec<String> {
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
    // Turn 2's compaction (too small a saving to report) cut the prompt from the model's
    // history before it was stored, carrying it over as the user's turn in front...
    let second = &provider.calls()[1].messages;
    assert!(second.iter().all(|m| m.content != "question"));
    assert!(
        second[1].content.ends_with("\nquestion"),
        "{}",
        second[1].content
    );

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
    assert_eq!(view.len(), 4);
    assert!(
        view[..3] == second[1..],
        "the view is the compacted history"
    );
    assert_eq!(view[3].content, "Done.");
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
async fn a_refused_prompt_larger_than_half_the_window_is_sent_alone() {
    let session = Arc::new(InMemorySession::with_messages("s", long_history()));
    let provider = Arc::new(ScriptedProvider::new([refusal(), text_reply("read it")]));
    let engine = builder(&provider, vec![])
        .session(session.clone())
        .context_window(10_000)
        .build();
    let huge = format!("summarise this log: {}", "line ".repeat(8_000));
    engine
        .run(&huge, CancellationToken::new(), &|_| {})
        .await
        .unwrap();
    let second = &provider.calls()[1].messages;
    assert_eq!(
        second.len(),
        2,
        "the system prompt and the prompt, nothing older"
    );
    assert_eq!(second[1].content, huge);
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

/// A scripted provider whose calls report the usage given, call by call: a server that counts
/// the prompt larger than our estimate does (digit-heavy output).
struct CountingServer {
    script: Arc<ScriptedProvider>,
    usage: std::sync::Mutex<std::collections::VecDeque<u64>>,
}

impl CountingServer {
    fn new(steps: Vec<ScriptStep>, input_tokens: &[u64]) -> Self {
        CountingServer {
            script: Arc::new(ScriptedProvider::new(steps)),
            usage: std::sync::Mutex::new(input_tokens.iter().copied().collect()),
        }
    }

    fn next_usage(&self) -> Option<crate::schema::Usage> {
        let input_tokens = self.usage.lock().unwrap().pop_front()?;
        Some(crate::schema::Usage {
            input_tokens,
            output_tokens: 10,
            ..Default::default()
        })
    }
}

#[async_trait]
impl crate::provider::LlmProvider for CountingServer {
    fn name(&self) -> &str {
        "counting"
    }
    fn model(&self) -> &str {
        "script"
    }
    async fn generate(
        &self,
        messages: &[Message],
        tools: &[crate::schema::ToolDefinition],
        cancel: &CancellationToken,
        on_retry: &(dyn Fn(crate::schema::RetryNotice) + Send + Sync),
    ) -> Result<crate::provider::Completion, crate::schema::ProviderError> {
        self.script
            .generate(messages, tools, cancel, on_retry)
            .await
    }
    fn generate_stream(
        &self,
        messages: &[Message],
        tools: &[crate::schema::ToolDefinition],
        cancel: CancellationToken,
    ) -> crate::provider::ChunkReceiver {
        let mut inner = self.script.generate_stream(messages, tools, cancel);
        let reported = self.next_usage();
        let (tx, rx) = tokio::sync::mpsc::channel(64);
        tokio::spawn(async move {
            while let Some(chunk) = inner.recv().await {
                let chunk = match chunk {
                    crate::schema::StreamChunk::Done { message, usage } => {
                        crate::schema::StreamChunk::Done {
                            message,
                            usage: reported.or(usage),
                        }
                    }
                    other => other,
                };
                if tx.send(chunk).await.is_err() {
                    return;
                }
            }
        });
        rx
    }
}

#[tokio::test]
async fn the_server_count_past_80_percent_compacts_at_the_next_turn() {
    let small = tool("small_output", ToolKind::ReadOnly, |_, _| async {
        Ok("1\n2\n3".into())
    });
    // Turn 1 is counted at 170,000 of a 200,000 window by the server; our estimate of the
    // same prompt is a few hundred tokens.
    let server = Arc::new(CountingServer::new(
        vec![
            calls_reply("Counting.", vec![call("c1", "small_output", "{}")]),
            text_reply("Done."),
        ],
        &[170_000, 40_000],
    ));
    let session = Arc::new(InMemorySession::with_messages("s", long_history()));
    let provider: Arc<dyn crate::provider::LlmProvider> = server.clone();
    let engine = Arc::new(
        AgentEngine::builder(provider, super::tests::registry(vec![small]), "/w")
            .session(session.clone())
            .context_window(200_000)
            .compactor(Arc::new(SlidingWindow { max_messages: 4 }))
            .build(),
    );
    let events = drain(engine.run_stream("count".into(), CancellationToken::new())).await;
    assert_eq!(events.last().unwrap().kind.type_name(), "done");
    let compaction = compactions(&events);
    assert_eq!(compaction.len(), 1, "{compaction:?}");
    assert!(compaction[0].before_tokens >= 170_000, "{compaction:?}");
    let compacted_at = events
        .iter()
        .find(|e| e.kind.type_name() == "compaction")
        .unwrap()
        .turn;
    assert_eq!(compacted_at, 2, "at the turn right after the count");
    // System, the user's turn carried over (the window opens with an answer), the window.
    let sent = &server.script.calls()[1].messages;
    assert_eq!(sent.len(), 1 + 1 + 4);
    assert!(
        sent[1].content.contains("old question 39"),
        "{}",
        sent[1].content
    );
}

#[tokio::test]
async fn the_server_count_carries_over_to_the_next_run_of_the_session() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sessions.db");
    let id = {
        let store = SessionStore::open(&path).unwrap();
        let record = store
            .create(NewSession {
                workdir: "/w".into(),
                provider: "counting".into(),
                model: "script".into(),
                mode: "default".into(),
            })
            .await
            .unwrap();
        store.append(&record.id, &long_history()).await.unwrap();
        // First run (`exec --session ID`): one answer, counted at 170,000 tokens by the server.
        let server = Arc::new(CountingServer::new(vec![text_reply("One.")], &[170_000]));
        let engine = AgentEngine::builder(server, super::tests::registry(vec![]), "/w")
            .session(Arc::new(SqliteSession::new(
                store.clone(),
                record.id.clone(),
            )))
            .context_window(200_000)
            .compactor(Arc::new(SlidingWindow { max_messages: 4 }))
            .build();
        let events = {
            let engine = Arc::new(engine);
            drain(engine.run_stream("first".into(), CancellationToken::new())).await
        };
        assert!(compactions(&events).is_empty(), "below 80% when it started");
        store.flush().await.unwrap();
        record.id
    };
    // The next process continues the session: its first turn starts from the server's count
    // (plus the new prompt), past 80% of the window, and compacts before calling the model.
    let store = SessionStore::open(&path).unwrap();
    let server = Arc::new(CountingServer::new(vec![text_reply("Two.")], &[2_000]));
    let provider: Arc<dyn crate::provider::LlmProvider> = server.clone();
    let engine = Arc::new(
        AgentEngine::builder(provider, super::tests::registry(vec![]), "/w")
            .session(Arc::new(SqliteSession::new(store.clone(), id.clone())))
            .context_window(200_000)
            .compactor(Arc::new(SlidingWindow { max_messages: 4 }))
            .build(),
    );
    let events = drain(engine.run_stream("second".into(), CancellationToken::new())).await;
    let compaction = compactions(&events);
    assert_eq!(compaction.len(), 1, "{compaction:?}");
    assert!(compaction[0].before_tokens >= 170_000, "{compaction:?}");
    let sent = &server.script.calls()[0].messages;
    assert_eq!(
        sent.len(),
        1 + 1 + 4,
        "system, the user's turn carried over, the window"
    );
    assert_eq!(sent[1].role, Role::User);
    assert_eq!(sent.last().unwrap().content, "second");
    // A compaction makes the old count meaningless; the new answer's count replaces it.
    assert_eq!(
        store.prompt_count(&id).await.unwrap(),
        Some(crate::memory::PromptCount {
            tokens: 2_010,
            messages: 6
        })
    );
}

#[tokio::test]
async fn a_run_that_could_not_save_hands_its_turn_to_the_next_run_across_a_compaction() {
    let session = Arc::new(FailingSaves {
        inner: stored_session().await,
        // Every save of the first run fails: its prompt, its compaction, its answer.
        failing: AtomicUsize::new(9),
    });
    session
        .inner
        .append_messages(&long_history())
        .await
        .unwrap();
    let provider = Arc::new(ScriptedProvider::new([
        text_reply("first answer"),
        text_reply("second answer"),
    ]));
    let engine = Arc::new(
        builder(&provider, vec![])
            .session(session.clone())
            .context_window(4_000)
            .compactor(Arc::new(SlidingWindow { max_messages: 4 }))
            .build(),
    );
    let first = drain(engine.run_stream("first question".into(), CancellationToken::new())).await;
    assert_eq!(first.last().unwrap().kind.type_name(), "done");
    assert_eq!(compactions(&first).len(), 1);
    assert!(
        notices(&first)
            .iter()
            .any(|n| n.contains("2 message(s) of this session are not in sessions.db yet")),
        "{:?}",
        notices(&first)
    );
    assert_eq!(session.load_transcript().await.unwrap().len(), 80);

    // The next prompt (a run of its own, as in the TUI) saves them first, in order.
    drain(engine.run_stream("second question".into(), CancellationToken::new())).await;
    let transcript = session.load_transcript().await.unwrap();
    let tail: Vec<&str> = transcript[80..]
        .iter()
        .map(|m| m.content.as_str())
        .collect();
    assert_eq!(
        tail,
        [
            "first question",
            "first answer",
            "second question",
            "second answer"
        ]
    );
    // The second run saw the first one's turn, compacted as it was.
    let sent = &provider.calls()[1].messages;
    assert_eq!(
        sent.iter().map(|m| m.content.as_str()).collect::<Vec<_>>()[sent.len() - 3..],
        ["first question", "first answer", "second question"]
    );
    // What a resumed session shows is what the model saw, plus the answer.
    let view = session.load_messages().await.unwrap();
    assert!(view[..] == [&sent[1..], &[Message::assistant("second answer")]].concat()[..]);
}
