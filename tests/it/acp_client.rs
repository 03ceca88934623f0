//! `harness9 acp` driven by a real client we did not write: the official ACP TypeScript SDK
//! (npm `@agentclientprotocol/sdk`, installed by .ci/run into .ci/cache/acp), from the Node
//! script tests/acp_client/client.mjs, against the mock model. Without Node or the package the
//! test says it did not run.

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::json;

use crate::acp::{push_writes, sse, thinking_sse};
use crate::exec::Run;
use crate::support::{MockLlm, Reply, openai_text_chunk, openai_text_sse, openai_tool_sse};

/// The replies of the script's turns, in its order.
fn script(mock: &MockLlm) {
    mock.push(sse(thinking_sse("Let me think.", "Hello from harness9.")));
    push_writes(mock);
    mock.push(sse(openai_tool_sse(
        "call_b1",
        "bash",
        r#"{"command":"echo hello-from-bash"}"#,
    )));
    mock.push(sse(openai_text_sse("Ran it.")));
    mock.push(sse(openai_tool_sse(
        "call_t1",
        "todo_write",
        r#"{"todos":[{"content":"step one","status":"in_progress"}]}"#,
    )));
    mock.push(sse(openai_text_sse("Planned.")));
    let head = openai_text_chunk("The first words");
    let mut body = head.clone();
    body.extend(openai_text_sse(" never shown"));
    mock.push(Reply::Stall {
        body,
        stall_at: head.len(),
    });
    mock.push(sse(openai_text_sse("Still here.")));
}

#[test]
fn acp_the_official_typescript_client_drives_harness9() {
    let mock = MockLlm::start_in_background();
    script(&mock);
    let run = Run::new();
    drive("client.mjs", &mock, &run, &[]);
}

/// The replies of editor_side.mjs's turns, in its order.
fn editor_side_script(mock: &MockLlm) {
    let turns = [
        ("read_file", json!({"path": "buffer.txt"}), "Read it."),
        (
            "edit_file",
            json!({"path": "buffer.txt", "old_string": "unsaved", "new_string": "edited"}),
            "Edited.",
        ),
        (
            "write_file",
            json!({"path": "new.txt", "content": "from the agent\n"}),
            "Wrote.",
        ),
        ("read_file", json!({"path": ".env"}), "Not read."),
        (
            "mcp__editor-tools__echo",
            json!({"message": "from the editor"}),
            "It answered.",
        ),
        ("mcp__editor-forms__elicit", json!({}), "Filled."),
        (
            "bash",
            json!({"command": "touch made-there && echo from-the-terminal"}),
            "Ran it there.",
        ),
        ("read_file", json!({"path": "only-in-editor.txt"}), "Read."),
        (
            "edit_file",
            json!({"path": "only-in-editor.txt", "old_string": "never", "new_string": "now"}),
            "Edited there.",
        ),
    ];
    for (index, (tool, args, said)) in turns.into_iter().enumerate() {
        let id = format!("call_e{index}");
        mock.push(sse(openai_tool_sse(&id, tool, &args.to_string())));
        mock.push(sse(openai_text_sse(said)));
    }
}

/// Issue 31, the editor's side: file tools read and write through fs/read_text_file and
/// fs/write_text_file, after the path is judged as for harness9's own I/O; the MCP servers the
/// editor passes in session/new are started and used, and a server's form is asked through
/// elicitation/create, and a command runs in the editor's terminal (points 1, 3, 4 and 5).
#[test]
fn acp_the_editors_side_through_the_typescript_client() {
    let mock = MockLlm::start_in_background();
    editor_side_script(&mock);
    let run = Run::new();
    std::fs::write(run.workdir.join("buffer.txt"), "on disk\n").unwrap();
    // The user chose the editor's terminal for commands.
    std::fs::write(
        run.home.join("settings.json"),
        r#"{"acp": {"terminal": true}}"#,
    )
    .unwrap();
    std::fs::write(
        run.workdir.join(".env"),
        "EDITOR_SIDE_TOKEN=sk-not-for-the-editor\n",
    )
    .unwrap();
    // The editor's own MCP server: this test binary, serving MCP on stdio.
    let stdio = crate::mcp::server::stdio_definition("modern");
    let forms = crate::mcp::raw_server::raw_definition("plain", None);
    let servers = json!([{"name": "editor-tools", "command": stdio["command"],
        "args": stdio["args"],
        "env": [{"name": crate::mcp::server::SERVER_ENV, "value": "modern"}]},
        {"name": "editor-forms", "command": forms["command"], "args": forms["args"],
        "env": [{"name": crate::mcp::raw_server::RAW_ENV, "value": "plain"}]}]);
    if drive("editor_side.mjs", &mock, &run, &[servers.to_string()]) {
        // The model was given the buffer's text, never the disk's.
        let bodies: String = mock.requests().iter().map(|r| r.body.to_string()).collect();
        assert!(bodies.contains("unsaved buffer"), "{bodies}");
        assert!(!bodies.contains("sk-not-for-the-editor"), "{bodies}");
        // The command's output the editor's terminal kept reached the model.
        assert!(bodies.contains("from-the-terminal"), "{bodies}");
    }
}

/// Runs tests/acp_client/SCRIPT (with `extra` arguments) with the official SDK against `mock`
/// in `run`'s folder; false (and says so) when Node or the SDK is absent.
fn drive(script: &str, mock: &MockLlm, run: &Run, extra: &[String]) -> bool {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let sdk = std::env::var_os("HARNESS9_ACP_SDK")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join(".ci/cache/acp"));
    let installed = sdk.join("node_modules/@agentclientprotocol/sdk/package.json");
    let node = Command::new("node")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !node || !installed.exists() {
        println!(
            "acp_client ({script}) DID NOT RUN: {} (.ci/run installs @agentclientprotocol/sdk \
             with npm; or set HARNESS9_ACP_SDK)",
            if node {
                format!("{} is not installed", installed.display())
            } else {
                "node is absent".to_owned()
            }
        );
        return false;
    }
    let child = Command::new("node")
        .arg(root.join("tests/acp_client").join(script))
        .arg(&sdk)
        .arg(assert_cmd::cargo::cargo_bin!("harness9"))
        .arg(&run.workdir)
        .args(extra)
        .current_dir(&run.workdir)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", &run.home)
        .env("HARNESS9_HOME", &run.home)
        .env("OPENAI_API_KEY", "sk-acp-client-test")
        .env("OPENAI_BASE_URL", mock.openai_base())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("node starts");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    let output = rx
        .recv_timeout(Duration::from_secs(120))
        .expect("the Node client finishes")
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success() && stdout.contains("ok all"),
        "the TypeScript client ({script}) failed\nstdout:\n{stdout}\nstderr:\n{stderr}"
    );
    print!("{stdout}");
    true
}
