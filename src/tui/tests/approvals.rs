//! The approval as a layer (issue 28): each answer says what it really does, the footer names
//! every key offered, and a call too long for the screen scrolls before it is answered (issue
//! 32 points 11 and 15).

use super::*;

/// The footer: the rule above the input, where the focused layer's hints are.
fn footer(text: &str) -> &str {
    text.lines()
        .rev()
        .find(|line| line.starts_with('─'))
        .unwrap_or("")
}

/// A `bash` call that asks to leave the sandbox, as the engine asks it: no grant for the
/// session (it would allow this call only), a rule to write.
fn leaving_the_sandbox() -> (
    ApprovalRequest,
    tokio::sync::oneshot::Receiver<ApprovalDecision>,
) {
    let (mut request, answer) = ApprovalRequest::new(
        call("1", "bash", r#"{"command":"make deploy","sandbox":false}"#),
        "`bash` asks to run outside the sandbox".into(),
        "leaving the sandbox asks every time".into(),
        "--mode yolo",
        Some("bash(make*)".into()),
    );
    request.always_offered = false;
    (request, answer)
}

#[test]
fn a_sandbox_escalation_offers_no_session_grant_and_its_footer_names_r() {
    let mut app = app();
    let (request, mut answer) = leaving_the_sandbox();
    app.handle_engine(event(1, EventKind::ApprovalRequired(request)));
    let text = screen(&mut app, 100, 30);
    assert!(
        !text.contains("allow for the rest of this session"),
        "{text}"
    );
    assert!(
        text.contains("no allow for the session: leaving the sandbox asks every time"),
        "{text}"
    );
    assert!(text.contains(" r  always allow calls like this"), "{text}");
    assert!(footer(&text).contains("y · r · n · d"), "{}", footer(&text));
    // `a` is not offered: it answers nothing, and says why.
    app.handle_key(key(KeyCode::Char('a')));
    assert!(answer.try_recv().is_err());
    let text = screen(&mut app, 100, 30);
    assert!(text.contains("no allow for the session here"), "{text}");
    app.handle_key(key(KeyCode::Char('r')));
    assert_eq!(answer.try_recv().unwrap(), ApprovalDecision::AllowRule);
    assert_eq!(app.approvals_waiting(), 0);
}

#[test]
fn an_approval_without_a_rule_ignores_r_and_names_the_keys_it_offers() {
    let mut app = app();
    let (request, mut answer) = ApprovalRequest::new(
        call("1", "bash", r#"{"command":"make"}"#),
        "runs".into(),
        "`bash` commands starting with `make`".into(),
        "--mode yolo",
        None,
    );
    app.handle_engine(event(1, EventKind::ApprovalRequired(request)));
    let text = screen(&mut app, 100, 30);
    assert!(
        footer(&text).contains("answer the approval above: y · a · n · d "),
        "{}",
        footer(&text)
    );
    app.handle_key(key(KeyCode::Char('r')));
    assert!(answer.try_recv().is_err(), "no rule was offered");
    app.handle_key(key(KeyCode::Char('a')));
    assert_eq!(answer.try_recv().unwrap(), ApprovalDecision::AllowAlways);
}

#[test]
fn snapshot_the_approval_footer_with_a_rule_offered() {
    let mut app = app();
    let (request, _answer) = leaving_the_sandbox();
    app.handle_engine(event(1, EventKind::ApprovalRequired(request)));
    insta::assert_snapshot!("approval_escalation_80x24", screen(&mut app, 80, 24));
}

/// A 120-line `write_file` over a file as the engine previews it.
fn long_write() -> (
    ApprovalRequest,
    tokio::sync::oneshot::Receiver<ApprovalDecision>,
) {
    let content: String = (1..=120).map(|n| format!("line {n}\n")).collect();
    let arguments = serde_json::json!({"path": "notes.txt", "content": content}).to_string();
    let (mut request, answer) = ApprovalRequest::new(
        call("w", "write_file", &arguments),
        "`write_file` writes a file".into(),
        "file edits inside the working directory".into(),
        "--mode auto-edit",
        None,
    );
    let mut preview = String::from("--- a/notes.txt\n+++ b/notes.txt\n@@ -0,0 +1,120 @@\n");
    for n in 1..=120 {
        preview.push_str(&format!("+line {n}\n"));
    }
    request.preview = Some(preview);
    (request, answer)
}

#[test]
fn a_long_write_scrolls_to_its_last_line_before_it_is_answered() {
    let mut app = app();
    let (request, mut answer) = long_write();
    app.handle_engine(event(1, EventKind::ApprovalRequired(request)));
    let text = screen(&mut app, 80, 24);
    assert!(text.contains("+line 1"), "{text}");
    assert!(
        !text.contains("more lines of the diff"),
        "the whole diff: {text}"
    );
    assert!(text.contains("scroll the call: 0 lines above"), "{text}");
    assert!(
        footer(&text).contains("↑↓ PgUp PgDn scroll the call"),
        "{}",
        footer(&text)
    );
    // PgDn moves a page (half the transcript's height), the arrows a line.
    app.handle_key(key(KeyCode::PageDown));
    app.handle_key(key(KeyCode::Down));
    let text = screen(&mut app, 80, 24);
    assert!(!text.contains("+line 1\n"), "{text}");
    assert!(text.contains("lines above"), "{text}");
    // End: the last line, and no further.
    app.handle_key(key(KeyCode::End));
    app.handle_key(key(KeyCode::Down));
    let text = screen(&mut app, 80, 24);
    assert!(text.contains("+line 120"), "{text}");
    assert!(text.contains(", 0 below"), "{text}");
    insta::assert_snapshot!("approval_long_write_scrolled_80x24", text);
    app.handle_key(key(KeyCode::Home));
    let text = screen(&mut app, 80, 24);
    assert!(text.contains("scroll the call: 0 lines above"), "{text}");
    // Scrolling answered nothing; `y` does.
    assert!(answer.try_recv().is_err());
    app.handle_key(key(KeyCode::Char('y')));
    assert_eq!(answer.try_recv().unwrap(), ApprovalDecision::AllowOnce);
}

#[test]
fn the_wheel_scrolls_a_long_approval_and_a_paste_goes_into_the_reason() {
    let mut app = app();
    let (request, mut answer) = long_write();
    app.handle_engine(event(1, EventKind::ApprovalRequired(request)));
    screen(&mut app, 80, 24);
    app.handle_mouse(MouseEvent {
        kind: MouseEventKind::ScrollDown,
        column: 0,
        row: 0,
        modifiers: KeyModifiers::NONE,
    });
    let text = screen(&mut app, 80, 24);
    assert!(text.contains("scroll the call: 3 lines above"), "{text}");
    app.handle_key(key(KeyCode::Char('d')));
    assert!(app.handle_paste("write it in two parts").is_empty());
    app.handle_key(key(KeyCode::Enter));
    assert_eq!(
        answer.try_recv().unwrap(),
        ApprovalDecision::Deny {
            reason: Some("write it in two parts".into())
        }
    );
    assert_eq!(app.input_text(), "", "the paste went into the reason");
}
