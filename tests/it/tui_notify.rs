//! Notifications and `/undo` through the real binary in a pseudo-terminal (issue 21): a waiting
//! approval in an unfocused terminal rings the bell and sends OSC 9; `/undo` puts back what an
//! approved write changed.

use crate::exec::Run;
use crate::support::{MockLlm, Reply, Split, openai_text_sse, openai_tool_sse};
use crate::tui::{press_until, start};

#[test]
fn an_approval_waiting_in_an_unfocused_terminal_rings_the_bell_and_sends_osc9() {
    let mock = MockLlm::start_in_background();
    let run = Run::new();
    mock.push(Reply::Sse {
        body: openai_tool_sse("call_n", "bash", r#"{"command":"touch made"}"#),
        split: Split::Whole,
    });
    mock.push(Reply::Sse {
        body: openai_text_sse("Made it."),
        split: Split::Whole,
    });
    let mut pty = start(&run, &mock);
    let nudge = b"\x07\x1b]9;harness9: approve bash?\x07";
    // The terminal reports that it lost the focus (CSI O), then the prompt is typed.
    pty.send("\x1b[O");
    pty.send("make a file\r");
    pty.wait_for_all(&["Approve bash?", "allow once"]);
    pty.wait_raw("the bell and OSC 9", nudge);
    // Focused again, the run's end (short) does not ring.
    pty.send("\x1b[I");
    press_until(&mut pty, "y", "Made it.");
    pty.wait_idle();
    assert!(!pty.raw_contains(b"harness9: the run finished"));
}

#[test]
fn undo_in_the_tui_puts_back_a_file_an_approved_write_changed() {
    let mock = MockLlm::start_in_background();
    let run = Run::new();
    std::fs::write(run.workdir.join("notes.txt"), "mine\n").unwrap();
    mock.push(Reply::Sse {
        body: openai_tool_sse(
            "call_w",
            "write_file",
            r#"{"path":"notes.txt","content":"the agent's\n"}"#,
        ),
        split: Split::Whole,
    });
    mock.push(Reply::Sse {
        body: openai_text_sse("Rewrote the notes."),
        split: Split::Whole,
    });
    let mut pty = start(&run, &mock);
    pty.send("rewrite the notes\r");
    pty.wait_for("allow once");
    press_until(&mut pty, "y", "Rewrote the notes.");
    pty.wait_idle();
    assert_eq!(
        std::fs::read_to_string(run.workdir.join("notes.txt")).unwrap(),
        "the agent's\n"
    );
    pty.send("/undo\r");
    pty.wait_for("restored notes.txt");
    assert_eq!(
        std::fs::read_to_string(run.workdir.join("notes.txt")).unwrap(),
        "mine\n"
    );
}
