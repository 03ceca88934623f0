//! Ending a run early and asking before acting: timeouts, panics, the turn limit,
//! cancellation during the stream, a tool or an approval, approvals answered every way, a
//! turn restarted after a cut stream.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;

use super::tests::{
    builder, call, calls_reply, drain, fake_bash, text_reply, tool, types, until, weather,
};
use super::*;
use crate::memory::InMemorySession;
use crate::provider::{ScriptStep, ScriptedProvider};
use crate::schema::ToolKind;
use crate::schema::{ProviderError, ProviderErrorKind};
use crate::tools::ToolError;

#[tokio::test]
async fn a_tool_that_times_out_or_panics_gives_an_error_result() {
    let slow = tool("slow", ToolKind::ReadOnly, |_, _| async {
        tokio::time::sleep(Duration::from_secs(30)).await;
        Ok("never".into())
    });
    let broken = tool("broken", ToolKind::ReadOnly, |_, _| async {
        panic!("tool bug")
    });
    let provider = Arc::new(ScriptedProvider::new([
        calls_reply(
            "",
            vec![
                call("t", "slow", "{}"),
                call("p", "broken", "{}"),
                call("w", "get_weather", r#"{"city":"Rome"}"#),
            ],
        ),
        text_reply("ok"),
    ]));
    let engine = Arc::new(
        builder(&provider, vec![slow, broken, weather()])
            .tool_timeout(Some(Duration::from_millis(100)))
            .build(),
    );
    let events = drain(engine.run_stream("go".into(), CancellationToken::new())).await;
    assert_eq!(events.last().unwrap().kind.type_name(), "done");
    let results: Vec<_> = provider.calls()[1]
        .messages
        .iter()
        .filter(|m| m.is_tool_result())
        .cloned()
        .collect();
    assert!(
        results[0].is_error && results[0].content.contains("timed out after 0s"),
        "{:?}",
        results[0]
    );
    assert!(results[1].is_error && results[1].content.contains("crashed"));
    assert!(!results[2].is_error);
}

#[tokio::test]
async fn max_turns_ends_the_run_with_an_error_that_says_so() {
    let provider = Arc::new(ScriptedProvider::new([]).repeating(calls_reply(
        "again",
        vec![call("x", "get_weather", r#"{"city":"A"}"#)],
    )));
    let engine = builder(&provider, vec![weather()]).max_turns(3).build();
    let error = engine
        .run("loop", CancellationToken::new(), &|_| {})
        .await
        .unwrap_err();
    assert!(matches!(error, EngineError::MaxTurns(3)));
    assert!(error.to_string().contains("maximum of 3 turns"));
    assert_eq!(provider.calls().len(), 3);
}

#[tokio::test]
async fn cancelling_during_the_stream_stops_within_200ms_and_keeps_the_partial_text() {
    let provider = Arc::new(ScriptedProvider::new([ScriptStep::Hang {
        text: "Working on".into(),
    }]));
    let session = Arc::new(InMemorySession::new("s"));
    let engine = Arc::new(builder(&provider, vec![]).session(session.clone()).build());
    let cancel = CancellationToken::new();
    let mut rx = engine.run_stream("go".into(), cancel.clone());
    let mut seen = Vec::new();
    until(&mut rx, "action_delta", &mut seen).await;
    let at = Instant::now();
    cancel.cancel();
    let last = until(&mut rx, "error", &mut seen).await;
    assert!(at.elapsed() < Duration::from_millis(200));
    assert!(
        matches!(last.kind, EventKind::Error(ref e) if e.message == "interrupted" && e.kind == crate::engine::FailureKind::Interrupted)
    );
    let stored = session.messages();
    assert_eq!(stored.last().unwrap().content, "Working on");
}

#[tokio::test]
async fn cancelling_during_a_tool_gives_every_call_a_result() {
    let waits = tool("wait", ToolKind::ReadOnly, |_, ctx| async move {
        ctx.cancel.cancelled().await;
        Err(ToolError::new("stopped"))
    });
    let stuck = tool("stuck", ToolKind::ReadOnly, |_, _| async {
        tokio::time::sleep(Duration::from_secs(60)).await;
        Ok(String::new())
    });
    let provider = Arc::new(ScriptedProvider::new([calls_reply(
        "",
        vec![call("w", "wait", "{}"), call("s", "stuck", "{}")],
    )]));
    let session = Arc::new(InMemorySession::new("s"));
    let engine = Arc::new(
        builder(&provider, vec![waits, stuck])
            .session(session.clone())
            .build(),
    );
    let cancel = CancellationToken::new();
    let mut rx = engine.run_stream("go".into(), cancel.clone());
    let mut seen = Vec::new();
    until(&mut rx, "tool_start", &mut seen).await;
    until(&mut rx, "tool_start", &mut seen).await;
    let at = Instant::now();
    cancel.cancel();
    until(&mut rx, "error", &mut seen).await;
    assert!(at.elapsed() < Duration::from_millis(200));
    let stored = session.messages();
    let results: Vec<_> = stored.iter().filter(|m| m.is_tool_result()).collect();
    assert_eq!(results.len(), 2, "the history stays valid: {stored:?}");
    assert!(
        results
            .iter()
            .all(|r| r.is_error && r.content.contains("cancelled"))
    );
}

#[tokio::test]
async fn cancelling_during_an_approval_is_an_interruption_not_a_denial() {
    let provider = Arc::new(ScriptedProvider::new([calls_reply(
        "",
        vec![call("b", "bash", r#"{"command":"rm -rf build"}"#)],
    )]));
    let engine = Arc::new(builder(&provider, vec![fake_bash()]).build());
    let cancel = CancellationToken::new();
    let mut rx = engine.run_stream("clean".into(), cancel.clone());
    let mut seen = Vec::new();
    until(&mut rx, "approval_required", &mut seen).await;
    cancel.cancel();
    let result = until(&mut rx, "tool_result", &mut seen).await;
    let EventKind::ToolResult(outcome) = result.kind else {
        unreachable!()
    };
    // Issue 32 point 13: recorded, and told to the model, as an interruption.
    assert!(outcome.result.is_error, "{:?}", outcome.result);
    assert!(
        outcome.result.output.contains("interrupted the run")
            && !outcome.result.output.contains("denied this"),
        "{}",
        outcome.result.output
    );
    until(&mut rx, "error", &mut seen).await;
}

#[tokio::test]
async fn approve_once_always_and_deny() {
    let provider = Arc::new(ScriptedProvider::new([
        calls_reply("", vec![call("1", "bash", r#"{"command":"cargo test"}"#)]),
        calls_reply(
            "",
            vec![call("2", "bash", r#"{"command":"cargo test --release"}"#)],
        ),
        calls_reply(
            "",
            vec![call("3", "bash", r#"{"command":"cargo test -p x"}"#)],
        ),
        calls_reply("", vec![call("4", "bash", r#"{"command":"rm -rf /"}"#)]),
        text_reply("ok"),
    ]));
    let engine = Arc::new(builder(&provider, vec![fake_bash()]).build());
    let mut rx = engine.run_stream("test".into(), CancellationToken::new());
    let mut seen = Vec::new();

    let EventKind::ApprovalRequired(first) =
        until(&mut rx, "approval_required", &mut seen).await.kind
    else {
        unreachable!()
    };
    assert_eq!(first.tool_call.id, "1");
    assert!(first.reason.contains("runs a command"));
    assert!(first.respond(ApprovalDecision::AllowOnce));
    assert!(
        !first.respond(ApprovalDecision::AllowOnce),
        "answered once only"
    );

    let EventKind::ApprovalRequired(second) =
        until(&mut rx, "approval_required", &mut seen).await.kind
    else {
        unreachable!()
    };
    assert_eq!(second.tool_call.id, "2", "allow once does not carry over");
    assert!(second.always_offered, "a command's prefix is remembered");
    assert_eq!(
        second.always_scope,
        "`bash` commands starting with `cargo test`"
    );
    second.respond(ApprovalDecision::AllowAlways);

    // Call 3 shares the scope and runs without asking; call 4 asks.
    let EventKind::ApprovalRequired(fourth) =
        until(&mut rx, "approval_required", &mut seen).await.kind
    else {
        unreachable!()
    };
    assert_eq!(fourth.tool_call.id, "4");
    fourth.respond(ApprovalDecision::Deny {
        reason: Some("never delete the root".into()),
    });
    let rest = drain(rx).await;
    assert_eq!(rest.last().unwrap().kind.type_name(), "done");

    let last_call = provider.calls().pop().unwrap().messages;
    let results: Vec<_> = last_call.iter().filter(|m| m.is_tool_result()).collect();
    assert_eq!(results[0].content, "ran: cargo test");
    assert_eq!(results[1].content, "ran: cargo test --release");
    assert_eq!(results[2].content, "ran: cargo test -p x");
    assert!(results[3].is_error);
    assert!(
        results[3].content.contains("denied")
            && results[3].content.contains("never delete the root")
    );
}

/// Issue 32 point 11: leaving the sandbox offers no grant for the session (one would allow this
/// call only): the approval says so, and the same call asks again.
#[tokio::test]
async fn leaving_the_sandbox_offers_no_session_grant_and_asks_again() {
    let leave = |id: &str| {
        calls_reply(
            "",
            vec![call(id, "bash", r#"{"command":"make","sandbox":false}"#)],
        )
    };
    let provider = Arc::new(ScriptedProvider::new([
        leave("1"),
        leave("2"),
        text_reply("ok"),
    ]));
    let engine = Arc::new(builder(&provider, vec![fake_bash()]).build());
    let mut rx = engine.run_stream("test".into(), CancellationToken::new());
    let mut seen = Vec::new();
    for id in ["1", "2"] {
        let EventKind::ApprovalRequired(request) =
            until(&mut rx, "approval_required", &mut seen).await.kind
        else {
            unreachable!()
        };
        assert_eq!(request.tool_call.id, id, "asked every time");
        assert!(!request.always_offered, "{}", request.always_scope);
        request.respond(ApprovalDecision::AllowAlways);
    }
    let rest = drain(rx).await;
    assert_eq!(rest.last().unwrap().kind.type_name(), "done");
}

/// Issue 32 point 6: "allow for the rest of this session" survives the session being set again
/// (what `/rewind` does), and is forgotten for another session.
#[tokio::test]
async fn session_grants_survive_setting_the_same_session_again() {
    let make = || calls_reply("", vec![call("1", "bash", r#"{"command":"make"}"#)]);
    let provider = Arc::new(ScriptedProvider::new([
        make(),
        text_reply("ok"),
        make(),
        text_reply("ok"),
        make(),
    ]));
    let session = Arc::new(InMemorySession::new("s"));
    let engine = Arc::new(
        builder(&provider, vec![fake_bash()])
            .session(session.clone())
            .build(),
    );
    let mut rx = engine.run_stream("build".into(), CancellationToken::new());
    let mut seen = Vec::new();
    let EventKind::ApprovalRequired(asked) =
        until(&mut rx, "approval_required", &mut seen).await.kind
    else {
        unreachable!()
    };
    asked.respond(ApprovalDecision::AllowAlways);
    drain(rx).await;

    engine.set_session(Some(session.clone()));
    let events = drain(engine.run_stream("again".into(), CancellationToken::new())).await;
    assert!(
        !types(&events).contains(&"approval_required"),
        "{:?}",
        types(&events)
    );
    assert_eq!(events.last().unwrap().kind.type_name(), "done");

    engine.set_session(Some(Arc::new(InMemorySession::new("t"))));
    let mut rx = engine.run_stream("elsewhere".into(), CancellationToken::new());
    until(&mut rx, "approval_required", &mut seen).await;
}

#[tokio::test]
async fn headless_runs_refuse_approvals_and_name_the_flag() {
    let provider = Arc::new(ScriptedProvider::new([
        calls_reply("", vec![call("1", "bash", r#"{"command":"make"}"#)]),
        text_reply("ok"),
    ]));
    let engine = builder(&provider, vec![fake_bash()]).build();
    engine
        .run("build", CancellationToken::new(), &|_| {})
        .await
        .unwrap();
    let result = provider.calls()[1].messages.last().cloned().unwrap();
    assert!(
        result.is_error && result.content.contains("--mode yolo"),
        "{}",
        result.content
    );

    let provider = Arc::new(ScriptedProvider::new([
        calls_reply("", vec![call("1", "bash", r#"{"command":"make"}"#)]),
        text_reply("ok"),
    ]));
    let engine = builder(&provider, vec![fake_bash()])
        .mode(Mode::Yolo)
        .build();
    engine
        .run("build", CancellationToken::new(), &|_| {})
        .await
        .unwrap();
    assert_eq!(
        provider.calls()[1].messages.last().unwrap().content,
        "ran: make"
    );
}

#[tokio::test]
async fn a_stream_cut_mid_answer_restarts_the_turn() {
    let mut cut = ProviderError::new(
        ProviderErrorKind::StreamCut,
        "stream cut mid-answer: connection reset",
    );
    cut.retryable = true;
    let provider = Arc::new(ScriptedProvider::new([
        ScriptStep::FailAfter {
            text: "Half an ans".into(),
            error: cut,
        },
        text_reply("A whole answer."),
    ]));
    let session = Arc::new(InMemorySession::new("s"));
    let engine = Arc::new(builder(&provider, vec![]).session(session.clone()).build());
    let events = drain(engine.run_stream("q".into(), CancellationToken::new())).await;
    let retry = events
        .iter()
        .find_map(|e| match &e.kind {
            EventKind::Retry(r) => Some(r.clone()),
            _ => None,
        })
        .expect("a retry event");
    assert_eq!((retry.attempt, retry.max_attempts), (2, 4));
    assert!(retry.reason.contains("connection reset"));
    assert_eq!(events.last().unwrap().kind.type_name(), "done");
    let stored = session.messages();
    assert_eq!(stored.len(), 2);
    assert_eq!(
        stored[1].content, "A whole answer.",
        "the partial text is not in the history"
    );
}

#[tokio::test]
async fn a_provider_failure_ends_the_run_with_its_message() {
    let provider = Arc::new(ScriptedProvider::new([ScriptStep::Fail(
        ProviderError::new(
            ProviderErrorKind::Auth,
            "OpenAI API error 401 (invalid_api_key): Incorrect API key provided",
        ),
    )]));
    let engine = Arc::new(builder(&provider, vec![]).build());
    let events = drain(engine.run_stream("q".into(), CancellationToken::new())).await;
    let EventKind::Error(message) = &events.last().unwrap().kind else {
        panic!()
    };
    assert!(message.message.contains("Incorrect API key"));
    assert_eq!(message.kind, crate::engine::FailureKind::Auth);
}

/// A session whose first `failures` appends fail, as a database busy past its timeout would.
struct FlakySession {
    inner: InMemorySession,
    failures: std::sync::atomic::AtomicUsize,
}

#[async_trait::async_trait]
impl crate::memory::Session for FlakySession {
    fn id(&self) -> &str {
        self.inner.id()
    }
    async fn load_messages(
        &self,
    ) -> Result<Vec<crate::schema::Message>, crate::memory::MemoryError> {
        self.inner.load_messages().await
    }
    async fn append_messages(
        &self,
        messages: &[crate::schema::Message],
    ) -> Result<(), crate::memory::MemoryError> {
        let left = self.failures.load(std::sync::atomic::Ordering::SeqCst);
        if left > 0 {
            self.failures
                .store(left - 1, std::sync::atomic::Ordering::SeqCst);
            return Err(crate::memory::MemoryError::Store(
                "database is locked".into(),
            ));
        }
        self.inner.append_messages(messages).await
    }
    async fn record_compaction(
        &self,
        dropped: usize,
        summary: Option<crate::schema::Message>,
    ) -> Result<(), crate::memory::MemoryError> {
        self.inner.record_compaction(dropped, summary).await
    }
}

#[tokio::test]
async fn a_turn_that_cannot_be_saved_is_announced_and_saved_with_the_next() {
    let session = Arc::new(FlakySession {
        inner: InMemorySession::new("s"),
        failures: std::sync::atomic::AtomicUsize::new(3),
    });
    let provider = Arc::new(ScriptedProvider::new([text_reply("answer")]));
    let engine = Arc::new(builder(&provider, vec![]).session(session.clone()).build());
    let events = drain(engine.run_stream("question".into(), CancellationToken::new())).await;
    let notice = events
        .iter()
        .find_map(|e| match &e.kind {
            EventKind::Notice(n) => Some(n.clone()),
            _ => None,
        })
        .expect("the user is told");
    assert!(
        notice.contains("could not be saved") && notice.contains("database is locked"),
        "{notice}"
    );
    let stored = session.inner.messages();
    assert_eq!(
        stored.len(),
        2,
        "the prompt was saved with the answer: {stored:?}"
    );
    assert_eq!(stored[0].content, "question");
}
