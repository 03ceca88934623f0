//! A scripted LLM server for tests: axum on 127.0.0.1:0 answering POSTs with queued replies
//! (SSE streamed in pieces, error statuses, cut connections) and recording every request.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use tokio::net::TcpListener;

/// How a streamed body is cut into pieces on the wire.
#[derive(Debug, Clone, Copy)]
pub enum Split {
    Whole,
    /// Every piece this many bytes.
    Every(usize),
    /// Pieces of random sizes from 1 to 64 bytes, from this seed.
    Random(u64),
}

/// One scripted answer.
#[derive(Debug, Clone)]
pub enum Reply {
    /// 200 with an SSE body sent in pieces.
    Sse { body: Vec<u8>, split: Split },
    /// The SSE body up to `cut_at` bytes, then the connection breaks.
    Cut { body: Vec<u8>, cut_at: usize },
    /// A status with a body and extra headers.
    Status {
        status: u16,
        body: String,
        headers: Vec<(&'static str, String)>,
    },
    /// A whole JSON body (non-streamed call).
    Json(String),
    /// Never answers until the client gives up (holds the connection open).
    Hang,
    /// Sends the SSE body up to `stall_at` bytes, then holds the connection open in silence.
    Stall { body: Vec<u8>, stall_at: usize },
    /// Sends `head`, then holds the stream open until the test opens `gate`, then sends
    /// `rest`: an answer whose end the test decides.
    Gated {
        head: Vec<u8>,
        rest: Vec<u8>,
        gate: Gate,
    },
    /// The SSE body in `pieces` pieces, `gap` apart: a turn that takes a while.
    Paced {
        body: Vec<u8>,
        pieces: usize,
        gap: Duration,
    },
}

/// A signal from the test to the mock server: `open` lets a `Reply::Gated` finish.
#[derive(Debug, Clone, Default)]
pub struct Gate(Arc<tokio::sync::Notify>);

impl Gate {
    pub fn open(&self) {
        self.0.notify_one();
    }

    async fn opened(&self) {
        self.0.notified().await;
    }
}

/// A recorded request.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub path: String,
    pub headers: HeaderMap,
    pub body: serde_json::Value,
}

#[derive(Default)]
struct Script {
    replies: VecDeque<Reply>,
    /// What to answer once the queue is empty.
    fallback: Option<Reply>,
    requests: Vec<Recorded>,
    /// Bodies are not kept (a long soak would hold every growing history).
    forget_bodies: bool,
}

/// The script and the signal given after each request is recorded (for `wait_for_requests`).
#[derive(Default)]
struct Shared {
    script: Mutex<Script>,
    recorded: Condvar,
}

/// A running mock server; it stops when dropped with the test's runtime.
#[derive(Clone)]
pub struct MockLlm {
    pub base_url: String,
    shared: Arc<Shared>,
}

impl MockLlm {
    pub async fn start() -> MockLlm {
        let shared = Arc::new(Shared::default());
        let app = Router::new()
            .fallback(answer)
            // A long conversation's request is larger than axum's 2 MB default.
            .layer(axum::extract::DefaultBodyLimit::disable())
            .with_state(Arc::clone(&shared));
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind loopback");
        let addr = listener.local_addr().expect("local addr");
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        MockLlm {
            base_url: format!("http://{addr}"),
            shared,
        }
    }

