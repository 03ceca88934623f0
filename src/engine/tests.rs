//! The loop through its real code with a scripted provider and small test tools.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::*;
use crate::memory::InMemorySession;
use crate::provider::{ScriptStep, ScriptedProvider};
use crate::schema::{Message, ProviderError, ProviderErrorKind, Role, ToolCall};
use crate::tools::{Tool, ToolContext, ToolError, ToolKind};

type ToolFn = Arc<
    dyn Fn(
            Value,
            ToolContext,
        ) -> futures_util::future::BoxFuture<'static, Result<String, ToolError>>
        + Send
        + Sync,
>;

/// A tool whose behaviour is a closure.
struct TestTool {
    name: &'static str,
    kind: ToolKind,
    run: ToolFn,
}

#[async_trait]
impl Tool for TestTool {
    fn name(&self) -> &'static str {
        self.name
    }
    fn description(&self) -> &'static str {
        "a test tool"
    }
    fn input_schema(&self) -> Value {
        json!({"type": "object"})
    }
    fn kind(&self) -> ToolKind {
        self.kind
    }
    fn written_paths(&self, arguments: &Value) -> Vec<String> {
        arguments
            .get("path")
            .and_then(Value::as_str)
            .map(str::to_owned)
            .into_iter()
            .collect()
    }
    async fn execute(&self, arguments: Value, ctx: &ToolContext) -> Result<String, ToolError> {
        (self.run)(arguments, ctx.clone()).await
    }
}

pub(super) fn tool<F, Fut>(name: &'static str, kind: ToolKind, f: F) -> Arc<dyn Tool>
where
    F: Fn(Value, ToolContext) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = Result<String, ToolError>> + Send + 'static,
{
    Arc::new(TestTool {
        name,
        kind,
        run: Arc::new(move |args, ctx| Box::pin(f(args, ctx))),
    })
}

pub(super) fn weather() -> Arc<dyn Tool> {
    tool("get_weather", ToolKind::ReadOnly, |args, _| async move {
        let city = args["city"]
            .as_str()
            .ok_or_else(|| ToolError::new("`city` is required"))?
            .to_owned();
        Ok(format!("{city}: 今天天气晴，最低温度 14 度"))
    })
}

pub(super) fn fake_bash() -> Arc<dyn Tool> {
    tool("bash", ToolKind::Dangerous, |args, _| async move {
        Ok(format!(
            "ran: {}",
            args["command"].as_str().unwrap_or_default()
        ))
    })
}

pub(super) fn call(id: &str, name: &str, arguments: &str) -> ToolCall {
    ToolCall {
        id: id.into(),
        name: name.into(),
        arguments: arguments.into(),
    }
}

pub(super) fn calls_reply(text: &str, calls: Vec<ToolCall>) -> ScriptStep {
    let mut message = Message::assistant(text);
    message.tool_calls = calls;
    ScriptStep::Reply(message)
}

pub(super) fn text_reply(text: &str) -> ScriptStep {
    ScriptStep::Reply(Message::assistant(text))
}

pub(super) fn registry(tools: Vec<Arc<dyn Tool>>) -> Arc<Registry> {
    let mut registry = Registry::new();
    for tool in tools {
        registry.register(tool).unwrap();
    }
    Arc::new(registry)
}

pub(super) fn builder(
    provider: &Arc<ScriptedProvider>,
    tools: Vec<Arc<dyn Tool>>,
) -> AgentEngineBuilder {
    let provider: Arc<dyn crate::provider::LlmProvider> = provider.clone();
    AgentEngine::builder(provider, registry(tools), std::env::temp_dir()).turn_retry(
        crate::provider::RetryPolicy {
            base_delay: Duration::from_millis(1),
            max_delay: Duration::from_millis(5),
            ..Default::default()
        },
    )
}

/// Collects every event of a streamed run.
pub(super) async fn drain(mut rx: mpsc::Receiver<Event>) -> Vec<Event> {
    let mut events = Vec::new();
    tokio::time::timeout(Duration::from_secs(20), async {
        while let Some(event) = rx.recv().await {
            events.push(event);
        }
    })
    .await
    .expect("the run ends");
    events
}

pub(super) fn types(events: &[Event]) -> Vec<&'static str> {
    events.iter().map(|e| e.kind.type_name()).collect()
}

/// Waits for the first event of `type_name`, keeping what came before.
pub(super) async fn until(
    rx: &mut mpsc::Receiver<Event>,
    type_name: &str,
    seen: &mut Vec<Event>,
) -> Event {
    loop {
        let event = tokio::time::timeout(Duration::from_secs(20), rx.recv())
            .await
            .expect("an event arrives")
            .expect("the run goes on");
        seen.push(event.clone());
        if event.kind.type_name() == type_name {
            return event;
        }
    }
}

