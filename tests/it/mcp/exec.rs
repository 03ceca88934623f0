//! `harness9 exec` with MCP servers: the tools reach the model through both providers'
//! scripted streams, approvals and rules apply, the tool timeout holds, and a folder's own
//! servers start only when it is trusted and they are approved.

use std::path::Path;

use serde_json::{Value, json};

use super::server::stdio_definition;
use crate::exec::{Run, json_lines};
use crate::support::{MockLlm, Reply, Split, openai_text_sse, openai_tool_sse};

fn write_json(path: &Path, value: &Value) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, value.to_string()).unwrap();
}

fn user_server(run: &Run, definition: Value) {
    write_json(
        &run.home.join("mcp.json"),
        &json!({"mcpServers": {"t": definition}}),
    );
}

fn allow(run: &Run, rule: &str) {
    write_json(
        &run.home.join("settings.json"),
        &json!({"permissions": {"allow": [rule]}}),
    );
}

fn sse(body: Vec<u8>) -> Reply {
    Reply::Sse {
        body,
        split: Split::Whole,
    }
}

/// The tool results the second request sent back to the model, OpenAI shape.
fn openai_tool_outputs(mock: &MockLlm) -> Vec<String> {
    mock.requests()[1].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap_or("").to_owned())
        .collect()
}

/// The tool outputs the model got, each checked to be fenced as its MCP server's (issue 29
/// point 15) and taken out of the fence.
fn unfenced_tool_outputs(mock: &MockLlm) -> Vec<String> {
    openai_tool_outputs(mock)
        .iter()
        .map(|o| super::fenced(o))
        .collect()
}

fn tool_results(stdout: &[u8]) -> Vec<Value> {
    json_lines(stdout)
        .into_iter()
        .filter(|e| e["type"] == "tool_result")
        .map(|e| e["data"].clone())
        .collect()
}

