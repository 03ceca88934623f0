//! The daily workflows through the real binary in a pseudo-terminal: coming back to a session,
//! finding one, surviving a kill, naming, compacting, queueing, shell, mentions and copying.

use std::time::Duration;

use base64::Engine as _;

use crate::exec::Run;
use crate::support::{MockLlm, Reply, Split, openai_text_json, openai_text_sse, openai_tool_sse};
use crate::tui::{Pty, env, harness9, start};

fn quit(mut pty: Pty) {
    // Ctrl+C interrupts a run that is still going.
    pty.wait_idle();
    pty.send("\x03");
    pty.wait_for("press Ctrl+C again");
    pty.send("\x03");
    pty.wait_until_screen("harness9 to quit", |screen| !screen.alternate_screen());
}

fn open(run: &Run, mock: &MockLlm, args: &[&str]) -> Pty {
    Pty::spawn(harness9(), args, &run.workdir, &env(run, mock))
}

#[test]
fn quit_then_continue_shows_the_transcript_in_the_same_mode() {
    let mock = MockLlm::start_in_background();
    let run = Run::new();
    mock.push(Reply::Sse {
        body: openai_text_sse("The first answer."),
        split: Split::Whole,
    });
    let mut pty = start(&run, &mock);
    pty.send("\x1b[Z");
    pty.wait_for(" auto-edit ");
    pty.send("the first prompt\r");
    pty.wait_for("The first answer.");
    quit(pty);

    let pty = open(&run, &mock, &["--continue"]);
    let screen = pty.wait_for_all(&["The first answer.", "› the first prompt", " auto-edit "]);
    assert!(screen.contains("› the first prompt"), "{screen}");
    assert!(
        screen.contains(" auto-edit "),
        "the mode came back: {screen}"
    );
}

