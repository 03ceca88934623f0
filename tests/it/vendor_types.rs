//! Our request bodies against the vendors' own request types (issue 33): the official Python
//! SDKs' `CompletionCreateParams`, `ResponseCreateParams` and `MessageCreateParams`, with keys
//! they do not name refused at every level (`tests/vendor/validate_requests.py`). This test
//! sends each protocol a conversation with thinking, tool calls, results and a resumed history
//! through the real binary; `.ci/run` also records every body the rest of the suite sends and
//! checks them all the same way.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::exec::Run;
use crate::support::{MockLlm, Recorded, Reply, Split, fixture};

/// Where `.ci/run` installs the SDKs (`pip install --target`).
fn sdk_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(".ci/cache/py")
}

fn sdks_present() -> bool {
    Command::new("python3")
        .args(["-c", "import openai, anthropic, pydantic"])
        .env("PYTHONPATH", sdk_path())
        .output()
        .is_ok_and(|out| out.status.success())
}

/// A tool round trip with thinking, then a resumed session, for one provider.
fn conversation(provider: &str, tools: &str, text: &str) -> Vec<Recorded> {
    let mock = MockLlm::start_in_background();
    let run = Run::new();
    for (file, split) in [
        (tools, Split::Random(5)),
        (text, Split::Whole),
        (text, Split::Whole),
    ] {
        mock.push(Reply::Sse {
            body: fixture(file),
            split,
        });
    }
    let exec = |args: &[&str]| {
        let mut command = run.command(&mock, args);
        command
            .env("ANTHROPIC_API_KEY", "sk-ant-test")
            .env("ANTHROPIC_BASE_URL", &mock.base_url);
        let out = command.output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{provider}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    std::fs::write(run.workdir.join("notes.txt"), "a note\n").unwrap();
    exec(&[
        "exec",
        "--provider",
        provider,
        "--mode",
        "yolo",
        "look around",
    ]);
    exec(&["exec", "--provider", provider, "--continue", "and now?"]);
    let requests = mock.requests();
    assert_eq!(requests.len(), 3, "{provider}");
    requests
}

#[test]
fn every_protocols_requests_match_the_vendors_own_request_types() {
    if !sdks_present() {
        println!(
            "vendor_types did not run: the openai and anthropic Python SDKs are not in {} \
             (.ci/run installs them with pip)",
            sdk_path().display()
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut written = 0;
    for (provider, tools, text) in [
        (
            "openai",
            "openai_chat_thinking_tools.sse",
            "openai_chat_text.sse",
        ),
        (
            "anthropic",
            "anthropic_thinking_tools.sse",
            "anthropic_text.sse",
        ),
        (
            "responses",
            "responses_reasoning_tools.sse",
            "responses_text.sse",
        ),
    ] {
        for request in conversation(provider, tools, text) {
            let record = serde_json::json!({"path": request.path, "body": request.body});
            std::fs::write(
                dir.path().join(format!("{provider}-{written}.json")),
                record.to_string(),
            )
            .unwrap();
            written += 1;
        }
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/vendor/validate_requests.py");
    let out = Command::new("python3")
        .arg(&script)
        .arg(dir.path())
        .env("PYTHONPATH", sdk_path())
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{said}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        said.contains(&format!("{written} passed, 0 failed")),
        "{said}"
    );
}
