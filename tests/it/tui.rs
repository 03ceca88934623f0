//! The real binary in a pseudo-terminal, as a person uses it: keys in, the screen (parsed by
//! vt100, erasing as tmux does: `scroll_on_clear`) read back, a mock model server on
//! 127.0.0.1. Every wait is on the screen (`pty`) or on the server, never a fixed sleep, and
//! waits for what it asserts, not for something drawn before it.

use std::path::Path;
use std::time::{Duration, Instant};

use crate::exec::{Run, wait_for};
pub use crate::pty::{PATIENCE, Pty, idle};
use crate::support::{MockLlm, Reply, Split, fixture, openai_text_sse, openai_tool_sse};

/// The environment of a TUI run in a folder the user trusted before (so the folder trust
/// question, tested on its own, does not come first).
pub fn env(run: &Run, mock: &MockLlm) -> Vec<(&'static str, String)> {
    trust_folder(run);
    untrusted_env(run, mock)
}

/// Records the run's folder in `$HARNESS9_HOME/trusted.json`, as answering the question does.
pub fn trust_folder(run: &Run) {
    std::fs::create_dir_all(&run.home).unwrap();
    let folder = run.workdir.canonicalize().unwrap();
    std::fs::write(
        run.home.join("trusted.json"),
        serde_json::json!({ "trusted": [folder] }).to_string(),
    )
    .unwrap();
}

/// The environment of a TUI run whose folder's trust is not decided yet.
pub fn untrusted_env(run: &Run, mock: &MockLlm) -> Vec<(&'static str, String)> {
    vec![
        ("HOME", run.home.display().to_string()),
        ("HARNESS9_HOME", run.home.display().to_string()),
        ("OPENAI_API_KEY", "sk-tui-test".into()),
        ("OPENAI_BASE_URL", mock.openai_base()),
        // A dark terminal said so: the background is not asked (nobody here would answer).
        ("COLORFGBG", "15;0".into()),
    ]
}

pub fn harness9() -> &'static Path {
    Path::new(assert_cmd::cargo::cargo_bin!("harness9"))
}

pub fn start(run: &Run, mock: &MockLlm) -> Pty {
    let pty = Pty::spawn(harness9(), &[], &run.workdir, &env(run, mock));
    pty.wait_for("Ask harness9 to do something");
    pty
}

#[test]
fn a_prompt_streams_a_markdown_answer_onto_the_screen() {
    let mock = MockLlm::start_in_background();
    let run = Run::new();
    mock.push(Reply::Sse {
        body: fixture("openai_chat_text.sse"),
        split: Split::Random(5),
    });
    let mut pty = start(&run, &mock);
    pty.send("what is in the project?\r");
    let screen = pty.wait_for_all(&[
        "draws it",
        "› what is in the project?",
        "The project has two modules:",
        "• engine runs the loop",
        "▏ fn main() {}",
        // The status line comes last in a frame: a screen read mid-frame may not have it yet.
        "openai/gpt-4o",
    ]);
    assert!(screen.contains("› what is in the project?"), "{screen}");
    assert!(
        screen.contains("The project has two modules:"),
        "bold markers are rendered, not shown: {screen}"
    );
    assert!(screen.contains("• engine runs the loop"), "{screen}");
    assert!(screen.contains("▏ fn main() {}"), "{screen}");
    // The provider is on the idle status line (while the spinner, the time and the cost show,
    // a 110-column line may keep only the model).
    pty.wait_until("the provider on the idle status line", |screen| {
        idle(screen) && screen.contains("openai/gpt-4o")
    });
}

#[test]
fn a_bash_call_asks_and_y_runs_it() {
    let mock = MockLlm::start_in_background();
    let run = Run::new();
    mock.push(Reply::Sse {
        // Not read-only (it writes a file), so it asks even in default mode.
        body: openai_tool_sse(
            "call_b",
            "bash",
            r#"{"command":"echo hello-from-the-pty && touch made"}"#,
        ),
        split: Split::Whole,
    });
    mock.push(Reply::Sse {
        body: openai_text_sse("It printed the greeting."),
        split: Split::Whole,
    });
    let mut pty = start(&run, &mock);
    pty.send("say hello\r");
    let overlay = pty.wait_for_all(&["Approve bash?", "$ echo hello-from-the-pty", "allow once"]);
    assert!(overlay.contains("$ echo hello-from-the-pty"), "{overlay}");
    assert!(overlay.contains("allow once"));
    // The dialog takes keys once it has been on screen for 250 ms.
    press_until(&mut pty, "y", "✓ bash");
    let screen = pty.wait_for_all(&[
        "It printed the greeting.",
        "✓ bash  echo hello-from-the-pty",
        "│ hello-from-the-pty",
    ]);
    assert!(
        screen.contains("✓ bash  echo hello-from-the-pty"),
        "{screen}"
    );
    assert!(screen.contains("│ hello-from-the-pty"), "{screen}");
    let tool = &mock.requests()[1].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .unwrap()
        .clone();
    assert!(
        tool["content"]
            .as_str()
            .unwrap()
            .contains("hello-from-the-pty")
    );
}

