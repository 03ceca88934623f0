//! MCP servers' forms through the core: a front end that asks (`ask_elicitations`) gets the
//! form as `Update::Elicitation` and its answer reaches the server; an answer to a form no
//! longer waiting is a failure. The server is a few lines of Python speaking MCP over stdio.

use super::undo::{call, yolo_fixture};
use super::*;
use crate::config::{EditorMcpServer, EditorMcpTransport};
use crate::mcp::Elicited;

/// A stdio MCP server whose one tool, `ask`, asks the client a form and answers with what the
/// client said (the JSON of the `elicitation/create` result).
const FORM_SERVER: &str = r#"
import json, sys
def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()
schema = {"type": "object", "required": ["name"], "properties": {
    "name": {"type": "string", "default": "Ada"}, "age": {"type": "integer"}}}
while True:
    line = sys.stdin.readline()
    if not line:
        break
    message = json.loads(line)
    method, id = message.get("method"), message.get("id")
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": id, "result": {"protocolVersion": "2025-11-25",
              "capabilities": {"tools": {}}, "serverInfo": {"name": "forms", "version": "1"}}})
    elif method == "tools/list":
        send({"jsonrpc": "2.0", "id": id, "result": {"tools": [{"name": "ask",
              "description": "Asks the user.", "inputSchema": {"type": "object"}}]}})
    elif method == "tools/call":
        send({"jsonrpc": "2.0", "id": "e1", "method": "elicitation/create",
              "params": {"message": "Who are you?", "requestedSchema": schema}})
        while True:
            answer = json.loads(sys.stdin.readline())
            if answer.get("id") == "e1":
                break
        text = json.dumps(answer.get("result"), sort_keys=True)
        send({"jsonrpc": "2.0", "id": id,
              "result": {"content": [{"type": "text", "text": text}]}})
    elif id is not None:
        send({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "no"}})
"#;

/// The Python the test runs the server with (its real path: MCP servers get a reduced
/// environment, without what a version manager's shim needs); `None` without one.
fn python() -> Option<String> {
    let out = std::process::Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .ok()?;
    let path = String::from_utf8(out.stdout).ok()?.trim().to_owned();
    (out.status.success() && !path.is_empty()).then_some(path)
}

#[tokio::test]
async fn a_servers_form_reaches_the_front_end_and_its_answer_the_server() {
    let Some(python) = python() else {
        eprintln!("DID NOT RUN: no python3 for the scripted MCP server");
        return;
    };
    let mut fixture = yolo_fixture();
    fixture.settings.editor_mcp = vec![EditorMcpServer {
        name: "forms".into(),
        transport: EditorMcpTransport::Stdio {
            command: python,
            args: vec!["-c".into(), FORM_SERVER.into()],
            env: Vec::new(),
        },
    }];
    let provider = scripted([
        call("c1", "mcp__forms__ask", serde_json::json!({})),
        text("thanks"),
    ]);
    let options = CoreOptions {
        wait_for_mcp: Some(PATIENCE),
        ask_elicitations: true,
        ..CoreOptions::default()
    };
    let mut opened = fixture.open(&provider, SessionChoice::New, options).await;
    opened.handle.send(Request::Submit("who am I?".into()));
    let (found, _) = until(&mut opened.updates, "the form", |u| {
        matches!(u, Update::Elicitation(_))
    })
    .await;
    let Update::Elicitation(ask) = found else {
        unreachable!()
    };
    assert_eq!(ask.server, "forms");
    assert_eq!(ask.message, "Who are you?");
    assert_eq!(ask.schema["properties"]["name"]["default"], "Ada");
    let mut values = serde_json::Map::new();
    values.insert("name".into(), "Grace".into());
    opened.handle.send(Request::AnswerElicitation {
        id: ask.id.clone(),
        answer: Elicited::Accept(values),
    });
    let (result, _) = until(&mut opened.updates, "the tool's result", |u| {
        matches!(
            u,
            Update::Engine(Event {
                kind: EventKind::ToolResult(_),
                ..
            })
        )
    })
    .await;
    let Update::Engine(Event {
        kind: EventKind::ToolResult(outcome),
        ..
    }) = result
    else {
        unreachable!()
    };
    let output = &outcome.result.output;
    assert!(
        output.contains(r#"{"action": "accept", "content": {"name": "Grace"}}"#),
        "{output}"
    );
    // The form was answered: a second answer finds nothing waiting.
    opened.handle.send(Request::AnswerElicitation {
        id: ask.id.clone(),
        answer: Elicited::Decline,
    });
    let (failed, _) = until(&mut opened.updates, "the late answer's failure", |u| {
        matches!(u, Update::Failed(_))
    })
    .await;
    let Update::Failed(failure) = failed else {
        unreachable!()
    };
    assert_eq!(failure.kind, FailureKind::NotFound);
    close(&mut opened).await;
}
