//! A run as the screen follows it: streaming to the end, Esc, retries, errors and failures
//! shown by their kind, auto-continue switched off by an error.

use super::*;

#[test]
fn submitting_streams_and_finishes_a_run() {
    let mut app = app();
    let commands = type_text(&mut app, "fix the parser");
    assert!(commands.is_empty());
    let commands = app.handle_key(key(KeyCode::Enter));
    assert_eq!(
        commands,
        [Effect::Request(Request::Submit("fix the parser".into()))]
    );
    assert!(app.run().running && app.input_text().is_empty());
    for word in ["Reading ", "the ", "**parser**"] {
        app.handle_engine(event(1, EventKind::ActionDelta(word.into())));
    }
    let text = screen(&mut app, 80, 24);
    assert!(
        text.contains("› fix the parser") && text.contains("Reading the parser"),
        "{text}"
    );
    app.handle_engine(event(
        1,
        EventKind::Done(DoneInfo {
            turns: 1,
            input_tokens: 10,
            output_tokens: 5,
            ..DoneInfo::default()
        }),
    ));
    assert!(!app.run().running);
}

#[test]
fn esc_interrupts_and_the_transcript_says_so() {
    let mut app = app();
    type_text(&mut app, "long task");
    app.handle_key(key(KeyCode::Enter));
    app.handle_engine(event(
        1,
        EventKind::ToolStart(call("1", "bash", r#"{"command":"sleep 100"}"#)),
    ));
    assert_eq!(
        app.handle_key(key(KeyCode::Esc)),
        [Effect::Request(Request::Interrupt)]
    );
    app.handle_engine(event(
        1,
        EventKind::ToolResult(ToolOutcome {
            name: "bash".into(),
            result: ToolResult::error("1", "cancelled: the user interrupted the command"),
            duration: Duration::from_millis(300),
        }),
    ));
    app.handle_engine(event(
        1,
        EventKind::Error(Failure::new(FailureKind::Interrupted, "interrupted")),
    ));
    let text = screen(&mut app, 80, 24);
    assert!(text.contains("interrupted · type a new prompt"), "{text}");
    assert!(!app.run().running);
    // Up brings the interrupted prompt back to edit.
    app.handle_key(key(KeyCode::Up));
    assert_eq!(app.input_text(), "long task");
}

#[test]
fn a_retry_discards_the_partial_answer_and_says_why() {
    let mut app = app();
    type_text(&mut app, "q");
    app.handle_key(key(KeyCode::Enter));
    app.handle_engine(event(1, EventKind::ActionDelta("half an ans".into())));
    app.handle_engine(event(
        1,
        EventKind::Retry(RetryInfo {
            attempt: 2,
            max_attempts: 4,
            reason: "stream cut mid-answer".into(),
            delay: Duration::from_millis(1500),
        }),
    ));
    let text = screen(&mut app, 80, 24);
    assert!(!text.contains("half an ans"));
    assert!(
        text.contains("retrying in 1.5s (attempt 2/4): stream cut mid-answer"),
        "{text}"
    );
    assert!(
        text.lines()
            .last()
            .unwrap()
            .contains("retrying: stream cut")
    );
    app.handle_engine(event(
        1,
        EventKind::Error(Failure::new(
            FailureKind::Auth,
            "OpenAI API error 401 (invalid_api_key): Incorrect API key",
        )),
    ));
    let text = screen(&mut app, 80, 24);
    assert!(
        text.contains("Check ANTHROPIC_API_KEY / OPENAI_API_KEY"),
        "{text}"
    );
}

#[test]
fn an_error_switches_auto_continue_off_and_the_status_line_says_so() {
    let mut app = app();
    app.session_mut().mode = Mode::Plan;
    app.take_update(Update::Todos(two_item_plan()));
    app.handle_engine(event(
        1,
        EventKind::Done(DoneInfo {
            turns: 1,
            input_tokens: 1,
            output_tokens: 1,
            ..DoneInfo::default()
        }),
    ));
    // Plan review: `a` carries the plan out with auto-continue.
    let commands = app.handle_key(key(KeyCode::Char('a')));
    assert!(commands.contains(&Effect::Request(Request::SetAutoContinue(true))));
    let status = |app: &mut App| screen(app, 160, 48).lines().last().unwrap().to_owned();
    assert!(status(&mut app).contains("auto-continue (Esc stops)"));

    let commands = app.handle_engine(event(
        3,
        EventKind::Error(Failure::new(
            FailureKind::Provider,
            "OpenAI API error 500: the server had an error",
        )),
    ));
    assert_eq!(commands, [Effect::Request(Request::SetAutoContinue(false))]);
    let line = status(&mut app);
    assert!(!line.contains("auto-continue (Esc stops)"), "{line}");
    assert!(line.contains("auto-continue off"), "{line}");
}

#[test]
fn a_failure_is_shown_by_its_kind_never_by_its_wording() {
    // A provider whose message reads "interrupted" (or names a model, or 401) is still a
    // provider failure: the kind decides, so the server cannot pose as the user's Esc.
    let mut app = app();
    app.handle_key(key(KeyCode::Char('x')));
    app.handle_key(key(KeyCode::Enter));
    app.handle_engine(event(
        1,
        EventKind::Error(Failure::new(FailureKind::Provider, "interrupted")),
    ));
    let text = screen(&mut app, 80, 24);
    assert!(!text.contains("type a new prompt"), "{text}");
    assert!(text.contains("Send the prompt again to retry"), "{text}");
    app.handle_key(key(KeyCode::Char('y')));
    app.handle_key(key(KeyCode::Enter));
    app.handle_engine(event(
        1,
        EventKind::Error(Failure::new(FailureKind::Provider, "401 model api key")),
    ));
    let text = screen(&mut app, 80, 24);
    assert!(!text.contains("Check ANTHROPIC_API_KEY"), "{text}");
    assert!(!text.contains("Check the model name"), "{text}");
}
