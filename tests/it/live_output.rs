//! Issue 32 point 3 through the real binary: a running `bash` command's output comes as
//! `tool_output` events (`{"tool_call_id", "chunk"}`) before its `tool_result`, as it is printed.

use crate::exec::{Run, json_lines};
use crate::support::{MockLlm, Reply, Split, openai_text_sse, openai_tool_sse};

#[test]
fn exec_json_streams_a_running_commands_output() {
    let mock = MockLlm::start_in_background();
    let run = Run::new();
    mock.push(Reply::Sse {
        body: openai_tool_sse(
            "c1",
            "bash",
            r#"{"command":"for i in 1 2 3; do echo tick $i; sleep 0.3; done"}"#,
        ),
        split: Split::Whole,
    });
    mock.push(Reply::Sse {
        body: openai_text_sse("Counted."),
        split: Split::Whole,
    });
    let out = run.exec(&mock, &["exec", "--json", "--mode", "yolo", "count"]);
    assert_eq!(out.status.code(), Some(0));
    let events = json_lines(&out.stdout);
    let result_at = events
        .iter()
        .position(|e| e["type"] == "tool_result")
        .expect("a tool_result");
    let chunks: Vec<&serde_json::Value> = events
        .iter()
        .filter(|e| e["type"] == "tool_output")
        .map(|e| &e["data"])
        .collect();
    assert!(chunks.len() >= 2, "streamed as it came: {chunks:?}");
    assert!(
        events[..result_at]
            .iter()
            .filter(|e| e["type"] == "tool_output")
            .count()
            == chunks.len(),
        "every chunk before the result"
    );
    let text: String = chunks
        .iter()
        .map(|c| {
            assert_eq!(c["tool_call_id"], "c1");
            c["chunk"].as_str().unwrap()
        })
        .collect();
    assert_eq!(text, "tick 1\ntick 2\ntick 3\n");
}
