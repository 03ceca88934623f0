//! The real binary, headless: `harness9 exec` against a mock server on 127.0.0.1.

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::{
    Gate, MockLlm, Reply, Split, openai_text_chunk, openai_text_sse, openai_tool_sse,
};

const KEY: &str = "sk-exec-test-key-4242";

pub struct Run {
    _dir: tempfile::TempDir,
    pub workdir: PathBuf,
    pub home: PathBuf,
}

impl Run {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let workdir = dir.path().join("repo");
        let home = dir.path().join("home");
        std::fs::create_dir_all(&workdir).unwrap();
        // Private, as harness9 makes it: a home found open is tightened with a notice, which
        // would sit on the TUI's status line (tests/it/private_home.rs tests that).
        std::os::unix::fs::DirBuilderExt::mode(&mut std::fs::DirBuilder::new(), 0o700)
            .create(&home)
            .unwrap();
        Run {
            _dir: dir,
            workdir,
            home,
        }
    }

    pub fn command(&self, mock: &MockLlm, args: &[&str]) -> Command {
        let mut command = Command::new(assert_cmd::cargo::cargo_bin!("harness9"));
        command
            .args(args)
            .current_dir(&self.workdir)
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", &self.home)
            .env("HARNESS9_HOME", &self.home)
            .env("OPENAI_API_KEY", KEY)
            .env("OPENAI_BASE_URL", mock.openai_base())
            .stdin(Stdio::null());
        command
    }

    pub fn exec(&self, mock: &MockLlm, args: &[&str]) -> Output {
        self.command(mock, args).output().expect("harness9 runs")
    }
}

pub fn json_lines(stdout: &[u8]) -> Vec<Value> {
    String::from_utf8_lossy(stdout)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}")))
        .collect()
}

fn types(events: &[Value]) -> Vec<String> {
    let mut types: Vec<String> = events
        .iter()
        .map(|e| e["type"].as_str().unwrap().to_owned())
        .collect();
    types.dedup_by(|a, b| a == "action_delta" && b == "action_delta");
    types
}

fn tool_messages(request: &Value) -> Vec<Value> {
    request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .cloned()
        .collect()
}

