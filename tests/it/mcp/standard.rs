//! MCP to the standard (issue 30), through `harness9 exec` and the hand-written server of
//! `raw_server`: version negotiation with every server generation, the client capabilities
//! (roots, elicitation, progress), shutdown, output schemas and the server's instructions.

use serde_json::{Value, json};

use super::raw_server::raw_definition;
use crate::exec::{Run, json_lines};
use crate::support::{MockLlm, Reply, Split, openai_text_sse, openai_tool_sse};

/// What one `exec` against the raw server came to.
struct Ran {
    events: Vec<Value>,
    mock: MockLlm,
    run: Run,
}

impl Ran {
    fn notices(&self) -> Vec<String> {
        self.events
            .iter()
            .filter(|e| e["type"] == "notice")
            .map(|e| e["data"].as_str().unwrap_or("").to_owned())
            .collect()
    }

    /// Each tool result's text inside the fence that marks it as data from outside (the
    /// fence itself is checked by `it::mcp` and the library's fence tests).
    fn tool_outputs(&self) -> Vec<String> {
        self.events
            .iter()
            .filter(|e| e["type"] == "tool_result")
            .map(|e| unfenced(e["data"]["output"].as_str().unwrap_or("")))
            .collect()
    }
}

/// The text between an outside-data fence's opening and closing lines; a result without a
/// fence is returned whole, so an assertion on it fails showing what came.
fn unfenced(output: &str) -> String {
    let mut lines: Vec<&str> = output.lines().collect();
    let fenced = lines.len() >= 2
        && lines[0].starts_with("[data from outside ")
        && lines[lines.len() - 1].starts_with("[end of data from outside ");
    if !fenced {
        return output.to_owned();
    }
    lines.pop();
    lines.remove(0);
    lines.join("\n")
}

/// Runs `exec --json` (plus `flags`) with the raw server in `mode` as `t`, the model calling
/// `tool` once with `arguments` and then stopping.
fn exec_raw(mode: &str, tool: &str, arguments: Value, flags: &[&str]) -> Ran {
    let run = Run::new();
    exec_raw_in(run, raw_definition(mode, None), tool, arguments, flags)
}

fn exec_raw_in(run: Run, definition: Value, tool: &str, arguments: Value, flags: &[&str]) -> Ran {
    std::fs::write(
        run.home.join("mcp.json"),
        json!({"mcpServers": {"t": definition}}).to_string(),
    )
    .unwrap();
    std::fs::write(
        run.home.join("settings.json"),
        json!({"permissions": {"allow": ["mcp__t__*"]}}).to_string(),
    )
    .unwrap();
    let mock = MockLlm::start_in_background();
    mock.push(Reply::Sse {
        body: openai_tool_sse("call_1", &format!("mcp__t__{tool}"), &arguments.to_string()),
        split: Split::Whole,
    });
    mock.set_fallback(Reply::Sse {
        body: openai_text_sse("Done."),
        split: Split::Whole,
    });
    let mut args = vec!["exec", "--json"];
    args.extend_from_slice(flags);
    args.push("go");
    let started = std::time::Instant::now();
    let out = run.exec(&mock, &args);
    // The figure in docs/PERFORMANCE.md (`-- --nocapture` shows it).
    println!("exec with the `{tool}` call took {:?}", started.elapsed());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Ran {
        events: json_lines(&out.stdout),
        mock,
        run,
    }
}

#[test]
fn a_server_that_ignores_discover_is_used_through_initialize() {
    let ran = exec_raw("ignores-discover", "echo", json!({"message": "hi"}), &[]);
    assert_eq!(ran.tool_outputs(), ["echo: hi"], "{:?}", ran.events);
    assert!(
        !ran.notices().iter().any(|n| n.contains("`t`")),
        "{:?}",
        ran.notices()
    );
}

#[test]
fn a_server_that_answers_discover_with_an_empty_result_is_used_through_initialize() {
    let ran = exec_raw("empty-discover", "echo", json!({"message": "hi"}), &[]);
    assert_eq!(ran.tool_outputs(), ["echo: hi"], "{:?}", ran.events);
}

#[test]
fn a_server_speaking_an_unknown_protocol_version_is_refused_with_a_notice_naming_it() {
    let ran = exec_raw("ancient", "echo", json!({"message": "hi"}), &[]);
    let notices = ran.notices();
    assert!(
        notices
            .iter()
            .any(|n| n.contains("`t`") && n.contains("1999-01-01")),
        "{notices:?}"
    );
    let offered = ran.mock.requests()[0].body["tools"].to_string();
    assert!(!offered.contains("mcp__t__"), "{offered}");
    let _ = &ran.run;
}

#[test]
fn roots_list_answers_the_working_directory() {
    let ran = exec_raw("plain", "roots", json!({}), &[]);
    let workdir = ran.run.workdir.canonicalize().unwrap();
    let outputs = ran.tool_outputs();
    assert_eq!(outputs.len(), 1, "{:?}", ran.events);
    let answer: Value = serde_json::from_str(&outputs[0]).unwrap();
    let root = &answer["result"]["roots"][0];
    assert_eq!(
        root["uri"],
        format!("file://{}/", workdir.display()),
        "{answer}"
    );
}

