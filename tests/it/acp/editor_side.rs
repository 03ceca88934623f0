//! The editor's side of `harness9 acp` driven as an editor drives it: the editor's MCP servers,
//! forms (elicitations) declined when the editor offers none, a sub-agent's reads through the
//! editor, and the model's own stop reasons with the usage reported.

use serde_json::json;

use super::{Editor, sse, texts, updates, with_session};
use crate::exec::Run;
use crate::support::{MockLlm, Reply, openai_text_sse, openai_tool_sse};

/// Issue 31 point 3: the MCP servers the editor passes in session/new (stdio and Streamable
/// HTTP) are started as the editor's own, their tools used in the session; an SSE one is named
/// as not started.
#[test]
fn acp_mcp_servers_the_editor_passes_are_started_and_used() {
    use crate::mcp::server::{SERVER_ENV, TestServer, serve_http_in_background, stdio_definition};
    let mock = MockLlm::start_in_background();
    let run = Run::new();
    let (url, _) = serve_http_in_background(TestServer::new(false));
    for (id, tool, message) in [
        ("m1", "mcp__editor-stdio__echo", "over stdio"),
        ("m2", "mcp__editor-http__echo", "over http"),
    ] {
        let args = json!({ "message": message }).to_string();
        mock.push(sse(openai_tool_sse(id, tool, &args)));
    }
    mock.push(sse(openai_text_sse("Both answered.")));
    let stdio = stdio_definition("modern");
    let servers = json!([
        {"name": "editor-stdio", "command": stdio["command"], "args": stdio["args"],
         "env": [{"name": SERVER_ENV, "value": "modern"}]},
        {"type": "http", "name": "editor-http", "url": url, "headers": []},
        {"type": "sse", "name": "editor-sse", "url": "http://127.0.0.1:9/sse", "headers": []},
    ]);
    let mut editor = Editor::start(&run, &mock);
    let init = editor.initialize();
    assert_eq!(
        init["result"]["agentCapabilities"]["mcpCapabilities"]["http"], true,
        "{init}"
    );
    let (answer, _) = editor.call(
        "session/new",
        json!({"cwd": run.workdir, "mcpServers": servers}),
    );
    let session = answer["result"]["sessionId"].as_str().unwrap().to_owned();
    let id = editor.prompt(&session, "ask both servers");
    let (answer, notifications) = editor.answer_to(
        id,
        |_| json!({"outcome": {"outcome": "selected", "optionId": "allow_once"}}),
    );
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    let outputs: Vec<String> = updates(&notifications, "tool_call_update")
        .iter()
        .filter_map(|u| u["content"][0]["content"]["text"].as_str())
        .map(str::to_owned)
        .collect();
    assert!(
        outputs.iter().any(|o| o.contains("echo: over stdio")),
        "{notifications:?}"
    );
    assert!(
        outputs.iter().any(|o| o.contains("echo: over http")),
        "{notifications:?}"
    );
    let said = texts(&notifications, "agent_message_chunk");
    assert!(
        said.contains("editor-sse") && said.contains("not started"),
        "{said}"
    );
}

