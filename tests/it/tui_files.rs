//! Files the user asks the TUI for are written by the session core, not the screen's task:
//! `/export` through the real binary in a pseudo-terminal makes a new file in the working
//! directory and refuses to write over one that exists.

use crate::exec::Run;
use crate::support::{MockLlm, Reply, Split, openai_text_sse};
use crate::tui::start;

#[test]
fn export_writes_the_transcript_once_and_never_over_an_existing_file() {
    let mock = MockLlm::start_in_background();
    let run = Run::new();
    mock.push(Reply::Sse {
        body: openai_text_sse("The parser splits on commas."),
        split: Split::Whole,
    });
    let mut pty = start(&run, &mock);
    pty.send("how does the parser split?\r");
    pty.wait_for("The parser splits on commas.");
    pty.wait_idle();
    pty.send("/export notes.md\r");
    pty.wait_for("exported the transcript");
    let path = run.workdir.join("notes.md");
    let written = std::fs::read_to_string(&path).unwrap();
    assert!(
        written.contains("## You\n\nhow does the parser split?"),
        "{written}"
    );
    assert!(
        written.contains("The parser splits on commas."),
        "{written}"
    );

    pty.send("/export notes.md\r");
    pty.wait_for("notes.md exists: /export NAME writes another file");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), written);
}
