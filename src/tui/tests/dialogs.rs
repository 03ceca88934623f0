//! Dialogs that take keys only once they have been on screen for 250 ms: approvals (one at a
//! time, each its own 250 ms) and the folder trust question.

use super::*;

#[test]
fn keys_typed_before_an_approval_was_on_screen_for_250_ms_do_not_answer_it() {
    let now = std::sync::Arc::new(std::sync::Mutex::new(std::time::Instant::now()));
    let advance = |ms: u64| *now.lock().unwrap() += Duration::from_millis(ms);
    let mut app = app_at(&now);
    type_text(&mut app, "fix it");
    app.handle_key(key(KeyCode::Enter));
    app.handle_engine(event(1, EventKind::ActionDelta("I will clean up.".into())));
    let (request, mut answer) = ApprovalRequest::new(
        call("1", "bash", r#"{"command":"rm -rf victim"}"#),
        "runs".into(),
        "this exact command".into(),
        "--mode yolo",
        None,
    );
    app.handle_engine(event(1, EventKind::ApprovalRequired(request)));
    // Typed ahead while the model streamed: the dialog is not even drawn yet.
    type_text(&mut app, "yes, ");
    assert!(answer.try_recv().is_err());
    let text = screen(&mut app, 100, 30);
    assert!(text.contains("$ rm -rf victim"), "{text}");
    advance(249);
    for k in ['y', 'a', 'n', 'd'] {
        assert!(app.handle_key(key(KeyCode::Char(k))).is_empty());
    }
    app.handle_key(key(KeyCode::Esc));
    assert!(
        answer.try_recv().is_err(),
        "answered 249 ms after it showed"
    );
    assert_eq!(
        app.stack().top().map(|top| top.mode()),
        Some(crate::tui::keymap::Focus::Approval)
    );
    assert_eq!(app.approvals_waiting(), 1);
    advance(1);
    app.handle_key(key(KeyCode::Char('y')));
    assert_eq!(answer.try_recv().unwrap(), ApprovalDecision::AllowOnce);
    assert_eq!(
        app.input_text(),
        "",
        "keys typed at the dialog never reach the input"
    );
}

#[test]
fn the_next_queued_approval_waits_its_own_250_ms() {
    let now = std::sync::Arc::new(std::sync::Mutex::new(std::time::Instant::now()));
    let advance = |ms: u64| *now.lock().unwrap() += Duration::from_millis(ms);
    let mut app = app_at(&now);
    let ask = |id: &str, command: &str| {
        ApprovalRequest::new(
            call(id, "bash", &format!(r#"{{"command":"{command}"}}"#)),
            "runs".into(),
            "this exact command".into(),
            "--mode yolo",
            None,
        )
    };
    let (first, mut first_answer) = ask("1", "make");
    let (second, mut second_answer) = ask("2", "make install");
    app.handle_engine(event(1, EventKind::ApprovalRequired(first)));
    app.handle_engine(event(1, EventKind::ApprovalRequired(second)));
    screen(&mut app, 100, 30);
    advance(300);
    // A double press: the second `y` lands on the dialog that replaced the first.
    app.handle_key(key(KeyCode::Char('y')));
    app.handle_key(key(KeyCode::Char('y')));
    assert_eq!(
        first_answer.try_recv().unwrap(),
        ApprovalDecision::AllowOnce
    );
    assert!(second_answer.try_recv().is_err());
    screen(&mut app, 100, 30);
    app.handle_key(key(KeyCode::Char('y')));
    assert!(second_answer.try_recv().is_err());
    advance(250);
    app.handle_key(key(KeyCode::Char('n')));
    assert_eq!(
        second_answer.try_recv().unwrap(),
        ApprovalDecision::Deny { reason: None }
    );
}

#[test]
fn the_trust_question_takes_its_answer_only_after_250_ms() {
    let now = std::sync::Arc::new(std::sync::Mutex::new(std::time::Instant::now()));
    let mut app = app_at(&now);
    app.open_layer(crate::tui::trust_question::TrustQuestion::new(
        "/work/repo".into(),
    ));
    let text = screen(&mut app, 100, 30);
    assert!(
        text.contains("Trust this folder?") && text.contains("/work/repo"),
        "{text}"
    );
    assert!(app.handle_key(key(KeyCode::Char('t'))).is_empty());
    assert_eq!(app.layer(), crate::tui::keymap::Focus::Trust);
    *now.lock().unwrap() += Duration::from_millis(250);
    assert_eq!(
        app.handle_key(key(KeyCode::Char('t'))),
        vec![Effect::TrustFolder(true)]
    );
    assert_eq!(app.layer(), crate::tui::keymap::Focus::Main);
}

#[test]
fn an_edit_approval_shows_the_engines_preview_with_line_numbers() {
    let mut app = app();
    let (mut request, _answer) = ApprovalRequest::new(
        call(
            "1",
            "edit_file",
            r#"{"path":"src/lib.rs","old_string":"    let b = 2;\n","new_string":"    let b = 3;\n    let c = 4;\n"}"#,
        ),
        "edits a file".into(),
        "edits in this folder".into(),
        "--mode auto-edit",
        None,
    );
    // The engine's diff of the file as it is (lines 40 to 46); the TUI reads no file.
    request.preview = Some(
        "--- a/src/lib.rs\n+++ b/src/lib.rs\n@@ -40,7 +40,8 @@\n fn sum() -> u32 {\n     \
         let a = 1;\n-    let b = 2;\n+    let b = 3;\n+    let c = 4;\n     a + b\n }\n"
            .into(),
    );
    app.handle_engine(event(1, EventKind::ApprovalRequired(request)));
    let text = screen(&mut app, 80, 24);
    assert!(text.contains("  42 -    let b = 2;"), "{text}");
    assert!(text.contains("  43 +    let c = 4;"), "{text}");
    insta::assert_snapshot!("approval_edit_preview_80x24", text);
}

#[test]
fn a_background_commands_approval_shows_its_whole_reason_wrapped() {
    let mut app = app();
    let reason = "`bash` runs commands. A background command: it keeps running after this call \
                  returns, until it ends, is stopped or the session ends; it runs in the sandbox \
                  (workspace-write): it may not use the network";
    let (request, _answer) = ApprovalRequest::new(
        call(
            "1",
            "bash",
            r#"{"command":"python3 -m http.server","background":true}"#,
        ),
        reason.into(),
        "this exact command".into(),
        "--mode yolo",
        None,
    );
    app.handle_engine(event(1, EventKind::ApprovalRequired(request)));
    let text = screen(&mut app, 80, 30);
    // Its end, past the first row, is on screen: what the sandbox allows is not cut.
    assert!(text.contains("A background command"), "{text}");
    assert!(
        text.contains("sandbox (workspace-write): it may not use"),
        "{text}"
    );
}
