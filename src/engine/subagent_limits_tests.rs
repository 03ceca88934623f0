//! What a sub-agent may not do: more than its file lists, more than its parent may (mode, rules,
//! tools), or outlive its parent's cancellation; and how its approvals and failures come back.

use std::sync::{Arc, Mutex};

use tokio_util::sync::CancellationToken;

use super::subagent_tests::{
    FnProvider, Request, agent_of, calls, file_agent, has_results, parent_engine, prompt_of,
    task_call,
};
use super::tests::{call, drain, fake_bash, weather};
use super::*;
use crate::schema::{Message, ProviderErrorKind};

/// The tools each child was offered, by agent.
type Offered = Arc<Mutex<Vec<(String, Vec<String>)>>>;

/// Records the tools each child was offered and plays `child` for it.
fn recording(
    parent_calls: Vec<crate::schema::ToolCall>,
    offered: Offered,
    child: impl Fn(&Request) -> Result<Message, ProviderError> + Send + Sync + 'static,
) -> Arc<FnProvider> {
    let child = Arc::new(child);
    FnProvider::new(move |request: Request| {
        let (offered, parent_calls, child) = (
            Arc::clone(&offered),
            parent_calls.clone(),
            Arc::clone(&child),
        );
        async move {
            match agent_of(&request) {
                // The parent answers with what its first task returned.
                None if has_results(&request) => Ok(Message::assistant(
                    request
                        .messages
                        .iter()
                        .find(|m| m.is_tool_result())
                        .map(|m| m.content.clone())
                        .unwrap_or_default(),
                )),
                None => Ok(calls("", parent_calls)),
                Some(agent) => {
                    offered.lock().unwrap().push((agent, request.tools.clone()));
                    child(&request)
                }
            }
        }
    })
}

fn results(events: &[Event]) -> Vec<(String, bool, String)> {
    events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::ToolResult(o) => Some((
                o.result.tool_call_id.clone(),
                o.result.is_error,
                o.result.output.clone(),
            )),
            _ => None,
        })
        .collect()
}

/// A file agent's `tools` limits its tools to those named that the parent has: naming `task`
/// or a tool the parent lacks gets it nothing more.
#[tokio::test]
async fn a_file_agents_tool_list_limits_its_tools() {
    let offered: Offered = Arc::default();
    let provider = recording(
        vec![task_call("t1", "weather-only", "what is the weather")],
        Arc::clone(&offered),
        |_| Ok(Message::assistant("sunny")),
    );
    let agent = file_agent("weather-only", &["get_weather", "task", "write_file"]);
    let engine =
        Arc::new(parent_engine(&provider, vec![weather(), fake_bash()], vec![agent], None).build());
    let events = drain(engine.run_stream("go".into(), CancellationToken::new())).await;
    assert_eq!(
        offered.lock().unwrap().clone(),
        vec![("weather-only".to_owned(), vec!["get_weather".to_owned()])]
    );
    let (_, is_error, output) = &results(&events)[0];
    assert!(!*is_error && output.starts_with("sunny"), "{output}");
}

