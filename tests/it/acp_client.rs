//! `harness9 acp` driven by a real client we did not write: the official ACP TypeScript SDK
//! (npm `@agentclientprotocol/sdk`, installed by .ci/run into .ci/cache/acp), from the Node
//! script tests/acp_client/client.mjs, against the mock model. Without Node or the package the
//! test says it did not run.

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

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
            "acp_client::acp_the_official_typescript_client_drives_harness9 DID NOT RUN: {} \
             (.ci/run installs @agentclientprotocol/sdk with npm; or set HARNESS9_ACP_SDK)",
            if node {
                format!("{} is not installed", installed.display())
            } else {
                "node is absent".to_owned()
            }
        );
        return;
    }
    let mock = MockLlm::start_in_background();
    script(&mock);
    let run = Run::new();
    let child = Command::new("node")
        .arg(root.join("tests/acp_client/client.mjs"))
        .arg(&sdk)
        .arg(assert_cmd::cargo::cargo_bin!("harness9"))
        .arg(&run.workdir)
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
        "the TypeScript client failed\nstdout:\n{stdout}\nstderr:\n{stderr}"
    );
    print!("{stdout}");
}
