//! The workflows through the real update and draw code: slash commands, completion, the picker,
//! shell commands, queued prompts, copying, pastes.

use std::time::Duration;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

use super::super::app::{App, Effect, SessionView};
use super::super::view;
use crate::engine::{DoneInfo, Event, EventKind};
use crate::schema::{Message, ToolResult};
use crate::session::Mode;
use crate::session::{LoadedSession, Request, Update};
use crate::session::{SessionHit, SessionSummary};

fn app() -> App {
    let mut app = App::new(SessionView {
        session_id: "current0000".into(),
        provider: "openai".into(),
        model: "gpt-4o".into(),
        workdir: "/work/repo".into(),
        mode: Mode::Default,
        context_window: 128_000,
    });
    app.facts_mut().skills = vec![("deploy".into(), "ship to staging".into())];
    app
}

fn screen(app: &mut App) -> String {
    let mut terminal = Terminal::new(TestBackend::new(100, 30)).unwrap();
    terminal.draw(|f| view::draw(app, f)).unwrap();
    let buffer = terminal.backend().buffer();
    (0..30)
        .map(|y| {
            (0..100)
                .map(|x| buffer[(x, y)].symbol())
                .collect::<String>()
                .trim_end()
                .to_owned()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

fn type_text(app: &mut App, text: &str) -> Vec<Effect> {
    text.chars()
        .flat_map(|c| app.handle_key(key(KeyCode::Char(c))))
        .collect()
}

fn send(app: &mut App, text: &str) -> Vec<Effect> {
    let mut commands = type_text(app, text);
    commands.extend(app.handle_key(key(KeyCode::Enter)));
    commands
}

fn done() -> Event {
    Event {
        turn: 1,
        kind: EventKind::Done(DoneInfo {
            turns: 1,
            input_tokens: 1,
            output_tokens: 1,
            ..DoneInfo::default()
        }),
    }
}

#[test]
fn prompts_typed_while_working_are_queued_and_sent_in_order() {
    let mut app = app();
    assert_eq!(
        send(&mut app, "first"),
        [Effect::Request(Request::Submit("first".into()))]
    );
    assert_eq!(
        send(&mut app, "second"),
        [Effect::Request(Request::SetQueue(vec!["second".into()]))]
    );
    send(&mut app, "third");
    let text = screen(&mut app);
    assert!(
        text.contains("» queued  second") && text.contains("» queued  third"),
        "{text}"
    );
    // Up takes the last one back to edit; Enter queues it again.
    app.handle_key(key(KeyCode::Up));
    assert_eq!(app.input_text(), "third");
    assert_eq!(app.queue().prompts(), ["second"]);
    app.handle_key(key(KeyCode::Enter));
    assert_eq!(app.queue().prompts(), ["second", "third"]);
    // The turn ends: the next one goes out by itself.
    let commands = app.handle_engine(done());
    assert_eq!(
        commands,
        [
            Effect::Request(Request::Submit("second".into())),
            Effect::Request(Request::SetQueue(vec!["third".into()]))
        ]
    );
    assert!(app.run().running);
    // Esc keeps what is queued; Enter on an empty input sends it.
    app.handle_engine(Event {
        turn: 2,
        kind: EventKind::Error(crate::engine::Failure::new(
            crate::engine::FailureKind::Interrupted,
            "interrupted",
        )),
    });
    assert_eq!(app.queue().prompts(), ["third"]);
    assert!(screen(&mut app).contains("1 queued prompt(s) kept"));
    assert_eq!(
        app.handle_key(key(KeyCode::Enter)),
        [
            Effect::Request(Request::Submit("third".into())),
            Effect::Request(Request::SetQueue(vec![]))
        ]
    );
}

#[test]
fn slash_commands_do_what_they_say() {
    let mut app = app();
    assert_eq!(
        send(&mut app, "/rename parser-work"),
        [Effect::Request(Request::Rename("parser-work".into()))]
    );
    assert_eq!(
        send(&mut app, "/mode plan"),
        [Effect::Request(Request::SetMode(Mode::Plan))]
    );
    assert_eq!(
        send(&mut app, "/model gpt-4.1"),
        [Effect::Request(Request::SetModel("gpt-4.1".into()))]
    );
    assert_eq!(
        send(&mut app, "/compact"),
        [Effect::Request(Request::Compact)]
    );
    assert_eq!(
        send(&mut app, "/new"),
        [Effect::Request(Request::NewSession)]
    );
    assert!(send(&mut app, "/todos").is_empty() && app.plan().show_todos());
    send(&mut app, "/help");
    assert_eq!(app.layer(), crate::tui::keymap::Focus::Help);
    app.handle_key(key(KeyCode::Esc));
    assert!(send(&mut app, "/compcat").is_empty());
    assert!(
        app.flash()
            .text
            .as_deref()
            .unwrap()
            .contains("did you mean /compact?")
    );
    let commands = send(&mut app, "/deploy the api");
    assert!(
        matches!(&commands[..], [Effect::Request(Request::Submit(p))] if p.contains("use_skill with name \"deploy\"") && p.ends_with("the api"))
    );
    app.handle_engine(done());
    app.transcript_mut()
        .push(super::super::transcript::EntryKind::Assistant {
            text: "Run this:\n\n```sh\ncargo test\n```\n\nthen\n\n```sh\ncargo clippy\n```".into(),
            streaming: false,
        });
    assert_eq!(
        send(&mut app, "/copy 2"),
        [Effect::Copy("cargo clippy\n".into())]
    );
    assert!(
        matches!(&send(&mut app, "/copy")[..], [Effect::Copy(t)] if t.starts_with("Run this:"))
    );
    assert!(send(&mut app, "/copy 9").is_empty());
    // A fresh context is a new session (the core loads it; see tests/commands.rs).
    assert_eq!(
        send(&mut app, "/clear"),
        [Effect::Request(Request::NewSession)]
    );
    assert_eq!(send(&mut app, "/quit"), [Effect::Quit]);
}

#[test]
fn the_popup_completes_commands_and_files() {
    let mut app = app();
    type_text(&mut app, "/co");
    let text = screen(&mut app);
    assert!(
        text.contains("/compact") && text.contains("/copy [N]"),
        "{text}"
    );
    app.handle_key(key(KeyCode::Down));
    app.handle_key(key(KeyCode::Tab));
    assert_eq!(
        app.input_text(),
        "/copy ",
        "a command with arguments waits for them"
    );
    app.handle_key(KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL));

    assert_eq!(
        type_text(&mut app, "look at @"),
        [Effect::Request(Request::ListFiles { generation: 0 })]
    );
    app.take_update(Update::Files {
        generation: 0,
        files: std::sync::Arc::new(vec![
            "README.md".into(),
            "src/main.rs".into(),
            "src/engine/run_loop.rs".into(),
        ]),
    });
    type_text(&mut app, "mai");
    assert!(screen(&mut app).contains("src/main.rs"));
    app.handle_key(key(KeyCode::Enter));
    assert_eq!(
        app.input_text(),
        "look at @src/main.rs ",
        "Enter takes the completion, it does not send"
    );
}

fn hit(id: &str, title: &str) -> SessionHit {
    SessionHit {
        session: SessionSummary {
            id: id.into(),
            name: None,
            title: title.into(),
            workdir: "/work/repo".into(),
            provider: "openai".into(),
            model: "gpt-4o".into(),
            mode: "default".into(),
            created_at: 0,
            updated_at: crate::session::text::now_ms(),
            message_count: 4,
            totals: Default::default(),
        },
        snippet: String::new(),
    }
}

#[test]
fn the_picker_queries_off_the_ui_and_drops_stale_answers() {
    let mut app = app();
    let commands = app.handle_key(KeyEvent::new(KeyCode::Char('r'), KeyModifiers::CONTROL));
    assert_eq!(
        commands,
        [Effect::Request(Request::ListSessions {
            query: String::new(),
            all: false,
            generation: 1
        })]
    );
    let commands = type_text(&mut app, "pa");
    assert_eq!(
        commands.last(),
        Some(&Effect::Request(Request::ListSessions {
            query: "pa".into(),
            all: false,
            generation: 3
        }))
    );
    // An answer to an older query arrives late: it is dropped.
    app.take_update(Update::Sessions {
        generation: 1,
        hits: vec![hit("old", "stale result")],
    });
    assert!(!screen(&mut app).contains("stale result"));
    app.take_update(Update::Sessions {
        generation: 3,
        hits: vec![hit("aaa111", "parser work"), hit("bbb222", "packaging")],
    });
    let text = screen(&mut app);
    assert!(
        text.contains("parser work") && text.contains("packaging") && text.contains("4 messages"),
        "{text}"
    );
    assert_eq!(
        app.handle_key(key(KeyCode::Tab)),
        [Effect::Request(Request::ListSessions {
            query: "pa".into(),
            all: true,
            generation: 4
        })]
    );
    app.take_update(Update::Sessions {
        generation: 4,
        hits: vec![hit("aaa111", "parser work"), hit("bbb222", "packaging")],
    });
    app.handle_key(key(KeyCode::Down));
    assert_eq!(
        app.handle_key(key(KeyCode::Enter)),
        [Effect::Request(Request::Resume("bbb222".into()))]
    );
    assert_eq!(app.layer(), crate::tui::keymap::Focus::Main);
}

#[test]
fn a_loaded_session_shows_its_transcript_mode_queue_and_an_interrupted_turn() {
    let mut app = app();
    let mut answer = Message::assistant("Looking.");
    answer.tool_calls = vec![crate::schema::ToolCall {
        id: "a".into(),
        name: "bash".into(),
        arguments: r#"{"command":"ls"}"#.into(),
    }];
    let messages = vec![
        Message::user(
            "first task\n\n<attached-files>\n<file path=\"a.rs\">x</file>\n</attached-files>",
        ),
        answer,
        Message::tool_result(&ToolResult::ok("a", "src")),
        Message::assistant("Done."),
        Message::user("second task, cut off by a kill"),
    ];
    app.take_update(Update::Loaded(std::sync::Arc::new(LoadedSession {
        session_id: "other".into(),
        name: None,
        mode: Mode::Plan,
        messages,
        child_sessions: Vec::new(),
        todos: vec![],
        queue: vec!["after that".into()],
        problems: Vec::new(),
        notices: Vec::new(),
    })));
    let text = screen(&mut app);
    assert!(
        text.contains("› first task") && text.contains("attached: a.rs (1 B)"),
        "{text}"
    );
    assert!(!text.contains("<attached-files>"));
    assert!(
        text.contains("✓ bash  ls")
            && text.contains("this turn was interrupted before it finished"),
        "{text}"
    );
    assert!(text.contains("» queued  after that"));
    assert_eq!(app.session().mode, Mode::Plan);
    app.handle_key(key(KeyCode::Up));
    assert_eq!(
        app.input_text(),
        "after that",
        "Up edits the restored queue first"
    );
}

#[test]
fn a_shell_command_runs_without_the_model_and_shows_its_output() {
    let mut app = app();
    let commands = send(&mut app, "!echo hi");
    let [Effect::Request(Request::RunShell { id, command })] = &commands[..] else {
        panic!("{commands:?}")
    };
    assert_eq!(command, "echo hi");
    assert!(!app.run().running, "no model run");
    app.take_update(Update::ShellDone {
        id: id.clone(),
        result: ToolResult::ok("x", "hi\nexit status: 0"),
        duration: Duration::from_millis(3),
    });
    let text = screen(&mut app);
    assert!(
        text.contains("✓ bash  echo hi") && text.contains("│ hi"),
        "{text}"
    );
    assert!(text.contains("the output goes to the model with your next prompt"));
}

#[test]
fn long_pastes_collapse_and_are_sent_whole_and_the_mouse_can_be_released() {
    let mut app = app();
    screen(&mut app);
    let long: String = (0..200).map(|i| format!("line {i}\n")).collect();
    app.handle_paste(&long);
    assert_eq!(app.input_text(), "[pasted 200 lines #1]");
    let commands = app.handle_key(key(KeyCode::Enter));
    assert!(matches!(&commands[..], [Effect::Request(Request::Submit(text))] if text == &long));
    assert_eq!(
        app.handle_key(key(KeyCode::F(2))),
        [Effect::SetMouseCapture(false)]
    );
    assert!(
        screen(&mut app)
            .lines()
            .last()
            .unwrap()
            .contains("mouse: select (F2)")
    );
}

#[test]
fn a_plan_is_reviewed_then_run_with_auto_continue_or_step_by_step_or_discarded() {
    use crate::session::{TodoItem, TodoStatus};
    let plan = super::super::tests::two_item_plan();
    let mut app = app();
    app.session_mut().mode = Mode::Plan;
    send(&mut app, "plan the fix");
    app.take_update(Update::Todos(plan.clone()));
    app.handle_engine(done());
    let text = screen(&mut app);
    assert!(
        text.contains("The plan is ready") && text.contains("○ fix split"),
        "{text}"
    );
    let commands = app.handle_key(key(KeyCode::Char('a')));
    assert_eq!(
        &commands[..2],
        [
            Effect::Request(Request::SetMode(Mode::Default)),
            Effect::Request(Request::SetAutoContinue(true))
        ]
    );
    assert!(
        matches!(&commands[2], Effect::Request(Request::Submit(p)) if p.starts_with("Carry out the plan"))
    );
    assert!(
        screen(&mut app)
            .lines()
            .last()
            .unwrap()
            .contains("auto-continue (Esc stops)")
    );
    // Esc stops the auto-run at once.
    assert_eq!(
        app.handle_key(key(KeyCode::Esc)),
        [
            Effect::Request(Request::Interrupt),
            Effect::Request(Request::SetAutoContinue(false))
        ]
    );

    let mut app = self::app();
    app.session_mut().mode = Mode::Plan;
    app.take_update(Update::Todos(plan.clone()));
    app.handle_engine(done());
    app.handle_key(key(KeyCode::Char('k')));
    type_text(&mut app, "split the fix in two");
    assert_eq!(
        app.handle_key(key(KeyCode::Enter)),
        [Effect::Request(Request::Submit(
            "split the fix in two".into()
        ))]
    );
    assert_eq!(
        app.session().mode,
        Mode::Plan,
        "keep planning stays in plan mode"
    );

    let mut app = self::app();
    app.session_mut().mode = Mode::Plan;
    app.take_update(Update::Todos(plan));
    app.handle_engine(done());
    assert_eq!(
        app.handle_key(key(KeyCode::Char('s')))[..2],
        [
            Effect::Request(Request::SetMode(Mode::Default)),
            Effect::Request(Request::SetAutoContinue(false))
        ]
    );
    let mut app = self::app();
    app.session_mut().mode = Mode::Plan;
    app.take_update(Update::Todos(vec![TodoItem {
        content: "x".into(),
        status: TodoStatus::Pending,
    }]));
    app.handle_engine(done());
    assert_eq!(
        app.handle_key(key(KeyCode::Char('x'))),
        [Effect::Request(Request::ClearTodos)]
    );
}

#[test]
fn a_store_failure_is_shown_as_what_it_is_and_stays_in_the_transcript() {
    use crate::engine::{Failure, FailureKind};
    let mut app = app();
    app.take_update(Update::Failed(Failure::new(
        FailureKind::Storage,
        "cannot open session 0123: session store: disk I/O error",
    )));
    let text = screen(&mut app);
    assert!(text.contains("disk I/O error"), "{text}");
    assert!(
        app.transcript().entries().iter().any(|e| matches!(
            &e.kind,
            super::super::transcript::EntryKind::Notice { text, .. } if text.contains("disk I/O error")
        )),
        "kept in the transcript, not only flashed"
    );
    // Other failures are said on the status line only.
    app.take_update(Update::Failed(Failure::new(
        FailureKind::NotFound,
        "session 4567 is gone",
    )));
    assert_eq!(app.flash().text.as_deref(), Some("session 4567 is gone"));
}
