//! `exec`'s run-only rules and answer file: `--allow RULE` / `--deny RULE` (the settings' syntax,
//! for this run only, never lifting a settings file's deny) and `-o FILE`.

use serde_json::Value;

use crate::exec::{Run, json_lines};
use crate::support::{MockLlm, Reply, Split, git, openai_text_sse, openai_tool_sse};

fn tool_result(events: &[Value]) -> Value {
    events
        .iter()
        .find(|e| e["type"] == "tool_result")
        .unwrap_or_else(|| panic!("no tool_result: {events:?}"))["data"]
        .clone()
}

fn call_then_answer(mock: &MockLlm, name: &str, arguments: &str) {
    mock.push(Reply::Sse {
        body: openai_tool_sse("call_1", name, arguments),
        split: Split::Whole,
    });
    mock.push(Reply::Sse {
        body: openai_text_sse("Done."),
        split: Split::Whole,
    });
}

#[test]
fn an_allow_rule_lets_that_command_run_and_nothing_else() {
    let mock = MockLlm::start_in_background();
    let run = Run::new();
    git(&run.workdir, &["init", "-q"]);
    std::fs::write(run.workdir.join("notes.txt"), "n\n").unwrap();
    let allow = ["exec", "--json", "--allow", "bash(git add*)"];
    // Allowed: it runs in default mode, where a command that changes something would ask (and
    // exec refuses what asks).
    call_then_answer(&mock, "bash", r#"{"command":"git add notes.txt"}"#);
    let out = run.exec(&mock, &[&allow[..], &["stage the notes"]].concat());
    assert_eq!(out.status.code(), Some(0));
    let result = tool_result(&json_lines(&out.stdout));
    assert_eq!(result["is_error"], false, "{result}");
    // Anything else still asks, so it is refused here.
    call_then_answer(&mock, "bash", r#"{"command":"touch made"}"#);
    let out = run.exec(&mock, &[&allow[..], &["make a file"]].concat());
    let result = tool_result(&json_lines(&out.stdout));
    assert_eq!(result["is_error"], true, "{result}");
    assert!(!run.workdir.join("made").exists());
    // Without the flag the same command is refused: the rule was for that run only.
    call_then_answer(&mock, "bash", r#"{"command":"git add notes.txt"}"#);
    let out = run.exec(&mock, &["exec", "--json", "stage again"]);
    assert_eq!(tool_result(&json_lines(&out.stdout))["is_error"], true);
    // A deny rule in a settings file beats the command line's allow.
    std::fs::create_dir_all(&run.home).unwrap();
    std::fs::write(
        run.home.join("settings.json"),
        r#"{"permissions": {"deny": ["bash(git add*)"]}}"#,
    )
    .unwrap();
    call_then_answer(&mock, "bash", r#"{"command":"git add notes.txt"}"#);
    let out = run.exec(&mock, &[&allow[..], &["stage the notes"]].concat());
    let result = tool_result(&json_lines(&out.stdout));
    assert_eq!(result["is_error"], true, "{result}");
}

#[test]
fn a_deny_rule_refuses_a_call_that_would_run_and_a_bad_rule_is_a_usage_error() {
    let mock = MockLlm::start_in_background();
    let run = Run::new();
    std::fs::write(run.workdir.join("notes.txt"), "private\n").unwrap();
    call_then_answer(&mock, "read_file", r#"{"path":"notes.txt"}"#);
    let out = run.exec(
        &mock,
        &[
            "exec",
            "--json",
            "--deny",
            "read_file(notes.txt)",
            "read it",
        ],
    );
    let result = tool_result(&json_lines(&out.stdout));
    assert_eq!(result["is_error"], true, "{result}");
    assert!(!result["output"].as_str().unwrap().contains("private"));
    let out = run.exec(&mock, &["exec", "--allow", "bash(unclosed", "hi"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--allow"));
    assert_eq!(mock.requests().len(), 2, "a bad rule reaches no model");
}

#[test]
fn output_last_message_writes_the_final_answer_only() {
    let mock = MockLlm::start_in_background();
    let run = Run::new();
    std::fs::write(run.workdir.join("a.txt"), "alpha\n").unwrap();
    mock.push(Reply::Sse {
        body: openai_tool_sse("call_1", "read_file", r#"{"path":"a.txt"}"#),
        split: Split::Whole,
    });
    mock.push(Reply::Sse {
        body: openai_text_sse("The file says alpha."),
        split: Split::Random(3),
    });
    let answer = run.workdir.join("answer.md");
    let out = run.exec(
        &mock,
        &[
            "exec",
            "-o",
            answer.to_str().unwrap(),
            "what does a.txt say?",
        ],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        std::fs::read_to_string(&answer).unwrap(),
        "The file says alpha."
    );
    // The long form, with --json.
    mock.push(Reply::Sse {
        body: openai_text_sse("Second."),
        split: Split::Whole,
    });
    let out = run.exec(
        &mock,
        &[
            "exec",
            "--json",
            "--output-last-message",
            answer.to_str().unwrap(),
            "again",
        ],
    );
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(std::fs::read_to_string(&answer).unwrap(), "Second.");
}

/// Issue 32 point 1: in `auto-edit`, sandboxed or not, a command that deletes files that exist
/// asks; `exec`, where nobody answers, refuses it and says how to allow it.
#[test]
fn auto_edit_asks_before_a_command_that_deletes_existing_files() {
    let mock = MockLlm::start_in_background();
    let run = Run::new();
    std::fs::create_dir_all(run.workdir.join("build")).unwrap();
    std::fs::write(run.workdir.join("build/keep.o"), "kept\n").unwrap();
    call_then_answer(
        &mock,
        "bash",
        r#"{"command":"rm -rf build && mkdir build"}"#,
    );
    let out = run.exec(
        &mock,
        &[
            "exec",
            "--json",
            "--mode",
            "auto-edit",
            "--sandbox",
            "workspace-write",
            "rebuild from scratch",
        ],
    );
    assert_eq!(out.status.code(), Some(0));
    assert!(run.workdir.join("build/keep.o").exists(), "nothing removed");
    let events = json_lines(&out.stdout);
    let approval = events
        .iter()
        .find(|e| e["type"] == "approval_required")
        .unwrap_or_else(|| panic!("the approval is asked: {events:?}"));
    let reason = approval["data"]["reason"].as_str().unwrap();
    assert!(reason.contains("deletes or overwrites"), "{reason}");
    let result = tool_result(&events);
    assert_eq!(result["is_error"], true, "{result}");
    assert!(
        result["output"].as_str().unwrap().contains("--mode yolo"),
        "{result}"
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("--mode yolo"));
}

/// Issue 32 point 17: in text mode a refused call is one stderr line with the flag that allows
/// it, not buried in `[engine]` log lines (those come with `-v`).
#[test]
fn exec_text_says_a_refusal_and_its_flag_without_the_log() {
    let mock = MockLlm::start_in_background();
    let run = Run::new();
    call_then_answer(&mock, "bash", r#"{"command":"touch made-it"}"#);
    let out = run.exec(&mock, &["exec", "make a file"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(!run.workdir.join("made-it").exists());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("[engine]"), "{stderr}");
    let refusal = stderr
        .lines()
        .find(|l| l.starts_with("harness9: refused `bash`"))
        .unwrap_or_else(|| panic!("a refusal line: {stderr}"));
    assert!(refusal.contains("--mode yolo"), "{refusal}");
    assert!(
        stderr
            .lines()
            .last()
            .unwrap()
            .starts_with("harness9: session "),
        "{stderr}"
    );
}

/// Issue 32: a call refused by policy (a deny rule, not an approval nobody could give) ends the
/// run as CONTRACT names it (0: the model stopped calling tools), and text mode's stderr says
/// which call was refused and why; `exec --json` keeps the `[engine]` log off stderr unless
/// `-v` asks for it.
#[test]
fn a_policy_refusal_is_said_on_stderr_and_json_keeps_the_log_off() {
    let mock = MockLlm::start_in_background();
    let run = Run::new();
    std::fs::write(run.workdir.join("notes.txt"), "private\n").unwrap();
    call_then_answer(&mock, "read_file", r#"{"path":"notes.txt"}"#);
    let out = run.exec(
        &mock,
        &["exec", "--deny", "read_file(notes.txt)", "read it"],
    );
    assert_eq!(out.status.code(), Some(0));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let refusal = stderr
        .lines()
        .find(|l| l.starts_with("harness9: refused `read_file`"))
        .unwrap_or_else(|| panic!("a refusal line: {stderr}"));
    assert!(refusal.contains("read_file(notes.txt)"), "{refusal}");
    assert!(!stderr.contains("[engine]"), "{stderr}");
    call_then_answer(&mock, "read_file", r#"{"path":"notes.txt"}"#);
    let out = run.exec(&mock, &["exec", "--json", "read it again"]);
    assert_eq!(out.status.code(), Some(0));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("[engine]"), "{stderr}");
    call_then_answer(&mock, "read_file", r#"{"path":"notes.txt"}"#);
    let out = run.exec(&mock, &["exec", "--json", "-v", "and again"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("[engine]"), "{stderr}");
}
