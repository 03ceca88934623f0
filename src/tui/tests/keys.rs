//! Keys and their routing: Ctrl+C by what is going on, the readline keys, the `/` popup, `!`
//! commands stopped by Esc with prompts queued behind them, and the layer on top taking keys.

use super::*;

fn alt(c: char) -> KeyEvent {
    KeyEvent::new(KeyCode::Char(c), KeyModifiers::ALT)
}

fn clock() -> std::sync::Arc<std::sync::Mutex<std::time::Instant>> {
    std::sync::Arc::new(std::sync::Mutex::new(std::time::Instant::now()))
}

#[test]
fn ctrl_c_interrupts_a_run_and_keeps_the_input() {
    let now = clock();
    let mut app = app_at(&now);
    type_text(&mut app, "long task");
    app.handle_key(key(KeyCode::Enter));
    type_text(&mut app, "half typed");
    assert_eq!(
        app.handle_key(ctrl('c')),
        [Effect::Request(Request::Interrupt)]
    );
    assert_eq!(app.input_text(), "half typed", "the input is not cleared");
    // A second press while the run is still stopping does not quit.
    assert_eq!(
        app.handle_key(ctrl('c')),
        [Effect::Request(Request::Interrupt)]
    );
    assert!(!app.screen().should_quit);
}

#[test]
fn ctrl_c_on_an_idle_screen_clears_then_quits_within_a_second_and_its_hint_goes() {
    let now = clock();
    let advance = |ms: u64| *now.lock().unwrap() += Duration::from_millis(ms);
    let mut app = app_at(&now);
    type_text(&mut app, "draft");
    assert!(app.handle_key(ctrl('c')).is_empty());
    assert_eq!(app.input_text(), "");
    let status = screen(&mut app, 80, 24);
    assert!(status.contains("press Ctrl+C again to quit"), "{status}");
    // The loop wakes when the hint's second is over; then the hint is gone and the next
    // Ctrl+C only clears again.
    let wake = app.wake_at().expect("a wake-up for the hint");
    advance(1000);
    assert_eq!(wake, *now.lock().unwrap());
    assert!(app.expire(*now.lock().unwrap()));
    assert!(!screen(&mut app, 80, 24).contains("press Ctrl+C again"));
    assert!(app.handle_key(ctrl('c')).is_empty());
    advance(999);
    assert_eq!(app.handle_key(ctrl('c')), [Effect::Quit]);
}

#[test]
fn readline_keys_edit_the_prompt() {
    let mut app = app();
    type_text(&mut app, "cargo test --lib parser");
    app.handle_key(ctrl('w'));
    assert_eq!(app.input_text(), "cargo test --lib ");
    app.handle_key(ctrl('a'));
    app.handle_key(alt('f'));
    app.handle_key(ctrl('k'));
    assert_eq!(app.input_text(), "cargo");
    app.handle_key(ctrl('e'));
    type_text(&mut app, " build now");
    app.handle_key(alt('b'));
    app.handle_key(ctrl('u'));
    assert_eq!(app.input_text(), "now");
    // Alt+Enter and Ctrl+J make new lines as Shift+Enter does.
    app.handle_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::ALT));
    app.handle_key(ctrl('j'));
    assert_eq!(app.input_text(), "\n\nnow");
}

#[test]
fn tab_in_the_slash_popup_completes_and_never_runs_and_esc_closes_it() {
    let mut app = app();
    type_text(&mut app, "/he");
    assert!(app.handle_key(key(KeyCode::Tab)).is_empty());
    assert_eq!(app.input_text(), "/help");
    assert_ne!(
        app.layer(),
        crate::tui::keymap::Focus::Help,
        "Tab did not run /help"
    );
    type_text(&mut app, "");
    app.set_input("/q");
    assert!(app.handle_key(key(KeyCode::Tab)).is_empty());
    assert!(!app.screen().should_quit && app.input_text() == "/quit");
    // Esc closes the popup without touching a run or the text; typing opens it again.
    app.set_input("/c");
    assert!(screen(&mut app, 80, 24).contains("Tab completes"));
    assert!(app.handle_key(key(KeyCode::Esc)).is_empty());
    assert!(!screen(&mut app, 80, 24).contains("Tab completes"));
    assert_eq!(app.input_text(), "/c");
    type_text(&mut app, "o");
    assert!(screen(&mut app, 80, 24).contains("Tab completes"));
}

#[test]
fn the_slash_popup_scrolls_with_its_selection() {
    let mut app = app();
    type_text(&mut app, "/");
    let all = app.popup();
    assert!(all.len() > crate::tui::workflows::POPUP_ROWS, "{all:?}");
    for _ in 0..all.len() {
        app.handle_key(key(KeyCode::Down));
    }
    let last = &all[all.len() - 1].label;
    let text = screen(&mut app, 80, 24);
    assert!(text.contains(last.as_str()), "{text}");
    assert!(!text.contains(all[0].label.as_str()), "{text}");
}

