//! `/memory`: the long-term memories listed, searched, edited and forgotten through requests
//! to the session core; stale answers dropped; keys kept from the input beneath.

use super::*;
use crate::session::{Memory, MemoryScope};
use crate::tui::keymap::Focus;

fn record(id: i64, title: &str, content: &str, scope: MemoryScope) -> Memory {
    Memory {
        id,
        title: title.into(),
        content: content.into(),
        category: "preference".into(),
        scope,
        workdir: if scope == MemoryScope::User {
            String::new()
        } else {
            "/work/repo".into()
        },
        importance: 4,
        created_at: 0,
        updated_at: 0,
        last_used_at: None,
        use_count: 2,
    }
}

fn memories() -> Vec<Memory> {
    vec![
        record(
            7,
            "build",
            "The project builds with `just`.",
            MemoryScope::Project,
        ),
        record(3, "", "Answer in British English.", MemoryScope::User),
    ]
}

/// An app with `/memory` open and its first answer in.
fn opened() -> App {
    let mut app = app();
    type_text(&mut app, "/memory");
    assert_eq!(
        app.handle_key(key(KeyCode::Enter)),
        [Effect::Request(Request::ListMemories {
            query: String::new(),
            generation: 1,
        })]
    );
    app.take_update(Update::Memories {
        generation: 1,
        memories: memories(),
    });
    app
}

#[test]
fn the_memory_panel_lists_memories_and_snapshot() {
    let mut app = opened();
    let shown = screen(&mut app, 100, 24);
    insta::assert_snapshot!("memory_panel_100x24", shown);
    let mut app = opened();
    app.handle_key(key(KeyCode::Esc));
    app.take_update(Update::Memories {
        generation: 1,
        memories: memories(),
    });
    assert_eq!(app.layer(), Focus::Main, "a late answer opens nothing");
}

#[test]
fn typing_searches_and_only_the_latest_answer_is_shown() {
    let mut app = opened();
    assert_eq!(
        type_text(&mut app, "ju"),
        [
            Effect::Request(Request::ListMemories {
                query: "j".into(),
                generation: 2,
            }),
            Effect::Request(Request::ListMemories {
                query: "ju".into(),
                generation: 3,
            }),
        ]
    );
    assert!(app.input_text().is_empty(), "keys go to the panel");
    // The answer to "j" comes after the one to "ju": dropped.
    app.take_update(Update::Memories {
        generation: 3,
        memories: memories()[..1].to_vec(),
    });
    app.take_update(Update::Memories {
        generation: 2,
        memories: memories(),
    });
    let shown = screen(&mut app, 100, 24);
    assert!(shown.contains("search › ju"), "{shown}");
    assert!(shown.contains("builds with `just`"), "{shown}");
    assert!(!shown.contains("British"), "{shown}");
    app.handle_key(key(KeyCode::Esc));
    assert_eq!(app.layer(), Focus::Main);
}

#[test]
fn enter_edits_the_chosen_memory_and_enter_saves_it() {
    let mut app = opened();
    app.handle_key(key(KeyCode::Down));
    assert!(app.handle_key(key(KeyCode::Enter)).is_empty());
    assert!(screen(&mut app, 100, 24).contains("edit › Answer in British English."));
    // Readline keys edit the memory, not the prompt.
    app.handle_key(ctrl('u'));
    type_text(&mut app, "Answer in French.");
    assert_eq!(
        app.handle_key(key(KeyCode::Enter)),
        [Effect::Request(Request::ChangeMemory {
            id: 3,
            content: Some("Answer in French.".into()),
            query: String::new(),
            generation: 2,
        })]
    );
    assert!(app.input_text().is_empty());
    // Esc while editing goes back to the list, not out of the panel.
    app.handle_key(key(KeyCode::Enter));
    app.handle_key(key(KeyCode::Esc));
    assert_eq!(app.layer(), Focus::MemoryPanel);
    assert!(app.hints().contains("Enter edits"), "{}", app.hints());
}

#[test]
fn delete_asks_and_y_forgets_the_memory() {
    let mut app = opened();
    assert!(app.handle_key(key(KeyCode::Delete)).is_empty());
    let shown = screen(&mut app, 100, 24);
    assert!(shown.contains("Forget this memory?"), "{shown}");
    // Any other key keeps it.
    assert!(app.handle_key(key(KeyCode::Char('n'))).is_empty());
    assert!(!screen(&mut app, 100, 24).contains("Forget this memory?"));
    app.handle_key(ctrl('d'));
    assert_eq!(
        app.handle_key(key(KeyCode::Char('y'))),
        [Effect::Request(Request::ChangeMemory {
            id: 7,
            content: None,
            query: String::new(),
            generation: 2,
        })]
    );
    app.take_update(Update::Memories {
        generation: 2,
        memories: memories()[1..].to_vec(),
    });
    assert!(!screen(&mut app, 100, 24).contains("just"));
}
