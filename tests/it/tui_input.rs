//! The input box in the real binary: it grows with soft-wrapped rows as with newlines, up to its
//! limit, then scrolls with the cursor (issue 32 point 2).

use crate::exec::Run;
use crate::pty::Pty;
use crate::support::MockLlm;
use crate::tui::{env, harness9};

/// The numbered words `from..=to` (`w001 w002 …`), each five columns with its space.
fn words(from: usize, to: usize) -> String {
    (from..=to)
        .map(|n| format!("w{n:03}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The input box's rows: between the last rule and the status line.
fn input_rows(screen: &str) -> Vec<String> {
    let rows: Vec<&str> = screen.lines().collect();
    let Some(rule) = rows.iter().rposition(|row| row.starts_with('─')) else {
        return Vec::new();
    };
    rows[rule + 1..rows.len().saturating_sub(1)]
        .iter()
        .map(|row| row.trim_end().to_owned())
        .collect()
}

#[test]
fn the_input_box_grows_with_wrapped_rows_and_scrolls_past_its_limit() {
    let mock = MockLlm::start_in_background();
    let run = Run::new();
    let mut pty = Pty::spawn_sized(harness9(), &[], &run.workdir, &env(&run, &mock), (24, 80));
    pty.wait_for("Ask harness9 to do something");

    // 109 columns at 80: two rows.
    pty.send(&words(1, 22));
    let screen = pty.wait_until("the prompt on two rows", |screen| {
        let rows = input_rows(screen);
        rows.len() == 2 && rows[0].starts_with("› w001 ") && rows[1].ends_with("w022")
    });
    assert!(!screen.contains("Ask harness9"), "{screen}");

    // Ctrl+J adds a row; none goes.
    pty.send("\n");
    pty.send("next");
    pty.wait_until("three rows after Ctrl+J", |screen| {
        let rows = input_rows(screen);
        rows.len() == 3
            && rows[0].starts_with("› w001 ")
            && rows[1].ends_with("w022")
            && rows[2].trim() == "next"
    });

    // A long line: the box stops at six rows and shows the cursor's row.
    pty.send(&format!(" {}", words(23, 120)));
    let screen = pty.wait_until("six rows ending at the cursor", |screen| {
        let rows = input_rows(screen);
        rows.len() == 6 && rows[5].ends_with("w120")
    });
    assert!(!screen.contains("› w001 "), "{screen}");
}