#[tokio::test]
async fn two_turn_weather_example_event_for_event() {
    let provider = Arc::new(ScriptedProvider::new([
        calls_reply(
            "让我查询一下北京的天气。",
            vec![call("call_abc", "get_weather", r#"{"city":"北京"}"#)],
        ),
        text_reply("北京今天天气不错，适合出游！"),
    ]));
    let session = Arc::new(InMemorySession::new("s1"));
    let engine = Arc::new(
        builder(&provider, vec![weather()])
            .session(session.clone())
            .build(),
    );
    let events = drain(engine.run_stream(
        "我今天想去北京旅游，帮我看看天气合适吗？".into(),
        CancellationToken::new(),
    ))
    .await;

    let expected = vec![
        "session_started",
        "token_update",
        "action_delta",
        "token_update",
        "tool_start",
        "tool_result",
        "token_update",
        "action_delta",
        "token_update",
        "done",
    ];
    // Deltas come word by word; fold runs of them to compare the shape.
    let mut got = types(&events);
    got.dedup_by(|a, b| *a == "action_delta" && *b == "action_delta");
    assert_eq!(got, expected);
    let EventKind::ToolResult(outcome) = &events
        .iter()
        .find(|e| e.kind.type_name() == "tool_result")
        .unwrap()
        .kind
    else {
        unreachable!()
    };
    assert_eq!(outcome.result.tool_call_id, "call_abc");
    assert!(outcome.result.output.contains("今天天气晴"));
    assert_eq!(events.last().unwrap().turn, 2);
    let EventKind::Done(done) = &events.last().unwrap().kind else {
        unreachable!()
    };
    assert_eq!(
        (done.turns, done.input_tokens, done.output_tokens),
        (2, 200, 20)
    );

    // The second call saw system, user, assistant(+call), observation: design §7.
    let second = &provider.calls()[1].messages;
    assert_eq!(second.len(), 4);
    assert_eq!(second[0].role, Role::System);
    assert!(
        second[0]
            .content
            .contains(&std::env::temp_dir().display().to_string())
    );
    assert_eq!(second[3].tool_call_id.as_deref(), Some("call_abc"));

    // Stored: everything but the system prompt.
    let stored = session.messages();
    assert_eq!(stored.len(), 4);
    assert_eq!(
        stored[0],
        Message::user("我今天想去北京旅游，帮我看看天气合适吗？")
    );
    assert!(stored.iter().all(|m| m.role != Role::System));
}

#[tokio::test]
async fn blocking_run_shares_the_loop_and_resumes_a_session() {
    let provider = Arc::new(ScriptedProvider::new([
        calls_reply(
            "Looking.",
            vec![call("c1", "get_weather", r#"{"city":"Oslo"}"#)],
        ),
        text_reply("Cold."),
        text_reply("Still cold."),
    ]));
    let session = Arc::new(InMemorySession::new("s"));
    let engine = builder(&provider, vec![weather()])
        .session(session.clone())
        .build();
    let texts = Mutex::new(Vec::new());
    let on_text = |t: &str| texts.lock().unwrap().push(t.to_owned());
    let summary = engine
        .run("weather?", CancellationToken::new(), &on_text)
        .await
        .unwrap();
    assert_eq!(summary.turns, 2);
    assert_eq!(summary.final_text, "Cold.");
    assert_eq!(*texts.lock().unwrap(), ["Looking.", "Cold."]);
    // A second run continues the stored conversation; only its new messages are added.
    engine
        .run("and tomorrow?", CancellationToken::new(), &|_| {})
        .await
        .unwrap();
    let third = &provider.calls()[2].messages;
    assert_eq!(third.len(), 1 + 4 + 1, "system + first run + new prompt");
    assert_eq!(session.messages().len(), 6);
}

#[tokio::test]
async fn concurrent_tools_overlap_and_land_in_the_models_order() {
    let spans: Arc<Mutex<Vec<(u64, Instant, Instant)>>> = Arc::default();
    let recorded = Arc::clone(&spans);
    let sleeper = tool("sleep", ToolKind::ReadOnly, move |args, _| {
        let recorded = Arc::clone(&recorded);
        async move {
            let ms = args["ms"].as_u64().unwrap();
            let start = Instant::now();
            tokio::time::sleep(Duration::from_millis(ms)).await;
            recorded.lock().unwrap().push((ms, start, Instant::now()));
            Ok(format!("slept {ms}"))
        }
    });
    let provider = Arc::new(ScriptedProvider::new([
        calls_reply(
            "",
            vec![
                call("a", "sleep", r#"{"ms":150}"#),
                call("b", "sleep", r#"{"ms":30}"#),
                call("c", "sleep", r#"{"ms":90}"#),
            ],
        ),
        text_reply("done"),
    ]));
    let engine = Arc::new(builder(&provider, vec![sleeper]).build());
    let events = drain(engine.run_stream("go".into(), CancellationToken::new())).await;

    let finished: Vec<_> = events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::ToolResult(o) => Some(o.result.tool_call_id.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(
        finished,
        ["b", "c", "a"],
        "results are reported as tools finish"
    );
    let observation: Vec<_> = provider.calls()[1]
        .messages
        .iter()
        .filter_map(|m| m.tool_call_id.clone())
        .collect();
    assert_eq!(
        observation,
        ["a", "b", "c"],
        "but appended in the model's order"
    );
    let spans = spans.lock().unwrap();
    let latest_start = spans.iter().map(|s| s.1).max().unwrap();
    let earliest_end = spans.iter().map(|s| s.2).min().unwrap();
    assert!(
        latest_start < earliest_end,
        "all three ran at the same time"
    );
}

#[tokio::test]
async fn the_semaphore_bounds_concurrency() {
    let running = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let peak = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let (r, p) = (Arc::clone(&running), Arc::clone(&peak));
    let counted = tool("count", ToolKind::ReadOnly, move |_, _| {
        let (r, p) = (Arc::clone(&r), Arc::clone(&p));
        async move {
            use std::sync::atomic::Ordering;
            let now = r.fetch_add(1, Ordering::SeqCst) + 1;
            p.fetch_max(now, Ordering::SeqCst);
            tokio::time::sleep(Duration::from_millis(20)).await;
            r.fetch_sub(1, Ordering::SeqCst);
            Ok(String::new())
        }
    });
    let calls = (0..6)
        .map(|i| call(&format!("c{i}"), "count", "{}"))
        .collect();
    let provider = Arc::new(ScriptedProvider::new([
        calls_reply("", calls),
        text_reply("ok"),
    ]));
    let engine = Arc::new(
        builder(&provider, vec![counted])
            .max_concurrent_tools(2)
            .build(),
    );
    drain(engine.run_stream("go".into(), CancellationToken::new())).await;
    assert_eq!(peak.load(std::sync::atomic::Ordering::SeqCst), 2);
}

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
    assert!(matches!(last.kind, EventKind::Error(ref e) if e == "interrupted"));
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
async fn cancelling_during_an_approval_counts_as_deny() {
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
    assert!(outcome.result.is_error && outcome.result.output.contains("denied"));
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
async fn a_malformed_call_heals_itself() {
    let provider = Arc::new(ScriptedProvider::new([
        calls_reply("", vec![call("bad", "get_weather", r#"{"city": "#)]),
        calls_reply("", vec![call("typo", "get_wether", r#"{"city": "Paris"}"#)]),
        calls_reply(
            "",
            vec![call("good", "get_weather", r#"{"city": "Paris"}"#)],
        ),
        text_reply("Sunny in Paris."),
    ]));
    let engine = builder(&provider, vec![weather()]).build();
    let summary = engine
        .run("Paris?", CancellationToken::new(), &|_| {})
        .await
        .unwrap();
    assert_eq!(summary.final_text, "Sunny in Paris.");
    let calls = provider.calls();
    let after_bad = calls[1].messages.last().unwrap();
    assert!(
        after_bad.is_error && after_bad.content.contains("not valid JSON"),
        "{}",
        after_bad.content
    );
    let after_typo = calls[2].messages.last().unwrap();
    assert!(
        after_typo.is_error
            && after_typo.content.contains("no tool named `get_wether`")
            && after_typo.content.contains("get_weather")
    );
    assert!(!calls[3].messages.last().unwrap().is_error);
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
    assert!(message.contains("Incorrect API key"));
}

#[tokio::test]
async fn mode_changes_take_effect_at_the_next_turn() {
    let edit = tool("write_file", ToolKind::Edit, |_, _| async {
        Ok("written".into())
    });
    let gate = Arc::new(tokio::sync::Notify::new());
    let opened = Arc::clone(&gate);
    let gated = tool("gate", ToolKind::ReadOnly, move |_, _| {
        let opened = Arc::clone(&opened);
        async move {
            opened.notified().await;
            Ok("through".into())
        }
    });
    let provider = Arc::new(ScriptedProvider::new([
        calls_reply("", vec![call("1", "gate", "{}")]),
        calls_reply("", vec![call("2", "write_file", r#"{"path":"x.txt"}"#)]),
        text_reply("ok"),
    ]));
    let engine = Arc::new(
        builder(&provider, vec![gated, edit])
            .mode(Mode::Plan)
            .build(),
    );
    let mut rx = engine.run_stream("go".into(), CancellationToken::new());
    let mut seen = Vec::new();
    until(&mut rx, "tool_start", &mut seen).await;
    // Switched while turn 1 is still running: turn 1 keeps plan mode, turn 2 gets auto-edit.
    engine.set_plan_mode(Mode::AutoEdit);
    gate.notify_one();
    drain(rx).await;
    let calls = provider.calls();
    assert_eq!(
        calls[0].tools,
        ["gate"],
        "plan mode offers read-only tools only"
    );
    assert!(calls[0].messages[0].content.contains("PLAN MODE"));
    assert_eq!(calls[1].tools, ["gate", "write_file"]);
    assert!(!calls[1].messages[0].content.contains("PLAN MODE"));
    assert_eq!(
        calls[2].messages.last().unwrap().content,
        "written",
        "auto-edit ran the edit unasked"
    );
}

#[tokio::test]
async fn plan_mode_refuses_an_edit_the_model_was_never_offered() {
    let edit = tool("write_file", ToolKind::Edit, |_, _| async {
        Ok("written".into())
    });
    let provider = Arc::new(ScriptedProvider::new([
        calls_reply("", vec![call("1", "write_file", r#"{"path":"x.txt"}"#)]),
        text_reply("ok"),
    ]));
    let engine = builder(&provider, vec![edit]).mode(Mode::Plan).build();
    engine
        .run("go", CancellationToken::new(), &|_| {})
        .await
        .unwrap();
    let result = provider.calls()[1].messages.last().cloned().unwrap();
    assert!(result.is_error && result.content.contains("plan mode"));
}

#[tokio::test]
async fn the_memory_nudge_reaches_the_model_but_not_the_store() {
    let provider = Arc::new(ScriptedProvider::new([
        calls_reply("", vec![call("1", "get_weather", r#"{"city":"A"}"#)]),
        text_reply("ok"),
    ]));
    let session = Arc::new(InMemorySession::new("s"));
    let engine = builder(&provider, vec![weather()])
        .session(session.clone())
        .memory_nudge(2, "Remember the user's preferences.")
        .build();
    engine
        .run("go", CancellationToken::new(), &|_| {})
        .await
        .unwrap();
    let calls = provider.calls();
    assert!(
        !calls[0]
            .messages
            .iter()
            .any(|m| m.content.contains("Remember the user"))
    );
    assert!(
        calls[1]
            .messages
            .last()
            .unwrap()
            .content
            .contains("Remember the user's preferences.")
    );
    assert!(
        !session
            .messages()
            .iter()
            .any(|m| m.content.contains("Remember the user"))
    );
}

#[tokio::test]
async fn the_tracing_observer_sees_interaction_and_turns() {
    struct Recording(Mutex<Vec<String>>);
    impl crate::observe::EngineObserver for Recording {
        fn on_interaction_start(&self, session_id: &str, _: &str) -> tracing::Span {
            self.0.lock().unwrap().push(format!("start {session_id}"));
            tracing::Span::none()
        }
        fn on_interaction_end(&self, _: &tracing::Span, turns: u32, error: Option<&str>) {
            self.0
                .lock()
                .unwrap()
                .push(format!("end {turns} {error:?}"));
        }
        fn on_turn_start(&self, _: &tracing::Span, turn: u32) -> tracing::Span {
            self.0.lock().unwrap().push(format!("turn {turn}"));
            tracing::Span::none()
        }
        fn on_turn_end(&self, _: &tracing::Span, turn: u32, tools: bool) {
            self.0
                .lock()
                .unwrap()
                .push(format!("turn end {turn} {tools}"));
        }
    }
    let observer = Arc::new(Recording(Mutex::default()));
    let provider = Arc::new(ScriptedProvider::new([
        calls_reply("", vec![call("1", "get_weather", r#"{"city":"A"}"#)]),
        text_reply("ok"),
    ]));
    let engine = builder(&provider, vec![weather()])
        .session(Arc::new(InMemorySession::new("sid")))
        .observer(observer.clone())
        .build();
    engine
        .run("go", CancellationToken::new(), &|_| {})
        .await
        .unwrap();
    assert_eq!(
        *observer.0.lock().unwrap(),
        [
            "start sid",
            "turn 1",
            "turn end 1 true",
            "turn 2",
            "turn end 2 false",
            "end 2 None"
        ]
    );
}

#[test]
fn events_serialize_to_the_contract() {
    let event = Event {
        turn: 1,
        kind: EventKind::ToolResult(ToolOutcome {
            name: "bash".into(),
            result: crate::schema::ToolResult::error("c1", "boom"),
            duration: Duration::from_millis(12),
        }),
    };
    assert_eq!(
        event.to_json(),
        json!({"type": "tool_result", "turn": 1, "data": {"tool_call_id": "c1", "name": "bash", "output": "boom", "is_error": true, "duration_ms": 12}})
    );
    let start = Event {
        turn: 1,
        kind: EventKind::ToolStart(call("c1", "bash", r#"{"command":"ls"}"#)),
    };
    assert_eq!(
        start.to_json()["data"],
        json!({"id": "c1", "name": "bash", "arguments": {"command": "ls"}})
    );
}

#[tokio::test]
async fn a_subscriber_sees_interaction_turn_llm_call_and_tool_call() {
    use tracing_subscriber::layer::{Context, SubscriberExt};
    use tracing_subscriber::registry::LookupSpan;

    type Pairs = Arc<Mutex<Vec<(String, Option<String>)>>>;
    struct Tree(Pairs);
    impl<S: tracing::Subscriber + for<'a> LookupSpan<'a>> tracing_subscriber::Layer<S> for Tree {
        fn on_new_span(
            &self,
            _: &tracing::span::Attributes<'_>,
            id: &tracing::span::Id,
            ctx: Context<'_, S>,
        ) {
            let span = ctx.span(id).unwrap();
            let parent = span.parent().map(|p| p.name().to_owned());
            self.0
                .lock()
                .unwrap()
                .push((span.name().to_owned(), parent));
        }
    }
    let pairs: Pairs = Arc::default();
    let subscriber = tracing_subscriber::registry().with(Tree(Arc::clone(&pairs)));
    let _guard = tracing::subscriber::set_default(subscriber);

    let provider = Arc::new(ScriptedProvider::new([
        calls_reply("", vec![call("1", "get_weather", r#"{"city":"A"}"#)]),
        text_reply("ok"),
    ]));
    let engine = builder(&provider, vec![weather()])
        .observer(Arc::new(crate::observe::TracingObserver))
        .build();
    engine
        .run("go", CancellationToken::new(), &|_| {})
        .await
        .unwrap();
    let pairs = pairs.lock().unwrap().clone();
    let has = |name: &str, parent: &str| {
        pairs
            .iter()
            .any(|(n, p)| n == name && p.as_deref() == Some(parent))
    };
    assert!(pairs.contains(&("interaction".into(), None)), "{pairs:?}");
    assert!(has("turn", "interaction"), "{pairs:?}");
    assert!(has("llm_call", "turn"), "{pairs:?}");
    assert!(has("tool_call", "turn"), "{pairs:?}");
}

#[tokio::test]
async fn the_engine_compacts_past_the_threshold_and_stores_the_checkpoint() {
    let history: Vec<Message> = (0..40)
        .flat_map(|i| {
            [
                Message::user(format!("old question {i} {}", "padding ".repeat(30))),
                Message::assistant(format!("old answer {i}")),
            ]
        })
        .collect();
    let session = Arc::new(InMemorySession::with_messages("s", history));
    let provider = Arc::new(ScriptedProvider::new([text_reply("fresh answer")]));
    let engine = Arc::new(
        builder(&provider, vec![])
            .session(session.clone())
            .context_window(2_000)
            .compactor(Arc::new(crate::memory::SlidingWindow { max_messages: 10 }))
            .build(),
    );
    let events = drain(engine.run_stream("new question".into(), CancellationToken::new())).await;
    let compaction = events
        .iter()
        .find_map(|e| match &e.kind {
            EventKind::Compaction(c) => Some(*c),
            _ => None,
        })
        .expect("a compaction event");
    assert_eq!(compaction.strategy, "sliding_window");
    assert!(
        compaction.after_tokens < compaction.before_tokens / 4,
        "{compaction:?}"
    );
    let sent = &provider.calls()[0].messages;
    assert_eq!(sent.len(), 1 + 10, "system + the window");
    assert_eq!(sent.last().unwrap().content, "new question");
    // The store keeps everything; what the model sees next time starts at the checkpoint.
    assert_eq!(session.messages().len(), 80 + 2);
    assert_eq!(session.load_messages().await.unwrap().len(), 11);
}
