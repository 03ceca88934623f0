//! Output past a tool's bound is kept whole in the session's folder of `$HARNESS9_HOME`, named
//! in the result, and read back by the model without asking, in plan mode too (issue 33
//! point 2); the rest of `$HARNESS9_HOME` stays guarded.

use serde_json::{Value, json};

use crate::exec::{Run, json_lines};
use crate::support::{MockLlm, Reply, Split, openai_text_sse, openai_tool_sse};

fn push_tool(mock: &MockLlm, name: &str, arguments: Value) {
    mock.push(Reply::Sse {
        body: openai_tool_sse("call_1", name, &arguments.to_string()),
        split: Split::Whole,
    });
}

fn push_text(mock: &MockLlm, text: &str) {
    mock.push(Reply::Sse {
        body: openai_text_sse(text),
        split: Split::Whole,
    });
}

/// The tool result the model got back in request `index`.
fn tool_result(mock: &MockLlm, index: usize) -> String {
    mock.requests()[index].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|m| m["role"] == "tool")
        .unwrap()["content"]
        .as_str()
        .unwrap()
        .to_owned()
}

#[test]
fn a_long_output_is_kept_whole_and_read_back_without_asking_even_in_plan_mode() {
    use std::os::unix::fs::PermissionsExt;
    let mock = MockLlm::start_in_background();
    let run = Run::new();
    push_tool(&mock, "bash", json!({"command": "seq 1 20000"}));
    push_text(&mock, "Counted.");
    let first = run.exec(&mock, &["exec", "--json", "--mode", "yolo", "count"]);
    assert_eq!(
        first.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
    let result = tool_result(&mock, 1);
    assert!(result.starts_with("1\n2\n3\n"), "{result}");
    let marker = "the whole output (108894 bytes) is in ";
    let start = result.find(marker).unwrap_or_else(|| panic!("{result}")) + marker.len();
    let path = result[start..].split(' ').next().unwrap().to_owned();
    let kept = std::fs::read_to_string(&path).unwrap();
    assert_eq!(kept.lines().count(), 20_000);
    assert!(kept.contains("\n10000\n"));
    assert_eq!(
        std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
        0o600
    );
    let session = json_lines(&first.stdout)
        .iter()
        .find(|e| e["type"] == "session_started")
        .unwrap()["data"]["session_id"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(path.contains(&format!("/outputs/{session}/")), "{path}");

    // The next run, in plan mode: the model reads the middle back; nothing asks (exec would
    // refuse a question).
    push_tool(
        &mock,
        "read_file",
        json!({"path": path, "offset": 10000, "limit": 2}),
    );
    // And anything else in $HARNESS9_HOME is still guarded.
    push_tool(
        &mock,
        "read_file",
        json!({"path": run.home.join("sessions.db").display().to_string()}),
    );
    push_text(&mock, "Read.");
    let second = run.exec(
        &mock,
        &[
            "exec",
            "--json",
            "--mode",
            "plan",
            "--continue",
            "read the middle",
        ],
    );
    assert_eq!(
        second.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&second.stderr)
    );
    let middle = tool_result(&mock, 3);
    assert!(
        middle.contains("10000") && middle.contains("10001"),
        "{middle}"
    );
    let guarded = tool_result(&mock, 4);
    assert!(!guarded.contains("SQLite format"), "{guarded}");
    let events = json_lines(&second.stdout);
    let results: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "tool_result")
        .collect();
    assert_eq!(results[0]["data"]["is_error"], false, "{results:?}");
    assert_eq!(results[1]["data"]["is_error"], true, "{results:?}");
}
