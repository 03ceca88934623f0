//! The screen without a terminal: widgets as `insta` snapshots of a `TestBackend`, and the app
//! driven through its real update and draw code with keys and engine events.

use std::time::Duration;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers, MouseEvent, MouseEventKind};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

use super::app::{App, Effect, Scroll, SessionView};
use super::dialog_guard::Clock;
use super::transcript::EntryKind;
use super::view;
use crate::engine::{
    ApprovalDecision, ApprovalRequest, DoneInfo, Event, EventKind, Failure, FailureKind, RetryInfo,
    TokenUpdate, ToolOutcome,
};
use crate::schema::{ToolCall, ToolResult};
use crate::session::Request;
use crate::session::{LoadedSession, Update};
use crate::session::{Mode, TodoItem, TodoStatus};

const SIZES: [(u16, u16); 2] = [(80, 24), (160, 48)];

/// The core's update for a session loaded with `messages` (no name, nothing wrong).
fn loaded(session_id: &str, messages: Vec<crate::schema::Message>) -> Update {
    Update::Loaded(std::sync::Arc::new(LoadedSession {
        session_id: session_id.into(),
        name: None,
        mode: Mode::Default,
        messages,
        child_sessions: Vec::new(),
        todos: Vec::new(),
        queue: Vec::new(),
        problems: Vec::new(),
        notices: Vec::new(),
    }))
}

fn session(mode: Mode) -> SessionView {
    SessionView {
        session_id: "0123456789abcdef".into(),
        provider: "anthropic".into(),
        model: "claude-sonnet-4-20250514".into(),
        workdir: "/work/repo".into(),
        mode,
        context_window: 200_000,
    }
}

/// An app whose clock moves a second on at every reading, so dialogs drawn before a key have
/// always been on screen long enough (the tests of that rule set the time themselves).
fn app() -> App {
    super::highlight::load_now();
    let mut app = App::new(session(Mode::Default));
    let start = std::time::Instant::now();
    let readings = std::sync::atomic::AtomicU64::new(0);
    *app.clock_mut() = Clock::from_fn(move || {
        let n = readings.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        start + Duration::from_secs(n)
    });
    app
}

/// An app whose clock reads what the test sets.
fn app_at(now: &std::sync::Arc<std::sync::Mutex<std::time::Instant>>) -> App {
    let mut app = app();
    let time = std::sync::Arc::clone(now);
    *app.clock_mut() = Clock::from_fn(move || *time.lock().unwrap());
    app
}

