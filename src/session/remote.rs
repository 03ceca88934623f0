//! A session core in another process (`harness9 serve`), reached over its HTTP API. `open`
//! gives the same `Opened` as `session::open`: requests become HTTP calls, the session's SSE
//! stream becomes updates, and the TUI drives it unchanged (`harness9 attach`). A stream that
//! breaks (the server dropped a watcher that fell behind, a network blip) is opened again with
//! `Last-Event-ID`, so nothing is missed. What the API does not offer (switching sessions,
//! renaming, `!` commands) is answered with a failure that says so.

use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::hub::Hub;
use super::{
    Closing, LoadedSession, Opened, Request, SessionFacts, SessionHandle, Unsaved, Update,
};
use crate::assemble::AssembleError;
use crate::engine::{ApprovalDecision, Event, Failure, FailureKind};
use crate::planning::{Mode, TodoItem};
use crate::provider::sse::SseFramer;
use crate::schema::{Message, ToolResult};

/// The file under `$HARNESS9_HOME` where `serve` keeps its token (`serve` writes it, `attach`
/// reads it).
pub const TOKEN_FILE: &str = "serve.token";

/// The token `attach` sends: `HARNESS9_SERVE_TOKEN`, else the file `serve` wrote.
pub fn read_token(env_token: Option<&str>, home: &std::path::Path) -> std::io::Result<String> {
    if let Some(token) = env_token {
        return Ok(token.to_owned());
    }
    let text = std::fs::read_to_string(home.join(TOKEN_FILE))?;
    Ok(text.trim().to_owned())
}

/// Reconnection attempts in a row before the stream is given up.
const RECONNECTS: u32 = 8;

#[derive(Clone)]
struct Api {
    base: String,
    token: String,
    http: reqwest::Client,
    session_id: String,
}

impl Api {
    /// The URL of this session's route `tail`, each part one path segment: what the server or
    /// the model chose (a session id, a tool call's id such as `../../OTHER/approvals/x`) is
    /// percent-encoded, so it can never name another route or another session.
    fn url(&self, tail: &[&str]) -> Result<reqwest::Url, Failure> {
        let bad = |e: String| Failure::new(FailureKind::Config, format!("{}: {e}", self.base));
        let mut url = reqwest::Url::parse(&self.base).map_err(|e| bad(e.to_string()))?;
        url.path_segments_mut()
            .map_err(|()| bad("not an http URL".into()))?
            .pop_if_empty()
            .extend(["sessions", self.session_id.as_str()])
            .extend(tail);
        Ok(url)
    }

    /// POSTs `body` to the session's route `tail`; the server's own message when it refuses.
    async fn post(&self, tail: &[&str], body: Value) -> Result<(), Failure> {
        let response = self
            .http
            .post(self.url(tail)?)
            .bearer_auth(&self.token)
            .json(&body)
            .send()
            .await
            .map_err(|e| Failure::new(FailureKind::Network, format!("the server: {e}")))?;
        if response.status().is_success() {
            return Ok(());
        }
        let status = response.status();
        let message = error_message(response).await;
        let kind = match status.as_u16() {
            401 | 403 => FailureKind::Auth,
            404 | 409 => FailureKind::NotFound,
            _ => FailureKind::Config,
        };
        Err(Failure::new(kind, message))
    }
}

async fn error_message(response: reqwest::Response) -> String {
    let status = response.status();
    let body: Value = response.json().await.unwrap_or(Value::Null);
    match body.get("error").and_then(Value::as_str) {
        Some(message) => message.to_owned(),
        None => format!("the server answered {status}"),
    }
}