#[test]
fn n_denies_and_the_model_is_told() {
    let mock = MockLlm::start_in_background();
    let run = Run::new();
    mock.push(Reply::Sse {
        body: openai_tool_sse("call_d", "bash", r#"{"command":"touch should-not-exist"}"#),
        split: Split::Whole,
    });
    mock.push(Reply::Sse {
        body: openai_text_sse("Understood, I did not run it."),
        split: Split::Whole,
    });
    let mut pty = start(&run, &mock);
    pty.send("make a file\r");
    pty.wait_for("Approve bash?");
    press_until(&mut pty, "n", "✗ bash");
    let screen = pty.wait_for_all(&["Understood, I did not run it.", "✗ bash"]);
    assert!(screen.contains("✗ bash"), "{screen}");
    assert!(!run.workdir.join("should-not-exist").exists());
    mock.wait_for_requests(2);
    let body = &mock.requests()[1].body;
    let tool = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .unwrap();
    assert!(
        tool["content"]
            .as_str()
            .unwrap()
            .contains("The user denied this `bash` call.")
    );
}

#[test]
fn shift_tab_cycles_the_mode_on_the_status_line() {
    let mock = MockLlm::start_in_background();
    let run = Run::new();
    let mut pty = start(&run, &mock);
    // The status line is drawn after the input's placeholder: waited for, not read at once.
    pty.wait_for(" default ");
    pty.send("\x1b[Z");
    pty.wait_for(" auto-edit ");
    pty.send("\x1b[Z");
    pty.wait_for(" plan ");
}

#[test]
fn ctrl_c_twice_quits_and_the_terminal_is_back_in_cooked_mode() {
    let mock = MockLlm::start_in_background();
    let run = Run::new();
    // The shell shows the terminal's modes once harness9 has exited.
    let script = format!(
        "'{}'; stty -a; printf 'SHELL-DONE'; sleep 30",
        harness9().display()
    );
    let mut pty = Pty::spawn(
        Path::new("/bin/sh"),
        &["-c", &script],
        &run.workdir,
        &env(&run, &mock),
    );
    pty.wait_for("Ask harness9 to do something");
    assert!(pty.alternate_screen());
    mock.push(Reply::Sse {
        body: openai_text_sse("Hello."),
        split: Split::Whole,
    });
    pty.send("say hello\r");
    pty.wait_for("Hello.");
    pty.wait_idle();
    pty.send("some text");
    pty.wait_for("some text");
    pty.send("\x03");
    pty.wait_for("press Ctrl+C again to quit");
    pty.send("\x03");
    let screen = pty.wait_for_all(&["SHELL-DONE", "Resume this session with: harness9 --resume "]);
    assert!(!pty.alternate_screen(), "back on the main screen");
    assert!(
        screen.contains("Resume this session with: harness9 --resume "),
        "{screen}"
    );
    let words: Vec<&str> = screen.split_whitespace().collect();
    assert!(
        words.contains(&"icanon") && words.contains(&"echo"),
        "cooked mode again: {screen}"
    );
    drop(pty);
}

#[test]
fn without_a_provider_the_tui_exits_2_before_touching_the_screen() {
    let run = Run::new();
    let output = std::process::Command::new(harness9())
        .current_dir(&run.workdir)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", &run.home)
        .env("HARNESS9_HOME", &run.home)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("ANTHROPIC_API_KEY")
            && stderr.contains("OPENAI_API_KEY")
            && stderr.contains("export ANTHROPIC_API_KEY="),
        "{stderr}"
    );
    assert!(
        output.stdout.is_empty(),
        "no escape sequence reached the terminal"
    );
}

#[test]
fn a_session_without_a_prompt_is_not_kept() {
    let mock = MockLlm::start_in_background();
    let run = Run::new();
    let script = format!("'{}'; printf 'SHELL-DONE'; sleep 30", harness9().display());
    let mut pty = Pty::spawn(
        Path::new("/bin/sh"),
        &["-c", &script],
        &run.workdir,
        &env(&run, &mock),
    );
    pty.wait_for("Ask harness9 to do something");
    pty.send("\x04");
    let screen = pty.wait_for("SHELL-DONE");
    assert!(!screen.contains("Resume this session"), "{screen}");
    let conn = rusqlite::Connection::open(run.home.join("sessions.db")).unwrap();
    let count: i64 = conn
        .query_row("SELECT count(*) FROM sessions", [], |r| r.get(0))
        .unwrap();
    assert_eq!(count, 0);
}

