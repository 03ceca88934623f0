//! Sub-agents on screen (issue 17), fed with synthetic `subagent` events: task blocks running,
//! side by side, done and failed (snapshots at 80 and 120 columns), interleaved children, a
//! child's approval, its transcript opened from a store, `/tasks` with a background task.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use super::*;
use crate::engine::{SessionInfo, SubagentEvent};
use crate::schema::Message;
use crate::tui::keymap::Focus;

fn task_call(id: &str, agent: &str, description: &str, background: bool) -> ToolCall {
    let arguments = serde_json::json!({
        "agent": agent,
        "description": description,
        "prompt": "look it up",
        "background": background,
    });
    call(id, "task", &arguments.to_string())
}

/// One of a child's events, as the parent's stream carries it.
fn child(task_id: &str, agent: &str, kind: EventKind) -> Event {
    event(
        1,
        EventKind::Subagent(SubagentEvent {
            task_id: task_id.into(),
            agent: agent.into(),
            event: Box::new(event(1, kind)),
        }),
    )
}

fn child_started(task_id: &str, agent: &str, session_id: &str) -> Event {
    child(
        task_id,
        agent,
        EventKind::SessionStarted(SessionInfo {
            session_id: session_id.into(),
            workdir: "/work/repo".into(),
            provider: "anthropic".into(),
            model: "claude-haiku".into(),
            mode: Mode::Default,
        }),
    )
}

fn child_done(task_id: &str, agent: &str, turns: u32, tokens: u64) -> Event {
    child(
        task_id,
        agent,
        EventKind::Done(DoneInfo {
            turns,
            input_tokens: tokens - 400,
            output_tokens: 400,
            ..DoneInfo::default()
        }),
    )
}

fn result(id: &str, output: &str, error: bool, secs: u64) -> Event {
    let result = if error {
        ToolResult::error(id, output)
    } else {
        ToolResult::ok(id, output)
    };
    event(
        1,
        EventKind::ToolResult(ToolOutcome {
            name: "task".into(),
            result,
            duration: Duration::from_secs(secs),
        }),
    )
}

/// An app at a time the test moves, with a run going.
fn running_app() -> (App, Arc<Mutex<Instant>>) {
    let now = Arc::new(Mutex::new(Instant::now()));
    let mut app = app_at(&now);
    type_text(&mut app, "where is split called?");
    app.handle_key(key(KeyCode::Enter));
    (app, now)
}

fn later(now: &Arc<Mutex<Instant>>, secs: u64) {
    *now.lock().unwrap() += Duration::from_secs(secs);
}

fn grep_start(task_id: &str, agent: &str, pattern: &str) -> Event {
    let arguments = serde_json::json!({ "pattern": pattern }).to_string();
    child(
        task_id,
        agent,
        EventKind::ToolStart(call("c1", "grep", &arguments)),
    )
}

fn three_children(app: &mut App) {
    for (id, description) in [
        ("t1", "find the callers of split"),
        ("t2", "read the parser tests"),
        ("t3", "check the changelog"),
    ] {
        app.handle_engine(event(
            1,
            EventKind::ToolStart(task_call(id, "explore", description, false)),
        ));
    }
}

fn snapshot_widths(name: &str, make: impl Fn() -> App) {
    for width in [80u16, 120] {
        let mut app = make();
        insta::assert_snapshot!(format!("{name}_{width}"), screen(&mut app, width, 16));
    }
}

#[test]
fn snapshot_a_running_task_block_with_its_step() {
    snapshot_widths("task_running", || {
        let (mut app, now) = running_app();
        app.handle_engine(event(
            1,
            EventKind::ToolStart(task_call(
                "t1",
                "explore",
                "find the callers of split",
                false,
            )),
        ));
        app.handle_engine(child_started("t1", "explore", "child-1"));
        app.handle_engine(grep_start("t1", "explore", "split\\("));
        later(&now, 12);
        app
    });
}

#[test]
fn snapshot_several_task_blocks_side_by_side() {
    snapshot_widths("task_several", || {
        let (mut app, now) = running_app();
        three_children(&mut app);
        app.handle_engine(grep_start("t1", "explore", "fn split"));
        later(&now, 3);
        app.handle_engine(child(
            "t2",
            "explore",
            EventKind::ThinkingDelta("hm".into()),
        ));
        later(&now, 4);
        app.handle_engine(child("t3", "explore", EventKind::ActionDelta("The".into())));
        later(&now, 2);
        app
    });
}

