//! Inline mode's live area (`--no-alt-screen`): only what is not in the scrollback yet, right
//! above the input, and the heights the live area asks for.

use super::*;
use crate::tui::EntryKind;

#[test]
fn the_live_area_shows_only_what_was_not_written_yet() {
    let mut app = app();
    app.inline = true;
    app.transcript
        .push(EntryKind::User("explain the parser".into()));
    app.transcript.append_text("The parser reads");
    let written = app.transcript.take_finished(79, false, 0);
    assert_eq!(written.len(), 1);
    let (need, want) = view::inline_heights(&mut app, 80, 24);
    // The gap and the streaming line, the rule, the input, the status line.
    assert_eq!((need, want), (5, 5));
    let shown = screen(&mut app, 80, need);
    let rows: Vec<&str> = shown.lines().collect();
    assert_eq!(rows[1], "The parser reads", "{shown}");
    assert!(!shown.contains("explain the parser"), "{shown}");
    assert!(rows[3].starts_with("› "), "{shown}");
}

#[test]
fn the_live_area_asks_for_room_for_the_popup_and_no_more_than_the_screen() {
    let mut app = app();
    app.inline = true;
    app.transcript.push(EntryKind::User("hello".into()));
    app.transcript.take_finished(79, false, 0);
    // Nothing live: one blank row above the rule.
    assert_eq!(view::inline_heights(&mut app, 80, 24), (4, 4));
    type_text(&mut app, "/re");
    let (need, want) = view::inline_heights(&mut app, 80, 24);
    assert_eq!(need, 4);
    assert_eq!(want, 3 + 3 + 2, "three commands and the popup's border");
    // With the body at the bottom of a taller area, the popup sits right above the input.
    let shown = screen(&mut app, 80, want);
    assert!(
        shown.contains("/resume") && shown.contains("/rewind"),
        "{shown}"
    );
    app.transcript.append_text(&"a line\n\n".repeat(40));
    assert_eq!(view::inline_heights(&mut app, 80, 24).0, 24);
}