#[test]
fn resume_opens_the_picker_and_a_word_from_a_tool_result_finds_the_session() {
    let mock = MockLlm::start_in_background();
    let run = Run::new();
    std::fs::write(run.workdir.join("fruit.txt"), "the rare word is kumquat\n").unwrap();
    mock.push(Reply::Sse {
        body: openai_tool_sse("c1", "read_file", r#"{"path":"fruit.txt"}"#),
        split: Split::Whole,
    });
    mock.push(Reply::Sse {
        body: openai_text_sse("Read it."),
        split: Split::Whole,
    });
    assert_eq!(
        run.exec(&mock, &["exec", "--json", "read the fruit file"])
            .status
            .code(),
        Some(0)
    );
    mock.push(Reply::Sse {
        body: openai_text_sse("Something else."),
        split: Split::Whole,
    });
    assert_eq!(
        run.exec(&mock, &["exec", "--json", "an unrelated task"])
            .status
            .code(),
        Some(0)
    );

    let mut pty = open(&run, &mock, &["--resume"]);
    pty.wait_for("Resume a session");
    let screen = pty.wait_for_all(&["an unrelated task", "read the fruit file"]);
    assert!(screen.contains("read the fruit file"), "{screen}");
    pty.send("kumquat");
    pty.wait_until("the filter to narrow", |screen| {
        screen.contains("[kumquat]") && !screen.contains("an unrelated task")
    });
    pty.send("\r");
    let screen = pty.wait_for_all(&[
        "Read it.",
        "› read the fruit file",
        "✓ read_file  fruit.txt",
    ]);
    assert!(
        screen.contains("› read the fruit file") && screen.contains("✓ read_file  fruit.txt"),
        "{screen}"
    );
    // The empty session the TUI started with is gone once another one was picked.
    let conn = rusqlite::Connection::open(run.home.join("sessions.db")).unwrap();
    let count: i64 = conn
        .query_row("SELECT count(*) FROM sessions", [], |r| r.get(0))
        .unwrap();
    assert_eq!(count, 2);
}

#[test]
fn a_kill_mid_answer_then_continue_keeps_finished_turns_and_marks_the_cut_one() {
    let mock = MockLlm::start_in_background();
    let run = Run::new();
    mock.push(Reply::Sse {
        body: openai_text_sse("A finished answer."),
        split: Split::Whole,
    });
    let body = openai_text_sse("A half written answer that never ends");
    mock.push(Reply::Stall {
        stall_at: body.len() * 2 / 3,
        body,
    });
    let mut pty = start(&run, &mock);
    pty.send("first question\r");
    pty.wait_for("A finished answer.");
    pty.send("second question\r");
    pty.wait_for("half written");
    // SAFETY: signalling our own child.
    unsafe { libc::kill(pty.pid() as i32, libc::SIGKILL) };
    drop(pty);

    let pty = open(&run, &mock, &["--continue"]);
    let screen = pty.wait_for_all(&[
        "this turn was interrupted",
        "› first question",
        "A finished answer.",
        "› second question",
    ]);
    assert!(
        screen.contains("› first question") && screen.contains("A finished answer."),
        "{screen}"
    );
    assert!(screen.contains("› second question"), "{screen}");
}

#[test]
fn rename_then_resume_by_name() {
    let mock = MockLlm::start_in_background();
    let run = Run::new();
    mock.push(Reply::Sse {
        body: openai_text_sse("Noted."),
        split: Split::Whole,
    });
    let mut pty = start(&run, &mock);
    pty.send("remember the parser work\r");
    pty.wait_for("Noted.");
    pty.send("/rename parser-work\r");
    pty.wait_for("renamed");
    quit(pty);
    let mut pty = open(&run, &mock, &["--resume", "parser-work"]);
    pty.wait_for("› remember the parser work");
    // Not renamed in this run, still named: the exit line gives the name.
    pty.send("\x03");
    pty.wait_for("press Ctrl+C again");
    pty.send("\x03");
    pty.wait_for("Resume this session with: harness9 --resume parser-work");
}

#[test]
fn compact_emits_a_compaction_line() {
    let mock = MockLlm::start_in_background();
    let run = Run::new();
    let long: String = (0..3000).map(|i| format!("word{i} ")).collect();
    mock.push(Reply::Sse {
        body: openai_text_sse(&long),
        split: Split::Whole,
    });
    mock.push(Reply::Sse {
        body: openai_text_sse("Short answer."),
        split: Split::Whole,
    });
    // Before summarising, the memory extractor reads the folded part: nothing durable.
    mock.push(Reply::Json(openai_text_json("NONE")));
    mock.push(Reply::Json(openai_text_json(
        "The user asked for a long text and got it.",
    )));
    let mut pty = Pty::spawn(
        harness9(),
        &["--context-window", "10000"],
        &run.workdir,
        &env(&run, &mock),
    );
    pty.wait_for("Ask harness9");
    pty.send("write a lot\r");
    pty.wait_for("word2999");
    pty.send("and a short one\r");
    pty.wait_for("Short answer.");
    // `/compact` typed before the run's end is refused.
    pty.wait_idle();
    pty.send("/compact\r");
    let screen = pty.wait_for_all(&["compacted the conversation", "(summarization)"]);
    assert!(screen.contains("(summarization)"), "{screen}");
    let summary_request = mock.requests().pop().unwrap().body;
    assert!(
        summary_request["messages"][1]["content"]
            .as_str()
            .unwrap()
            .contains("word2999")
    );
}

#[test]
fn a_prompt_queued_while_working_is_sent_when_the_turn_ends() {
    let mock = MockLlm::start_in_background();
    let run = Run::new();
    mock.push(Reply::Paced {
        body: openai_text_sse("A slow answer arriving piece by piece."),
        pieces: 12,
        gap: Duration::from_millis(150),
    });
    mock.push(Reply::Sse {
        body: openai_text_sse("The queued one is answered."),
        split: Split::Whole,
    });
    let mut pty = start(&run, &mock);
    pty.send("slow one\r");
    // The input's rule says Enter queues while the turn runs (the status line gives its room
    // to the spinner and the directory before the turn number).
    pty.wait_for("Enter queues");
    pty.send("the queued prompt\r");
    pty.wait_for("» queued  the queued prompt");
    pty.wait_for("The queued one is answered.");
    let requests = mock.requests();
    assert_eq!(requests.len(), 2);
    let last_user = requests[1].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .unwrap()
        .clone();
    assert_eq!(last_user["content"], "the queued prompt");
}

#[test]
fn a_shell_command_shows_its_output_without_a_model_request() {
    let mock = MockLlm::start_in_background();
    let run = Run::new();
    let mut pty = start(&run, &mock);
    pty.send("!echo hi-from-shell-mode\r");
    let screen = pty.wait_for_all(&["│ hi-from-shell-mode", "✓ bash  echo hi-from-shell-mode"]);
    assert!(
        screen.contains("✓ bash  echo hi-from-shell-mode"),
        "{screen}"
    );
    assert!(mock.requests().is_empty(), "no model was involved");
    // The next prompt carries the output to the model.
    mock.push(Reply::Sse {
        body: openai_text_sse("I saw it."),
        split: Split::Whole,
    });
    pty.send("what did it print?\r");
    pty.wait_for("I saw it.");
    let body = &mock.requests()[0].body;
    let user = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .unwrap();
    assert!(
        user["content"]
            .as_str()
            .unwrap()
            .contains("hi-from-shell-mode")
    );
}

#[test]
fn at_completes_a_file_name_and_attaches_the_file() {
    let mock = MockLlm::start_in_background();
    let run = Run::new();
    std::fs::write(run.workdir.join("CHANGELOG.md"), "v1: the first release\n").unwrap();
    std::fs::write(run.workdir.join("other.txt"), "").unwrap();
    let mut pty = start(&run, &mock);
    pty.send("summarise @CHANG");
    pty.wait_for("CHANGELOG.md");
    pty.send("\t");
    pty.wait_for("› summarise @CHANGELOG.md");
    mock.push(Reply::Sse {
        body: openai_text_sse("One release."),
        split: Split::Whole,
    });
    pty.send("\r");
    pty.wait_for("One release.");
    let body = &mock.requests()[0].body;
    let user = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .unwrap();
    assert!(
        user["content"]
            .as_str()
            .unwrap()
            .contains("v1: the first release")
    );
}

#[test]
fn copy_writes_an_osc52_sequence_with_the_answer() {
    let mock = MockLlm::start_in_background();
    let run = Run::new();
    mock.push(Reply::Sse {
        body: openai_text_sse("copy me exactly"),
        split: Split::Whole,
    });
    let mut pty = start(&run, &mock);
    pty.send("say something\r");
    pty.wait_for("copy me exactly");
    pty.send("/copy\r");
    pty.wait_for("copied 15 characters");
    let encoded = base64::engine::general_purpose::STANDARD.encode("copy me exactly");
    let sequence = format!("\x1b]52;c;{encoded}\x07");
    pty.wait_raw("the OSC 52 sequence", sequence.as_bytes());
}

pub fn todo_call(id: &str, statuses: [&str; 3]) -> Vec<u8> {
    let todos: Vec<_> = ["read the parser", "fix split", "add a test"]
        .iter()
        .zip(statuses)
        .map(|(content, status)| serde_json::json!({"content": content, "status": status}))
        .collect();
    openai_tool_sse(
        id,
        "todo_write",
        &serde_json::json!({ "todos": todos }).to_string(),
    )
}

#[test]
fn a_plan_is_reviewed_and_carried_out_by_auto_continue() {
    let mock = MockLlm::start_in_background();
    let run = Run::new();
    for body in [
        todo_call("p1", ["pending", "pending", "pending"]),
        openai_text_sse("Here is the plan."),
        todo_call("w1", ["completed", "pending", "pending"]),
        openai_text_sse("The parser is read."),
        todo_call("w2", ["completed", "completed", "pending"]),
        openai_text_sse("Split is fixed."),
        todo_call("w3", ["completed", "completed", "completed"]),
        openai_text_sse("All three items are done."),
    ] {
        mock.push(Reply::Sse {
            body,
            split: Split::Whole,
        });
    }
    let mut pty = Pty::spawn(
        harness9(),
        &["--mode", "plan"],
        &run.workdir,
        &env(&run, &mock),
    );
    pty.wait_for(" plan ");
    pty.send("plan the parser fix\r");
    let review = pty.wait_for_all(&["The plan is ready", "○ fix split", "continuing by itself"]);
    assert!(
        review.contains("○ fix split") && review.contains("continuing by itself"),
        "{review}"
    );
    pty.send("a");
    let screen = pty.wait_for_all(&["All three items are done.", " default "]);
    assert!(
        screen.contains(" default "),
        "switched to default mode: {screen}"
    );
    assert_eq!(
        mock.requests().len(),
        8,
        "three continuation rounds, no more"
    );
    let continuation = mock.requests()[4].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .unwrap()["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        continuation.starts_with("Continue with the plan: 1 of 3"),
        "{continuation}"
    );
}
