//! `--no-alt-screen` (issue 14): the TUI inline in the main screen, as Codex runs. Finished
//! entries go into the terminal's own scrollback while the session runs, once each, with the
//! live area (the input, the status line) at the bottom; a dialog gets the room it needs.

use crate::exec::Run;
use crate::support::{MockLlm, Reply, Split, openai_text_chunk, openai_text_sse, openai_tool_sse};
use crate::tui::{Pty, env, harness9, press_until, press_until_screen, untrusted_env};

const ROWS: u16 = 32;

fn inline(run: &Run, mock: &MockLlm) -> Pty {
    let pty = Pty::spawn(
        harness9(),
        &["--no-alt-screen"],
        &run.workdir,
        &env(run, mock),
    );
    pty.wait_for("Ask harness9 to do something");
    assert!(!pty.alternate_screen());
    pty
}

/// An answer of 40 paragraphs, taller than the screen.
fn long_answer(tag: &str) -> Reply {
    let text: Vec<String> = (1..=40).map(|i| format!("{tag} line {i:02}.")).collect();
    Reply::Sse {
        body: openai_text_sse(&text.join("\n\n")),
        split: Split::Whole,
    }
}

/// Waits until the frame that follows a run is on screen whole: `last` is the conversation's
/// last line, with the blank body row, the rule, the input (with the cursor) and the status
/// line below it. Returns the screen.
fn settled(pty: &Pty, rows: u16, last: &str) -> String {
    let rows = usize::from(rows);
    pty.wait_until_screen(&format!("{last:?} above the live area"), |screen| {
        let text = screen.contents();
        let lines: Vec<&str> = text.lines().collect();
        lines.len() == rows
            && lines[rows - 5] == last
            && lines[rows - 4].is_empty()
            && lines[rows - 2].starts_with("› ")
            && usize::from(screen.cursor_position().0) == rows - 2
    })
}

/// Ctrl+C twice. The first press is repeated until it shows: crossterm 0.29 drops the notice of
/// a key that arrives in the same wake-up as a resize (a key typed while a window is resized
/// waits for the next one), and the tests that resize quit right after.
fn quit(pty: &mut Pty) {
    // Ctrl+C every 100 ms until harness9 has left: any two presses inside the hint's second
    // quit, whether one was dropped (see above) or a loaded machine let the hint run out between
    // seeing it and the second press arriving.
    press_until_screen(pty, "\x03", |screen| {
        screen.contains("Resume this session with")
    });
}

#[test]
fn finished_answers_go_into_the_scrollback_once_while_the_session_runs() {
    let mock = MockLlm::start_in_background();
    let run = Run::new();
    mock.push(long_answer("alpha"));
    mock.push(long_answer("beta"));
    let mut pty = inline(&run, &mock);
    pty.send("first question\r");
    pty.wait_for("alpha line 40.");
    pty.wait_idle();
    pty.send("second question\r");
    pty.wait_for("beta line 40.");
    pty.wait_idle();
    // The live area is at the bottom: the input on the row above the status line.
    let screen = settled(&pty, ROWS, "beta line 40.");
    let all = pty.all_text();
    // The first answer left the screen for the scrollback, every line of it exactly once.
    assert!(!screen.contains("alpha line 01."), "{screen}");
    for i in 1..=40 {
        for tag in ["alpha", "beta"] {
            let line = format!("{tag} line {i:02}.");
            assert_eq!(all.matches(&line).count(), 1, "{line} in:\n{all}");
        }
    }
    let order: Vec<usize> = ["› first question", "alpha line 01.", "alpha line 40."]
        .iter()
        .chain(&["› second question", "beta line 01.", "beta line 40."])
        .map(|text| {
            all.find(text)
                .unwrap_or_else(|| panic!("{text} in:\n{all}"))
        })
        .collect();
    assert!(order.windows(2).all(|w| w[0] < w[1]), "{order:?}\n{all}");
    quit(&mut pty);
    let all = pty.all_text();
    assert_eq!(all.matches("beta line 40.").count(), 1, "{all}");
    assert!(!all.contains("Ask harness9 to do something"), "{all}");
}

