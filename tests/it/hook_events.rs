//! The hook events beside Claude Code's first six (issue 33 point 10), through the real binary:
//! `TurnComplete` after each turn, `Notification` when a call waits for approval, `SubagentStop`
//! when a sub-agent is done, `SessionEnd` when the session closes. Each hook appends the JSON it
//! was given to a file, one line a run.

use std::path::Path;

use serde_json::{Value, json};

use crate::exec::{Run, json_lines};
use crate::support::{MockLlm, Reply, Split, openai_text_sse, openai_tool_sse};

/// Settings whose hooks for `events` each append their input to `<event>.jsonl` in `dir`.
fn recording_hooks(dir: &Path, events: &[&str]) -> Value {
    let mut hooks = serde_json::Map::new();
    for event in events {
        let file = dir.join(format!("{event}.jsonl"));
        hooks.insert(
            (*event).to_owned(),
            json!([{"hooks": [{"type": "command",
                               "command": format!("cat >> {0}; echo >> {0}", file.display())}]}]),
        );
    }
    json!({ "hooks": hooks })
}

fn recorded(dir: &Path, event: &str) -> Vec<Value> {
    let text = std::fs::read_to_string(dir.join(format!("{event}.jsonl"))).unwrap_or_default();
    text.lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

fn settings(run: &Run, value: &Value) {
    std::fs::write(
        run.home.join("settings.json"),
        serde_json::to_string(value).unwrap(),
    )
    .unwrap();
}

#[test]
fn turn_complete_notification_and_session_end_run_at_their_moments() {
    let mock = MockLlm::start_in_background();
    let run = Run::new();
    let logs = tempfile::tempdir().unwrap();
    settings(
        &run,
        &recording_hooks(
            logs.path(),
            &["TurnComplete", "Notification", "SessionEnd", "Stop"],
        ),
    );
    // A command that needs approval (refused in exec), then the answer.
    mock.push(Reply::Sse {
        body: openai_tool_sse("call_1", "bash", r#"{"command":"touch made"}"#),
        split: Split::Whole,
    });
    mock.push(Reply::Sse {
        body: openai_text_sse("Done."),
        split: Split::Whole,
    });
    let output = run.exec(&mock, &["exec", "--json", "go"]);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let events = json_lines(&output.stdout);
    assert_eq!(events.last().unwrap()["type"], "done");

    let turns = recorded(logs.path(), "TurnComplete");
    let seen: Vec<(u64, bool)> = turns
        .iter()
        .map(|t| {
            assert_eq!(t["hook_event_name"], "TurnComplete");
            (
                t["turn"].as_u64().unwrap(),
                t["has_tool_calls"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(seen, vec![(1, true), (2, false)], "{turns:?}");

    let notifications = recorded(logs.path(), "Notification");
    assert_eq!(notifications.len(), 1, "{notifications:?}");
    assert_eq!(notifications[0]["notification_type"], "permission_prompt");
    assert!(
        notifications[0]["message"]
            .as_str()
            .unwrap()
            .contains("permission to use bash"),
        "{notifications:?}"
    );

    let ends = recorded(logs.path(), "SessionEnd");
    assert_eq!(ends.len(), 1, "{ends:?}");
    assert_eq!(ends[0]["reason"], "exit");
    let session = events
        .iter()
        .find(|e| e["type"] == "session_started")
        .unwrap()["data"]["session_id"]
        .clone();
    assert_eq!(ends[0]["session_id"], session);
    assert_eq!(
        recorded(logs.path(), "Stop").len(),
        1,
        "the main agent's end"
    );
}

#[test]
fn a_sub_agents_end_runs_subagent_stop_and_not_stop() {
    let mock = MockLlm::start_in_background();
    let run = Run::new();
    let logs = tempfile::tempdir().unwrap();
    settings(
        &run,
        &recording_hooks(logs.path(), &["SubagentStop", "Stop"]),
    );
    let task = json!({"agent": "general", "description": "look", "prompt": "look around"});
    mock.push(Reply::Sse {
        body: openai_tool_sse("call_1", "task", &task.to_string()),
        split: Split::Whole,
    });
    // The child's answer, then the parent's.
    mock.push(Reply::Sse {
        body: openai_text_sse("Nothing here."),
        split: Split::Whole,
    });
    mock.push(Reply::Sse {
        body: openai_text_sse("Done."),
        split: Split::Whole,
    });
    let output = run.exec(&mock, &["exec", "--json", "go"]);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let children = recorded(logs.path(), "SubagentStop");
    assert_eq!(children.len(), 1, "{children:?}");
    assert_eq!(children[0]["agent_type"], "general");
    assert_eq!(children[0]["stop_hook_active"], false);
    assert_eq!(
        recorded(logs.path(), "Stop").len(),
        1,
        "only the main agent's"
    );
}
