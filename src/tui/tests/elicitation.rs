//! An MCP server's form (`Update::Elicitation`) as a dialog: its fields from the schema, with
//! defaults and required ones; accept, decline and cancel answered to the session core.

use std::sync::Arc;

use serde_json::json;

use super::*;
use crate::session::{ElicitationAsk, Elicited};
use crate::tui::keymap::Focus;

fn ask(id: &str) -> Update {
    let schema = json!({"type": "object", "required": ["name", "age"], "properties": {
        "name": {"type": "string", "title": "Name", "default": "Ada"},
        "age": {"type": "integer", "title": "Age", "description": "In years."},
        "news": {"type": "boolean", "title": "Newsletter", "default": false},
        "color": {"type": "string", "title": "Colour", "enum": ["r", "g"],
                  "enumNames": ["Red", "Green"]}}});
    Update::Elicitation(Arc::new(ElicitationAsk {
        id: id.into(),
        server: "forms".into(),
        message: "Who are you?\u{1b}[2J".into(),
        schema,
    }))
}

fn answer(id: &str, answer: Elicited) -> Vec<Effect> {
    vec![Effect::Request(Request::AnswerElicitation {
        id: id.into(),
        answer,
    })]
}

#[test]
fn a_servers_form_is_filled_in_and_accepted_with_typed_values() {
    let mut app = app();
    assert!(app.take_update(ask("form-1")).is_empty());
    assert_eq!(app.layer(), Focus::Elicitation);
    let shown = screen(&mut app, 100, 24);
    assert!(shown.contains("MCP server `forms` asks"), "{shown}");
    assert!(shown.contains("Who are you?"), "{shown}");
    assert!(!shown.contains('\u{1b}'), "{shown}");
    assert!(shown.contains("› Name*: Ada"), "{shown}");
    assert!(
        shown.contains("Age*:") && shown.contains("In years."),
        "{shown}"
    );
    assert!(shown.contains("Newsletter: [ ] no"), "{shown}");
    assert!(shown.contains("Colour: (←→ to choose)"), "{shown}");

    // A required field left empty: Enter says so and sends nothing.
    assert!(app.handle_key(key(KeyCode::Enter)).is_empty());
    assert!(screen(&mut app, 100, 24).contains("Age is required"));
    app.handle_key(key(KeyCode::Down));
    type_text(&mut app, "3x");
    assert!(app.handle_key(key(KeyCode::Enter)).is_empty());
    assert!(screen(&mut app, 100, 24).contains("Age wants a whole number"));
    app.handle_key(key(KeyCode::Backspace));
    app.handle_key(key(KeyCode::Char('6')));
    app.handle_key(key(KeyCode::Tab));
    app.handle_key(key(KeyCode::Char(' ')));
    app.handle_key(key(KeyCode::Down));
    app.handle_key(key(KeyCode::Right));
    app.handle_key(key(KeyCode::Right));
    let shown = screen(&mut app, 100, 24);
    assert!(shown.contains("Newsletter: [x] yes"), "{shown}");
    assert!(shown.contains("Colour: ‹ Green ›"), "{shown}");
    let values = json!({"name": "Ada", "age": 36, "news": true, "color": "g"});
    let Some(values) = values.as_object().cloned() else {
        unreachable!("an object")
    };
    assert_eq!(
        app.handle_key(key(KeyCode::Enter)),
        answer("form-1", Elicited::Accept(values))
    );
    assert_eq!(app.layer(), Focus::Main);
    // The prompt input never got the form's keys.
    assert!(app.input_text().is_empty());
}

#[test]
fn a_paste_while_the_form_is_open_fills_its_field_not_the_prompt() {
    let mut app = app();
    app.take_update(ask("form-2"));
    screen(&mut app, 100, 24);
    app.handle_key(ctrl('u'));
    assert!(app.handle_paste("Grace\nHopper").is_empty());
    assert!(screen(&mut app, 100, 24).contains("› Name*: Grace Hopper"));
    // On a choice field a paste is dropped rather than typed into the prompt.
    app.handle_key(key(KeyCode::Down));
    app.handle_key(key(KeyCode::Down));
    app.handle_paste("yes");
    assert_eq!(app.layer(), Focus::Elicitation);
    assert!(app.input_text().is_empty());
}

#[test]
fn a_servers_form_is_declined_with_ctrl_d_and_cancelled_with_esc() {
    let mut app = app();
    app.take_update(ask("form-1"));
    // A form takes keys once it has been on screen (`dialog_guard`).
    screen(&mut app, 100, 24);
    assert_eq!(
        app.handle_key(ctrl('d')),
        answer("form-1", Elicited::Decline)
    );
    assert_eq!(app.layer(), Focus::Main);
    app.take_update(ask("form-2"));
    screen(&mut app, 100, 24);
    assert_eq!(
        app.handle_key(key(KeyCode::Esc)),
        answer("form-2", Elicited::Cancel)
    );
    assert_eq!(app.layer(), Focus::Main);
}
