//! Inline mode's live area (`--no-alt-screen`): only what is not in the scrollback yet, right
//! above the input, and the heights the live area asks for.

use super::*;
use crate::tui::EntryKind;

#[test]
fn the_live_area_shows_only_what_was_not_written_yet() {
    let mut app = app();
    app.screen_mut().inline = true;
    app.transcript_mut()
        .push(EntryKind::User("explain the parser".into()));
    app.transcript_mut().append_text("The parser reads");
    let written = app.transcript_mut().take_finished(79, false, 0);
    assert_eq!(written.len(), 1);
    let (need, want) = view::inline_heights(&app, 80, 24);
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
    app.screen_mut().inline = true;
    app.transcript_mut().push(EntryKind::User("hello".into()));
    app.transcript_mut().take_finished(79, false, 0);
    // Nothing live: one blank row above the rule.
    assert_eq!(view::inline_heights(&app, 80, 24), (4, 4));
    type_text(&mut app, "/re");
    let (need, want) = view::inline_heights(&app, 80, 24);
    assert_eq!(need, 4);
    assert_eq!(want, 3 + 3 + 2, "three commands and the popup's border");
    // With the body at the bottom of a taller area, the popup sits right above the input.
    let shown = screen(&mut app, 80, want);
    assert!(
        shown.contains("/resume") && shown.contains("/rewind"),
        "{shown}"
    );
    app.transcript_mut().append_text(&"a line\n\n".repeat(40));
    assert_eq!(view::inline_heights(&app, 80, 24).0, 24);
}

fn item(i: usize) -> String {
    format!("line {i} of the answer with some words")
}

/// The live area of `app` on a screen of `rows` rows, 100 columns: its height is at most the
/// screen's, and it ends in the rule, the input and the status line.
fn live_area(app: &mut App, rows: u16) -> Vec<String> {
    let (need, _) = view::inline_heights(app, 100, rows);
    assert_eq!(need, rows, "taller than the screen: the whole of it");
    let shown = screen(app, 100, need);
    let lines: Vec<String> = shown.lines().map(str::to_owned).collect();
    assert_eq!(lines.len(), usize::from(rows), "{shown}");
    assert!(lines[lines.len() - 3].starts_with("─"), "{shown}");
    assert!(lines[lines.len() - 2].starts_with("› "), "{shown}");
    lines
}

#[test]
fn a_streaming_list_taller_than_the_screen_shows_its_tail_and_is_written_once_when_done() {
    for rows in [30, 12] {
        let mut app = app();
        app.screen_mut().inline = true;
        app.transcript_mut()
            .push(EntryKind::User("list them".into()));
        let items: Vec<String> = (0..40).map(|i| format!("- {}", item(i))).collect();
        app.transcript_mut()
            .append_text(&format!("Answer.\n\n{}", items.join("\n")));
        // The list may still change: only what comes before it is written.
        let written = app.transcript_mut().take_finished(99, false, 0);
        assert_eq!(written.len(), 3, "{written:?}");
        let shown = live_area(&mut app, rows);
        let body = &shown[..shown.len() - 3];
        assert_eq!(
            body.last().unwrap(),
            &format!("• {}", item(39)),
            "{shown:?}"
        );
        assert_eq!(body[0], format!("• {}", item(40 - body.len())), "{shown:?}");
        // Finished, the list is written whole, once, in order; the live area is small again.
        app.transcript_mut().finish_streaming();
        let written: Vec<String> = app
            .transcript_mut()
            .take_finished(99, false, 0)
            .iter()
            .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
            .collect();
        let expected: Vec<String> = (0..40).map(|i| format!("• {}", item(i))).collect();
        assert_eq!(written[1..], expected[..], "{written:?}");
        assert!(app.transcript_mut().take_finished(99, false, 0).is_empty());
        assert_eq!(view::inline_heights(&app, 100, rows).0, 4);
    }
}

#[test]
fn streaming_thinking_taller_than_the_screen_shows_its_tail() {
    for rows in [30, 12] {
        let mut app = app();
        app.screen_mut().inline = true;
        app.transcript_mut().push(EntryKind::User("think".into()));
        app.transcript_mut().take_finished(99, false, 0);
        let thoughts: Vec<String> = (0..40).map(item).collect();
        app.transcript_mut().append_thinking(&thoughts.join("\n"));
        assert!(app.transcript_mut().take_finished(99, false, 0).is_empty());
        let shown = live_area(&mut app, rows);
        let body = &shown[..shown.len() - 3];
        assert!(body.last().unwrap().ends_with(&item(39)), "{shown:?}");
        assert!(!shown.iter().any(|l| l.ends_with(&item(0))), "{shown:?}");
    }
}
