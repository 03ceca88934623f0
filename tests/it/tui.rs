//! The real binary in a pseudo-terminal, as a person uses it: keys in, the screen (parsed by
//! vt100, erasing as tmux does: `scroll_on_clear`) read back, a mock model server on
//! 127.0.0.1. Every wait is on the screen or on the server, never a fixed sleep; a wait on the
//! screen sleeps until the reader thread has fed it new bytes (a condition variable), never
//! spinning, and waits for what it asserts, not for something drawn before it.

use std::io::{Read, Write};
use std::num::NonZeroU16;
use std::path::Path;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use portable_pty::{CommandBuilder, PtySize, native_pty_system};

use crate::exec::{Run, wait_for};
use crate::support::{MockLlm, Reply, Split, fixture, openai_text_sse, openai_tool_sse};

const ROWS: u16 = 32;
const COLS: u16 = 110;
const PATIENCE: Duration = Duration::from_secs(30);
/// Lines the parsed terminal keeps above its screen (for `--no-alt-screen`).
const SCROLLBACK: usize = 2000;

/// What the program has written so far, as the reader thread parsed it.
struct Terminal {
    parser: vt100::Parser,
    /// Every byte the program wrote (for sequences with no visible effect, like OSC 52).
    raw: Vec<u8>,
    /// The program's side is closed: nothing will change any more.
    closed: bool,
}

/// The terminal and the signal the reader gives after each change to it.
type Shared = Arc<(Mutex<Terminal>, Condvar)>;

pub struct Pty {
    terminal: Shared,
    writer: Box<dyn Write + Send>,
    child: Box<dyn portable_pty::Child + Send + Sync>,
    _master: Box<dyn portable_pty::MasterPty + Send>,
}

impl Pty {
    /// Runs `program args` in a new pseudo-terminal.
    pub fn spawn(program: &Path, args: &[&str], cwd: &Path, env: &[(&str, String)]) -> Pty {
        Pty::spawn_sized(program, args, cwd, env, (ROWS, COLS))
    }

    /// Runs `program args` in a new pseudo-terminal of `(rows, columns)`.
    pub fn spawn_sized(
        program: &Path,
        args: &[&str],
        cwd: &Path,
        env: &[(&str, String)],
        (rows, cols): (u16, u16),
    ) -> Pty {
        let system = native_pty_system();
        let pair = system
            .openpty(PtySize {
                rows,
                cols,
                pixel_width: 0,
                pixel_height: 0,
            })
            .expect("a pty");
        let mut command = CommandBuilder::new(program);
        command.args(args);
        command.cwd(cwd);
        command.env_clear();
        command.env("PATH", std::env::var("PATH").unwrap_or_default());
        command.env("TERM", "xterm-256color");
        for (key, value) in env {
            command.env(key, value);
        }
        let child = pair.slave.spawn_command(command).expect("spawn in the pty");
        drop(pair.slave);
        let mut reader = pair.master.try_clone_reader().expect("pty reader");
        let writer = pair.master.take_writer().expect("pty writer");
        let terminal: Shared = Arc::new((
            Mutex::new(Terminal {
                parser: vt100::Parser::new(
                    NonZeroU16::new(rows).unwrap(),
                    NonZeroU16::new(cols).unwrap(),
                    SCROLLBACK,
                ),
                raw: Vec::new(),
                closed: false,
            }),
            Condvar::new(),
        ));
        let feed = Arc::clone(&terminal);
        std::thread::spawn(move || {
            let (lock, changed) = &*feed;
            let mut buffer = [0u8; 8192];
            // As tmux: a whole-screen erase keeps what it erases in the scrollback.
            let mut clears = crate::scroll_on_clear::Feed::default();
            while let Ok(n) = reader.read(&mut buffer) {
                if n == 0 {
                    break;
                }
                let mut terminal = lock.lock().unwrap();
                clears.process(&mut terminal.parser, &buffer[..n]);
                terminal.raw.extend_from_slice(&buffer[..n]);
                drop(terminal);
                changed.notify_all();
            }
            lock.lock().unwrap().closed = true;
            changed.notify_all();
        });
        Pty {
            terminal,
            writer,
            child,
            _master: pair.master,
        }
    }

