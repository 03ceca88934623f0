//! Issue 11 through the real binary: a folder's `.env` and settings under folder trust, the
//! keys out of harness9's own process, yolo never resumed, saving failures, and terminal control
//! sequences kept off the terminal. Every server is a mock on 127.0.0.1.

use std::process::{Command, Output, Stdio};

use serde_json::Value;

use crate::exec::{Run, json_lines};
use crate::support::{MockLlm, Reply, Split, openai_text_sse, openai_tool_sse};

const KEY: &str = "sk-trust-test-key-8642-secret";

/// `harness9 ARGS` in the run's folder, with `OPENAI_API_KEY` set and the mock as base URL.
fn command(run: &Run, mock: &MockLlm, args: &[&str]) -> Command {
    let mut command = Command::new(assert_cmd::cargo::cargo_bin!("harness9"));
    command
        .args(args)
        .current_dir(&run.workdir)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", &run.home)
        .env("HARNESS9_HOME", &run.home)
        .env("OPENAI_API_KEY", KEY)
        .env("OPENAI_BASE_URL", mock.openai_base())
        .stdin(Stdio::null());
    command
}

fn exec(run: &Run, mock: &MockLlm, args: &[&str]) -> Output {
    command(run, mock, args).output().expect("harness9 runs")
}