/// An OpenAI answer `text` that ends with `finish_reason` (`length`, `content_filter`).
fn finished_by(text: &str, finish_reason: &str) -> Reply {
    let body = String::from_utf8(openai_text_sse(text)).unwrap().replace(
        r#""finish_reason":"stop""#,
        &format!(r#""finish_reason":"{finish_reason}""#),
    );
    sse(body.into_bytes())
}

/// Issue 31 point 2: the model's own stop (the token limit, a refusal) is the turn's stop reason,
/// and each call's tokens reach the editor as `usage_update`.
#[test]
fn acp_stop_reasons_follow_the_model_and_usage_is_reported() {
    let mock = MockLlm::start_in_background();
    let run = Run::new();
    mock.push(finished_by("A long answer cut", "length"));
    mock.push(finished_by("I cannot", "content_filter"));
    mock.push(sse(openai_text_sse("Fine.")));
    let (mut editor, session) = with_session(&run, &mock);
    let mut ask = |words: &str| {
        let id = editor.prompt(&session, words);
        editor.answer_to(id, |r| panic!("asked {r}"))
    };
    let (answer, notifications) = ask("write a lot");
    assert_eq!(answer["result"]["stopReason"], "max_tokens", "{answer}");
    let usage = updates(&notifications, "usage_update");
    assert_eq!(usage.len(), 1, "{notifications:?}");
    assert_eq!(usage[0]["used"], 25, "prompt 20 + answer 5: {usage:?}");
    assert!(usage[0]["size"].as_u64().unwrap() > 0, "{usage:?}");
    let (answer, _) = ask("something refused");
    assert_eq!(answer["result"]["stopReason"], "refusal", "{answer}");
    let (answer, _) = ask("and now?");
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
}

/// Issue 31 point 4: an editor that declared no elicitation: a server's form is declined with a
/// notice the editor shows, as in `exec`.
#[test]
fn acp_an_elicitation_is_declined_with_a_notice_when_the_editor_offers_no_forms() {
    use crate::mcp::raw_server::{RAW_ENV, raw_definition};
    let mock = MockLlm::start_in_background();
    let run = Run::new();
    mock.push(sse(openai_tool_sse("f1", "mcp__forms__elicit", "{}")));
    mock.push(sse(openai_text_sse("No answer.")));
    let raw = raw_definition("plain", None);
    let servers = json!([{"name": "forms", "command": raw["command"], "args": raw["args"],
        "env": [{"name": RAW_ENV, "value": "plain"}]}]);
    let mut editor = Editor::start(&run, &mock);
    editor.initialize();
    let (answer, _) = editor.call(
        "session/new",
        json!({"cwd": run.workdir, "mcpServers": servers}),
    );
    let session = answer["result"]["sessionId"].as_str().unwrap().to_owned();
    let id = editor.prompt(&session, "fill the form");
    let (answer, mut notifications) = editor.answer_to(
        id,
        |_| json!({"outcome": {"outcome": "selected", "optionId": "allow_once"}}),
    );
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    let output = updates(&notifications, "tool_call_update")
        .last()
        .and_then(|u| u["content"][0]["content"]["text"].as_str())
        .unwrap_or_default()
        .to_owned();
    assert!(output.contains(r#""action":"decline""#), "{output}");
    // The notice may follow the turn's end: a later answer comes after it.
    let (_, later) = editor.call(
        "session/set_mode",
        json!({"sessionId": session, "modeId": "default"}),
    );
    notifications.extend(later);
    let said = texts(&notifications, "agent_message_chunk");
    assert!(
        said.contains("Who are you?") && said.contains("declined"),
        "{said}"
    );
}

/// Issue 31 point 1 for sub-agents: a sub-agent's read goes through the editor too.
#[test]
fn acp_a_sub_agent_reads_through_the_editor() {
    let mock = MockLlm::start_in_background();
    let run = Run::new();
    std::fs::write(run.workdir.join("buffer.txt"), "on disk\n").unwrap();
    let task = json!({"agent": "general", "description": "read it", "prompt": "read buffer.txt"});
    mock.push(sse(openai_tool_sse("t1", "task", &task.to_string())));
    let read = json!({"path": "buffer.txt"}).to_string();
    mock.push(sse(openai_tool_sse("r1", "read_file", &read)));
    mock.push(sse(openai_text_sse("It says unsaved buffer.")));
    mock.push(sse(openai_text_sse("Done.")));
    let mut editor = Editor::start(&run, &mock);
    let capabilities = json!({"fs": {"readTextFile": true, "writeTextFile": true}});
    editor.call(
        "initialize",
        json!({"protocolVersion": 1, "clientCapabilities": capabilities}),
    );
    let session = editor.new_session(&run);
    let id = editor.prompt(&session, "have a sub-agent read buffer.txt");
    let mut reads = Vec::new();
    let (answer, notifications) =
        editor.answer_to(id, |request| match request["method"].as_str() {
            Some("fs/read_text_file") => {
                reads.push(request["params"]["path"].clone());
                json!({"content": "unsaved buffer\n"})
            }
            _ => json!({"outcome": {"outcome": "selected", "optionId": "allow_once"}}),
        });
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    let buffer = run.workdir.join("buffer.txt").display().to_string();
    assert_eq!(reads, [json!(buffer)], "{notifications:?}");
    let shown: String = updates(&notifications, "tool_call_update")
        .iter()
        .filter_map(|u| u["content"][0]["content"]["text"].as_str())
        .collect();
    assert!(shown.contains("unsaved buffer"), "{shown}");
}