#[test]
fn exec_json_runs_a_two_turn_tool_round_trip() {
    let mock = MockLlm::start_in_background();
    let run = Run::new();
    std::fs::write(run.workdir.join("hello.txt"), "hi from the file\n").unwrap();
    mock.push(Reply::Sse {
        body: openai_tool_sse("call_1", "read_file", r#"{"path":"hello.txt"}"#),
        split: Split::Every(9),
    });
    mock.push(Reply::Sse {
        body: openai_text_sse("The file says hi."),
        split: Split::Whole,
    });

    let output = run.exec(&mock, &["exec", "--json", "What does hello.txt say?"]);
    assert_eq!(
        output.status.code(),
        Some(0),
        "stderr: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let events = json_lines(&output.stdout);
    assert_eq!(
        types(&events),
        [
            "session_started",
            "token_update",
            "token_update",
            "tool_start",
            "tool_result",
            "token_update",
            "action_delta",
            "token_update",
            "done"
        ]
    );
    let started = &events[0];
    assert_eq!(started["turn"], 0);
    assert_eq!(started["data"]["provider"], "openai");
    assert_eq!(started["data"]["mode"], "default");
    assert!(!started["data"]["session_id"].as_str().unwrap().is_empty());
    let tool_start = events.iter().find(|e| e["type"] == "tool_start").unwrap();
    assert_eq!(
        tool_start["data"]["arguments"],
        serde_json::json!({"path": "hello.txt"})
    );
    let result = events.iter().find(|e| e["type"] == "tool_result").unwrap();
    assert_eq!(result["turn"], 1);
    assert_eq!(result["data"]["name"], "read_file");
    assert_eq!(result["data"]["is_error"], false);
    assert!(
        result["data"]["output"]
            .as_str()
            .unwrap()
            .contains("hi from the file")
    );
    assert!(result["data"]["duration_ms"].is_u64());
    let done = events.last().unwrap();
    assert_eq!(done["data"]["turns"], 2);

    let requests = mock.requests();
    assert_eq!(requests.len(), 2);
    let observation = tool_messages(&requests[1].body);
    assert_eq!(observation[0]["tool_call_id"], "call_1");
    assert!(
        observation[0]["content"]
            .as_str()
            .unwrap()
            .contains("hi from the file")
    );
    assert!(
        !String::from_utf8_lossy(&output.stderr).contains(KEY),
        "the key never reaches a log"
    );
}

#[test]
fn exec_text_prints_the_answer_and_logs_on_stderr_only_with_v() {
    let mock = MockLlm::start_in_background();
    let run = Run::new();
    for _ in 0..2 {
        mock.push(Reply::Sse {
            body: openai_tool_sse("c1", "bash", r#"{"command":"env"}"#),
            split: Split::Whole,
        });
        mock.push(Reply::Sse {
            body: openai_text_sse("Environment listed."),
            split: Split::Whole,
        });
    }
    // By default stderr holds what matters: here only the closing line (issue 32 point 17).
    let output = run.exec(&mock, &["exec", "--mode", "yolo", "show the environment"]);
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        "Environment listed.\n"
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("[engine]"), "{stderr}");
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{stderr}");
    assert!(lines[0].starts_with("harness9: session "), "{stderr}");
    // With -v the engine's log is there too.
    let output = run.exec(
        &mock,
        &["exec", "-v", "--mode", "yolo", "show the environment"],
    );
    assert_eq!(output.status.code(), Some(0));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("[engine] ======== Turn 1 ========"),
        "{stderr}"
    );
    assert!(stderr.contains("[engine] tool done | name=bash"));
    let env_output = tool_messages(&mock.requests()[1].body)[0]["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        env_output.contains("HARNESS9_HOME"),
        "the command really ran: {env_output}"
    );
    assert!(
        !env_output.contains(KEY) && !env_output.contains("OPENAI_API_KEY"),
        "bash never sees the key"
    );
}

#[test]
fn exec_denies_what_needs_approval_and_names_the_flag() {
    let mock = MockLlm::start_in_background();
    let run = Run::new();
    mock.push(Reply::Sse {
        body: openai_tool_sse("c1", "bash", r#"{"command":"touch made-it"}"#),
        split: Split::Whole,
    });
    mock.push(Reply::Sse {
        body: openai_text_sse("Could not run it."),
        split: Split::Whole,
    });
    let output = run.exec(&mock, &["exec", "--json", "make a file"]);
    assert_eq!(output.status.code(), Some(0));
    assert!(!run.workdir.join("made-it").exists());
    let events = json_lines(&output.stdout);
    let approval = events
        .iter()
        .find(|e| e["type"] == "approval_required")
        .expect("the approval is reported");
    assert_eq!(approval["data"]["tool_call"]["name"], "bash");
    assert!(String::from_utf8_lossy(&output.stderr).contains("--mode yolo"));
    let denial = &tool_messages(&mock.requests()[1].body)[0];
    assert!(denial["content"].as_str().unwrap().contains("--mode yolo"));
}

#[test]
fn exec_exit_statuses_follow_the_contract() {
    let mock = MockLlm::start_in_background();
    let run = Run::new();

    let output = run.exec(&mock, &["exec", "   "]);
    assert_eq!(
        output.status.code(),
        Some(2),
        "an empty prompt is a usage error"
    );
    assert!(String::from_utf8_lossy(&output.stderr).contains("prompt is empty"));
    assert!(mock.requests().is_empty(), "and reaches no model");

    let output = run
        .command(&mock, &["exec", "hi"])
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
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

    let output = run.exec(&mock, &["exec", "--bogus-flag", "hi"]);
    assert_eq!(output.status.code(), Some(2));

    mock.push(Reply::Status {
        status: 401,
        body: r#"{"error": {"message": "Incorrect API key provided.", "type": "invalid_request_error", "param": null, "code": "invalid_api_key"}}"#.into(),
        headers: vec![],
    });
    let output = run.exec(&mock, &["exec", "hi"]);
    assert_eq!(output.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&output.stderr).contains("Incorrect API key provided"));

    let mut prompt_from_stdin = run.command(&mock, &["exec", "--json", "-"]);
    mock.push(Reply::Sse {
        body: openai_text_sse("read it"),
        split: Split::Whole,
    });
    let mut child = prompt_from_stdin
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"from standard input")
        .unwrap();
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(0));
    let last = mock.requests().pop().unwrap();
    assert_eq!(last.body["messages"][1]["content"], "from standard input");
}