    /// Starts the server on a runtime of its own thread, for tests that are not async (the
    /// real binary run as a child process).
    pub fn start_in_background() -> MockLlm {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("runtime");
            runtime.block_on(async move {
                let mock = MockLlm::start().await;
                tx.send(mock).expect("hand over the mock");
                std::future::pending::<()>().await;
            });
        });
        rx.recv().expect("mock started")
    }

    pub fn push(&self, reply: Reply) -> &Self {
        self.shared.script.lock().unwrap().replies.push_back(reply);
        self
    }

    pub fn set_fallback(&self, reply: Reply) {
        self.shared.script.lock().unwrap().fallback = Some(reply);
    }

    /// Stops keeping request bodies (their paths and headers still are); the soak bench's.
    #[allow(dead_code)]
    pub fn forget_bodies(&self) {
        self.shared.script.lock().unwrap().forget_bodies = true;
    }

    pub fn requests(&self) -> Vec<Recorded> {
        self.shared.script.lock().unwrap().requests.clone()
    }

    /// Waits until at least `count` requests have been recorded (sleeping between them, never
    /// spinning); returns them.
    pub fn wait_for_requests(&self, count: usize) -> Vec<Recorded> {
        let script = self.shared.script.lock().unwrap();
        let (script, _) = self
            .shared
            .recorded
            .wait_timeout_while(script, PATIENCE, |script| script.requests.len() < count)
            .unwrap();
        assert!(
            script.requests.len() >= count,
            "timed out waiting for {count} requests; {} arrived",
            script.requests.len()
        );
        script.requests.clone()
    }

    /// The OpenAI-style base URL (`/v1`) for this server.
    pub fn openai_base(&self) -> String {
        format!("{}/v1", self.base_url)
    }
}

/// With `HARNESS9_RECORD_REQUESTS=DIR` (as `.ci/run` sets it), every request body the suite
/// sends a mock is also written to `DIR`, for `tests/vendor/validate_requests.py` to check
/// against the vendors' own request types after the suite.
fn record_for_vendor_check(path: &str, body: &serde_json::Value) {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let Some(dir) = std::env::var_os("HARNESS9_RECORD_REQUESTS") else {
        return;
    };
    if body.is_null() {
        return;
    }
    let dir = std::path::PathBuf::from(dir);
    let _ = std::fs::create_dir_all(&dir);
    let name = format!(
        "{}-{}.json",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    );
    let record = serde_json::json!({"path": path, "body": body});
    let _ = std::fs::write(dir.join(name), record.to_string());
}

async fn answer(
    State(shared): State<Arc<Shared>>,
    uri: axum::http::Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let reply = {
        let mut script = shared.script.lock().unwrap();
        let body = if script.forget_bodies {
            serde_json::Value::Null
        } else {
            serde_json::from_slice(&body).unwrap_or(serde_json::Value::Null)
        };
        record_for_vendor_check(uri.path(), &body);
        script.requests.push(Recorded {
            path: uri.path().to_owned(),
            headers,
            body,
        });
        shared.recorded.notify_all();
        script
            .replies
            .pop_front()
            .or_else(|| script.fallback.clone())
    };
    match reply {
        None => plain(500, "the mock has no reply scripted for this request"),
        Some(Reply::Sse { body, split }) => sse(pieces(&body, split), false),
        Some(Reply::Cut { body, cut_at }) => {
            sse(vec![body[..cut_at.min(body.len())].to_vec()], true)
        }
        Some(Reply::Status {
            status,
            body,
            headers,
        }) => {
            let mut response = plain(status, &body);
            for (name, value) in headers {
                response
                    .headers_mut()
                    .insert(name, value.parse().expect("header value"));
            }
            response
        }
        Some(Reply::Json(body)) => Response::builder()
            .header("content-type", "application/json")
            .body(Body::from(body))
            .unwrap(),
        Some(Reply::Stall { body, stall_at }) => {
            let (tx, rx) = tokio::sync::mpsc::channel::<Result<Bytes, std::io::Error>>(1);
            let head = Bytes::from(body[..stall_at.min(body.len())].to_vec());
            tokio::spawn(async move {
                let _ = tx.send(Ok(head)).await;
                // Keep the sender (and so the connection) open until the client leaves.
                tx.closed().await;
            });
            Response::builder()
                .header("content-type", "text/event-stream")
                .body(Body::from_stream(tokio_stream_from(rx)))
                .unwrap()
        }
        Some(Reply::Gated { head, rest, gate }) => {
            let (tx, rx) = tokio::sync::mpsc::channel::<Result<Bytes, std::io::Error>>(1);
            tokio::spawn(async move {
                if tx.send(Ok(Bytes::from(head))).await.is_err() {
                    return;
                }
                gate.opened().await;
                let _ = tx.send(Ok(Bytes::from(rest))).await;
            });
            Response::builder()
                .header("content-type", "text/event-stream")
                .body(Body::from_stream(tokio_stream_from(rx)))
                .unwrap()
        }
        Some(Reply::Paced { body, pieces, gap }) => {
            let size = body.len().div_ceil(pieces.max(1));
            let chunks: Vec<Vec<u8>> = body.chunks(size.max(1)).map(<[u8]>::to_vec).collect();
            let (tx, rx) = tokio::sync::mpsc::channel::<Result<Bytes, std::io::Error>>(1);
            tokio::spawn(async move {
                for chunk in chunks {
                    if tx.send(Ok(Bytes::from(chunk))).await.is_err() {
                        return;
                    }
                    tokio::time::sleep(gap).await;
                }
            });
            Response::builder()
                .header("content-type", "text/event-stream")
                .body(Body::from_stream(tokio_stream_from(rx)))
                .unwrap()
        }
        Some(Reply::Hang) => {
            std::future::pending::<()>().await;
            unreachable!()
        }
    }
}