/// The attacker's view: a repository's agent file asks for every tool, and the model's `task`
/// arguments try to add a mode. The child still runs in the parent's mode (plan: no `bash`
/// offered beyond read-only, writes refused) under the parent's rules, and arguments beyond the
/// schema are refused before any child starts.
#[tokio::test]
async fn neither_an_agent_file_nor_the_models_arguments_widen_what_the_parent_may_do() {
    let offered: Offered = Arc::default();
    let widened = call(
        "t0",
        "task",
        r#"{"agent":"greedy","description":"d","prompt":"p","mode":"yolo"}"#,
    );
    let provider = recording(
        vec![widened, task_call("t1", "greedy", "write the file")],
        Arc::clone(&offered),
        |request| {
            Ok(if has_results(request) {
                Message::assistant("could not write")
            } else {
                calls(
                    "",
                    vec![call(
                        "c1",
                        "write_file",
                        r#"{"path":"x.txt","content":"pwned"}"#,
                    )],
                )
            })
        },
    );
    let writer = super::tests::tool("write_file", crate::schema::ToolKind::Edit, |_, _| async {
        Ok("wrote".to_owned())
    });
    let greedy = file_agent("greedy", &["write_file", "get_weather", "bash", "task"]);
    let engine = Arc::new(
        parent_engine(&provider, vec![weather(), writer], vec![greedy], None)
            .mode(crate::planning::Mode::Plan)
            .build(),
    );
    let events = drain(engine.run_stream("go".into(), CancellationToken::new())).await;
    let results = results(&events);
    let (id, is_error, output) = &results[0];
    assert_eq!(id, "t0");
    assert!(
        *is_error && output.contains("do not match its schema"),
        "{output}"
    );
    // Plan mode: the child is offered no write tool, and its write call is refused.
    let offered = offered.lock().unwrap().clone();
    assert_eq!(offered.len(), 2, "one child, two turns: {offered:?}");
    assert_eq!(offered[0].1, ["get_weather"]);
    let child_result = events
        .iter()
        .find_map(|e| match &e.kind {
            EventKind::Subagent(s) => match &s.event.kind {
                EventKind::ToolResult(o) => Some(o.result.clone()),
                _ => None,
            },
            _ => None,
        })
        .unwrap();
    assert!(child_result.is_error, "{child_result:?}");
    assert_ne!(child_result.output, "wrote");
}

