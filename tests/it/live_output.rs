//! Issue 32 point 3 through the real binary: a running `bash` command's output comes as
//! `tool_output` events (`{"tool_call_id", "chunk"}`) before its `tool_result`, as it is printed,
//! in `exec --json` and in `serve`'s event stream.

use serde_json::{Value, json};

use crate::exec::{Run, json_lines};
use crate::serve_client::Server;
use crate::support::{MockLlm, Reply, Split, openai_text_sse, openai_tool_sse};

const COUNTING: &str = r#"{"command":"for i in 1 2 3; do echo tick $i; sleep 0.3; done"}"#;

/// The `tool_output` events before the `tool_result`: their data, and the text they carry.
fn streamed(events: &[Value]) -> (usize, String) {
    let result_at = events
        .iter()
        .position(|e| e["type"] == "tool_result")
        .expect("a tool_result");
    let before: Vec<&Value> = events[..result_at]
        .iter()
        .filter(|e| e["type"] == "tool_output")
        .collect();
    let after = events[result_at..]
        .iter()
        .filter(|e| e["type"] == "tool_output")
        .count();
    assert_eq!(after, 0, "every chunk before the result");
    let text = before
        .iter()
        .map(|e| {
            assert_eq!(e["data"]["tool_call_id"], "c1");
            e["data"]["chunk"].as_str().unwrap()
        })
        .collect();
    (before.len(), text)
}

fn count_then_answer(mock: &MockLlm) {
    mock.push(Reply::Sse {
        body: openai_tool_sse("c1", "bash", COUNTING),
        split: Split::Whole,
    });
    mock.push(Reply::Sse {
        body: openai_text_sse("Counted."),
        split: Split::Whole,
    });
}

#[test]
fn exec_json_streams_a_running_commands_output() {
    let mock = MockLlm::start_in_background();
    let run = Run::new();
    count_then_answer(&mock);
    let out = run.exec(&mock, &["exec", "--json", "--mode", "yolo", "count"]);
    assert_eq!(out.status.code(), Some(0));
    let (chunks, text) = streamed(&json_lines(&out.stdout));
    assert!(chunks >= 2, "streamed as it came: {chunks} chunk(s)");
    assert_eq!(text, "tick 1\ntick 2\ntick 3\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_streams_a_running_commands_output() {
    let mock = MockLlm::start().await;
    count_then_answer(&mock);
    let server = Server::start(&mock, &["--mode", "yolo"], &[]);
    let id = server.open(json!({"mode": "yolo"})).await;
    let mut watcher = server.watch(&id, None).await;
    server.prompt(&id, "count").await;
    let events = watcher.until("done").await;
    let (chunks, text) = streamed(&events);
    assert!(chunks >= 2, "streamed as it came: {chunks} chunk(s)");
    assert_eq!(text, "tick 1\ntick 2\ntick 3\n");
}