#[test]
fn exec_declines_an_elicitation_with_a_notice() {
    let ran = exec_raw("plain", "elicit", json!({}), &[]);
    let outputs = ran.tool_outputs();
    let answer: Value = serde_json::from_str(&outputs[0]).unwrap();
    assert_eq!(answer["action"], "decline", "{answer}");
    assert!(
        ran.notices()
            .iter()
            .any(|n| n.contains("Who are you?") && n.contains("declined")),
        "{:?}",
        ran.notices()
    );
}

#[test]
fn exec_under_yolo_accepts_an_elicitation_whose_every_field_has_a_default() {
    let ran = exec_raw("plain", "elicit", json!({}), &["--mode", "yolo"]);
    let outputs = ran.tool_outputs();
    let answer: Value = serde_json::from_str(&outputs[0]).unwrap();
    assert_eq!(answer["action"], "accept", "{answer}");
    assert_eq!(answer["content"], json!({"name": "Ada", "age": 36}));
}

#[test]
fn a_servers_progress_becomes_tool_progress_events() {
    let ran = exec_raw("plain", "progress", json!({}), &[]);
    let progress: Vec<&Value> = ran
        .events
        .iter()
        .filter(|e| e["type"] == "tool_progress")
        .map(|e| &e["data"])
        .collect();
    assert_eq!(
        progress,
        [
            &json!({"tool_call_id": "call_1", "progress": 1.0, "total": 2.0, "message": "one"}),
            &json!({"tool_call_id": "call_1", "progress": 2.0, "total": 2.0, "message": "two"}),
        ],
        "{:?}",
        ran.events
    );
    // The call carried a progress token, and the result came after its progress.
    assert!(
        ran.tool_outputs()[0].starts_with("progress token "),
        "{:?}",
        ran.tool_outputs()
    );
    let last_progress = ran
        .events
        .iter()
        .rposition(|e| e["type"] == "tool_progress")
        .unwrap();
    let result = ran
        .events
        .iter()
        .position(|e| e["type"] == "tool_result")
        .unwrap();
    assert!(last_progress < result);
}

#[test]
fn a_stdio_server_sees_its_stdin_close_and_exits_by_itself() {
    let run = Run::new();
    let mark = run.home.join("mark");
    let ran = exec_raw_in(
        run,
        raw_definition("plain", Some(&mark)),
        "echo",
        json!({"message": "hi"}),
        &[],
    );
    assert_eq!(ran.tool_outputs(), ["echo: hi"]);
    assert_eq!(
        std::fs::read_to_string(&mark).unwrap_or_default(),
        "stdin closed"
    );
}

#[test]
fn every_exec_ends_its_http_session_with_delete() {
    let (url, deletes) =
        super::server::serve_http_in_background(super::server::TestServer::new(true));
    for run in 1..=3 {
        let ran = exec_raw_in(
            Run::new(),
            json!({"type": "http", "url": url}),
            "echo",
            json!({"message": "hi"}),
            &[],
        );
        assert_eq!(ran.tool_outputs(), ["echo: hi"]);
        assert_eq!(deletes.load(std::sync::atomic::Ordering::SeqCst), run);
    }
}

#[test]
fn structured_content_that_does_not_match_the_output_schema_is_an_error_naming_it() {
    let ran = exec_raw("plain", "shape", json!({}), &[]);
    let result = ran
        .events
        .iter()
        .find(|e| e["type"] == "tool_result")
        .unwrap();
    assert_eq!(result["data"]["is_error"], true, "{result}");
    let output = result["data"]["output"].as_str().unwrap();
    assert!(
        output.contains("output schema")
            && output.contains("$.count: expected integer, got string"),
        "{output}"
    );
}

#[test]
fn the_servers_instructions_join_the_system_prompt_marked_as_its_own() {
    let ran = exec_raw("plain", "echo", json!({"message": "hi"}), &[]);
    let system = ran.mock.requests()[0].body["messages"][0]["content"].to_string();
    assert!(
        system.contains(
            "<mcp-server-instructions server=\\\"t\\\">\\nCall echo before anything else."
        ),
        "{system}"
    );
    assert!(system.contains("not the user's"), "{system}");
}

/// The notices of an `exec` whose one server is HTTP and answers everything with `status`.
fn notices_of_a_server_answering(
    status: u16,
    body: &str,
    headers: Vec<(&'static str, String)>,
) -> Vec<String> {
    let server = MockLlm::start_in_background();
    server.set_fallback(Reply::Status {
        status,
        body: body.to_owned(),
        headers,
    });
    let url = format!("{}/mcp", server.base_url);
    let definition = json!({"type": "http", "url": url});
    exec_raw_in(Run::new(), definition, "echo", json!({}), &[]).notices()
}

#[test]
fn an_http_server_that_wants_authorization_says_so_and_what_to_do() {
    let notices =
        notices_of_a_server_answering(401, "", vec![("WWW-Authenticate", "Bearer".into())]);
    assert!(
        notices
            .iter()
            .any(|n| n.contains("HTTP 401") && n.contains("`harness9 mcp login t`")),
        "{notices:?}"
    );
}

#[test]
fn an_http_server_that_fails_keeps_its_status_in_the_notice() {
    let notices = notices_of_a_server_answering(503, "down for maintenance", Vec::new());
    assert!(
        notices
            .iter()
            .any(|n| n.contains("`t`") && n.contains("503")),
        "{notices:?}"
    );
}
