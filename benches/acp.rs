//! What `harness9 acp` adds to a turn, against `harness9 exec --json` on the same stream: the
//! time from the mock model server answering a request to the client reading the first text
//! (`agent_message_chunk` for ACP, `action_delta` for exec), and the resident memory of an idle
//! `harness9 acp` with one session open. Both run the release binary against an in-process mock
//! on loopback. Run with `cargo bench --bench acp`; the numbers are in docs/PERFORMANCE.md.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Body;
use axum::extract::State;
use axum::response::Response;
use serde_json::{Value, json};

const TURNS: usize = 40;

/// An OpenAI stream saying one short sentence.
fn answer() -> String {
    let chunk = |delta: Value, finish: Value| {
        json!({"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "gpt-4o",
               "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
    };
    format!(
        "data: {}\n\ndata: {}\n\ndata: [DONE]\n\n",
        chunk(json!({"content": "Hello."}), Value::Null),
        chunk(json!({}), json!("stop"))
    )
}

/// When the mock answered each request.
type Answered = Arc<Mutex<Vec<Instant>>>;

async fn reply(State(answered): State<Answered>) -> Response {
    answered.lock().expect("lock").push(Instant::now());
    Response::builder()
        .header("content-type", "text/event-stream")
        .body(Body::from(answer()))
        .expect("a response")
}

/// The mock on `runtime` (its own thread: the bench's clients block).
fn start_mock(runtime: &tokio::runtime::Runtime) -> (String, Answered) {
    let answered = Answered::default();
    let listener = runtime
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    let app = Router::new()
        .fallback(reply)
        .with_state(Arc::clone(&answered));
    runtime.spawn(async move { axum::serve(listener, app).await });
    (format!("http://{addr}/v1"), answered)
}

fn command(base: &str, dir: &std::path::Path, args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_harness9"));
    command
        .args(args)
        .current_dir(dir.join("repo"))
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", dir.join("home"))
        .env("HARNESS9_HOME", dir.join("home"))
        .env("OPENAI_API_KEY", "sk-bench")
        .env("OPENAI_BASE_URL", base)
        .stderr(Stdio::null());
    command
}

fn median_and_p90(mut samples: Vec<Duration>) -> (Duration, Duration) {
    samples.sort();
    (samples[samples.len() / 2], samples[samples.len() * 9 / 10])
}

/// exec --json: one process per turn; from the mock's answer to the first `action_delta`.
fn exec_turns(base: &str, dir: &std::path::Path, answered: &Answered) -> Vec<Duration> {
    (0..TURNS)
        .map(|_| {
            let mut child = command(base, dir, &["exec", "--json", "say hello"])
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .spawn()
                .expect("exec starts");
            let stdout = child.stdout.take().expect("stdout");
            let mut first = None;
            for line in BufReader::new(stdout).lines() {
                let line = line.expect("a line");
                if first.is_none() && line.contains("\"action_delta\"") {
                    first = Some(Instant::now());
                }
            }
            child.wait().expect("exec ends");
            let answered_at = *answered.lock().expect("lock").last().expect("answered");
            first.expect("text") - answered_at
        })
        .collect()
}

/// acp: one process, one session; from the mock's answer to the first `agent_message_chunk`.
/// Returns the samples and the idle resident memory (kB) after the session opened.
fn acp_turns(base: &str, dir: &std::path::Path, answered: &Answered) -> (Vec<Duration>, u64) {
    let mut child = command(base, dir, &["acp"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("acp starts");
    let mut stdin = child.stdin.take().expect("stdin");
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let mut send = move |id: u64, method: &str, params: Value| {
        let message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        writeln!(stdin, "{message}").expect("write");
        stdin.flush().expect("flush");
    };
    let mut answer_to = |id: u64, first_text: &mut Option<Instant>| -> Value {
        loop {
            let line = lines.next().expect("a line").expect("read");
            let message: Value = serde_json::from_str(&line).expect("JSON");
            if first_text.is_none()
                && message["params"]["update"]["sessionUpdate"] == "agent_message_chunk"
            {
                *first_text = Some(Instant::now());
            }
            if message["id"] == json!(id) && message.get("method").is_none() {
                return message;
            }
        }
    };
    send(
        0,
        "initialize",
        json!({"protocolVersion": 1, "clientCapabilities": {}}),
    );
    answer_to(0, &mut None);
    let cwd = dir.join("repo");
    send(1, "session/new", json!({"cwd": cwd, "mcpServers": []}));
    let session = answer_to(1, &mut None)["result"]["sessionId"].clone();
    // Idle: the session open, nothing running (the pump and the core wait on channels).
    std::thread::sleep(Duration::from_millis(500));
    let status =
        std::fs::read_to_string(format!("/proc/{}/status", child.id())).unwrap_or_default();
    let rss = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0);
    let samples = (0..TURNS as u64)
        .map(|turn| {
            let id = 10 + turn;
            send(
                id,
                "session/prompt",
                json!({"sessionId": session, "prompt": [{"type": "text", "text": "say hello"}]}),
            );
            let mut first = None;
            let done = answer_to(id, &mut first);
            assert_eq!(done["result"]["stopReason"], "end_turn", "{done}");
            let answered_at = *answered.lock().expect("lock").last().expect("answered");
            first.expect("text") - answered_at
        })
        .collect();
    // The editor goes away: stdin closes, and harness9 stores the session and exits.
    drop(send);
    let _ = child.wait();
    (samples, rss)
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("runtime");
    let (base, answered) = start_mock(&runtime);
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir_all(dir.path().join("repo")).expect("repo");
    std::os::unix::fs::DirBuilderExt::mode(&mut std::fs::DirBuilder::new(), 0o700)
        .create(dir.path().join("home"))
        .expect("home");
    let exec = median_and_p90(exec_turns(&base, dir.path(), &answered));
    let (acp, rss) = acp_turns(&base, dir.path(), &answered);
    let acp = median_and_p90(acp);
    println!("model answer -> first text, {TURNS} turns each (median, p90):");
    println!("  exec --json: {:?}, {:?}", exec.0, exec.1);
    println!("  acp:         {:?}, {:?}", acp.0, acp.1);
    println!("idle harness9 acp with one session: {rss} kB resident");
}
