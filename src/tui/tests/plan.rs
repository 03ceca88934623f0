//! The plan review as a layer (issue 28): opened by the end of a plan-mode run with the list
//! that run wrote, and only then (issue 32 point 9); its feedback box is its own.

use super::*;
use crate::tui::keymap::Focus;

fn done() -> Event {
    event(
        1,
        EventKind::Done(DoneInfo {
            turns: 1,
            ..DoneInfo::default()
        }),
    )
}

fn send(app: &mut App, prompt: &str) -> Vec<Effect> {
    type_text(app, prompt);
    app.handle_key(key(KeyCode::Enter))
}

#[test]
fn a_plan_run_that_wrote_no_todo_list_shows_no_old_list() {
    let mut app = app();
    app.session_mut().mode = Mode::Plan;
    send(&mut app, "plan the fix");
    app.take_update(Update::Todos(two_item_plan()));
    app.handle_engine(done());
    assert!(screen(&mut app, 100, 30).contains("The plan is ready"));
    // Step by step: the first item, then the run ends in default mode, the list still open.
    let commands = app.handle_key(key(KeyCode::Char('s')));
    assert!(commands.contains(&Effect::Request(Request::SetMode(Mode::Default))));
    app.handle_engine(done());
    assert_eq!(app.layer(), Focus::Main);
    // Back in plan mode, a question whose run writes no list: nothing to review.
    app.session_mut().mode = Mode::Plan;
    send(&mut app, "what does split return?");
    app.handle_engine(done());
    let text = screen(&mut app, 100, 30);
    assert!(!text.contains("The plan is ready"), "{text}");
    assert_eq!(app.layer(), Focus::Main);
}

#[test]
fn a_plan_whose_list_comes_after_the_runs_end_is_reviewed_with_it() {
    let mut app = app();
    app.session_mut().mode = Mode::Plan;
    send(&mut app, "plan the fix");
    app.handle_engine(done());
    assert_eq!(app.layer(), Focus::Main, "no list yet");
    app.take_update(Update::Todos(two_item_plan()));
    let text = screen(&mut app, 100, 30);
    assert!(
        text.contains("The plan is ready") && text.contains("○ fix split"),
        "{text}"
    );
    // The list changes while the review is open: the review shows the new one.
    let mut changed = two_item_plan();
    changed[1].content = "fix split and join".into();
    app.take_update(Update::Todos(changed));
    assert!(screen(&mut app, 100, 30).contains("○ fix split and join"));
}

#[test]
fn the_feedback_box_is_the_reviews_own_and_edits_as_the_input_does() {
    let mut app = app();
    app.session_mut().mode = Mode::Plan;
    send(&mut app, "plan the fix");
    app.take_update(Update::Todos(two_item_plan()));
    app.handle_engine(done());
    app.handle_key(key(KeyCode::Char('k')));
    assert_eq!(
        app.stack().top().map(|top| top.mode()),
        Some(Focus::PlanFeedback)
    );
    type_text(&mut app, "wrong words");
    // Ctrl+U clears the line, as in the input.
    app.handle_key(ctrl('u'));
    assert!(app.handle_paste("split the fix in two").is_empty());
    let text = screen(&mut app, 100, 30);
    assert!(text.contains("> split the fix in two"), "{text}");
    // Esc goes back to the choices; the review stays.
    app.handle_key(key(KeyCode::Esc));
    assert_eq!(app.layer(), Focus::PlanReview);
    app.handle_key(key(KeyCode::Char('k')));
    type_text(&mut app, "split the fix in two");
    let commands = app.handle_key(key(KeyCode::Enter));
    assert_eq!(
        commands,
        [Effect::Request(Request::Submit(
            "split the fix in two".into()
        ))]
    );
    assert_eq!(app.layer(), Focus::Main);
    assert!(app.running(), "the feedback runs as a prompt");
    assert_eq!(app.input_text(), "", "nothing went into the input");
    assert_eq!(app.session().mode, Mode::Plan);
}
