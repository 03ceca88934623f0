//! A stdio MCP server written by hand, line by line, for what a well-behaved SDK server never
//! does: ignore `server/discover`, answer it with an empty result, announce a protocol version
//! nobody speaks. It also asks the client things mid-call (`roots/list`, `elicitation/create`),
//! reports progress, and writes down that its stdin closed before it exits on its own.
//! Its tools: `echo {message}`, `progress` (two progress notifications, then an answer),
//! `roots` (the client's roots), `elicit` (asks the client, returns its answer), `shape`
//! (a structured result that does not match its output schema).

use std::io::{BufRead, Write};

use serde_json::{Value, json};

/// The environment variable that turns the child into this server; its value is the mode:
/// `ignores-discover`, `empty-discover`, `ancient` (refuses discover, answers `initialize` with
/// version 1999-01-01) or `plain` (refuses discover like any `initialize`-era server).
pub const RAW_ENV: &str = "HARNESS9_TEST_RAW_MCP";
/// Where the server writes `stdin closed` when its input ends.
pub const MARK_ENV: &str = "HARNESS9_TEST_RAW_MARK";

fn send(out: &mut impl Write, message: &Value) {
    let _ = writeln!(out, "{message}");
    let _ = out.flush();
}

fn tools() -> Value {
    let object = |properties: Value| json!({"type": "object", "properties": properties});
    json!([
        {"name": "echo", "description": "Says the message back.",
         "inputSchema": object(json!({"message": {"type": "string"}}))},
        {"name": "progress", "description": "Reports progress.", "inputSchema": object(json!({}))},
        {"name": "roots", "description": "The client's roots.", "inputSchema": object(json!({}))},
        {"name": "elicit", "description": "Asks the user.", "inputSchema": object(json!({}))},
        {"name": "shape", "description": "A result of the wrong shape.",
         "inputSchema": object(json!({})),
         "outputSchema": {"type": "object", "properties": {"count": {"type": "integer"}},
                          "required": ["count"]}},
    ])
}

/// Reads lines until the answer to our request `id` comes (requests of ours are rare: one at a
/// time, so anything else in between is dropped).
fn await_answer(lines: &mut impl Iterator<Item = String>, id: &str) -> Value {
    for line in lines {
        let Ok(message) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        if message["id"] == id {
            return message;
        }
    }
    Value::Null
}

fn text(value: &str) -> Value {
    json!({"content": [{"type": "text", "text": value}]})
}

fn serve(mode: &str) {
    let stdin = std::io::stdin();
    let mut out = std::io::stdout();
    let mut lines = stdin.lock().lines().map_while(Result::ok);
    while let Some(line) = lines.next() {
        let Ok(message) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        let id = message["id"].clone();
        let method = message["method"].as_str().unwrap_or("");
        let result = match method {
            "server/discover" => match mode {
                "ignores-discover" => continue,
                "empty-discover" => json!({}),
                _ => {
                    let error = json!({"code": -32601, "message": "Method not found"});
                    send(
                        &mut out,
                        &json!({"jsonrpc": "2.0", "id": id, "error": error}),
                    );
                    continue;
                }
            },
            "initialize" => {
                let version = if mode == "ancient" {
                    "1999-01-01"
                } else {
                    "2025-11-25"
                };
                json!({"protocolVersion": version, "capabilities": {"tools": {}},
                       "serverInfo": {"name": "raw", "version": "1"},
                       "instructions": "Call echo before anything else."})
            }
            "tools/list" => json!({"tools": tools()}),
            "tools/call" => {
                let arguments = &message["params"]["arguments"];
                match message["params"]["name"].as_str().unwrap_or("") {
                    "echo" => text(&format!(
                        "echo: {}",
                        arguments["message"].as_str().unwrap_or("")
                    )),
                    "progress" => {
                        let token = message["params"]["_meta"]["progressToken"].clone();
                        for (progress, note) in [(1, "one"), (2, "two")] {
                            let params = json!({"progressToken": token, "progress": progress,
                                                "total": 2, "message": note});
                            send(
                                &mut out,
                                &json!({"jsonrpc": "2.0", "method": "notifications/progress",
                                        "params": params}),
                            );
                        }
                        text(&format!("progress token {token}"))
                    }
                    "roots" => {
                        send(
                            &mut out,
                            &json!({"jsonrpc": "2.0", "id": "r1", "method": "roots/list"}),
                        );
                        let answer = await_answer(&mut lines, "r1");
                        text(&answer.to_string())
                    }
                    "elicit" => {
                        let schema = json!({"type": "object", "properties": {
                            "name": {"type": "string", "default": "Ada"},
                            "age": {"type": "integer", "default": 36}}});
                        let params = json!({"message": "Who are you?", "requestedSchema": schema});
                        send(
                            &mut out,
                            &json!({"jsonrpc": "2.0", "id": "e1",
                                    "method": "elicitation/create", "params": params}),
                        );
                        let answer = await_answer(&mut lines, "e1");
                        text(&answer["result"].to_string())
                    }
                    "shape" => {
                        json!({"content": [{"type": "text", "text": "{\"count\": \"many\"}"}],
                                      "structuredContent": {"count": "many"}})
                    }
                    other => text(&format!("no tool {other}")),
                }
            }
            _ if message.get("id").is_none() => continue,
            _ => json!({}),
        };
        send(
            &mut out,
            &json!({"jsonrpc": "2.0", "id": id, "result": result}),
        );
    }
    if let Ok(mark) = std::env::var(MARK_ENV) {
        let _ = std::fs::write(mark, "stdin closed");
    }
}

/// Not a test: when started as a child with `RAW_ENV` set, this test binary is the server.
#[test]
fn raw_server_entry() {
    let Ok(mode) = std::env::var(RAW_ENV) else {
        return;
    };
    serve(&mode);
    std::process::exit(0);
}

/// The `mcp.json` entry that starts this binary as the raw server in `mode`.
pub fn raw_definition(mode: &str, mark: Option<&std::path::Path>) -> Value {
    let exe = std::env::current_exe().unwrap();
    let mut env = json!({RAW_ENV: mode});
    if let Some(mark) = mark {
        env[MARK_ENV] = json!(mark.display().to_string());
    }
    json!({
        "command": exe.display().to_string(),
        "args": ["--exact", "mcp::raw_server::raw_server_entry", "--nocapture", "--test-threads", "1", "-q"],
        "env": env
    })
}