#[test]
fn an_approval_inline_shows_all_its_options_and_its_answer_works() {
    let mock = MockLlm::start_in_background();
    let run = Run::new();
    mock.push(long_answer("before"));
    mock.push(Reply::Sse {
        body: openai_tool_sse(
            "call_b",
            "bash",
            r#"{"command":"echo hello-inline && touch made"}"#,
        ),
        split: Split::Whole,
    });
    mock.push(Reply::Sse {
        body: openai_text_sse("It printed the greeting."),
        split: Split::Whole,
    });
    let mut pty = inline(&run, &mock);
    // A conversation taller than the screen first, so the dialog has to take room from it.
    pty.send("warm up\r");
    pty.wait_for("before line 40.");
    pty.wait_idle();
    pty.send("say hello\r");
    let dialog = pty.wait_for_all(&[
        "Approve bash?",
        "$ echo hello-inline",
        "allow once",
        "allow for the rest of this session",
        "deny (Esc)",
        "deny and tell the model",
    ]);
    assert!(dialog.contains("allow once"), "{dialog}");
    press_until(&mut pty, "y", "✓ bash");
    pty.wait_for_all(&["It printed the greeting.", "│ hello-inline"]);
    let screen = pty.wait_idle();
    assert!(!screen.contains("Approve bash?"), "{screen}");
    assert!(run.workdir.join("made").exists());
    quit(&mut pty);
    let all = pty.all_text();
    // The rows the dialog covered are the conversation's again, and nothing of the dialog
    // stays in the scrollback.
    for i in 1..=40 {
        let line = format!("before line {i:02}.");
        assert_eq!(all.matches(&line).count(), 1, "{line} in:\n{all}");
    }
    assert!(!all.contains("Approve bash?"), "{all}");
    assert_eq!(all.matches("It printed the greeting.").count(), 1, "{all}");
    assert!(all.contains("✓ bash  echo hello-inline"), "{all}");
}

#[test]
fn after_a_resize_the_live_area_is_drawn_again_at_the_bottom() {
    let mock = MockLlm::start_in_background();
    let run = Run::new();
    mock.push(long_answer("alpha"));
    mock.push(Reply::Sse {
        body: openai_text_sse("After the resize."),
        split: Split::Whole,
    });
    let mut pty = inline(&run, &mock);
    pty.send("first question\r");
    pty.wait_for("alpha line 40.");
    pty.wait_idle();
    // The answer has left the live area (a frame still on its way would be drawn for the old
    // size, as in any terminal).
    settled(&pty, ROWS, "alpha line 40.");
    pty.resize(20, 80);
    // The status line fits the new width: it is drawn again, on the last row.
    let screen = pty.wait_until("the live area at 80 columns", |screen| {
        let rows: Vec<&str> = screen.lines().collect();
        rows.len() == 20 && rows[19].contains("default") && rows[18].starts_with("› ")
    });
    assert_eq!(screen.matches("Enter send").count(), 1, "{screen}");
    pty.send("second\r");
    pty.wait_for("After the resize.");
    pty.wait_idle();
    settled(&pty, 20, "After the resize.");
    // Taller again: the terminal brings rows back from the scrollback above the live area.
    pty.resize(ROWS, 110);
    let screen = settled(&pty, ROWS, "After the resize.");
    assert_eq!(screen.matches("Enter send").count(), 1, "{screen}");
    assert!(screen.contains("After the resize."), "{screen}");
    quit(&mut pty);
    let all = pty.all_text();
    assert_eq!(all.matches("After the resize.").count(), 1, "{all}");
    assert_eq!(all.matches("› second").count(), 1, "{all}");
    assert!(
        !all.contains("Enter send"),
        "no live area is left behind: {all}"
    );
}