#[test]
fn snapshot_a_done_task_block_folds_its_result() {
    snapshot_widths("task_done", || {
        let (mut app, now) = running_app();
        app.handle_engine(event(
            1,
            EventKind::ToolStart(task_call(
                "t1",
                "explore",
                "find the callers of split",
                false,
            )),
        ));
        later(&now, 41);
        app.handle_engine(child_done("t1", "explore", 3, 12_400));
        let answer = "split is called in three places:\n- src/parse.rs:12\n- src/parse.rs:40\n- src/cli.rs:88\nNone of them trims.\n(3 turns, 12400 tokens)";
        app.handle_engine(result("t1", answer, false, 41));
        app
    });
}

#[test]
fn snapshot_a_failed_task_block() {
    snapshot_widths("task_failed", || {
        let (mut app, now) = running_app();
        app.handle_engine(event(
            1,
            EventKind::ToolStart(task_call(
                "t1",
                "explore",
                "find the callers of split",
                false,
            )),
        ));
        later(&now, 8);
        app.handle_engine(child(
            "t1",
            "explore",
            EventKind::Error(Failure::new(
                FailureKind::MaxTurns,
                "the sub-agent hit its turn limit (10)",
            )),
        ));
        app.handle_engine(result(
            "t1",
            "explore failed: the sub-agent hit its turn limit (10)",
            true,
            8,
        ));
        app
    });
}

#[test]
fn three_interleaved_children_update_their_own_blocks() {
    let (mut app, now) = running_app();
    three_children(&mut app);
    for (id, session) in [("t1", "s1"), ("t2", "s2"), ("t3", "s3")] {
        app.handle_engine(child_started(id, "explore", session));
    }
    app.handle_engine(grep_start("t2", "explore", "fn split"));
    app.handle_engine(child("t1", "explore", EventKind::ThinkingDelta("a".into())));
    app.handle_engine(child("t3", "explore", EventKind::ActionDelta("b".into())));
    later(&now, 5);
    let step = |app: &App, id: &str| app.transcript().task(id).unwrap().step_text();
    assert_eq!(step(&app, "t1"), "thinking");
    assert_eq!(step(&app, "t2"), "grep fn split");
    assert_eq!(step(&app, "t3"), "writing");
    let text = screen(&mut app, 100, 24);
    assert!(text.contains("└ grep fn split…"), "{text}");

    // A stream of one child's deltas changes its block once and leaves the others alone.
    let (t1, t2) = (
        app.transcript().task_revision("t1").unwrap(),
        app.transcript().task_revision("t2").unwrap(),
    );
    for _ in 0..500 {
        app.handle_engine(child("t1", "explore", EventKind::ActionDelta("x".into())));
    }
    assert_eq!(app.transcript().task_revision("t1"), Some(t1 + 1));
    assert_eq!(app.transcript().task_revision("t2"), Some(t2));
    assert!(
        !screen(&mut app, 100, 24).contains("xxx"),
        "a child's answer stays off the parent's transcript"
    );

    app.handle_engine(child_done("t2", "explore", 2, 5_000));
    app.handle_engine(result("t2", "two tests cover split", false, 5));
    assert_eq!(step(&app, "t1"), "writing");
    assert!(app.transcript().task("t1").unwrap().is_running());
    assert!(!app.transcript().task("t2").unwrap().is_running());
    assert!(app.transcript().task("t3").unwrap().is_running());
    let text = screen(&mut app, 100, 24);
    assert!(text.contains("done · 2 turns · 5.0k tokens"), "{text}");

    // Esc: the foreground children still running go with the run.
    app.handle_engine(event(
        1,
        EventKind::Error(Failure::new(FailureKind::Interrupted, "interrupted")),
    ));
    let text = screen(&mut app, 100, 24);
    assert_eq!(text.matches("interrupted · 5.0s").count(), 2, "{text}");
    assert!(!app.is_animating());
}