/// Sends `key` until the screen shows `text`, giving each press up to 100 ms to show: keys
/// that come too soon after a dialog appeared are dropped by design, so one press may not do.
pub fn press_until(pty: &mut Pty, key: &str, text: &str) -> String {
    press_until_screen(pty, key, |screen| screen.contains(text))
}

/// `press_until` with any condition on the screen.
pub fn press_until_screen(pty: &mut Pty, key: &str, done: impl Fn(&str) -> bool) -> String {
    let until = Instant::now() + PATIENCE;
    loop {
        pty.send(key);
        let press = Instant::now() + Duration::from_millis(100);
        match pty.wait_text(press, &done) {
            Ok(screen) => return screen,
            Err(screen) => assert!(
                Instant::now() < until,
                "timed out pressing {key:?}; the screen:\n{screen}"
            ),
        }
    }
}

#[test]
fn a_new_folder_is_asked_about_once_and_the_answer_is_remembered() {
    let mock = MockLlm::start_in_background();
    let run = Run::new();
    let mut pty = Pty::spawn(harness9(), &[], &run.workdir, &untrusted_env(&run, &mock));
    pty.wait_for_all(&[
        "Trust this folder?",
        "do not trust it for now",
        "trust this folder",
    ]);
    let trusted = run.home.join("trusted.json");
    assert!(!trusted.exists());
    press_until_screen(&mut pty, "t", |screen| {
        !screen.contains("Trust this folder?")
    });
    wait_for("trusted.json", || trusted.exists());
    let text = std::fs::read_to_string(&trusted).unwrap();
    let folder = run.workdir.canonicalize().unwrap();
    assert!(text.contains(folder.to_str().unwrap()), "{text}");
    pty.send("\x04");
    drop(pty);

    let pty = Pty::spawn(harness9(), &[], &run.workdir, &untrusted_env(&run, &mock));
    let screen = pty.wait_for("Ask harness9 to do something");
    assert!(!screen.contains("Trust this folder?"), "{screen}");
}

/// An OpenAI stream that says `text` in a few pieces, then calls `bash` with `command`.
fn text_then_bash(text: &str, command: &str) -> Vec<u8> {
    let chunk = |delta: serde_json::Value, finish: Option<&str>| {
        serde_json::json!({
            "id": "chatcmpl-test", "object": "chat.completion.chunk", "created": 1, "model": "gpt-4o",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        })
    };
    let mut out = String::new();
    for word in text.split_inclusive(' ') {
        out.push_str(&format!(
            "data: {}\n\n",
            chunk(serde_json::json!({"content": word}), None)
        ));
    }
    let arguments = serde_json::json!({ "command": command }).to_string();
    let call = serde_json::json!({"tool_calls": [{"index": 0, "id": "call_v", "type": "function",
        "function": {"name": "bash", "arguments": arguments}}]});
    out.push_str(&format!("data: {}\n\n", chunk(call, None)));
    out.push_str(&format!(
        "data: {}\n\n",
        chunk(serde_json::json!({}), Some("tool_calls"))
    ));
    out.push_str("data: [DONE]\n\n");
    out.into_bytes()
}

#[test]
fn a_y_typed_while_the_model_streams_does_not_answer_the_approval_that_appears() {
    let mock = MockLlm::start_in_background();
    let run = Run::new();
    mock.push(Reply::Paced {
        body: text_then_bash(
            "Let me tidy up the workspace for you first, one moment please.",
            "touch victim",
        ),
        pieces: 12,
        gap: Duration::from_millis(20),
    });
    mock.push(Reply::Sse {
        body: openai_text_sse("Understood, I left it alone."),
        split: Split::Whole,
    });
    let mut pty = start(&run, &mock);
    pty.send("tidy up\r");
    // Typing on while the answer streams, as a person writing the next sentence would.
    let until = Instant::now() + PATIENCE;
    'typing: loop {
        pty.send("y");
        // A key every 10 ms at most, so the terminal's input buffer never fills.
        let next_key = Instant::now() + Duration::from_millis(10);
        match pty.wait_text(next_key, |screen| screen.contains("Approve bash?")) {
            Ok(_) => break 'typing,
            Err(screen) => assert!(Instant::now() < until, "no approval: {screen}"),
        }
    }
    // The moment it appears, more of the same typing.
    pty.send("yy");
    // The dialog's title can be on screen before its command line is drawn.
    pty.wait_for("$ touch victim");
    // Answered on purpose, once it has been on screen long enough: no.
    let screen = press_until(&mut pty, "n", "✗ bash");
    assert!(!run.workdir.join("victim").exists(), "{screen}");
    mock.wait_for_requests(2);
    let body = &mock.requests()[1].body;
    let tool = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .unwrap();
    assert!(
        tool["content"]
            .as_str()
            .unwrap()
            .contains("The user denied this `bash` call."),
        "{tool}"
    );
}