/// Opens a session of the server at `url` (a new one, or `session`) and starts following it.
pub async fn open(url: &str, token: &str, session: Option<&str>) -> Result<Opened, AssembleError> {
    let base = url.trim_end_matches('/').to_owned();
    let http = reqwest::Client::builder()
        .connect_timeout(Duration::from_secs(10))
        .no_proxy()
        .build()
        .map_err(|e| AssembleError::Setup(format!("cannot make an HTTP client: {e}")))?;
    let body = match session {
        Some(id) => json!({ "resume": id }),
        None => json!({}),
    };
    let response = http
        .post(format!("{base}/sessions"))
        .bearer_auth(token)
        .json(&body)
        .send()
        .await
        .map_err(|e| AssembleError::Setup(format!("cannot reach {base}: {e}")))?;
    let status = response.status();
    if !status.is_success() {
        let message = error_message(response).await;
        return Err(match status.as_u16() {
            404 | 400 => AssembleError::Session(message),
            401 => AssembleError::Setup(format!(
                "{base} refused the token ({message}); set HARNESS9_SERVE_TOKEN, or attach as \
                 the user who started serve"
            )),
            _ => AssembleError::Setup(message),
        });
    }
    let described: Value = response
        .json()
        .await
        .map_err(|e| AssembleError::Setup(format!("{base} answered something else: {e}")))?;
    let text = |key: &str| described[key].as_str().unwrap_or_default().to_owned();
    let api = Api {
        base,
        token: token.to_owned(),
        http,
        session_id: text("id"),
    };
    let messages = load_messages(&api).await?;
    let facts = SessionFacts {
        provider: text("provider"),
        model: text("model"),
        workdir: text("workdir"),
        context_window: described["context_window"].as_u64().unwrap_or(128_000),
        sandbox: text("sandbox"),
        web_search: Some(text("web_search"))
            .filter(|label| !label.is_empty())
            .unwrap_or_else(|| "web search: as the server decides".to_owned()),
        language_servers: Some(text("language_servers"))
            .filter(|label| !label.is_empty())
            .unwrap_or_else(|| "language servers: as the server decides".to_owned()),
        skills: Vec::new(),
        // The server's hooks run there; this front end lists none of them.
        hooks: Vec::new(),
        models: Vec::new(),
        worktree: described["worktree"].as_str().map(str::to_owned),
    };
    let notices = described["notices"]
        .as_array()
        .map(|list| list.iter().filter_map(Value::as_str).map(str::to_owned))
        .into_iter()
        .flatten()
        .collect();
    let loaded = LoadedSession {
        session_id: api.session_id.clone(),
        name: None,
        mode: Mode::parse(&text("mode")).unwrap_or_default(),
        messages,
        // A served session's children are the server's.
        child_sessions: Vec::new(),
        todos: Vec::new(),
        queue: Vec::new(),
        problems: Vec::new(),
        notices: Vec::new(),
    };
    let hub = Arc::new(Hub::default());
    let updates = hub.subscribe();
    let (tx, rx) = mpsc::unbounded_channel();
    let handle = SessionHandle {
        requests: tx,
        hub: Arc::downgrade(&hub),
    };
    let stop = CancellationToken::new();
    tokio::spawn(follow(api.clone(), Arc::clone(&hub), stop.clone()));
    let workdir = facts.workdir.clone();
    tokio::spawn(serve_requests(api, hub, rx, stop, workdir));
    Ok(Opened {
        handle,
        updates,
        facts,
        loaded,
        notices,
        // The server's MCP servers run there; this front end manages none.
        mcp: crate::mcp::McpManager::empty(),
        pending_mcp: Vec::new(),
    })
}

async fn load_messages(api: &Api) -> Result<Vec<Message>, AssembleError> {
    let response = api
        .http
        .get(
            api.url(&["messages"])
                .map_err(|f| AssembleError::Setup(f.message))?,
        )
        .bearer_auth(&api.token)
        .send()
        .await
        .map_err(|e| AssembleError::Setup(format!("cannot read the transcript: {e}")))?;
    if !response.status().is_success() {
        return Err(AssembleError::Setup(error_message(response).await));
    }
    response
        .json()
        .await
        .map_err(|e| AssembleError::Setup(format!("the transcript does not parse: {e}")))
}