fn plain(status: u16, body: &str) -> Response {
    Response::builder()
        .status(StatusCode::from_u16(status).unwrap())
        .header("content-type", "application/json")
        .body(Body::from(body.to_owned()))
        .unwrap()
}

fn sse(pieces: Vec<Vec<u8>>, then_break: bool) -> Response {
    let stream = async_stream(pieces, then_break);
    Response::builder()
        .header("content-type", "text/event-stream")
        .header("cache-control", "no-cache")
        .body(Body::from_stream(stream))
        .unwrap()
}

fn async_stream(
    pieces: Vec<Vec<u8>>,
    then_break: bool,
) -> impl futures_util::Stream<Item = Result<Bytes, std::io::Error>> {
    let (tx, rx) = tokio::sync::mpsc::channel::<Result<Bytes, std::io::Error>>(4);
    tokio::spawn(async move {
        for piece in pieces {
            if tx.send(Ok(Bytes::from(piece))).await.is_err() {
                return;
            }
            // Give the connection a chance to flush each piece on its own.
            tokio::task::yield_now().await;
        }
        if then_break {
            let _ = tx
                .send(Err(std::io::Error::other("connection cut by the test")))
                .await;
        }
    });
    tokio_stream_from(rx)
}

fn tokio_stream_from<T: Send + 'static>(
    mut rx: tokio::sync::mpsc::Receiver<T>,
) -> impl futures_util::Stream<Item = T> {
    futures_util::stream::poll_fn(move |cx| rx.poll_recv(cx))
}

/// Cuts `body` into pieces as `split` says.
pub fn pieces(body: &[u8], split: Split) -> Vec<Vec<u8>> {
    match split {
        Split::Whole => vec![body.to_vec()],
        Split::Every(n) => body.chunks(n.max(1)).map(<[u8]>::to_vec).collect(),
        Split::Random(seed) => {
            let mut rng = fastrand::Rng::with_seed(seed);
            let mut out = Vec::new();
            let mut rest = body;
            while !rest.is_empty() {
                let n = rng.usize(1..=64).min(rest.len());
                out.push(rest[..n].to_vec());
                rest = &rest[n..];
            }
            out
        }
    }
}

/// Queues an eval task's recorded trajectory (`recorded.json`: each step one model answer, a
/// tool call or text); returns how many tool calls it holds.
pub fn replay_recorded(mock: &MockLlm, task: &std::path::Path) -> usize {
    let text = std::fs::read_to_string(task.join("recorded.json")).expect("recorded.json");
    let steps: Vec<serde_json::Value> = serde_json::from_str(&text).expect("a trajectory");
    let mut tools = 0;
    for (i, step) in steps.iter().enumerate() {
        let body = match step.get("tool") {
            Some(name) => {
                tools += 1;
                openai_tool_sse(
                    &format!("call_{i}"),
                    name.as_str().unwrap_or_default(),
                    &step["arguments"].to_string(),
                )
            }
            None => openai_text_sse(step["text"].as_str().unwrap_or_default()),
        };
        mock.push(Reply::Sse {
            body,
            split: Split::Whole,
        });
    }
    tools
}

