//! Background commands through the real binary: `bash` with `"background": true` starts a
//! server that a later command reaches, `bash_output` shows its log, `bash_kill` stops a job,
//! and the end of the session stops what still runs.

use std::net::TcpListener;

use serde_json::{Value, json};

use crate::exec::{Run, json_lines};
use crate::support::{MockLlm, Reply, Split, openai_text_sse, openai_tool_sse};

pub fn call(mock: &MockLlm, id: &str, name: &str, arguments: Value) {
    mock.push(Reply::Sse {
        body: openai_tool_sse(id, name, &arguments.to_string()),
        split: Split::Whole,
    });
}

pub fn results(events: &[Value]) -> Vec<Value> {
    events
        .iter()
        .filter(|e| e["type"] == "tool_result")
        .map(|e| e["data"].clone())
        .collect()
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[test]
fn a_background_server_is_reached_read_and_stopped_with_the_session() {
    let mock = MockLlm::start_in_background();
    let run = Run::new();
    std::fs::write(run.workdir.join("hello.txt"), "hello from the job\n").unwrap();
    let port = free_port();
    let server = format!("python3 -u -m http.server {port} --bind 127.0.0.1");
    call(
        &mock,
        "c1",
        "bash",
        json!({"command": server, "background": true}),
    );
    // The agent's own retry loop waits for the server to listen.
    let fetch = format!(
        "for i in $(seq 100); do curl -sf http://127.0.0.1:{port}/hello.txt && exit 0; sleep 0.1; done; exit 1"
    );
    call(&mock, "c2", "bash", json!({"command": fetch}));
    call(&mock, "c3", "bash_output", json!({"id": "1"}));
    call(
        &mock,
        "c4",
        "bash",
        json!({"command": "sleep 600", "background": true}),
    );
    call(&mock, "c5", "bash_kill", json!({"id": 2}));
    call(&mock, "c6", "bash_output", json!({"id": "7"}));
    mock.push(Reply::Sse {
        body: openai_text_sse("The server answered."),
        split: Split::Whole,
    });
    // The server needs the loopback network: outside the sandbox, in yolo mode.
    let out = run.exec(
        &mock,
        &[
            "exec",
            "--json",
            "--mode",
            "yolo",
            "--sandbox",
            "off",
            "serve the folder",
        ],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let results = results(&json_lines(&out.stdout));
    assert_eq!(results.len(), 6, "{results:?}");
    let started = results[0]["output"].as_str().unwrap();
    assert!(started.contains("job 1"), "{started}");
    assert_eq!(
        results[1]["output"].as_str().unwrap().lines().next(),
        Some("hello from the job")
    );
    let log = results[2]["output"].as_str().unwrap();
    assert!(log.contains("GET /hello.txt"), "{log}");
    assert!(log.contains("still running"), "{log}");
    assert!(
        results[4]["output"]
            .as_str()
            .unwrap()
            .contains("was stopped")
    );
    assert_eq!(results[5]["is_error"], true);
    assert!(
        results[5]["output"]
            .as_str()
            .unwrap()
            .contains("the jobs are 1, 2")
    );
    // The session ended, and the server with it: nothing listens on its port any more.
    assert!(
        std::net::TcpStream::connect(("127.0.0.1", port)).is_err(),
        "the background server outlived its session"
    );
}

#[test]
fn plan_mode_starts_no_background_command() {
    let mock = MockLlm::start_in_background();
    let run = Run::new();
    call(
        &mock,
        "c1",
        "bash",
        json!({"command": "ls", "background": true}),
    );
    mock.push(Reply::Sse {
        body: openai_text_sse("A plan."),
        split: Split::Whole,
    });
    let out = run.exec(&mock, &["exec", "--json", "--mode", "plan", "plan it"]);
    let results = results(&json_lines(&out.stdout));
    assert_eq!(results[0]["is_error"], true);
    assert!(results[0]["output"].as_str().unwrap().contains("plan mode"));
}

#[test]
fn a_sandboxed_background_job_runs_and_its_output_is_read() {
    let mock = MockLlm::start_in_background();
    let run = Run::new();
    call(
        &mock,
        "c1",
        "bash",
        json!({"command": "echo job-said-this; touch inside.txt", "background": true}),
    );
    call(
        &mock,
        "c2",
        "bash",
        json!({"command": "for i in $(seq 100); do [ -e inside.txt ] && exit 0; sleep 0.1; done; exit 1"}),
    );
    call(&mock, "c3", "bash_output", json!({"id": "1"}));
    mock.push(Reply::Sse {
        body: openai_text_sse("It ran."),
        split: Split::Whole,
    });
    // auto-edit: a sandboxed command runs without asking, background or not.
    let out = run.exec(&mock, &["exec", "--json", "--mode", "auto-edit", "run it"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let results = results(&json_lines(&out.stdout));
    assert_eq!(results[1]["is_error"], false, "{results:?}");
    let log = results[2]["output"].as_str().unwrap();
    assert!(log.contains("job-said-this"), "{log}");
    assert!(run.workdir.join("inside.txt").exists());
}

#[test]
fn what_a_sandboxed_job_wrote_to_protected_paths_is_undone_when_the_session_ends() {
    // A job still running at the end of the session: the guard must have put the protected
    // paths back before the process exits, or the next session starts with the job's hooks.
    let mock = MockLlm::start_in_background();
    let run = Run::new();
    call(
        &mock,
        "c1",
        "bash",
        json!({
            "command": "mkdir .harness9 && echo '{\"hooks\": {}}' > .harness9/settings.json \
                        && echo '{}' > .mcp.json && exec sleep 600",
            "background": true
        }),
    );
    call(
        &mock,
        "c2",
        "bash",
        // Outside the sandbox (yolo lets it leave without asking), so this command's own guard, whose
        // snapshot may predate the job's writes, cannot be what undoes them.
        json!({"command": "for i in $(seq 100); do [ -e .mcp.json ] && exit 0; sleep 0.1; done; exit 1",
               "sandbox": false}),
    );
    mock.push(Reply::Sse {
        body: openai_text_sse("Done."),
        split: Split::Whole,
    });
    let out = run.exec(&mock, &["exec", "--json", "--mode", "yolo", "go"]);
    let results = results(&json_lines(&out.stdout));
    assert_eq!(results[1]["is_error"], false, "{results:?}");
    assert!(
        !run.workdir.join(".harness9").exists(),
        "the job's .harness9 is still there"
    );
    assert!(
        !run.workdir.join(".mcp.json").exists(),
        "the job's .mcp.json is still there"
    );
}