    fn terminal(&self) -> MutexGuard<'_, Terminal> {
        self.terminal.0.lock().unwrap()
    }

    pub fn raw_contains(&self, needle: &[u8]) -> bool {
        self.terminal()
            .raw
            .windows(needle.len())
            .any(|w| w == needle)
    }

    pub fn pid(&self) -> u32 {
        self.child.process_id().unwrap_or(0)
    }

    /// The scrollback and the screen, oldest line first.
    pub fn all_text(&self) -> String {
        let mut terminal = self.terminal();
        let screen = terminal.parser.screen_mut();
        screen.set_scrollback(usize::MAX);
        let above = screen.scrollback();
        let mut lines: Vec<String> = Vec::new();
        // Each window shows ROWS lines from `offset` lines back; its top line is new.
        for offset in (1..=above).rev() {
            screen.set_scrollback(offset);
            let window = screen.contents();
            lines.push(window.lines().next().unwrap_or("").to_owned());
        }
        screen.set_scrollback(0);
        lines.extend(screen.contents().lines().map(str::to_owned));
        lines.join("\n")
    }

    /// Changes the terminal's size, as a user dragging the window does (the program gets
    /// SIGWINCH).
    pub fn resize(&mut self, rows: u16, cols: u16) {
        self.terminal().parser.screen_mut().set_size(
            NonZeroU16::new(rows).unwrap(),
            NonZeroU16::new(cols).unwrap(),
        );
        self._master
            .resize(PtySize {
                rows,
                cols,
                pixel_width: 0,
                pixel_height: 0,
            })
            .expect("resize the pty");
    }

    pub fn alternate_screen(&self) -> bool {
        self.terminal().parser.screen().alternate_screen()
    }

    pub fn send(&mut self, bytes: &str) {
        self.writer.write_all(bytes.as_bytes()).unwrap();
        self.writer.flush().unwrap();
    }

    /// Waits until `check` finds what it looks for in the terminal, or `deadline` passes (or
    /// the program's side closes first): `Err` with the screen then. Each look follows a change
    /// the reader made; between them this thread sleeps. `check` runs with the terminal locked,
    /// so it must not call the `Pty`'s own methods.
    fn wait_terminal<T>(
        &self,
        deadline: Instant,
        mut check: impl FnMut(&Terminal) -> Option<T>,
    ) -> Result<T, String> {
        let (lock, changed) = &*self.terminal;
        let mut terminal = lock.lock().unwrap();
        loop {
            if let Some(found) = check(&terminal) {
                return Ok(found);
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() || terminal.closed {
                return Err(terminal.parser.screen().contents());
            }
            terminal = changed.wait_timeout(terminal, left).unwrap().0;
        }
    }

    /// Waits until `done` holds for the screen's text or `deadline` passes: `Err` with the
    /// screen then.
    pub fn wait_text(
        &self,
        deadline: Instant,
        done: impl Fn(&str) -> bool,
    ) -> Result<String, String> {
        self.wait_terminal(deadline, |terminal| {
            let text = terminal.parser.screen().contents();
            done(&text).then_some(text)
        })
    }

    /// Waits until `done` holds for the screen (its text, cursor, modes); returns its text.
    pub fn wait_until_screen(&self, what: &str, done: impl Fn(&vt100::Screen) -> bool) -> String {
        self.wait_terminal(Instant::now() + PATIENCE, |terminal| {
            let screen = terminal.parser.screen();
            done(screen).then(|| screen.contents())
        })
        .unwrap_or_else(|screen| panic!("timed out waiting for {what}; the screen:\n{screen}"))
    }

    /// Waits until the program has written `needle` (a sequence with no visible effect).
    pub fn wait_raw(&self, what: &str, needle: &[u8]) {
        self.wait_terminal(Instant::now() + PATIENCE, |terminal| {
            terminal
                .raw
                .windows(needle.len())
                .any(|w| w == needle)
                .then_some(())
        })
        .unwrap_or_else(|screen| panic!("timed out waiting for {what}; the screen:\n{screen}"));
    }

    /// Waits until the screen shows every one of `texts` (a frame may be half processed when
    /// the first appears); returns the screen.
    pub fn wait_for_all(&self, texts: &[&str]) -> String {
        self.wait_until(&format!("{texts:?}"), |screen| {
            texts.iter().all(|t| screen.contains(t))
        })
    }

    /// Waits until `done` holds for the screen; returns the screen.
    pub fn wait_until(&self, what: &str, done: impl Fn(&str) -> bool) -> String {
        self.wait_text(Instant::now() + PATIENCE, done)
            .unwrap_or_else(|screen| panic!("timed out waiting for {what}; the screen:\n{screen}"))
    }

    /// Waits until no run is going on: the status line's spinner (a braille character) is gone.
    /// An answer can be on screen a moment before its run ends, and Ctrl+C or a command typed
    /// before the end acts on the run.
    pub fn wait_idle(&self) -> String {
        self.wait_until("the run to end", idle)
    }

    /// Waits until the screen shows `text`; returns the screen.
    pub fn wait_for(&self, text: &str) -> String {
        self.wait_until(&format!("{text:?}"), |screen| screen.contains(text))
    }
}

/// No run is going on: the status line shows no spinner (a braille character).
pub fn idle(screen: &str) -> bool {
    !screen
        .chars()
        .any(|c| ('\u{2800}'..='\u{28FF}').contains(&c))
}

impl Drop for Pty {
    fn drop(&mut self) {
        let _ = self.child.kill();
    }
}

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
