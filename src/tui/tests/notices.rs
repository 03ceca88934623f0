//! Notices that matter go into the transcript, not only onto the status line, and the status
//! line keeps what fits (issue 32 point 16 and the Shift+Tab notice).

use super::*;

#[test]
fn a_refused_compact_a_rename_and_an_export_stay_in_the_transcript() {
    let mut app = app();
    app.take_update(Update::Compacted(Ok(None)));
    app.take_update(Update::Renamed("parser-fix".into()));
    app.take_update(Update::Exported {
        file: "out.md".into(),
        result: Err(crate::session::ExportError::Exists),
    });
    let shown = screen(&mut app, 80, 24);
    for said in [
        "nothing to compact: nothing comes before the last exchange",
        "renamed: harness9 --resume parser-fix comes back here",
        "out.md exists: /export NAME writes another file",
    ] {
        assert!(
            shown.contains(said),
            "{said} is not in the transcript:\n{shown}"
        );
    }
}

#[test]
fn the_shift_tab_notice_fits_the_status_line_and_the_transcript_says_what_the_mode_does() {
    for width in [50, 80] {
        let mut app = app();
        app.handle_key(KeyEvent::new(KeyCode::BackTab, KeyModifiers::SHIFT));
        let shown = screen(&mut app, width, 24);
        let status = shown.lines().last().unwrap_or("");
        assert!(status.starts_with(" auto-edit "), "{width}: {status}");
        assert!(!status.contains("mode:"), "{width}: a cut notice: {status}");
        assert!(
            shown.contains("⋯ mode: auto-edit (from the next turn): edits"),
            "{width}: not in the transcript:\n{shown}"
        );
    }
}
