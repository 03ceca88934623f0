//! The input box grows with soft-wrapped rows as with newlines, up to its limit, then scrolls
//! with the cursor (issue 32 point 2).

use super::*;

/// `count` numbered words (`w001 w002 …`), each five columns with its space.
fn words(count: usize) -> String {
    (1..=count)
        .map(|n| format!("w{n:03}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The rows of the input box on a drawn screen: between the rule above it and the status line.
fn input_rows(shown: &str) -> Vec<String> {
    let rows: Vec<&str> = shown.lines().collect();
    let rule = rows
        .iter()
        .rposition(|row| row.starts_with('─'))
        .expect("the input's rule is drawn");
    rows[rule + 1..rows.len() - 1]
        .iter()
        .map(|row| row.to_string())
        .collect()
}

#[test]
fn a_110_column_prompt_at_80_columns_takes_two_rows_and_ctrl_j_hides_none() {
    let mut app = app();
    let prompt = words(22);
    assert_eq!(prompt.len(), 109);
    type_text(&mut app, &prompt);
    let shown = screen(&mut app, 80, 24);
    let rows = input_rows(&shown);
    assert_eq!(rows.len(), 2, "{shown}");
    assert!(rows[0].starts_with("› w001 "), "{shown}");
    assert!(rows[1].trim_end().ends_with("w022"), "{shown}");
    insta::assert_snapshot!("input_wrapped_80x24", shown);

    app.handle_key(ctrl('j'));
    type_text(&mut app, "next");
    let shown = screen(&mut app, 80, 24);
    let rows = input_rows(&shown);
    assert_eq!(rows.len(), 3, "no visual row disappears: {shown}");
    assert!(rows[0].contains("w001"), "{shown}");
    assert!(rows[1].contains("w022"), "{shown}");
    assert_eq!(rows[2].trim(), "next", "{shown}");
    let (_, cursor_row) = app.cursor().expect("the cursor is shown");
    assert_eq!(cursor_row, 24 - 2, "the cursor is on the last row");
}

#[test]
fn a_420_column_line_at_80x24_grows_to_the_limit_with_the_cursor_row_shown() {
    let mut app = app();
    // 420 columns: six rows at 80 columns, all shown.
    type_text(&mut app, &words(84));
    let shown = screen(&mut app, 80, 24);
    let rows = input_rows(&shown);
    assert_eq!(rows.len(), 6, "{shown}");
    assert!(rows[0].starts_with("› w001 "), "{shown}");
    assert!(rows[5].trim_end().ends_with("w084"), "{shown}");
    // Longer, the box stays at the limit and scrolls with the cursor.
    type_text(&mut app, &format!(" {}", words(120)[84 * 5..].to_owned()));
    let shown = screen(&mut app, 80, 24);
    let rows = input_rows(&shown);
    assert_eq!(rows.len(), 6, "{shown}");
    assert!(
        rows[5].trim_end().ends_with("w120"),
        "the cursor's row (the last) is shown: {shown}"
    );
    assert!(
        !shown.contains("w001 "),
        "the first rows scrolled away: {shown}"
    );
    assert_eq!(app.cursor().map(|(_, row)| row), Some(24 - 2), "{shown}");
    assert!(rows.iter().all(|row| row.len() > 2), "{shown}");
    // Back at the start of the line, the view follows the cursor up.
    app.handle_key(ctrl('a'));
    let shown = screen(&mut app, 80, 24);
    assert!(input_rows(&shown)[0].starts_with("› w001 "), "{shown}");
}

#[test]
fn a_shortened_text_shows_its_first_rows_again() {
    let mut app = app();
    type_text(&mut app, &words(84));
    screen(&mut app, 80, 24);
    for _ in 0..(84 - 20) * 5 {
        app.handle_key(key(KeyCode::Backspace));
    }
    let shown = screen(&mut app, 80, 24);
    let rows = input_rows(&shown);
    assert_eq!(rows.len(), 2, "{shown}");
    assert!(rows[0].starts_with("› w001 "), "{shown}");
}

#[test]
fn at_every_width_the_box_holds_the_wrapped_rows_and_the_cursor() {
    for width in (12..=160).step_by(4) {
        for count in [1, 9, 40, 200] {
            let mut app = app();
            let text = words(count);
            type_text(&mut app, &text);
            let shown = screen(&mut app, width, 30);
            let rows = input_rows(&shown);
            let last = format!("w{count:03}");
            assert!(
                rows.last()
                    .is_some_and(|row| row.trim_end().ends_with(&last)),
                "width {width}, {count} words: the cursor's row is shown: {shown}"
            );
            // Every row is full up to the field's width (no row left empty in the box).
            assert!(
                rows.iter().all(|row| row.len() > 2),
                "width {width}, {count} words: {shown}"
            );
            let cursor = app
                .cursor()
                .unwrap_or_else(|| panic!("width {width}, {count} words: no cursor: {shown}"));
            assert!(cursor.0 < width, "width {width}: {cursor:?}");
            let field = usize::from(width - 3);
            let needed = text.len().div_ceil(field).clamp(1, 6);
            assert!(
                rows.len() >= needed.min(6),
                "width {width}, {count} words: {} rows for {needed}: {shown}",
                rows.len()
            );
        }
    }
}

#[test]
fn a_word_longer_than_the_field_is_cut_at_the_edge() {
    let mut app = app();
    type_text(&mut app, &"x".repeat(150));
    let shown = screen(&mut app, 80, 24);
    let rows = input_rows(&shown);
    assert_eq!(rows.len(), 2, "{shown}");
    let drawn: usize = rows.iter().map(|row| row.matches('x').count()).sum();
    assert_eq!(drawn, 150, "{shown}");
}