/// Carries the front end's requests to the server until it closes the session here;
/// `workdir` is the session's on the server.
async fn serve_requests(
    api: Api,
    hub: Arc<Hub>,
    mut requests: mpsc::UnboundedReceiver<Request>,
    stop: CancellationToken,
    workdir: String,
) {
    while let Some(request) = requests.recv().await {
        let sent = match request {
            Request::Submit(text) => api.post(&["prompt"], json!({ "text": text })).await,
            Request::Interrupt => api.post(&["interrupt"], json!({})).await,
            Request::SetMode(mode) => api.post(&["mode"], json!({"mode": mode.as_str()})).await,
            // Sent before the prompt that starts the plan: requests go in order.
            Request::SetAutoContinue(on) => api.post(&["auto_continue"], json!({ "on": on })).await,
            Request::AnswerApproval { id, decision } => answer(&api, &id, decision).await,
            Request::Close { .. } => break,
            Request::ListFiles { generation } => {
                hub.publish(Update::Files {
                    generation,
                    files: Arc::new(Vec::new()),
                });
                Ok(())
            }
            Request::RunShell { id, .. } => {
                hub.publish(Update::ShellDone {
                    id,
                    result: ToolResult {
                        tool_call_id: String::new(),
                        output: "`!` commands are not available through attach".into(),
                        is_error: true,
                    },
                    duration: Duration::ZERO,
                });
                Ok(())
            }
            Request::NewSession => Err(unavailable_failure("a new session")),
            Request::Resume(_) | Request::ListSessions { .. } => {
                Err(unavailable_failure("switching sessions"))
            }
            Request::ReadSession { session_id } => {
                // The answer closes the view that waits for it.
                hub.publish(Update::SessionRead {
                    session_id,
                    messages: Err(unavailable_failure("a sub-agent's transcript")),
                });
                Ok(())
            }
            Request::Rename(_) => Err(unavailable_failure("renaming")),
            Request::Worktrees(_) => Err(unavailable_failure("managing worktrees")),
            Request::Compact => Err(unavailable_failure("compacting")),
            Request::SetModel(_) => Err(unavailable_failure("switching models")),
            Request::ListMemories { .. } | Request::ChangeMemory { .. } => {
                Err(unavailable_failure("the memories"))
            }
            Request::McpReconnect(_)
            | Request::McpDisable(_)
            | Request::McpPrompt { .. }
            | Request::McpLogin(_)
            | Request::McpLogout(_) => Err(unavailable_failure("managing MCP servers")),
            // `serve` declines servers' forms itself; none is ever shown here to answer.
            Request::AnswerElicitation { .. } => Err(unavailable_failure("answering MCP forms")),
            // The HTTP API has no route for checkpoints (CONTRACT "HTTP API").
            Request::ListJobs | Request::Job { .. } => Err(unavailable_failure("/ps")),
            // A server never widens its rules from a client (issue 29 point 4).
            Request::ConfirmRules => Err(unavailable_failure("confirming rules")),
            // The image would be kept where this front end runs, out of the server's reach.
            Request::PasteImage => Err(unavailable_failure("pasting an image")),
            Request::ListPrompts | Request::Restore { .. } => {
                Err(unavailable_failure("undoing or rewinding"))
            }
            // The file is the user's, written where this front end runs (the session's
            // directory when it is on this machine too).
            Request::Export {
                file,
                markdown,
                overwrite,
            } => {
                let workdir = std::path::PathBuf::from(&workdir);
                super::export::start(Arc::clone(&hub), workdir, file, markdown, overwrite);
                Ok(())
            }
            // Kept by this front end itself; the server needs none of them.
            Request::SetQueue(_) | Request::ClearTodos => Ok(()),
        };
        if let Err(failure) = sent {
            hub.publish(Update::Failed(failure));
        }
    }
    stop.cancel();
    // The session goes on in the server; here it has ended.
    hub.publish(Update::Closed(Arc::new(Closing {
        session_id: api.session_id.clone(),
        kept: true,
        unsaved: Unsaved::default(),
        flush_error: None,
    })));
}

fn unavailable_failure(what: &str) -> Failure {
    Failure::new(
        FailureKind::Config,
        format!("{what} is not available through attach: start harness9 attach again"),
    )
}

async fn answer(api: &Api, id: &str, decision: ApprovalDecision) -> Result<(), Failure> {
    let body = match decision {
        ApprovalDecision::AllowOnce | ApprovalDecision::AllowRule => json!({"decision": "once"}),
        ApprovalDecision::AllowAlways => json!({"decision": "session"}),
        ApprovalDecision::Deny { reason } => json!({"decision": "deny", "reason": reason}),
        ApprovalDecision::NoApprover | ApprovalDecision::Interrupted => {
            json!({"decision": "deny"})
        }
    };
    api.post(&["approvals", id], body).await
}

/// Follows the session's event stream, reconnecting with `Last-Event-ID`, until the session
/// closes, the front end leaves, or the server cannot be reached.
async fn follow(api: Api, hub: Arc<Hub>, stop: CancellationToken) {
    let mut last_id: Option<u64> = None;
    let mut failures = 0;
    loop {
        let outcome = tokio::select! {
            outcome = read_stream(&api, &hub, &mut last_id) => outcome,
            _ = stop.cancelled() => return,
        };
        match outcome {
            StreamEnd::Closed => {
                stop.cancel();
                return;
            }
            StreamEnd::Broken { progressed } => {
                failures = if progressed { 1 } else { failures + 1 };
                if failures > RECONNECTS {
                    hub.publish(Update::Failed(Failure::new(
                        FailureKind::Network,
                        format!("lost the connection to {}", api.base),
                    )));
                    return;
                }
                let wait = Duration::from_millis(100 << failures.min(5));
                tokio::select! {
                    _ = tokio::time::sleep(wait) => {}
                    _ = stop.cancelled() => return,
                }
            }
        }
    }
}