#[test]
fn a_childs_approval_names_the_agent_and_the_answer_reaches_it() {
    let (mut app, now) = running_app();
    app.handle_engine(event(
        1,
        EventKind::ToolStart(task_call("t1", "explore", "run the tests", false)),
    ));
    let (mut request, mut answer) = ApprovalRequest::new(
        call("t1/c4", "bash", r#"{"command":"cargo test -q"}"#),
        "`bash` runs a command".into(),
        "this exact command".into(),
        "--mode yolo",
        None,
    );
    request.agent = Some("explore".into());
    app.handle_engine(event(1, EventKind::ApprovalRequired(request)));
    let text = screen(&mut app, 80, 24);
    assert!(
        text.contains("the sub-agent explore wants to run bash"),
        "{text}"
    );
    assert!(text.contains("Approve bash for explore?"), "{text}");
    assert_eq!(app.layer(), Focus::Approval);
    // A key counts once the dialog has been on screen a moment (`dialog_guard`).
    later(&now, 1);
    app.handle_key(key(KeyCode::Char('y')));
    assert_eq!(answer.try_recv().unwrap(), ApprovalDecision::AllowOnce);
    assert!(app.approvals_waiting() == 0);
}

#[test]
fn ctrl_o_opens_a_childs_stored_transcript_and_esc_closes_it() {
    // The child's session, as the session core reads it from the store.
    let child = "child-session-1";
    let mut asked = Message::assistant("Looking for callers.");
    asked.tool_calls = vec![call("c1", "grep", r#"{"pattern":"split\\("}"#)];
    let messages = [
        Message::user("Find every caller of split."),
        asked,
        Message::tool_result(&ToolResult::ok("c1", "src/parse.rs:12: split(line)")),
        Message::assistant("One caller: src/parse.rs:12."),
    ];
    let (mut app, _now) = running_app();
    // Before any task block, Ctrl+O folds and unfolds as it always did.
    assert!(app.handle_key(ctrl('o')).is_empty());
    assert!(app.view().expanded);
    app.handle_key(ctrl('o'));
    app.handle_engine(event(
        1,
        EventKind::ToolStart(task_call("t1", "explore", "find the callers", false)),
    ));
    app.handle_engine(child_started("t1", "explore", child));
    app.handle_engine(child_done("t1", "explore", 2, 3_000));
    app.handle_engine(result("t1", "One caller: src/parse.rs:12.", false, 4));

    let commands = app.handle_key(ctrl('o'));
    assert_eq!(
        commands,
        [Effect::Request(Request::ReadSession {
            session_id: child.into()
        })]
    );
    assert_eq!(app.layer(), Focus::TaskTranscript);
    assert!(screen(&mut app, 80, 24).contains("reading…"));
    // What the runner does with the command: the session core reads the store.
    app.take_update(Update::SessionRead {
        session_id: child.into(),
        messages: Ok(messages.to_vec()),
    });
    let text = screen(&mut app, 80, 24);
    assert!(text.contains("explore · find the callers"), "{text}");
    assert!(text.contains("Find every caller of split."), "{text}");
    assert!(text.contains("One caller: src/parse.rs:12."), "{text}");
    assert!(text.contains("grep"), "{text}");

    app.handle_key(key(KeyCode::Esc));
    assert_eq!(app.layer(), Focus::Main);
    let text = screen(&mut app, 80, 24);
    assert!(!text.contains("Find every caller of split."), "{text}");

    // A later prompt: Ctrl+O folds again, the old task block is not this turn's.
    app.handle_engine(event(1, EventKind::Done(DoneInfo::default())));
    type_text(&mut app, "thanks");
    app.handle_key(key(KeyCode::Enter));
    assert!(app.handle_key(ctrl('o')).is_empty());
    assert_eq!(app.layer(), Focus::Main);
}

#[test]
fn tasks_lists_a_running_background_task_until_its_done() {
    let (mut app, now) = running_app();
    app.handle_engine(event(
        1,
        EventKind::ToolStart(task_call("t9", "explore", "scan the docs", true)),
    ));
    app.handle_engine(child_started("t9", "explore", "s9"));
    app.handle_engine(result("t9", "started task t9 in the background", false, 0));
    app.handle_engine(event(1, EventKind::Done(DoneInfo::default())));
    assert!(!app.run().running);
    app.handle_engine(grep_start("t9", "explore", "TODO"));
    later(&now, 65);
    assert!(app.is_animating(), "its clock runs after the turn");

    app.set_input("/tasks");
    app.handle_key(key(KeyCode::Enter));
    let text = screen(&mut app, 100, 30);
    assert!(
        text.contains("explore · scan the docs · grep TODO · 1m05s · background"),
        "{text}"
    );

    app.handle_engine(child_done("t9", "explore", 4, 9_000));
    app.set_input("/tasks");
    app.handle_key(key(KeyCode::Enter));
    let text = screen(&mut app, 100, 30);
    assert!(text.contains("no task is running"), "{text}");
    assert!(text.contains("background · done · 4 turns"), "{text}");
    assert!(!app.is_animating());
}

#[test]
fn a_stored_task_call_shows_as_a_done_task_block() {
    let mut asked = Message::assistant("");
    asked.tool_calls = vec![task_call("t1", "explore", "find the callers", false)];
    let messages = [
        Message::user("where is split called?"),
        asked,
        Message::tool_result(&ToolResult::ok("t1", "One caller.")),
    ];
    let mut app = app();
    *app.transcript_mut() = crate::tui::Transcript::from_messages(&messages);
    let text = screen(&mut app, 80, 24);
    assert!(text.contains("✓ explore  find the callers  done"), "{text}");
    assert!(text.contains("│ One caller."), "{text}");
    // No child session is known for it: Ctrl+O folds and unfolds.
    assert!(app.handle_key(ctrl('o')).is_empty());
    assert!(app.view().expanded);
    assert_eq!(app.layer(), Focus::Main);
}

/// A child's model calls count in the status line's totals and `/cost`'s models, once each:
/// the parent's own `token_update`s do not hold them, and `done` (which does) is not added.
#[test]
fn a_childs_token_updates_count_once_in_the_spend() {
    let (mut app, _now) = running_app();
    app.session_mut().model = "claude-sonnet".into();
    let update = |input: u64, output: u64, cost: f64| {
        EventKind::TokenUpdate(TokenUpdate {
            input_tokens: input,
            output_tokens: output,
            cost_usd: Some(cost),
            ..TokenUpdate::default()
        })
    };
    app.handle_engine(event(1, update(1_000, 100, 0.01)));
    app.handle_engine(event(
        1,
        EventKind::ToolStart(task_call("t1", "explore", "find it", false)),
    ));
    app.handle_engine(child_started("t1", "explore", "s1"));
    app.handle_engine(child(
        "t1",
        "explore",
        EventKind::TokenUpdate(TokenUpdate {
            estimated: true,
            input_tokens: 99_999,
            ..TokenUpdate::default()
        }),
    ));
    app.handle_engine(child("t1", "explore", update(500, 50, 0.002)));
    app.handle_engine(child("t1", "explore", update(700, 70, 0.003)));
    app.handle_engine(child_done("t1", "explore", 2, 1_320));
    app.handle_engine(result("t1", "found", false, 1));
    app.handle_engine(event(2, update(2_000, 200, 0.02)));
    app.handle_engine(event(
        2,
        EventKind::Done(DoneInfo {
            turns: 2,
            input_tokens: 4_200,
            output_tokens: 420,
            cost_usd: Some(0.035),
            ..DoneInfo::default()
        }),
    ));
    assert_eq!(app.spending().total().input, 4_200);
    assert_eq!(app.spending().total().output, 420);
    assert!((app.spending().total().cost_usd - 0.035).abs() < 1e-9);
    let models: Vec<(&str, u64)> = app
        .spending()
        .by_model()
        .iter()
        .map(|(model, spend)| (model.as_str(), spend.input))
        .collect();
    assert_eq!(models, [("claude-sonnet", 3_000), ("claude-haiku", 1_200)]);
}

/// A resumed session's task block opens its child's transcript: the core's `Loaded` carries the
/// store's link from the `task` call to the child's session.
#[test]
fn a_resumed_task_block_opens_its_childs_transcript() {
    let mut asked = Message::assistant("");
    asked.tool_calls = vec![task_call("t1", "explore", "find the callers", false)];
    let messages = vec![
        Message::user("where is split called?"),
        asked,
        Message::tool_result(&ToolResult::ok("t1", "One caller.")),
    ];
    let mut app = app();
    let Update::Loaded(mut session) = loaded("parent", messages) else {
        unreachable!()
    };
    std::sync::Arc::make_mut(&mut session).child_sessions = vec![
        ("t1".into(), "child-1".into()),
        ("gone".into(), "child-2".into()),
    ];
    app.take_update(Update::Loaded(session));
    let commands = app.handle_key(ctrl('o'));
    assert_eq!(
        commands,
        [Effect::Request(Request::ReadSession {
            session_id: "child-1".into()
        })]
    );
    assert_eq!(app.layer(), Focus::TaskTranscript);
}