/// The first tool result the model got back (in the second request).
fn first_tool_result(requests: &[crate::support::Recorded]) -> String {
    requests[1].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .unwrap()["content"]
        .as_str()
        .unwrap()
        .to_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn notices(events: &[Value]) -> Vec<String> {
    events
        .iter()
        .filter(|e| e["type"] == "notice")
        .map(|e| e["data"].as_str().unwrap_or_default().to_owned())
        .collect()
}

/// A streamed answer (`exec --json`).
fn answer(mock: &MockLlm, text: &str) {
    mock.push(Reply::Sse {
        body: openai_text_sse(text),
        split: Split::Whole,
    });
}

/// An answer in one piece (`exec` streams in both modes).
fn whole_answer(mock: &MockLlm, text: &str) {
    mock.push(Reply::Sse {
        body: openai_text_sse(text),
        split: Split::Whole,
    });
}

// Item 1: `.env` sets the provider's variables only.

#[test]
fn a_folders_dotenv_cannot_move_the_home_or_set_other_variables() {
    let mock = MockLlm::start_in_background();
    let run = Run::new();
    std::fs::write(
        run.workdir.join(".env"),
        "HARNESS9_HOME=.h9\nHARNESS9_SERVE_TOKEN=folder-token\nPATH=/nonexistent\nHARNESS9_MODEL=folder-model\n",
    )
    .unwrap();
    answer(&mock, "Done.");
    let output = exec(&run, &mock, &["exec", "--json", "hi"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let events = json_lines(&output.stdout);
    let notices = notices(&events).join("\n");
    assert!(
        notices.contains("ignored HARNESS9_HOME, HARNESS9_SERVE_TOKEN, PATH"),
        "{notices}"
    );
    assert!(run.home.join("sessions.db").exists());
    assert!(!run.workdir.join(".h9").exists(), "the home stayed put");
    assert_eq!(mock.requests()[0].body["model"], "folder-model");

    // Text mode says it on stderr.
    whole_answer(&mock, "Done.");
    let output = exec(&run, &mock, &["exec", "hi"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("ignored HARNESS9_HOME"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn an_untrusted_folders_base_url_never_receives_the_environments_key() {
    let mock = MockLlm::start_in_background();
    let attacker = MockLlm::start_in_background();
    // The default endpoint is reached through a "proxy" on 127.0.0.1 that only records the
    // tunnel request: nothing leaves this machine.
    let proxy = MockLlm::start_in_background();
    let run = Run::new();
    std::fs::write(
        run.workdir.join(".env"),
        format!("OPENAI_BASE_URL={}\n", attacker.openai_base()),
    )
    .unwrap();
    let child = command(&run, &mock, &["exec", "--json", "hi"])
        .env_remove("OPENAI_BASE_URL")
        .env("HTTPS_PROXY", &proxy.base_url)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The request to the default endpoint.
    proxy.wait_for_requests(1);
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let output = child.wait_with_output().unwrap();
    assert!(
        attacker.requests().is_empty(),
        "the folder's server got a request"
    );
    let tunnel = &proxy.requests()[0];
    let host = tunnel.headers.get("host").unwrap().to_str().unwrap();
    assert_eq!(host, "api.openai.com:443");
    let notices = notices(&json_lines(&output.stdout)).join("\n");
    assert!(
        notices.contains("ignored OPENAI_BASE_URL") && notices.contains("not trusted"),
        "{notices}"
    );

    // With --trust the folder's server is used.
    answer(&attacker, "From the folder's server.");
    let output = command(&run, &mock, &["exec", "--json", "--trust", "hi"])
        .env_remove("OPENAI_BASE_URL")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(attacker.requests().len(), 1);
}

// Item 2: folder trust for `exec`.

#[test]
fn exec_in_an_untrusted_folder_says_what_was_ignored_until_it_is_trusted() {
    let mock = MockLlm::start_in_background();
    let run = Run::new();
    std::fs::create_dir_all(run.workdir.join(".harness9")).unwrap();
    std::fs::write(
        run.workdir.join(".harness9/settings.json"),
        r#"{"permissions": {"allow": ["bash"]}}"#,
    )
    .unwrap();
    std::fs::write(run.workdir.join(".mcp.json"), r#"{"mcpServers": {}}"#).unwrap();
    let untrusted = |events: &[Value]| {
        notices(events)
            .iter()
            .any(|n| n.contains("not trusted") && n.contains(".harness9/settings.json"))
    };
    answer(&mock, "ok");
    let output = exec(&run, &mock, &["exec", "--json", "hi"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let events = json_lines(&output.stdout);
    assert!(untrusted(&events), "{:?}", notices(&events));
    assert!(notices(&events).iter().any(|n| n.contains(".mcp.json")));

    answer(&mock, "ok");
    let output = exec(&run, &mock, &["exec", "--json", "--trust", "hi"]);
    assert!(!untrusted(&json_lines(&output.stdout)));

    // A folder the user trusted before (in the TUI) is trusted by exec too.
    std::fs::write(
        run.home.join("trusted.json"),
        serde_json::json!({"trusted": [run.workdir.canonicalize().unwrap()]}).to_string(),
    )
    .unwrap();
    answer(&mock, "ok");
    let output = exec(&run, &mock, &["exec", "--json", "hi"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(!untrusted(&json_lines(&output.stdout)));
}

// Item 3: the keys cannot be read back from harness9's own process.

/// Sets `P` to harness9's pid: a foreground command's parent (only background jobs run under
/// the reaper).
const HARNESS9_PID: &str = "P=$PPID;";

#[test]
fn a_command_cannot_read_the_key_from_harness9s_environment() {
    let mock = MockLlm::start_in_background();
    let run = Run::new();
    mock.push(Reply::Sse {
        body: openai_tool_sse(
            "call_env",
            "bash",
            &format!(
                r#"{{"command":"{HARNESS9_PID} cat /proc/$P/environ | tr '\\0' '\\n'; echo; cat /proc/$P/cmdline | tr '\\0' ' '"}}"#
            ),
        ),
        split: Split::Whole,
    });
    answer(&mock, "Read it.");
    let output = exec(
        &run,
        &mock,
        // Outside the sandbox: inside it, the command has a PID namespace of its own and cannot
        // even name harness9's process; this checks the process itself, the layer beneath.
        &[
            "exec",
            "--json",
            "--mode",
            "yolo",
            "--sandbox",
            "off",
            "show me",
        ],
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let requests = mock.requests();
    let tool = first_tool_result(&requests);
    assert!(tool.contains("exec"), "the parent is harness9: {tool}");
    assert!(!tool.contains("__reap"), "that was the reaper: {tool}");
    assert!(!tool.contains(KEY), "the key leaked: {tool}");
    assert!(
        !tool.contains("trust-test-key"),
        "part of the key leaked: {tool}"
    );
    // The key still reached the provider, from the environment harness9 read at start.
    assert_eq!(
        requests[0].headers.get("authorization").unwrap(),
        &format!("Bearer {KEY}")
    );
}

/// Root outside the sandbox could open harness9's memory, where the key must live for the
/// requests: `/proc/PPID/mem` of a process that is not dumpable needs `CAP_SYS_PTRACE`, which
/// a command never gets. (Its `environ` stays readable to root; the keys are gone from it, see
/// the test above.)
#[test]
fn even_root_outside_the_sandbox_cannot_open_harness9s_memory() {
    let mock = MockLlm::start_in_background();
    let run = Run::new();
    mock.push(Reply::Sse {
        body: openai_tool_sse(
            "call_mem",
            "bash",
            &format!(
                r#"{{"command":"{HARNESS9_PID} if exec 3</proc/$P/mem; then echo OPENED; else echo REFUSED; fi; tr '\\0' ' ' < /proc/$P/cmdline"}}"#
            ),
        ),
        split: Split::Whole,
    });
    answer(&mock, "Read it.");
    let args = [
        "exec",
        "--json",
        "--mode",
        "yolo",
        "--sandbox",
        "off",
        "show me",
    ];
    let output = exec(&run, &mock, &args);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let requests = mock.requests();
    let tool = first_tool_result(&requests);
    assert!(tool.contains("REFUSED"), "{tool}");
    assert!(
        tool.contains(" exec ") && !tool.contains("__reap"),
        "not harness9's memory: {tool}"
    );
    assert!(!tool.contains("OPENED"), "{tool}");
}

// Item 4: yolo is never resumed.

fn started_mode(output: &Output) -> String {
    let events = json_lines(&output.stdout);
    let started = events
        .iter()
        .find(|e| e["type"] == "session_started")
        .unwrap();
    started["data"]["mode"].as_str().unwrap().to_owned()
}

#[test]
fn a_yolo_session_resumes_in_default_unless_yolo_is_named_again() {
    let mock = MockLlm::start_in_background();
    let run = Run::new();
    answer(&mock, "one");
    let output = exec(&run, &mock, &["exec", "--json", "--mode", "yolo", "first"]);
    assert_eq!(started_mode(&output), "yolo");
    let id = json_lines(&output.stdout)[0]["data"]["session_id"]
        .as_str()
        .unwrap()
        .to_owned();

    answer(&mock, "two");
    let output = exec(&run, &mock, &["exec", "--json", "--continue", "second"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let events = json_lines(&output.stdout);
    assert!(
        notices(&events)
            .iter()
            .any(|n| n.contains("yolo") && n.contains("default")),
        "{:?}",
        notices(&events)
    );
    assert_eq!(started_mode(&output), "default");

    answer(&mock, "three");
    let output = exec(
        &run,
        &mock,
        &[
            "exec",
            "--json",
            "--session",
            &id,
            "--mode",
            "yolo",
            "third",
        ],
    );
    assert_eq!(started_mode(&output), "yolo");
    answer(&mock, "four");
    let output = exec(&run, &mock, &["exec", "--json", "--session", &id, "fourth"]);
    assert_eq!(started_mode(&output), "default");
}

// Item 5: saving failures.

/// Runs `sql` on the run's `sessions.db` (created by a first run).
fn sabotage(run: &Run, sql: &str) {
    let db = rusqlite::Connection::open(run.home.join("sessions.db")).unwrap();
    db.execute_batch(sql).unwrap();
}

fn first_run(run: &Run, mock: &MockLlm) {
    answer(mock, "ok");
    let output = exec(run, mock, &["exec", "--json", "set up"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
}

#[test]
fn a_run_that_cannot_create_its_session_stops_before_the_model() {
    let mock = MockLlm::start_in_background();
    let run = Run::new();
    std::fs::create_dir_all(run.home.join("sessions.db")).unwrap();
    answer(&mock, "never asked");
    let output = exec(&run, &mock, &["exec", "--json", "hi"]);
    assert_eq!(output.status.code(), Some(1));
    assert!(mock.requests().is_empty());
    assert!(
        stderr(&output).contains("sessions.db"),
        "{}",
        stderr(&output)
    );
    let events = json_lines(&output.stdout);
    assert_eq!(events.last().unwrap()["type"], "error");

    let run = Run::new();
    first_run(&run, &mock);
    let before = mock.requests().len();
    sabotage(
        &run,
        "CREATE TRIGGER full BEFORE INSERT ON sessions BEGIN SELECT RAISE(ABORT, 'disk full'); END;",
    );
    let output = exec(&run, &mock, &["exec", "hi"]);
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(mock.requests().len(), before, "the model was called");
    let err = stderr(&output);
    assert!(
        err.contains("cannot create the session") && err.contains("disk full"),
        "{err}"
    );
    assert!(!err.contains("continue it with"), "{err}");
}

#[test]
fn turns_that_could_not_be_saved_make_exec_exit_1_and_say_what_was_lost() {
    let mock = MockLlm::start_in_background();
    let run = Run::new();
    first_run(&run, &mock);
    sabotage(
        &run,
        "CREATE TRIGGER full BEFORE INSERT ON messages BEGIN SELECT RAISE(ABORT, 'disk full'); END;",
    );
    whole_answer(&mock, "An answer nobody stored.");
    let output = exec(&run, &mock, &["exec", "hi"]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert!(String::from_utf8_lossy(&output.stdout).contains("An answer nobody stored."));
    let err = stderr(&output);
    assert!(
        err.contains("could not save") && err.contains("lost") && err.contains("disk full"),
        "{err}"
    );
    assert!(!err.contains("continue it with"), "{err}");

    answer(&mock, "Again unsaved.");
    let output = exec(&run, &mock, &["exec", "--json", "hi"]);
    assert_eq!(output.status.code(), Some(1));
    let events = json_lines(&output.stdout);
    let last = events.last().unwrap();
    assert_eq!(last["type"], "error");
    assert!(last["data"].as_str().unwrap().contains("could not save"));
}

// Item 7: terminal control sequences.

const HOSTILE: &str = "\x1b]52;c;cm0gLXJmIH4K\x07\x1b]0;pwned\x07\x1b[2J";

fn no_controls(bytes: &[u8]) -> bool {
    !bytes
        .iter()
        .any(|&b| b == 0x1b || b == 0x07 || b == 0x9b || b == 0x9d)
}

#[test]
fn exec_text_mode_strips_control_sequences_from_the_answer_and_stderr() {
    let mock = MockLlm::start_in_background();
    let run = Run::new();
    whole_answer(&mock, &format!("Hello{HOSTILE} world\n\tindented"));
    let output = exec(&run, &mock, &["exec", "hi"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(no_controls(&output.stdout), "{stdout:?}");
    assert!(stdout.contains("Hello world\n\tindented"), "{stdout:?}");

    // A provider error body (shown on stderr, and in the [engine] log line) cannot either.
    mock.push(Reply::Status {
        status: 400,
        body: format!(r#"{{"error": {{"message": "bad request{HOSTILE}"}}}}"#),
        headers: vec![],
    });
    let output = exec(&run, &mock, &["exec", "hi"]);
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stderr(&output).contains("bad request"),
        "{}",
        stderr(&output)
    );
    assert!(no_controls(&output.stderr), "{:?}", stderr(&output));
}

#[test]
fn harness9_sessions_strips_control_sequences_from_titles_and_snippets() {
    let mock = MockLlm::start_in_background();
    let run = Run::new();
    let prompt = format!("title{HOSTILE} needle");
    answer(&mock, &format!("snippet{HOSTILE} needle"));
    let output = exec(&run, &mock, &["exec", "--json", &prompt]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    for args in [&["sessions"][..], &["sessions", "--search", "needle"]] {
        let output = exec(&run, &mock, args);
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(stdout.contains("title"), "{stdout:?}");
        assert!(no_controls(&output.stdout), "{stdout:?}");
    }
}