#[test]
fn exec_retries_are_logged_with_reason_and_wait() {
    let mock = MockLlm::start_in_background();
    let run = Run::new();
    mock.push(Reply::Status {
        status: 503,
        body: r#"{"error": {"message": "upstream busy", "type": "server_error"}}"#.into(),
        headers: vec![("retry-after", "0".into())],
    });
    mock.push(Reply::Sse {
        body: openai_text_sse("fine"),
        split: Split::Whole,
    });
    let output = run.exec(&mock, &["exec", "hi"]);
    assert_eq!(output.status.code(), Some(0));
    let stderr = String::from_utf8_lossy(&output.stderr);
    let line = stderr
        .lines()
        .find(|l| l.contains("retry"))
        .expect("a retry line");
    assert!(
        line.starts_with("harness9: retry 2/4 in ") && line.contains("upstream busy"),
        "{line}"
    );
    assert!(!stderr.contains("[engine]"), "no log without -v: {stderr}");
}

pub fn wait_for(what: &str, mut condition: impl FnMut() -> bool) {
    let until = Instant::now() + Duration::from_secs(20);
    while !condition() {
        assert!(Instant::now() < until, "timed out waiting for {what}");
        std::thread::yield_now();
    }
}

#[test]
fn sigint_cancels_cleanly_with_status_130() {
    let mock = MockLlm::start_in_background();
    let run = Run::new();
    mock.push(Reply::Hang);
    let child = run
        .command(&mock, &["exec", "--json", "wait forever"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    mock.wait_for_requests(1);
    // SAFETY: sending a signal to our own child process.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(130));
    let events = json_lines(&output.stdout);
    assert_eq!(events.last().unwrap()["type"], "error");
    assert_eq!(events.last().unwrap()["data"], "interrupted");
}

#[test]
fn exec_in_plan_mode_never_changes_a_file() {
    let mock = MockLlm::start_in_background();
    let run = Run::new();
    std::fs::write(run.workdir.join("main.rs"), "fn main() {}\n").unwrap();
    mock.push(Reply::Sse {
        body: openai_tool_sse("c1", "write_file", r#"{"path":"new.rs","content":"x"}"#),
        split: Split::Whole,
    });
    mock.push(Reply::Sse {
        body: openai_tool_sse(
            "c2",
            "edit_file",
            r#"{"path":"main.rs","old_string":"fn main","new_string":"fn gone"}"#,
        ),
        split: Split::Whole,
    });
    mock.push(Reply::Sse {
        body: openai_tool_sse("c3", "bash", r#"{"command":"rm main.rs"}"#),
        split: Split::Whole,
    });
    mock.push(Reply::Sse {
        body: openai_tool_sse("c4", "bash", r#"{"command":"cat main.rs"}"#),
        split: Split::Whole,
    });
    mock.push(Reply::Sse {
        body: openai_text_sse("Plan: nothing to change."),
        split: Split::Whole,
    });
    let output = run.exec(
        &mock,
        &["exec", "--json", "--mode", "plan", "change everything"],
    );
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(
        std::fs::read_to_string(run.workdir.join("main.rs")).unwrap(),
        "fn main() {}\n"
    );
    assert!(!run.workdir.join("new.rs").exists());
    let results: Vec<_> = json_lines(&output.stdout)
        .into_iter()
        .filter(|e| e["type"] == "tool_result")
        .collect();
    assert_eq!(results.len(), 4);
    for refused in &results[..3] {
        assert_eq!(refused["data"]["is_error"], true);
        assert!(
            refused["data"]["output"]
                .as_str()
                .unwrap()
                .contains("plan mode")
        );
    }
    assert!(
        results[3]["data"]["output"]
            .as_str()
            .unwrap()
            .contains("fn main()"),
        "a read-only command ran"
    );
    let request = &mock.requests()[0].body;
    let offered: Vec<_> = request["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap().to_owned())
        .collect();
    assert!(!offered.contains(&"write_file".to_owned()) && offered.contains(&"bash".to_owned()));
}

#[test]
fn exec_text_streams_the_first_words_before_the_answer_ends() {
    let mock = MockLlm::start_in_background();
    let run = Run::new();
    let gate = Gate::default();
    let mut rest = openai_text_chunk(" and then the rest.");
    rest.extend(openai_text_sse(""));
    mock.push(Reply::Gated {
        head: openai_text_chunk("The first words"),
        rest,
        gate: gate.clone(),
    });
    let mut child = run
        .command(&mock, &["exec", "say something slowly"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let shown = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let mut stdout = child.stdout.take().unwrap();
    let reader = {
        let shown = std::sync::Arc::clone(&shown);
        std::thread::spawn(move || {
            use std::io::Read;
            let mut buf = [0u8; 256];
            while let Ok(n) = stdout.read(&mut buf) {
                if n == 0 {
                    break;
                }
                shown.lock().unwrap().extend_from_slice(&buf[..n]);
            }
        })
    };
    wait_for("the first words on stdout", || {
        String::from_utf8_lossy(&shown.lock().unwrap()).contains("The first words")
    });
    // The server still holds the rest: the answer has not ended, and the run goes on.
    assert!(child.try_wait().unwrap().is_none(), "still running");
    assert!(!String::from_utf8_lossy(&shown.lock().unwrap()).contains("the rest"));
    gate.open();
    let status = child.wait().unwrap();
    reader.join().unwrap();
    assert_eq!(status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&shown.lock().unwrap()),
        "The first words and then the rest.\n"
    );
}

#[test]
fn a_malformed_settings_file_is_reported_at_start_in_both_modes() {
    let mock = MockLlm::start_in_background();
    let run = Run::new();
    let project = run.workdir.join(".harness9");
    std::fs::create_dir_all(&project).unwrap();
    // Valid JSON whose deny list is not a list: the rules meant are not in force, and a run
    // that calls no tool used to say nothing about it.
    std::fs::write(
        project.join("settings.json"),
        r#"{"permissions": {"deny": "bash"}}"#,
    )
    .unwrap();
    mock.push(Reply::Sse {
        body: openai_text_sse("No tools needed."),
        split: Split::Whole,
    });
    let output = run.exec(&mock, &["exec", "--trust", "hi"]);
    assert_eq!(output.status.code(), Some(0));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("harness9: ") && stderr.contains("settings.json is ignored"),
        "{stderr}"
    );
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        "No tools needed.\n"
    );

    mock.push(Reply::Sse {
        body: openai_text_sse("No tools needed."),
        split: Split::Whole,
    });
    let output = run.exec(&mock, &["exec", "--json", "--trust", "hi"]);
    assert_eq!(output.status.code(), Some(0));
    let events = json_lines(&output.stdout);
    assert_eq!(events[0]["type"], "notice", "{events:?}");
    assert!(
        events[0]["data"]
            .as_str()
            .unwrap()
            .contains("settings.json is ignored"),
        "{events:?}"
    );
    assert_eq!(events[1]["type"], "session_started");
}