/// A deny rule of the parent's settings holds in the child: it is the same rules object on the
/// same decision path, not a copy.
#[tokio::test]
async fn the_parents_deny_rule_holds_in_a_child_even_in_yolo() {
    let offered: Offered = Arc::default();
    let provider = recording(
        vec![task_call("t1", "general", "clean up")],
        Arc::clone(&offered),
        |request| {
            Ok(if has_results(request) {
                Message::assistant("tried")
            } else {
                calls("", vec![call("c1", "bash", r#"{"command":"rm -rf /"}"#)])
            })
        },
    );
    let rules = crate::permission::rules::RuleSet::from_lists(&[], &["bash(rm *)".into()]).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let rules = Arc::new(
        crate::permission::rules::PermissionRules::new(dir.path(), dir.path(), true)
            .with_run_rules(rules),
    );
    let engine = parent_engine_with_rules(&provider, rules);
    let events = drain(engine.run_stream("go".into(), CancellationToken::new())).await;
    let child_result = events
        .iter()
        .find_map(|e| match &e.kind {
            EventKind::Subagent(s) => match &s.event.kind {
                EventKind::ToolResult(o) => Some(o.result.clone()),
                _ => None,
            },
            _ => None,
        })
        .unwrap();
    assert!(child_result.is_error, "{child_result:?}");
    assert!(
        child_result.output.contains("`bash(rm *)`") && child_result.output.contains("denies"),
        "{}",
        child_result.output
    );
}

fn parent_engine_with_rules(
    provider: &Arc<FnProvider>,
    rules: Arc<crate::permission::rules::PermissionRules>,
) -> Arc<AgentEngine> {
    use super::subagent::{SubagentBase, SubagentLauncher};
    let mut registry = crate::tools::Registry::new();
    registry.register(fake_bash()).unwrap();
    let dyn_provider: Arc<dyn LlmProvider> = provider.clone();
    let for_children = Arc::clone(&dyn_provider);
    let mut parent_tools = registry.clone();
    SubagentLauncher::register(
        &mut parent_tools,
        Arc::new(crate::agents::AgentCatalog::builtin()),
        SubagentBase {
            tools: registry,
            providers: Arc::new(move |_: &str| Ok(Arc::clone(&for_children))),
            small_model: None,
            workdir: std::env::temp_dir(),
            max_turns: 5,
            skills: Default::default(),
            tool_timeout: None,
            max_concurrent_tools: 0,
            context_window: 128_000,
            hooks: Default::default(),
            rules: Arc::clone(&rules),
            store: None,
            observer: Arc::new(crate::observe::NoopObserver),
            checkpoints: None,
            language_servers: None,
        },
    );
    Arc::new(
        AgentEngine::builder(dyn_provider, Arc::new(parent_tools), std::env::temp_dir())
            .mode(crate::planning::Mode::Yolo)
            .permission_rules(rules)
            .build(),
    )
}

/// A child's call that needs the user reaches the parent's stream as the parent's own
/// `ApprovalRequired`, naming the agent, under an id that cannot be one of the parent's; the
/// answer given there reaches the child.
#[tokio::test]
async fn a_childs_approval_is_the_parents_and_its_answer_reaches_the_child() {
    let offered: Offered = Arc::default();
    let provider = recording(
        vec![task_call("t1", "general", "run it")],
        Arc::clone(&offered),
        |request| {
            Ok(if has_results(request) {
                Message::assistant("it ran")
            } else {
                calls("", vec![call("c1", "bash", r#"{"command":"make deploy"}"#)])
            })
        },
    );
    let engine = Arc::new(parent_engine(&provider, vec![fake_bash()], Vec::new(), None).build());
    let mut rx = engine.run_stream("go".into(), CancellationToken::new());
    let mut events = Vec::new();
    while let Some(event) = rx.recv().await {
        if let EventKind::ApprovalRequired(request) = &event.kind {
            assert_eq!(request.id, "t1/c1");
            assert_eq!(request.agent.as_deref(), Some("general"));
            assert_eq!(request.tool_call.name, "bash");
            assert!(request.respond(ApprovalDecision::AllowOnce));
        }
        events.push(event);
    }
    let approvals = events
        .iter()
        .filter(|e| matches!(e.kind, EventKind::ApprovalRequired(_)))
        .count();
    assert_eq!(approvals, 1, "not nested: the parent's own");
    let child_result = events
        .iter()
        .find_map(|e| match &e.kind {
            EventKind::Subagent(s) => match &s.event.kind {
                EventKind::ToolResult(o) => Some(o.result.clone()),
                _ => None,
            },
            _ => None,
        })
        .unwrap();
    assert_eq!(child_result.output, "ran: make deploy");
    let (_, is_error, output) = &results(&events)[0];
    assert!(!*is_error && output.starts_with("it ran"), "{output}");
}

/// Headless (`run`, nobody to answer), the child's call is refused as the parent's would be.
#[tokio::test]
async fn without_an_approver_a_childs_call_is_refused() {
    let offered: Offered = Arc::default();
    let provider = recording(
        vec![task_call("t1", "general", "run it")],
        Arc::clone(&offered),
        |request| {
            Ok(if has_results(request) {
                let refused = request
                    .messages
                    .iter()
                    .any(|m| m.is_tool_result() && m.content.contains("approval"));
                Message::assistant(if refused { "refused" } else { "ran" })
            } else {
                calls("", vec![call("c1", "bash", r#"{"command":"make deploy"}"#)])
            })
        },
    );
    let engine = parent_engine(&provider, vec![fake_bash()], Vec::new(), None).build();
    let summary = engine
        .run("go", CancellationToken::new(), &|_| {})
        .await
        .unwrap();
    assert!(
        summary.final_text.starts_with("refused"),
        "{}",
        summary.final_text
    );
    assert_eq!(summary.turns, 2);
}

/// Cancelling the parent cancels every child: each one's model call sees its cancellation.
#[tokio::test]
async fn cancelling_the_parent_cancels_every_child() {
    let (started_tx, mut started_rx) = tokio::sync::mpsc::unbounded_channel::<()>();
    let (cancelled_tx, mut cancelled_rx) = tokio::sync::mpsc::unbounded_channel::<String>();
    let provider = FnProvider::new(move |request: Request| {
        let (started, cancelled) = (started_tx.clone(), cancelled_tx.clone());
        async move {
            if agent_of(&request).is_none() {
                return Ok(calls(
                    "",
                    (1..=3)
                        .map(|i| task_call(&format!("t{i}"), "explore", &format!("job {i}")))
                        .collect(),
                ));
            }
            let _ = started.send(());
            request.cancel.cancelled().await;
            let _ = cancelled.send(prompt_of(&request));
            Err(ProviderError::cancelled())
        }
    });
    let engine = Arc::new(parent_engine(&provider, vec![weather()], Vec::new(), None).build());
    let cancel = CancellationToken::new();
    let rx = engine.run_stream("go".into(), cancel.clone());
    for _ in 0..3 {
        started_rx.recv().await.unwrap();
    }
    cancel.cancel();
    let events = drain(rx).await;
    let EventKind::Error(failure) = &events.last().unwrap().kind else {
        panic!("{:?}", events.last());
    };
    assert_eq!(failure.kind, FailureKind::Interrupted);
    // Each child's call ends on its own token; the three say so.
    let mut jobs = Vec::new();
    for _ in 0..3 {
        let job = tokio::time::timeout(std::time::Duration::from_secs(10), cancelled_rx.recv())
            .await
            .expect("every child's call is cancelled");
        jobs.push(job.unwrap());
    }
    jobs.sort();
    assert_eq!(jobs, ["job 1", "job 2", "job 3"]);
}

/// A child whose model fails, or that runs out of turns, is an error result for the parent,
/// which goes on.
#[tokio::test]
async fn a_failing_child_is_an_error_result() {
    let provider = FnProvider::new(move |request: Request| async move {
        match agent_of(&request) {
            None if has_results(&request) => Ok(Message::assistant("parent carries on")),
            None => Ok(calls(
                "",
                vec![
                    task_call("t1", "explore", "fail"),
                    task_call("t2", "explore", "loop"),
                ],
            )),
            Some(_) if prompt_of(&request) == "fail" => Err(ProviderError::new(
                ProviderErrorKind::InvalidRequest,
                "model not found",
            )),
            Some(_) => Ok(calls(
                "",
                vec![call("w", "get_weather", r#"{"city":"Oslo"}"#)],
            )),
        }
    });
    let engine = Arc::new(parent_engine(&provider, vec![weather()], Vec::new(), None).build());
    let events = drain(engine.run_stream("go".into(), CancellationToken::new())).await;
    let results = results(&events);
    assert!(
        results[0].1 && results[0].2.contains("model not found"),
        "{:?}",
        results[0]
    );
    assert!(
        results[1].1 && results[1].2.contains("maximum of 5 turns"),
        "{:?}",
        results[1]
    );
    assert!(matches!(events.last().unwrap().kind, EventKind::Done(_)));
}

/// An agent file's `maxTurns` limits its child below the parent's limit (never above it).
#[tokio::test]
async fn an_agent_files_max_turns_stops_its_child_sooner() {
    let provider = FnProvider::new(move |request: Request| async move {
        match agent_of(&request) {
            None if has_results(&request) => Ok(Message::assistant("parent carries on")),
            None => Ok(calls(
                "",
                vec![
                    task_call("t1", "brief", "loop"),
                    task_call("t2", "greedy", "loop"),
                ],
            )),
            Some(_) => Ok(calls(
                "",
                vec![call("w", "get_weather", r#"{"city":"Oslo"}"#)],
            )),
        }
    });
    let mut brief = file_agent("brief", &["get_weather"]);
    brief.max_turns = Some(2);
    let mut greedy = file_agent("greedy", &["get_weather"]);
    greedy.max_turns = Some(500);
    let engine =
        Arc::new(parent_engine(&provider, vec![weather()], vec![brief, greedy], None).build());
    let events = drain(engine.run_stream("go".into(), CancellationToken::new())).await;
    let results = results(&events);
    assert!(
        results[0].1 && results[0].2.contains("maximum of 2 turns"),
        "{:?}",
        results[0]
    );
    assert!(
        results[1].1 && results[1].2.contains("maximum of 5 turns"),
        "the parent's limit of 5 holds: {:?}",
        results[1]
    );
}

/// The skills an agent file names are read whole into its prompt; one not installed is left out.
#[test]
fn an_agent_files_skills_are_read_for_its_prompt() {
    let root = tempfile::tempdir().unwrap();
    let skill = root.path().join("home/skills/release");
    std::fs::create_dir_all(&skill).unwrap();
    std::fs::write(
        skill.join("SKILL.md"),
        "---\nname: release\ndescription: how we release\n---\nTag, then push.\n",
    )
    .unwrap();
    let index =
        crate::context::SkillIndex::discover(&root.path().join("work"), &root.path().join("home"));
    let loaded =
        super::subagent::preloaded_skills(&index, &["release".to_owned(), "missing".to_owned()]);
    assert_eq!(
        loaded,
        vec![("release".to_owned(), "Tag, then push.".to_owned())]
    );
}
