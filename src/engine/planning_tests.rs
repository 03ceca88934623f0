//! Auto-continue, stall detection, permission rules written from an approval, and the todo
//! list's honesty check, through the real loop with a scripted provider.

use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use super::tests::{builder, call, calls_reply, drain, text_reply, until, weather};
use super::*;
use crate::permission::rules;
use crate::planning::{TodoItem, TodoStatus};
use crate::provider::ScriptedProvider;
use crate::tools::{Bash, TodoWrite};

fn todos(items: &[(&str, &str)]) -> String {
    let list: Vec<_> = items
        .iter()
        .map(|(c, s)| serde_json::json!({"content": c, "status": s}))
        .collect();
    serde_json::json!({ "todos": list }).to_string()
}

fn plan(items: &[&str]) -> Arc<crate::planning::TodoStore> {
    Arc::new(crate::planning::TodoStore::new(
        items
            .iter()
            .map(|c| TodoItem {
                content: (*c).into(),
                status: TodoStatus::Pending,
            })
            .collect(),
    ))
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

#[tokio::test]
async fn auto_continue_runs_a_three_item_plan_to_completion() {
    let provider = Arc::new(ScriptedProvider::new([
        calls_reply(
            "",
            vec![call(
                "1",
                "todo_write",
                &todos(&[("a", "completed"), ("b", "pending"), ("c", "pending")]),
            )],
        ),
        text_reply("a is done"),
        calls_reply(
            "",
            vec![call(
                "2",
                "todo_write",
                &todos(&[("a", "completed"), ("b", "in_progress"), ("c", "pending")]),
            )],
        ),
        calls_reply(
            "",
            vec![call(
                "3",
                "todo_write",
                &todos(&[("a", "completed"), ("b", "completed"), ("c", "pending")]),
            )],
        ),
        text_reply("b is done"),
        calls_reply(
            "",
            vec![call(
                "4",
                "todo_write",
                &todos(&[("a", "completed"), ("b", "completed"), ("c", "completed")]),
            )],
        ),
        text_reply("all done"),
    ]));
    let store = plan(&["a", "b", "c"]);
    let engine = Arc::new(
        builder(&provider, vec![Arc::new(TodoWrite)])
            .todo_store(Arc::clone(&store))
            .auto_continue(true)
            .build(),
    );
    let events =
        drain(engine.run_stream("carry out the plan".into(), CancellationToken::new())).await;
    assert_eq!(events.last().unwrap().kind.type_name(), "done");
    assert!(
        store
            .snapshot()
            .iter()
            .all(|t| t.status == TodoStatus::Completed)
    );
    assert_eq!(provider.calls().len(), 7);
    let progress = notices(&events);
    assert_eq!(
        progress,
        [
            "auto-continue: 1/3 done, next: b",
            "auto-continue: 2/3 done, next: c"
        ]
    );
    let last_prompt = provider.calls()[2]
        .messages
        .iter()
        .rev()
        .find(|m| m.role == crate::schema::Role::User && !m.is_tool_result())
        .unwrap()
        .content
        .clone();
    assert!(
        last_prompt.starts_with("Continue with the plan: 1 of 3"),
        "{last_prompt}"
    );
}

/// Two turns per todo item: mark it completed, then say so.
fn two_turns_per_item() -> Vec<crate::provider::ScriptStep> {
    let lists = [
        [("a", "completed"), ("b", "pending"), ("c", "pending")],
        [("a", "completed"), ("b", "completed"), ("c", "pending")],
        [("a", "completed"), ("b", "completed"), ("c", "completed")],
    ];
    lists
        .iter()
        .enumerate()
        .flat_map(|(i, list)| {
            [
                calls_reply("", vec![call(&i.to_string(), "todo_write", &todos(list))]),
                text_reply("item done"),
            ]
        })
        .collect()
}

#[tokio::test]
async fn each_continuation_has_its_own_max_turns_budget() {
    let provider = Arc::new(ScriptedProvider::new(two_turns_per_item()));
    let store = plan(&["a", "b", "c"]);
    let engine = Arc::new(
        builder(&provider, vec![Arc::new(TodoWrite)])
            .todo_store(Arc::clone(&store))
            .auto_continue(true)
            .max_turns(2)
            .build(),
    );
    let events =
        drain(engine.run_stream("carry out the plan".into(), CancellationToken::new())).await;
    let EventKind::Done(done) = &events.last().unwrap().kind else {
        panic!("the plan ran to its end: {:?}", events.last())
    };
    assert_eq!(
        done.turns, 6,
        "three runs of two turns, each within --max-turns 2"
    );
    assert!(
        store
            .snapshot()
            .iter()
            .all(|t| t.status == TodoStatus::Completed)
    );
}

#[tokio::test]
async fn a_run_past_its_budget_stops_and_switches_auto_continue_off() {
    let provider = Arc::new(ScriptedProvider::new(two_turns_per_item()));
    let engine = Arc::new(
        builder(&provider, vec![Arc::new(TodoWrite)])
            .todo_store(plan(&["a", "b", "c"]))
            .auto_continue(true)
            .max_turns(1)
            .build(),
    );
    let events = drain(engine.run_stream("go".into(), CancellationToken::new())).await;
    let EventKind::Error(message) = &events.last().unwrap().kind else {
        panic!("{:?}", events.last())
    };
    assert!(message.message.contains("maximum of 1 turns"), "{message}");
    assert_eq!(message.kind, crate::engine::FailureKind::MaxTurns);
    assert!(!engine.auto_continue_enabled());
    let last = notices(&events).pop().unwrap();
    assert!(
        last.starts_with("auto-continue is off: the run ended with an error (reached the maximum"),
        "{last}"
    );
}

#[tokio::test]
async fn a_provider_error_switches_auto_continue_off() {
    let mut steps = two_turns_per_item();
    steps.truncate(2);
    steps.push(crate::provider::ScriptStep::Fail(
        crate::schema::ProviderError::new(
            crate::schema::ProviderErrorKind::Auth,
            "401 invalid api key",
        ),
    ));
    let provider = Arc::new(ScriptedProvider::new(steps));
    let engine = Arc::new(
        builder(&provider, vec![Arc::new(TodoWrite)])
            .todo_store(plan(&["a", "b", "c"]))
            .auto_continue(true)
            .build(),
    );
    let events = drain(engine.run_stream("go".into(), CancellationToken::new())).await;
    assert_eq!(events.last().unwrap().kind.type_name(), "error");
    assert_eq!(
        provider.calls().len(),
        3,
        "it failed in the first continuation"
    );
    assert!(
        !engine.auto_continue_enabled(),
        "the next prompt does not continue by itself"
    );
    // The next prompt is a plain run: it ends when the model stops, todos open or not.
    let provider_after = Arc::new(ScriptedProvider::new([text_reply("ok")]));
    engine.set_provider(provider_after.clone());
    drain(engine.run_stream("something else".into(), CancellationToken::new())).await;
    assert_eq!(provider_after.calls().len(), 1);
}

#[tokio::test]
async fn a_provider_that_never_completes_a_todo_is_stopped() {
    let provider =
        Arc::new(ScriptedProvider::new([]).repeating(text_reply("still thinking about it")));
    let store = plan(&["a", "b"]);
    let engine = Arc::new(
        builder(&provider, vec![Arc::new(TodoWrite)])
            .todo_store(store)
            .auto_continue(true)
            .build(),
    );
    let events = drain(engine.run_stream("go".into(), CancellationToken::new())).await;
    assert_eq!(provider.calls().len(), 3, "three runs, then it stops");
    let last = notices(&events).pop().unwrap();
    assert!(
        last.starts_with("auto-continue stopped: three runs in a row completed no todo item"),
        "{last}"
    );
    assert!(
        last.contains("[ ] a") && last.contains("[ ] b"),
        "the list as it stands: {last}"
    );
    assert_eq!(events.last().unwrap().kind.type_name(), "done");
}

#[tokio::test]
async fn a_provider_that_repeats_a_call_is_stopped() {
    let provider = Arc::new(ScriptedProvider::new([]).repeating(calls_reply(
        "",
        vec![call("x", "get_weather", r#"{"city":"Oslo"}"#)],
    )));
    let engine = Arc::new(
        builder(&provider, vec![weather()])
            .todo_store(plan(&["a"]))
            .auto_continue(true)
            .build(),
    );
    let events = drain(engine.run_stream("go".into(), CancellationToken::new())).await;
    assert_eq!(provider.calls().len(), 3);
    assert!(
        notices(&events).pop().unwrap().contains(
            "the same `get_weather` call with the same arguments came three times in a row"
        )
    );
}

#[tokio::test]
async fn without_auto_continue_a_run_ends_when_the_model_stops() {
    let provider = Arc::new(ScriptedProvider::new([text_reply("here is the plan")]));
    let engine = Arc::new(builder(&provider, vec![]).todo_store(plan(&["a"])).build());
    drain(engine.run_stream("plan".into(), CancellationToken::new())).await;
    assert_eq!(provider.calls().len(), 1);
}

#[tokio::test]
async fn todo_write_refuses_several_items_jumping_to_completed() {
    let provider = Arc::new(ScriptedProvider::new([
        calls_reply(
            "",
            vec![call(
                "1",
                "todo_write",
                &todos(&[("a", "completed"), ("b", "completed"), ("c", "pending")]),
            )],
        ),
        text_reply("ok"),
    ]));
    let store = plan(&["a", "b", "c"]);
    let engine = builder(&provider, vec![Arc::new(TodoWrite)])
        .todo_store(Arc::clone(&store))
        .build();
    engine
        .run("go", CancellationToken::new(), &|_| {})
        .await
        .unwrap();
    let result = provider.calls()[1].messages.last().cloned().unwrap();
    assert!(
        result.is_error
            && result
                .content
                .contains("2 items completed that were still pending (\"a\", \"b\")"),
        "{}",
        result.content
    );
    assert_eq!(store.count(TodoStatus::Pending), 3, "nothing changed");
}

/// An engine whose model runs `mkdir first`, then `mkdir second`, with the rules of `work`
/// (`trusted`: whether the folder's allow rules count).
fn two_mkdirs(work: &std::path::Path, trusted: bool) -> Arc<AgentEngine> {
    let rules = Arc::new(rules::PermissionRules::new(
        work,
        &work.join("home"),
        trusted,
    ));
    let provider = Arc::new(ScriptedProvider::new([
        calls_reply("", vec![call("1", "bash", r#"{"command":"mkdir first"}"#)]),
        calls_reply("", vec![call("2", "bash", r#"{"command":"mkdir second"}"#)]),
        text_reply("ok"),
    ]));
    let mut registry = crate::tools::Registry::new();
    registry.register(Arc::new(Bash::default())).unwrap();
    Arc::new(
        AgentEngine::builder(provider, Arc::new(registry), work)
            .permission_rules(rules)
            .build(),
    )
}

#[tokio::test]
async fn allow_like_this_writes_a_rule_that_covers_the_next_call() {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().canonicalize().unwrap();
    let engine = two_mkdirs(&work, true);
    let mut rx = engine.run_stream("echo twice".into(), CancellationToken::new());
    let mut seen = Vec::new();
    let EventKind::ApprovalRequired(request) =
        until(&mut rx, "approval_required", &mut seen).await.kind
    else {
        unreachable!()
    };
    assert_eq!(request.suggested_rule.as_deref(), Some("bash(mkdir*)"));
    request.respond(ApprovalDecision::AllowRule);
    let rest = drain(rx).await;
    assert!(
        !rest
            .iter()
            .any(|e| e.kind.type_name() == "approval_required"),
        "the second call did not ask"
    );
    let written = std::fs::read_to_string(rules::local_file(&work)).unwrap();
    assert!(written.contains("\"bash(mkdir*)\""), "{written}");
    assert!(
        notices(&rest)
            .iter()
            .any(|n| n.starts_with("always allowed: wrote `bash(mkdir*)`"))
    );
    assert!(work.join("second").is_dir(), "the second call ran");
}

/// In a folder that is not trusted, the folder's allow rules do not count: a rule written there
/// says so rather than "always allowed", and the next call still asks.
#[tokio::test]
async fn allow_like_this_in_an_untrusted_folder_says_the_rule_waits_for_trust() {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().canonicalize().unwrap();
    let engine = two_mkdirs(&work, false);
    let mut rx = engine.run_stream("echo twice".into(), CancellationToken::new());
    let mut seen = Vec::new();
    let EventKind::ApprovalRequired(request) =
        until(&mut rx, "approval_required", &mut seen).await.kind
    else {
        unreachable!()
    };
    request.respond(ApprovalDecision::AllowRule);
    let EventKind::ApprovalRequired(second) =
        until(&mut rx, "approval_required", &mut seen).await.kind
    else {
        unreachable!()
    };
    assert!(
        notices(&seen)
            .iter()
            .any(|n| n.contains("not trusted") && n.contains("bash(mkdir*)")),
        "{:?}",
        notices(&seen)
    );
    second.respond(ApprovalDecision::AllowOnce);
    drain(rx).await;
    assert!(work.join("second").is_dir());
}

#[tokio::test]
async fn a_deny_rule_refuses_even_in_yolo_and_a_broken_settings_file_is_reported_once() {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().canonicalize().unwrap();
    std::fs::create_dir_all(work.join(".harness9")).unwrap();
    std::fs::write(
        rules::project_file(&work),
        r#"{"permissions": {"deny": ["bash(rm *)"]}}"#,
    )
    .unwrap();
    std::fs::create_dir_all(work.join("home")).unwrap();
    std::fs::write(work.join("home/settings.json"), "{ broken").unwrap();
    let rules = Arc::new(rules::PermissionRules::new(&work, &work.join("home"), true));
    let provider = Arc::new(ScriptedProvider::new([
        calls_reply(
            "",
            vec![
                call("1", "bash", r#"{"command":"rm -rf src"}"#),
                call("2", "bash", r#"{"command":"echo hi"}"#),
            ],
        ),
        text_reply("ok"),
    ]));
    let provider_dyn: Arc<dyn crate::provider::LlmProvider> = provider.clone();
    let mut registry = crate::tools::Registry::new();
    registry.register(Arc::new(Bash::default())).unwrap();
    let engine = Arc::new(
        AgentEngine::builder(provider_dyn, Arc::new(registry), &work)
            .permission_rules(rules)
            .mode(crate::planning::Mode::Yolo)
            .build(),
    );
    let events = drain(engine.run_stream("go".into(), CancellationToken::new())).await;
    let results: Vec<_> = provider.calls()[1]
        .messages
        .iter()
        .filter(|m| m.is_tool_result())
        .cloned()
        .collect();
    assert!(
        results[0].is_error && results[0].content.contains("`bash(rm *)`"),
        "{:?}",
        results[0]
    );
    assert!(!results[1].is_error);
    let problems: Vec<_> = notices(&events)
        .into_iter()
        .filter(|n| n.contains("is ignored"))
        .collect();
    assert_eq!(problems.len(), 1, "reported once: {problems:?}");
}

/// An edit's approval carries the diff it would make, numbered as in the file, computed by the
/// engine (the front end reads nothing); the file is unchanged until it is allowed.
#[tokio::test]
async fn an_edits_approval_carries_its_diff_of_the_file_as_it_is() {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().canonicalize().unwrap();
    let text: String = (1..=30).map(|n| format!("line {n}\n")).collect();
    std::fs::write(work.join("f.txt"), &text).unwrap();
    let rules = Arc::new(rules::PermissionRules::new(&work, &work.join("home"), true));
    let arguments = r#"{"path":"f.txt","old_string":"line 20\n","new_string":"twenty\n"}"#;
    let provider = Arc::new(ScriptedProvider::new([
        calls_reply("", vec![call("1", "edit_file", arguments)]),
        text_reply("ok"),
    ]));
    let mut registry = crate::tools::Registry::new();
    registry.register(Arc::new(crate::tools::EditFile)).unwrap();
    let engine = Arc::new(
        AgentEngine::builder(provider, Arc::new(registry), &work)
            .permission_rules(rules)
            .build(),
    );
    let mut rx = engine.run_stream("edit".into(), CancellationToken::new());
    let EventKind::ApprovalRequired(request) = until(&mut rx, "approval_required", &mut Vec::new())
        .await
        .kind
    else {
        unreachable!()
    };
    let preview = request.preview.clone().unwrap_or_default();
    assert!(
        preview.contains("@@ -17,7 +17,7 @@") && preview.contains("-line 20\n+twenty"),
        "{preview}"
    );
    assert_eq!(std::fs::read_to_string(work.join("f.txt")).unwrap(), text);
    request.respond(ApprovalDecision::AllowOnce);
    drain(rx).await;
    assert!(
        std::fs::read_to_string(work.join("f.txt"))
            .unwrap()
            .contains("twenty")
    );
}