#[test]
fn a_signal_writes_what_the_live_area_held_below_the_conversation() {
    let mock = MockLlm::start_in_background();
    let run = Run::new();
    mock.push(Reply::Sse {
        body: openai_text_sse("Kept in the scrollback."),
        split: Split::Whole,
    });
    let mut pty = inline(&run, &mock);
    pty.send("keep this\r");
    pty.wait_for("Kept in the scrollback.");
    pty.wait_idle();
    // A `!` command still running: its block is in the live area when the signal comes.
    pty.send("!sleep 30\r");
    pty.wait_for("sleep 30");
    let killed = std::process::Command::new("kill")
        .args(["-TERM", &pty.pid().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    pty.wait_for("Resume this session with");
    let all = pty.all_text();
    for text in ["› keep this", "Kept in the scrollback.", "› !sleep 30"] {
        assert_eq!(all.matches(text).count(), 1, "{text} in:\n{all}");
    }
    // The prompt and the block, which is written as cut off.
    assert_eq!(all.matches("sleep 30").count(), 2, "{all}");
    assert!(!all.contains("Running"), "{all}");
    assert!(!all.contains("Enter send"), "no live area is left: {all}");
    let resume = all.find("Resume this session with").unwrap();
    assert!(all.find("sleep 30").unwrap() < resume, "{all}");
    // The mouse was the terminal's all along.
    assert!(
        !pty.raw_contains(b"\x1b[?1000h"),
        "mouse capture was asked for"
    );
}

#[test]
fn ctrl_c_twice_leaves_the_conversation_then_the_shell_below_it_in_cooked_mode() {
    let mock = MockLlm::start_in_background();
    let run = Run::new();
    mock.push(Reply::Sse {
        body: openai_text_sse("Hello inline."),
        split: Split::Whole,
    });
    // The shell shows the terminal's modes once harness9 has exited.
    let script = format!(
        "'{}' --no-alt-screen; stty -a; printf 'SHELL-DONE'; sleep 30",
        harness9().display()
    );
    let mut pty = Pty::spawn(
        std::path::Path::new("/bin/sh"),
        &["-c", &script],
        &run.workdir,
        &env(&run, &mock),
    );
    pty.wait_for("Ask harness9 to do something");
    pty.send("say hello\r");
    pty.wait_for("Hello inline.");
    pty.wait_idle();
    pty.send("\x03");
    pty.wait_for("press Ctrl+C again to quit");
    pty.send("\x03");
    pty.wait_for("SHELL-DONE");
    let all = pty.all_text();
    let at = |text: &str| {
        all.find(text)
            .unwrap_or_else(|| panic!("{text} in:\n{all}"))
    };
    assert!(at("› say hello") < at("Hello inline."), "{all}");
    assert!(
        at("Hello inline.") < at("Resume this session with"),
        "{all}"
    );
    assert!(at("Resume this session with") < at("icanon"), "{all}");
    assert_eq!(all.matches("Hello inline.").count(), 1, "{all}");
    let words: Vec<&str> = all.split_whitespace().collect();
    assert!(
        words.contains(&"icanon") && words.contains(&"echo"),
        "cooked mode again: {all}"
    );
}

#[test]
fn a_rewound_conversation_is_not_written_again() {
    let mock = MockLlm::start_in_background();
    let run = Run::new();
    for answer in ["Answer one.", "Answer two."] {
        mock.push(Reply::Sse {
            body: openai_text_sse(answer),
            split: Split::Whole,
        });
    }
    let mut pty = inline(&run, &mock);
    pty.send("first\r");
    pty.wait_for("Answer one.");
    pty.wait_idle();
    pty.send("second\r");
    pty.wait_for("Answer two.");
    pty.wait_idle();
    pty.send("/rewind");
    pty.wait_for("/rewind");
    pty.send("\r");
    pty.wait_for("Rewind to before a prompt");
    // `c`: back to before the last prompt, the conversation only.
    press_until(&mut pty, "c", "rewound to before");
    pty.wait_idle();
    quit(&mut pty);
    let all = pty.all_text();
    // What was said stays in the scrollback once; the rewind is said after it.
    for text in ["› first", "Answer one.", "Answer two."] {
        assert_eq!(all.matches(text).count(), 1, "{text} in:\n{all}");
    }
    assert!(
        all.find("Answer two.") < all.find("rewound to before"),
        "{all}"
    );
}

#[test]
fn the_folder_question_inline_takes_the_screen_and_leaves_nothing_behind() {
    let mock = MockLlm::start_in_background();
    let run = Run::new();
    mock.push(Reply::Sse {
        body: openai_text_sse("Trusted and answering."),
        split: Split::Whole,
    });
    let mut pty = Pty::spawn(
        harness9(),
        &["--no-alt-screen"],
        &run.workdir,
        &untrusted_env(&run, &mock),
    );
    pty.wait_for_all(&["Trust this folder?", "do not trust it for now"]);
    press_until_screen(&mut pty, "t", |screen| {
        !screen.contains("Trust this folder?")
    });
    // A `t` pressed after the answer went into the input (Ctrl+U clears it); the prompt is
    // typed again until the session's input shows it.
    press_until_screen(&mut pty, "\x15go", |screen| {
        screen.lines().any(|l| l.trim_end() == "› go")
    });
    pty.send("\r");
    pty.wait_for("Trusted and answering.");
    pty.wait_idle();
    quit(&mut pty);
    let all = pty.all_text();
    assert!(!all.contains("Trust this folder?"), "{all}");
    assert_eq!(all.matches("Trusted and answering.").count(), 1, "{all}");
}

#[test]
fn a_long_answer_goes_into_the_scrollback_while_it_streams() {
    let mock = MockLlm::start_in_background();
    let run = Run::new();
    // 40 paragraphs in one delta, then the stream stays open.
    let words: Vec<String> = (1..=40).map(|i| format!("gamma line {i:02}.")).collect();
    let words = words.join("\n\n");
    let body = openai_text_sse(&words);
    let text = String::from_utf8(body.clone()).unwrap();
    let at = text.find("gamma line 01.").unwrap();
    let stall_at = at + text[at..].find("\n\n").unwrap() + 2;
    mock.push(Reply::Stall { body, stall_at });
    let mut pty = inline(&run, &mock);
    pty.send("tell me a lot\r");
    // The last paragraph may still grow: it stays in the live area; the ones before it are
    // in the scrollback already, while the run goes on.
    let screen = pty.wait_for("gamma line 40.");
    assert!(!screen.contains("gamma line 01."), "{screen}");
    let all = pty.all_text();
    assert_eq!(all.matches("gamma line 01.").count(), 1, "{all}");
    pty.send("\x03");
    pty.wait_for("interrupted");
    pty.wait_idle();
    quit(&mut pty);
    let all = pty.all_text();
    for i in 1..=40 {
        let line = format!("gamma line {i:02}.");
        assert_eq!(all.matches(&line).count(), 1, "{line} in:\n{all}");
    }
}

#[test]
fn a_continued_session_writes_its_conversation_into_the_scrollback() {
    let mock = MockLlm::start_in_background();
    let run = Run::new();
    mock.push(long_answer("stored"));
    let mut pty = inline(&run, &mock);
    pty.send("remember this\r");
    pty.wait_for("stored line 40.");
    pty.wait_idle();
    quit(&mut pty);
    drop(pty);
    let mut pty = Pty::spawn(
        harness9(),
        &["--no-alt-screen", "--continue"],
        &run.workdir,
        &env(&run, &mock),
    );
    settled(&pty, ROWS, "stored line 40.");
    let all = pty.all_text();
    assert_eq!(all.matches("› remember this").count(), 1, "{all}");
    assert_eq!(all.matches("stored line 01.").count(), 1, "{all}");
    quit(&mut pty);
}

/// An answer that is one markdown list of 40 items, streamed 40 bytes at a time, 20 ms apart.
fn list_answer(n: usize) -> Reply {
    let items: Vec<String> = (0..40).map(|i| format!("- {}", item(n, i))).collect();
    let text = format!("Answer {n}.\n\n{}", items.join("\n"));
    let mut body = Vec::new();
    let mut pieces = 1;
    for piece in text.as_bytes().chunks(40) {
        body.extend(openai_text_chunk(std::str::from_utf8(piece).unwrap()));
        pieces += 1;
    }
    body.extend(openai_text_sse(""));
    Reply::Paced {
        body,
        pieces,
        gap: std::time::Duration::from_millis(20),
    }
}

fn item(n: usize, i: usize) -> String {
    format!("line {i} of answer {n} with some words to wrap around")
}

#[test]
fn a_streamed_list_taller_than_the_screen_is_written_once_in_order() {
    list_written_once_in_order(30);
}

#[test]
fn a_streamed_list_on_a_screen_12_rows_high_is_written_once_in_order() {
    list_written_once_in_order(12);
}

/// Two prompts, each answered by one list taller than a screen of `rows` rows, under tmux's
/// way of erasing (`scroll_on_clear`): the scrollback holds each line once, in order, and the
/// live area only ever on the last rows.
fn list_written_once_in_order(rows: u16) {
    let mock = MockLlm::start_in_background();
    let run = Run::new();
    mock.push(list_answer(1));
    mock.push(list_answer(2));
    let mut pty = Pty::spawn_sized(
        harness9(),
        &["--no-alt-screen"],
        &run.workdir,
        &env(&run, &mock),
        (rows, 100),
    );
    pty.wait_for("Ask harness9 to do something");
    for (n, prompt) in [(1, "first question"), (2, "second question")] {
        pty.send(&format!("{prompt}\r"));
        pty.wait_for(&item(n, 39));
        pty.wait_idle();
    }
    settled(&pty, rows, &format!("• {}", item(2, 39)));
    let all = pty.all_text();
    let lines: Vec<&str> = all.lines().collect();
    let mut expected = Vec::new();
    for (n, prompt) in [(1, "› first question"), (2, "› second question")] {
        expected.push(prompt.to_owned());
        expected.push(format!("Answer {n}."));
        expected.extend((0..40).map(|i| format!("• {}", item(n, i))));
    }
    // Every line of the conversation once, in order: nothing but finished lines went into the
    // scrollback.
    let mut at = Vec::new();
    for line in &expected {
        let found: Vec<usize> = (0..lines.len()).filter(|&i| lines[i] == line).collect();
        assert_eq!(found.len(), 1, "{line:?} in:\n{all}");
        at.push(found[0]);
    }
    assert!(at.windows(2).all(|w| w[0] < w[1]), "{at:?} in:\n{all}");
    // The rule, the input and the status line only in the last rows: no live area was left
    // behind in the scrollback.
    let last = lines.len() - 3;
    for (i, line) in lines.iter().enumerate() {
        let live = line.starts_with("─ ")
            || line.starts_with(" default ")
            || (line.starts_with("› ") && !expected.iter().any(|e| e == line));
        assert!(!live || i >= last, "row {i} {line:?} in:\n{all}");
    }
    quit(&mut pty);
}