#[test]
fn a_shell_command_is_stopped_by_esc_and_a_prompt_typed_meanwhile_waits_for_it() {
    let mut app = app();
    type_text(&mut app, "!sleep 30");
    let commands = app.handle_key(key(KeyCode::Enter));
    let [Effect::Request(Request::RunShell { id, .. })] = &commands[..] else {
        panic!("{commands:?}")
    };
    assert!(app.busy() && !app.run().running);
    type_text(&mut app, "what did it print?");
    assert_eq!(
        app.handle_key(key(KeyCode::Enter)),
        [Effect::Request(Request::SetQueue(vec![
            "what did it print?".into()
        ]))]
    );
    assert_eq!(
        app.handle_key(key(KeyCode::Esc)),
        [Effect::Request(Request::Interrupt)]
    );
    // The command ends (cancelled); the queued prompt goes now, carrying its output.
    let commands = app.take_update(Update::ShellDone {
        id: id.clone(),
        result: ToolResult::error("x", "cancelled: the user interrupted the command"),
        duration: Duration::from_millis(40),
    });
    assert_eq!(
        commands,
        [
            Effect::Request(Request::Submit("what did it print?".into())),
            Effect::Request(Request::SetQueue(Vec::new()))
        ]
    );
    assert!(app.run().running && app.shells().is_empty());
}

/// What the open picker's query holds.
fn picker_query(app: &App) -> &str {
    let picker = app.stack().find::<crate::tui::picker::Picker>();
    picker.map_or("", |p| p.query.as_str())
}

#[test]
fn an_approval_drawn_over_the_picker_takes_the_keys() {
    let mut app = app();
    app.handle_key(ctrl('r'));
    type_text(&mut app, "pars");
    assert_eq!(picker_query(&app), "pars");
    let (request, mut answer) = ApprovalRequest::new(
        call("1", "bash", r#"{"command":"make"}"#),
        "runs".into(),
        "`make`".into(),
        "--mode yolo",
        None,
    );
    app.run_mut().running = true;
    app.handle_engine(event(1, EventKind::ApprovalRequired(request)));
    let text = screen(&mut app, 100, 30);
    assert!(text.contains("Approve bash?"), "{text}");
    assert_eq!(
        app.layers().last(),
        Some(&crate::tui::keymap::Focus::Approval)
    );
    // `d` then the reason go to the approval, never to the picker's query under it.
    app.handle_key(key(KeyCode::Char('d')));
    type_text(&mut app, "no");
    app.handle_key(key(KeyCode::Enter));
    assert_eq!(
        answer.try_recv().unwrap(),
        ApprovalDecision::Deny {
            reason: Some("no".into())
        }
    );
    assert_eq!(picker_query(&app), "pars");
    // Help over the picker: Esc closes the help, the picker stays.
    app.open_layer(crate::tui::help::Help::default());
    assert!(screen(&mut app, 100, 30).contains("Keys and commands · Esc closes"));
    app.handle_key(key(KeyCode::Esc));
    assert_eq!(app.layer(), crate::tui::keymap::Focus::Picker);
}

#[test]
fn the_help_and_approval_overlays_scroll_at_80x24_and_40x12() {
    for (w, h) in [(80, 24), (40, 12)] {
        let mut app = app();
        app.handle_key(key(KeyCode::F(1)));
        let mut seen = String::new();
        for _ in 0..240 {
            seen.push_str(&screen(&mut app, w, h));
            app.handle_key(key(KeyCode::Down));
        }
        for hint in [
            "interrupt the running turn",
            "this help",
            "/worktree",
            "yolo: everything",
        ] {
            assert!(seen.contains(hint), "{w}x{h}: {hint} never shown:\n{seen}");
        }
        let mut app = self::app();
        let old: String = (0..60).map(|i| format!("line {i}\n")).collect();
        let args = serde_json::json!({"path": "a.rs", "old_string": old, "new_string": "x"});
        let (request, _answer) = ApprovalRequest::new(
            call("e", "edit_file", &args.to_string()),
            "`edit_file` changes a file".into(),
            "file edits".into(),
            "--mode yolo",
            Some("edit_file(a.rs)".into()),
        );
        app.handle_engine(event(1, EventKind::ApprovalRequired(request)));
        let mut seen = String::new();
        for _ in 0..80 {
            seen.push_str(&screen(&mut app, w, h));
            app.handle_key(key(KeyCode::Down));
        }
        for option in ["allow once", "rest of this", "deny", "always allow"] {
            assert!(
                seen.contains(option),
                "{w}x{h}: {option} never shown:\n{seen}"
            );
        }
    }
}

#[test]
fn the_terminal_cursor_sits_at_the_input_position() {
    let mut app = app();
    type_text(&mut app, "héllo 北京");
    let mut terminal = Terminal::new(TestBackend::new(80, 24)).unwrap();
    terminal
        .draw(|frame| view::render(&mut app, frame))
        .unwrap();
    let position = terminal.get_cursor_position().unwrap();
    // "› " then 6 cells of "héllo " and 4 of the two wide characters.
    assert_eq!((position.x, position.y), (2 + 10, 22));
}