pub fn fixture(name: &str) -> Vec<u8> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("fixture {}: {e}", path.display()))
}

/// A short duration for tests that must bound a wait (never used to wait for an outcome).
pub const PATIENCE: Duration = Duration::from_secs(20);

/// Server-sent events for an OpenAI stream that says `text` and stops.
pub fn openai_text_sse(text: &str) -> Vec<u8> {
    let chunk = |delta: serde_json::Value, finish: Option<&str>| {
        serde_json::json!({
            "id": "chatcmpl-test", "object": "chat.completion.chunk", "created": 1, "model": "gpt-4o",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        })
    };
    let mut out = String::new();
    out.push_str(&format!(
        "data: {}\n\n",
        chunk(
            serde_json::json!({"role": "assistant", "content": ""}),
            None
        )
    ));
    out.push_str(&format!(
        "data: {}\n\n",
        chunk(serde_json::json!({"content": text}), None)
    ));
    out.push_str(&format!(
        "data: {}\n\n",
        chunk(serde_json::json!({}), Some("stop"))
    ));
    out.push_str("data: {\"id\":\"chatcmpl-test\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-4o\",\"choices\":[],\"usage\":{\"prompt_tokens\":20,\"completion_tokens\":5,\"total_tokens\":25}}\n\n");
    out.push_str("data: [DONE]\n\n");
    out.into_bytes()
}

/// One OpenAI stream chunk that adds `text` to the answer.
pub fn openai_text_chunk(text: &str) -> Vec<u8> {
    let chunk = serde_json::json!({
        "id": "chatcmpl-test", "object": "chat.completion.chunk", "created": 1, "model": "gpt-4o",
        "choices": [{"index": 0, "delta": {"content": text}, "finish_reason": null}],
    });
    format!("data: {chunk}\n\n").into_bytes()
}

/// Server-sent events for an OpenAI stream that calls one tool.
pub fn openai_tool_sse(id: &str, name: &str, arguments: &str) -> Vec<u8> {
    let chunk = |delta: serde_json::Value, finish: Option<&str>| {
        serde_json::json!({
            "id": "chatcmpl-test", "object": "chat.completion.chunk", "created": 1, "model": "gpt-4o",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        })
    };
    let call = serde_json::json!({"tool_calls": [{"index": 0, "id": id, "type": "function",
        "function": {"name": name, "arguments": arguments}}]});
    let mut out = String::new();
    out.push_str(&format!("data: {}\n\n", chunk(call, None)));
    out.push_str(&format!(
        "data: {}\n\n",
        chunk(serde_json::json!({}), Some("tool_calls"))
    ));
    out.push_str("data: [DONE]\n\n");
    out.into_bytes()
}

/// A whole (non-streamed) OpenAI completion that says `text`.
pub fn openai_text_json(text: &str) -> String {
    serde_json::json!({
        "id": "chatcmpl-test", "object": "chat.completion", "created": 1, "model": "gpt-4o",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 20, "completion_tokens": 5, "total_tokens": 25},
    })
    .to_string()
}

/// git with the machine's configuration left out and a fixed author, as a test fixture.
pub fn git(dir: &std::path::Path, args: &[&str]) {
    let out = std::process::Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Whether process `pid` has ended, or ends within 10 s: waited on as an event (its pidfd
/// turns readable), never by sleeping.
pub fn process_ended(pid: i32) -> bool {
    // SAFETY: plain syscalls on a descriptor this function owns and closes.
    unsafe {
        let fd = libc::syscall(libc::SYS_pidfd_open, pid, 0) as i32;
        if fd < 0 {
            return true;
        }
        let mut poll = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        // A signal (a child of this test process exiting: SIGCHLD) interrupts `poll`
        // whatever SA_RESTART says; ask again with the time left.
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        let ready = loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            let ready = libc::poll(&mut poll, 1, left.as_millis() as i32);
            if ready >= 0 || *libc::__errno_location() != libc::EINTR {
                break ready;
            }
        };
        libc::close(fd);
        ready == 1
    }
}
