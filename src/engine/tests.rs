//! The loop through its real code with a scripted provider and small test tools.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::*;
use crate::memory::InMemorySession;
use crate::provider::{ScriptStep, ScriptedProvider};
use crate::schema::ToolKind;
use crate::schema::{Message, Role, ToolCall};
use crate::tools::{Tool, ToolContext, ToolError};

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
async fn the_engine_compacts_past_the_threshold_and_stores_the_checkpoint() {
    let history: Vec<Message> = (0..40)
        .flat_map(|i| {
            [
                Message::user(format!("old question {i} {}", "padding ".repeat(100))),
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
    // The system prompt (about 1,000 tokens) stays; the old turns go.
    assert!(
        compaction.after_tokens < compaction.before_tokens / 2,
        "{compaction:?}"
    );
    let sent = &provider.calls()[0].messages;
    // The window opens with an answer: the user's turn before it is carried over in front.
    assert_eq!(
        sent.len(),
        1 + 1 + 10,
        "system + the user's turn + the window"
    );
    assert_eq!(sent[1].role, Role::User);
    assert!(
        sent[1].content.contains("old question 35"),
        "{}",
        sent[1].content
    );
    assert_eq!(sent.last().unwrap().content, "new question");
    // The store keeps everything; what the model sees next time starts at the checkpoint.
    assert_eq!(session.messages().len(), 80 + 2);
    assert_eq!(session.load_messages().await.unwrap().len(), 12);
}
