//! Sub-agents through the real binary: `exec --json` carries the child's events as `subagent`
//! events, the text mode says what the child did on stderr, and the child's session is stored
//! linked to the parent but not listed; the TUI shows its task block and opens its transcript.

use serde_json::Value;

use crate::exec::{Run, json_lines};
use crate::support::{MockLlm, Reply, Split, openai_text_sse, openai_tool_sse};

/// The parent starts one `explore` task; the child reads a file and answers; the parent ends.
fn script(mock: &MockLlm) {
    for body in [
        openai_tool_sse(
            "call_task",
            "task",
            r#"{"agent":"explore","description":"read hello","prompt":"What does hello.txt say?"}"#,
        ),
        openai_tool_sse("call_read", "read_file", r#"{"path":"hello.txt"}"#),
        openai_text_sse("It says hi."),
        openai_text_sse("The explorer says: hi."),
    ] {
        mock.push(Reply::Sse {
            body,
            split: Split::Whole,
        });
    }
}

#[test]
fn exec_json_shows_the_childs_events_as_subagent_events() {
    let mock = MockLlm::start_in_background();
    let run = Run::new();
    std::fs::write(run.workdir.join("hello.txt"), "hi from the file\n").unwrap();
    script(&mock);
    let output = run.exec(&mock, &["exec", "--json", "Ask an explorer"]);
    assert_eq!(
        output.status.code(),
        Some(0),
        "stderr: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let events = json_lines(&output.stdout);
    let nested: Vec<&Value> = events.iter().filter(|e| e["type"] == "subagent").collect();
    assert!(!nested.is_empty());
    for event in &nested {
        assert_eq!(event["data"]["task_id"], "call_task");
        assert_eq!(event["data"]["agent"], "explore");
    }
    let inner: Vec<&str> = nested
        .iter()
        .map(|e| e["data"]["event"]["type"].as_str().unwrap())
        .collect();
    assert_eq!(inner.first(), Some(&"session_started"));
    assert_eq!(inner.last(), Some(&"done"));
    assert!(inner.contains(&"tool_result"));
    let child_session = nested[0]["data"]["event"]["data"]["session_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let parent_session = events[0]["data"]["session_id"].as_str().unwrap().to_owned();
    assert_ne!(child_session, parent_session);

    // The parent's own events: the task call's result is the child's answer with its totals.
    let result = events.iter().find(|e| e["type"] == "tool_result").unwrap();
    assert_eq!(result["data"]["name"], "task");
    assert_eq!(result["data"]["is_error"], false);
    let text = result["data"]["output"].as_str().unwrap();
    assert!(
        text.starts_with("It says hi.\n\n[explore sub-agent: 2 turns"),
        "{text}"
    );
    assert_eq!(events.last().unwrap()["type"], "done");

    // The child's requests held only its own prompt and read-only tools.
    let requests = mock.requests();
    assert_eq!(requests.len(), 4);
    let child_tools: Vec<&str> = requests[1].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert!(child_tools.contains(&"read_file"));
    assert!(!child_tools.contains(&"task") && !child_tools.contains(&"bash"));

    // `sessions` lists the parent only.
    let listed = run.exec(&mock, &["sessions", "--json", "--all"]);
    let listed: Value = serde_json::from_slice(&listed.stdout).unwrap();
    let ids: Vec<&str> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, [parent_session.as_str()]);
}

#[test]
fn exec_text_says_what_the_child_did_on_stderr() {
    let mock = MockLlm::start_in_background();
    let run = Run::new();
    std::fs::write(run.workdir.join("hello.txt"), "hi from the file\n").unwrap();
    script(&mock);
    let output = run.exec(&mock, &["exec", "Ask an explorer"]);
    assert_eq!(output.status.code(), Some(0));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(
        stdout.trim(),
        "The explorer says: hi.",
        "only the main answer"
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("[explore call_task] started"), "{stderr}");
    assert!(stderr.contains("[explore call_task] read_file"), "{stderr}");
    assert!(
        stderr.contains("[explore call_task] done: 2 turns"),
        "{stderr}"
    );
}

/// Headless, a child's call that needs approval comes out as the parent's `approval_required`
/// naming the agent, and `exec` refuses it like its own: the child is told, and nothing is
/// written.
#[test]
fn exec_refuses_a_childs_call_that_needs_approval() {
    let mock = MockLlm::start_in_background();
    let run = Run::new();
    for body in [
        openai_tool_sse(
            "call_task",
            "task",
            r#"{"agent":"general","description":"write","prompt":"Write notes.txt"}"#,
        ),
        openai_tool_sse(
            "call_write",
            "write_file",
            r#"{"path":"notes.txt","content":"from the child"}"#,
        ),
        openai_text_sse("I was not allowed to write."),
        openai_text_sse("The child could not write."),
    ] {
        mock.push(Reply::Sse {
            body,
            split: Split::Whole,
        });
    }
    let output = run.exec(&mock, &["exec", "--json", "Have a child write a file"]);
    assert_eq!(output.status.code(), Some(0));
    let events = json_lines(&output.stdout);
    let approval = events
        .iter()
        .find(|e| e["type"] == "approval_required")
        .expect("the child's approval is the parent's own event");
    assert_eq!(approval["data"]["id"], "call_task/call_write");
    assert_eq!(approval["data"]["agent"], "general");
    let child_result = events
        .iter()
        .find(|e| e["type"] == "subagent" && e["data"]["event"]["type"] == "tool_result")
        .unwrap();
    assert_eq!(child_result["data"]["event"]["data"]["is_error"], true);
    assert!(!run.workdir.join("notes.txt").exists());
}

/// As a person uses it: the TUI shows the child's task block with its agent, description and
/// final state, the parent's answer after it, and Ctrl+O opens the child's own stored
/// transcript (its prompt and answer), which Esc closes.
#[test]
fn the_tui_shows_a_task_block_and_ctrl_o_opens_the_childs_transcript() {
    let mock = MockLlm::start_in_background();
    let run = Run::new();
    std::fs::write(run.workdir.join("hello.txt"), "hi from the file\n").unwrap();
    script(&mock);
    let mut pty = crate::tui::start(&run, &mock);
    pty.send("Ask an explorer\r");
    pty.wait_for_all(&["The explorer says: hi.", "explore", "read hello"]);
    pty.wait_until("the run to end, done", |screen| {
        crate::tui::idle(screen) && screen.contains("done")
    });
    pty.send("\x0f");
    pty.wait_for_all(&["What does hello.txt say?", "It says hi."]);
    pty.send("\x1b");
    pty.wait_until("the child's transcript closed", |screen| {
        !screen.contains("What does hello.txt say?") && screen.contains("The explorer says: hi.")
    });
}