enum StreamEnd {
    /// The server said the session closed.
    Closed,
    /// The stream ended or broke; `progressed` when it delivered something first.
    Broken { progressed: bool },
}

async fn read_stream(api: &Api, hub: &Arc<Hub>, last_id: &mut Option<u64>) -> StreamEnd {
    let Ok(url) = api.url(&["events"]) else {
        return StreamEnd::Broken { progressed: false };
    };
    let mut request = api.http.get(url).bearer_auth(&api.token);
    if let Some(id) = last_id {
        request = request.header("Last-Event-ID", id.to_string());
    }
    let response = match request.send().await {
        Ok(response) if response.status().is_success() => response,
        _ => return StreamEnd::Broken { progressed: false },
    };
    let mut progressed = false;
    let mut framer = SseFramer::new(1 << 20, 64 << 20);
    let mut events = Vec::new();
    let mut body = response.bytes_stream();
    while let Some(chunk) = body.next().await {
        let Ok(chunk) = chunk else { break };
        if framer.push(&chunk, &mut events).is_err() {
            break;
        }
        for sse in events.drain(..) {
            let Ok(value) = serde_json::from_str::<Value>(&sse.data) else {
                continue;
            };
            if let Some(id) = value.get("id").and_then(Value::as_u64) {
                *last_id = Some(id);
            }
            progressed = true;
            if deliver(api, hub, &value) {
                return StreamEnd::Closed;
            }
        }
    }
    StreamEnd::Broken { progressed }
}

/// Publishes the update one event of the stream stands for; `true` for the session's end.
fn deliver(api: &Api, hub: &Arc<Hub>, value: &Value) -> bool {
    let data = &value["data"];
    match value["type"].as_str() {
        Some("todos") => {
            let todos: Vec<TodoItem> = serde_json::from_value(data.clone()).unwrap_or_default();
            hub.publish(Update::Todos(todos));
        }
        Some("renamed") => {
            if let Some(name) = data["name"].as_str() {
                hub.publish(Update::Renamed(name.to_owned()));
            }
        }
        Some("closed") => {
            hub.publish(Update::Closed(Arc::new(Closing {
                session_id: api.session_id.clone(),
                kept: data["kept"].as_bool().unwrap_or(true),
                unsaved: Unsaved::default(),
                flush_error: None,
            })));
            return true;
        }
        // The queue is this front end's own; a prompt started by another client is seen by
        // its events.
        Some("queue" | "run_started") => {}
        _ => {
            if let Some((event, answer)) = Event::from_json(value) {
                if let Some(answer) = answer {
                    // The front end answers the request in place; the answer goes to the server.
                    let api = api.clone();
                    let hub = Arc::clone(hub);
                    let id = match &event.kind {
                        crate::engine::EventKind::ApprovalRequired(r) => r.id.clone(),
                        _ => String::new(),
                    };
                    tokio::spawn(async move {
                        if let Ok(decision) = answer.await
                            && let Err(failure) = self::answer(&api, &id, decision).await
                        {
                            hub.publish(Update::Failed(failure));
                        }
                    });
                }
                hub.publish(Update::Engine(event));
            }
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn api(base: &str, session_id: &str) -> Api {
        Api {
            base: base.into(),
            token: String::new(),
            http: reqwest::Client::new(),
            session_id: session_id.into(),
        }
    }

    #[test]
    fn a_hostile_approval_id_stays_one_path_segment_of_this_session() {
        // A model picks its tool calls' ids; the user's answer must not be carried to another
        // session's approval (or another route) by dot segments, slashes or a query.
        let api = api("http://127.0.0.1:7979/", "mine");
        for id in [
            "../../theirs/approvals/call_2",
            "x/../../../mode",
            "a?b#c",
            "%2e%2e",
        ] {
            let url = api.url(&["approvals", id]).unwrap();
            let segments: Vec<&str> = url.path_segments().unwrap().collect();
            assert_eq!(segments.len(), 4, "{url}");
            assert_eq!(&segments[..3], ["sessions", "mine", "approvals"], "{url}");
            assert_eq!(url.query(), None, "{url}");
            assert_eq!(url.fragment(), None, "{url}");
        }
        let url = api.url(&["approvals", "call_1"]).unwrap();
        assert_eq!(
            url.as_str(),
            "http://127.0.0.1:7979/sessions/mine/approvals/call_1"
        );
    }
}