#[test]
fn an_mcp_tool_runs_through_the_engine_with_the_openai_stream() {
    let run = Run::new();
    user_server(&run, stdio_definition("modern"));
    allow(&run, "mcp__t__*");
    let mock = MockLlm::start_in_background();
    mock.push(sse(openai_tool_sse(
        "call_1",
        "mcp__t__echo",
        r#"{"message":"hi"}"#,
    )));
    mock.push(sse(openai_text_sse("Done.")));
    let out = run.exec(&mock, &["exec", "--json", "say hi"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let offered: Vec<Value> = mock.requests()[0].body["tools"].as_array().unwrap().clone();
    let echo = offered
        .iter()
        .find(|t| t["function"]["name"] == "mcp__t__echo")
        .expect("the MCP tool is offered from the first request");
    assert_eq!(echo["function"]["parameters"]["type"], "object");
    assert_eq!(unfenced_tool_outputs(&mock), ["echo: hi"]);
    let results = tool_results(&out.stdout);
    assert_eq!(results[0]["is_error"], false);
}

fn anthropic_tool_sse(id: &str, name: &str, input: &str) -> Vec<u8> {
    let events = [
        json!({"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant",
            "model": "claude-sonnet-4-20250514", "content": [], "stop_reason": null, "stop_sequence": null,
            "usage": {"input_tokens": 10, "output_tokens": 1}}}),
        json!({"type": "content_block_start", "index": 0,
            "content_block": {"type": "tool_use", "id": id, "name": name, "input": {}}}),
        json!({"type": "content_block_delta", "index": 0,
            "delta": {"type": "input_json_delta", "partial_json": input}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": null},
            "usage": {"output_tokens": 5}}),
        json!({"type": "message_stop"}),
    ];
    anthropic_events(&events)
}

fn anthropic_text_sse(text: &str) -> Vec<u8> {
    let events = [
        json!({"type": "message_start", "message": {"id": "msg_2", "type": "message", "role": "assistant",
            "model": "claude-sonnet-4-20250514", "content": [], "stop_reason": null, "stop_sequence": null,
            "usage": {"input_tokens": 10, "output_tokens": 1}}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": null},
            "usage": {"output_tokens": 5}}),
        json!({"type": "message_stop"}),
    ];
    anthropic_events(&events)
}

fn anthropic_events(events: &[Value]) -> Vec<u8> {
    events
        .iter()
        .map(|e| format!("event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap()))
        .collect::<String>()
        .into_bytes()
}

#[test]
fn an_mcp_tool_runs_through_the_engine_with_the_anthropic_stream() {
    let run = Run::new();
    user_server(&run, stdio_definition("legacy"));
    allow(&run, "mcp__t__add");
    let mock = MockLlm::start_in_background();
    mock.push(sse(anthropic_tool_sse(
        "toolu_1",
        "mcp__t__add",
        r#"{"a": 2, "b": 40}"#,
    )));
    mock.push(sse(anthropic_text_sse("It is 42.")));
    let out = run
        .command(&mock, &["exec", "--json", "add them"])
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .env("ANTHROPIC_API_KEY", "sk-ant-test")
        .env("ANTHROPIC_BASE_URL", &mock.base_url)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let requests = mock.requests();
    let offered = requests[0].body["tools"].as_array().unwrap();
    let add = offered.iter().find(|t| t["name"] == "mcp__t__add").unwrap();
    assert_eq!(add["input_schema"]["type"], "object");
    let results: Vec<&Value> = requests[1].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|m| m["content"].as_array().into_iter().flatten())
        .filter(|block| block["type"] == "tool_result")
        .collect();
    assert_eq!(results.len(), 1);
    let content = results[0]["content"].to_string();
    assert!(
        content.contains("sum") && content.contains("42"),
        "{content}"
    );
}

#[test]
fn without_a_rule_exec_refuses_the_call_and_names_the_flag() {
    let run = Run::new();
    user_server(&run, stdio_definition("modern"));
    let mock = MockLlm::start_in_background();
    mock.push(sse(openai_tool_sse(
        "call_1",
        "mcp__t__echo",
        r#"{"message":"hi"}"#,
    )));
    mock.push(sse(openai_text_sse("Could not.")));
    let out = run.exec(&mock, &["exec", "--json", "say hi"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let results = tool_results(&out.stdout);
    assert_eq!(results[0]["is_error"], true);
    let output = results[0]["output"].as_str().unwrap();
    assert!(output.contains("--mode yolo"), "{output}");
    assert!(!openai_tool_outputs(&mock)[0].contains("echo: hi"));
}

#[test]
fn the_tool_timeout_stops_a_call_that_never_answers() {
    let run = Run::new();
    user_server(&run, stdio_definition("modern"));
    allow(&run, "mcp__t");
    let mock = MockLlm::start_in_background();
    mock.push(sse(openai_tool_sse("call_1", "mcp__t__hang", "{}")));
    mock.push(sse(openai_text_sse("Gave up.")));
    let out = run.exec(&mock, &["exec", "--json", "--tool-timeout", "1", "wait"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let results = tool_results(&out.stdout);
    assert_eq!(results[0]["is_error"], true);
    assert!(
        results[0]["output"]
            .as_str()
            .unwrap()
            .contains("timed out after 1s"),
        "{}",
        results[0]
    );
}

/// A project's server that would leave a mark if it ever started.
fn marking_project(run: &Run) -> std::path::PathBuf {
    let mark = run.workdir.join("started");
    write_json(
        &run.workdir.join(".mcp.json"),
        &json!({"mcpServers": {"proj": {"command": "sh", "args": ["-c", "touch started"]}}}),
    );
    mark
}

#[test]
fn an_untrusted_or_unapproved_folders_servers_are_not_started() {
    let run = Run::new();
    let mark = marking_project(&run);
    let mock = MockLlm::start_in_background();
    mock.set_fallback(sse(openai_text_sse("Hello.")));

    // Untrusted: ignored, and said so.
    let out = run.exec(&mock, &["exec", "hello"]);
    assert!(out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("not trusted") && stderr.contains(".mcp.json"),
        "{stderr}"
    );
    assert!(!mark.exists(), "an untrusted folder's server started");

    // Trusted before, but the server not approved: not started, and said so.
    let workdir = run.workdir.canonicalize().unwrap();
    harness9::config::trust::remember(&run.home, &workdir).unwrap();
    let out = run.exec(&mock, &["exec", "hello"]);
    assert!(out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("`proj`") && stderr.contains("not started"),
        "{stderr}"
    );
    assert!(!mark.exists(), "an unapproved server started");

    // --trust approves it for this run: it starts (and fails, being no MCP server: a notice).
    let out = run.exec(&mock, &["exec", "--trust", "hello"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(mark.exists(), "the approved server did not start");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("MCP server `proj` failed to start"),
        "{stderr}"
    );
}

/// A server is a program of somebody else's: it must not get the API key harness9 was given,
/// nor be able to read it back.
#[test]
fn a_stdio_server_does_not_inherit_the_api_keys() {
    let run = Run::new();
    user_server(&run, stdio_definition("modern"));
    allow(&run, "mcp__t__env");
    let mock = MockLlm::start_in_background();
    mock.push(sse(openai_tool_sse(
        "call_1",
        "mcp__t__env",
        r#"{"name":"OPENAI_API_KEY"}"#,
    )));
    mock.push(sse(openai_text_sse("Done.")));
    let out = run.exec(&mock, &["exec", "--json", "look"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(unfenced_tool_outputs(&mock), ["OPENAI_API_KEY=<unset>"]);
}