/// The screen as text, one line per row.
fn screen(app: &mut App, width: u16, height: u16) -> String {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    terminal.draw(|frame| view::render(app, frame)).unwrap();
    let buffer = terminal.backend().buffer();
    (0..height)
        .map(|y| {
            (0..width)
                .map(|x| buffer[(x, y)].symbol())
                .collect::<String>()
                .trim_end()
                .to_owned()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn snapshot_both(name: &str, mut make: impl FnMut() -> App) {
    for (w, h) in SIZES {
        let mut app = make();
        insta::assert_snapshot!(format!("{name}_{w}x{h}"), screen(&mut app, w, h));
    }
}

fn event(turn: u32, kind: EventKind) -> Event {
    Event { turn, kind }
}

fn call(id: &str, name: &str, arguments: &str) -> ToolCall {
    ToolCall {
        id: id.into(),
        name: name.into(),
        arguments: arguments.into(),
    }
}

fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

fn ctrl(c: char) -> KeyEvent {
    KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL)
}

/// A plan of two open items, as a plan-mode run writes it.
pub(super) fn two_item_plan() -> Vec<TodoItem> {
    vec![
        TodoItem {
            content: "read the parser".into(),
            status: TodoStatus::Pending,
        },
        TodoItem {
            content: "fix split".into(),
            status: TodoStatus::Pending,
        },
    ]
}

fn type_text(app: &mut App, text: &str) -> Vec<Effect> {
    let mut commands = Vec::new();
    for c in text.chars() {
        commands.extend(app.handle_key(key(KeyCode::Char(c))));
    }
    commands
}

const MARKDOWN: &str = "## Plan\n\nThe parser has **two** bugs, see [the issue](https://example.com/1):\n\n1. `split` drops the last field\n2. quotes are not unescaped\n\n> Fix the first one first.\n\n| file | change |\n|---|---|\n| src/parse.rs | fix `split` |\n| tests/parse.rs | add a case |\n\n```rust\nfn split(line: &str) -> Vec<&str> {\n    line.split(',').collect()\n}\n```\n";

#[test]
fn snapshot_markdown_with_code_and_a_table() {
    snapshot_both("markdown", || {
        let mut app = app();
        app.transcript_mut()
            .push(EntryKind::User("Why does the parser fail?".into()));
        app.transcript_mut().push(EntryKind::Assistant {
            text: MARKDOWN.into(),
            streaming: false,
        });
        app
    });
}

#[test]
fn snapshot_thinking_folded_and_streaming() {
    snapshot_both("thinking", || {
        let mut app = app();
        let thinking = "The user wants the failing test fixed. First I should read the parser, then the test, then compare what split returns with what the test expects. ".repeat(3);
        app.transcript_mut().push(EntryKind::Thinking {
            text: thinking.clone(),
            streaming: false,
        });
        app.transcript_mut().push(EntryKind::Assistant {
            text: "Reading the parser.".into(),
            streaming: false,
        });
        app.transcript_mut().push(EntryKind::Thinking {
            text: "Now the test file…".into(),
            streaming: true,
        });
        app
    });
}

#[test]
fn snapshot_tool_blocks_running_ok_error_and_a_diff() {
    snapshot_both("tools", || {
        let mut app = app();
        app.transcript_mut()
            .tool_started(call("1", "bash", r#"{"command":"cargo test -q"}"#));
        app.transcript_mut().tool_finished(
            &ToolResult::ok("1", "running 12 tests\n............\ntest result: ok. 12 passed; 0 failed\nline 4\nline 5\nline 6\nexit status: 0"),
            Some(Duration::from_millis(1840)),
        );
        app.transcript_mut()
            .tool_started(call("2", "read_file", r#"{"path":"src/missing.rs"}"#));
        app.transcript_mut().tool_finished(
            &ToolResult::error(
                "2",
                "src/missing.rs does not exist. Check the path with glob or list_dir.",
            ),
            Some(Duration::from_millis(2)),
        );
        app.transcript_mut().tool_started(call(
            "3",
            "edit_file",
            r#"{"path":"src/parse.rs","old_string":"a","new_string":"b"}"#,
        ));
        app.transcript_mut().tool_finished(
            &ToolResult::ok("3", "Edited src/parse.rs: 1 replacement.\n--- a/src/parse.rs\n+++ b/src/parse.rs\n@@ -1,3 +1,3 @@\n fn split(line: &str) -> Vec<&str> {\n-    line.split(',').collect()\n+    line.split(',').map(str::trim).collect()\n }"),
            Some(Duration::from_millis(5)),
        );
        app.view_mut().expanded = true;
        app.transcript_mut()
            .tool_started(call("4", "grep", r#"{"pattern":"fn split"}"#));
        app
    });
}

fn approval(call: ToolCall, reason: &str, scope: &str) -> ApprovalRequest {
    ApprovalRequest::new(call, reason.into(), scope.into(), "--mode yolo", None).0
}

#[test]
fn snapshot_approval_overlays_for_bash_and_edit_file() {
    snapshot_both("approval_bash", || {
        let mut app = app();
        app.transcript_mut()
            .push(EntryKind::User("clean the build".into()));
        app.handle_engine(event(
            1,
            EventKind::ApprovalRequired(approval(
                call("b", "bash", r#"{"command":"rm -rf target && cargo build"}"#),
                "`bash` runs a command",
                "this exact command",
            )),
        ));
        app.handle_engine(event(
            1,
            EventKind::ApprovalRequired(approval(
                call("c", "bash", r#"{"command":"ls"}"#),
                "`bash` runs a command",
                "`bash` commands starting with `ls`",
            )),
        ));
        app
    });
    snapshot_both("approval_edit", || {
        let mut app = app();
        app.handle_engine(event(1, EventKind::ApprovalRequired(approval(
            call("e", "edit_file", r#"{"path":"src/parse.rs","old_string":"fn split(line: &str) {\n    line.split(',')\n}","new_string":"fn split(line: &str) {\n    line.split(',').map(str::trim)\n}"}"#),
            "`edit_file` changes a file",
            "file edits inside the working directory",
        ))));
        app
    });
}

#[test]
fn snapshot_status_line_in_each_mode() {
    for mode in Mode::ALL {
        let mut app = App::new(session(mode));
        app.run_mut().turn = 3;
        app.run_mut().tokens = Some(TokenUpdate {
            input_tokens: 120_000,
            output_tokens: 4_000,
            context_window: 200_000,
            estimated: false,
            ..TokenUpdate::default()
        });
        let text = screen(&mut app, 80, 24);
        let status = text.lines().last().unwrap().to_owned();
        insta::assert_snapshot!(format!("status_{mode}"), status);
        assert!(status.contains(mode.as_str()));
    }
}

#[test]
fn queued_approvals_are_asked_one_after_another() {
    let mut app = app();
    let (first, mut first_answer) = ApprovalRequest::new(
        call("1", "bash", r#"{"command":"make"}"#),
        "runs".into(),
        "`make`".into(),
        "--mode yolo",
        None,
    );
    let (second, mut second_answer) = ApprovalRequest::new(
        call("2", "bash", r#"{"command":"make install"}"#),
        "runs".into(),
        "`make install`".into(),
        "--mode yolo",
        None,
    );
    app.handle_engine(event(1, EventKind::ApprovalRequired(first)));
    app.handle_engine(event(1, EventKind::ApprovalRequired(second)));
    let text = screen(&mut app, 100, 30);
    assert!(
        text.contains("Approve bash? (1 of 2)") && text.contains("$ make"),
        "{text}"
    );
    // Typing goes to the overlay, not the input: nothing reaches the agent meanwhile.
    assert!(app.handle_key(key(KeyCode::Enter)).is_empty());
    app.handle_key(key(KeyCode::Char('y')));
    assert_eq!(
        first_answer.try_recv().unwrap(),
        ApprovalDecision::AllowOnce
    );
    let text = screen(&mut app, 100, 30);
    assert!(
        text.contains("$ make install") && !text.contains("(1 of"),
        "{text}"
    );
    app.handle_key(key(KeyCode::Char('d')));
    type_text(&mut app, "use make check");
    app.handle_key(key(KeyCode::Enter));
    assert_eq!(
        second_answer.try_recv().unwrap(),
        ApprovalDecision::Deny {
            reason: Some("use make check".into())
        }
    );
    assert!(app.approvals_waiting() == 0);
    assert!(
        app.input_text().is_empty(),
        "the denial text never landed in the prompt"
    );
}

#[test]
fn reading_older_text_is_not_yanked_by_streaming() {
    let mut app = app();
    for i in 0..40 {
        app.transcript_mut()
            .push(EntryKind::User(format!("question {i}")));
    }
    app.run_mut().running = true;
    screen(&mut app, 80, 24);
    app.handle_key(key(KeyCode::PageUp));
    let before = screen(&mut app, 80, 24);
    assert!(matches!(app.view().scroll, Scroll::Anchored { .. }));
    for i in 0..30 {
        app.handle_engine(event(
            1,
            EventKind::ActionDelta(format!("streamed line {i}\n\n")),
        ));
    }
    let after = screen(&mut app, 80, 24);
    let body = |s: &str| s.lines().take(15).collect::<Vec<_>>().join("\n");
    assert_eq!(
        body(&before),
        body(&after),
        "the view stays where the user reads"
    );
    assert!(after.contains("more lines · End to follow"));
    app.handle_key(key(KeyCode::End));
    let bottom = screen(&mut app, 80, 24);
    assert!(bottom.contains("streamed line 29"), "{bottom}");
    app.handle_mouse(MouseEvent {
        kind: MouseEventKind::ScrollUp,
        column: 0,
        row: 0,
        modifiers: KeyModifiers::NONE,
    });
    screen(&mut app, 80, 24);
    assert!(matches!(app.view().scroll, Scroll::Anchored { .. }));
}

#[test]
fn keys_for_modes_help_todos_and_quitting() {
    let now = std::sync::Arc::new(std::sync::Mutex::new(std::time::Instant::now()));
    let mut app = app_at(&now);
    assert_eq!(
        app.handle_key(KeyEvent::new(KeyCode::BackTab, KeyModifiers::SHIFT)),
        [Effect::Request(Request::SetMode(Mode::AutoEdit))]
    );
    assert_eq!(
        app.handle_key(KeyEvent::new(KeyCode::BackTab, KeyModifiers::SHIFT)),
        [Effect::Request(Request::SetMode(Mode::Plan))]
    );
    assert!(
        screen(&mut app, 80, 24)
            .lines()
            .last()
            .unwrap()
            .starts_with(" plan ")
    );
    app.handle_key(key(KeyCode::Char('?')));
    assert!(screen(&mut app, 80, 24).contains("Keys and commands · Esc closes"));
    app.handle_key(key(KeyCode::Esc));
    app.take_update(Update::Todos(vec![
        TodoItem {
            content: "read the parser".into(),
            status: TodoStatus::Completed,
        },
        TodoItem {
            content: "fix split".into(),
            status: TodoStatus::InProgress,
        },
    ]));
    app.handle_key(ctrl('t'));
    let text = screen(&mut app, 120, 30);
    assert!(
        text.contains("todos 1/2") && text.contains("▶ fix split"),
        "{text}"
    );
    // Shift+Enter and Ctrl+J make new lines; a paste inserts without sending.
    type_text(&mut app, "a");
    app.handle_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::SHIFT));
    app.handle_key(ctrl('j'));
    app.handle_paste("pasted\nlines");
    assert_eq!(app.input_text(), "a\n\npasted\nlines");
    // Ctrl+C clears, a second press quits.
    assert!(app.handle_key(ctrl('c')).is_empty());
    assert!(app.input_text().is_empty());
    assert_eq!(app.handle_key(ctrl('c')), [Effect::Quit]);
    let mut app = self::app();
    assert_eq!(app.handle_key(ctrl('d')), [Effect::Quit]);
}

#[test]
fn a_resumed_transcript_shows_tools_and_marks_cut_calls_interrupted() {
    use crate::schema::Message;
    let mut assistant = Message::assistant("Checking.");
    assistant.tool_calls = vec![
        call("a", "bash", r#"{"command":"ls"}"#),
        call("b", "bash", r#"{"command":"sleep 9"}"#),
    ];
    let messages = vec![
        Message::user("look"),
        assistant,
        Message::tool_result(&ToolResult::ok("a", "src\nCargo.toml")),
    ];
    let mut app = app();
    *app.transcript_mut() = super::Transcript::from_messages(&messages);
    let text = screen(&mut app, 80, 24);
    assert!(
        text.contains("✓ bash  ls") && text.contains("Cargo.toml"),
        "{text}"
    );
    assert!(text.contains("⏹ bash  sleep 9  interrupted"), "{text}");
}

#[test]
fn a_resize_reflows_the_transcript() {
    let mut app = app();
    app.transcript_mut().push(EntryKind::Assistant {
        text: "word ".repeat(60),
        streaming: false,
    });
    let wide = screen(&mut app, 160, 24);
    let narrow = screen(&mut app, 40, 24);
    let count = |s: &str| s.lines().filter(|l| l.contains("word")).count();
    assert!(count(&narrow) > count(&wide) * 3, "{narrow}");
    assert!(narrow.lines().all(|l| l.chars().count() <= 40));
}

#[test]
fn the_overlay_offers_a_narrow_rule_and_r_writes_it() {
    let mut app = app();
    let (request, mut answer) = ApprovalRequest::new(
        call("1", "bash", r#"{"command":"cargo test -q"}"#),
        "`bash` runs a command".into(),
        "`bash` commands starting with `cargo test`".into(),
        "--mode yolo",
        Some("bash(cargo test*)".into()),
    );
    app.handle_engine(event(1, EventKind::ApprovalRequired(request)));
    let text = screen(&mut app, 120, 30);
    assert!(
        text.contains(
            "r  always allow calls like this: writes `bash(cargo test*)` to .harness9/settings.local.json"
        ),
        "{text}"
    );
    app.handle_key(key(KeyCode::Char('r')));
    assert_eq!(answer.try_recv().unwrap(), ApprovalDecision::AllowRule);
}

#[test]
fn no_state_panics_at_tiny_sizes() {
    let states: Vec<Box<dyn Fn() -> App>> = vec![
        Box::new(app),
        Box::new(|| {
            let mut app = app();
            app.transcript_mut().push(EntryKind::User("q".repeat(300)));
            app.transcript_mut().push(EntryKind::Assistant {
                text: MARKDOWN.into(),
                streaming: true,
            });
            app.transcript_mut()
                .tool_started(call("1", "bash", r#"{"command":"ls"}"#));
            app
        }),
        Box::new(|| {
            let mut app = app();
            app.handle_engine(event(
                1,
                EventKind::ApprovalRequired(approval(
                    call(
                        "b",
                        "edit_file",
                        r#"{"path":"a","old_string":"x","new_string":"y"}"#,
                    ),
                    "r",
                    "s",
                )),
            ));
            app
        }),
        Box::new(|| {
            let mut app = app();
            app.open_layer(super::help::Help::default());
            app
        }),
        Box::new(|| {
            let mut app = app();
            app.plan_mut().toggle_todos();
            app.take_update(Update::Todos(vec![TodoItem {
                content: "a long todo item ".repeat(5),
                status: TodoStatus::InProgress,
            }]));
            app
        }),
        Box::new(|| {
            let mut app = app();
            type_text(&mut app, "/");
            app.handle_key(ctrl('r'));
            app
        }),
        Box::new(|| {
            let mut app = app();
            type_text(&mut app, "/c");
            app
        }),
        Box::new(|| {
            let mut app = app();
            app.session_mut().mode = Mode::Plan;
            app.take_update(Update::Todos(vec![TodoItem {
                content: "step".into(),
                status: TodoStatus::Pending,
            }]));
            app.handle_engine(event(
                1,
                EventKind::Done(DoneInfo {
                    turns: 1,
                    input_tokens: 1,
                    output_tokens: 1,
                    ..DoneInfo::default()
                }),
            ));
            app
        }),
    ];
    for (w, h) in [(1, 1), (2, 2), (10, 3), (20, 5), (30, 8), (50, 12)] {
        for make in &states {
            let mut app = make();
            screen(&mut app, w, h);
        }
    }
}

mod approvals;
mod commands;
mod dialogs;
mod elicitation;
mod folds;
mod inline;
mod input_rows;
mod keys;
mod mcp;
mod memory;
mod notices;
mod plan;
mod rewind;
mod runs;
mod screen;
mod subagents;
mod tasks;
