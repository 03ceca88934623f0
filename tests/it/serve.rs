//! `harness9 serve`, the real binary, driven by a real HTTP client (reqwest) against a mock LLM
//! on 127.0.0.1: watchers, replay, approvals, the guards against browsers and strangers,
//! interrupt, mode, the transcript, and `attach` in a pseudo-terminal.

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::exec::Run;
use crate::serve_client::Server;
use crate::support::{Gate, MockLlm, Reply, Split, openai_text_sse, openai_tool_sse};

fn types(events: &[Value]) -> Vec<&str> {
    events.iter().map(|e| e["type"].as_str().unwrap()).collect()
}

fn ids(events: &[Value]) -> Vec<u64> {
    events.iter().map(|e| e["id"].as_u64().unwrap()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_watchers_see_the_same_events_and_a_reconnect_gets_what_it_missed() {
    let mock = MockLlm::start().await;
    mock.push(Reply::Sse {
        body: openai_text_sse("Hello from the served session."),
        split: Split::Random(7),
    });
    let server = Server::start(&mock, &[], &[]);
    let id = server.open(json!({})).await;
    let mut first = server.watch(&id, None).await;
    let mut second = server.watch(&id, None).await;
    server.prompt(&id, "say hello").await;
    let a = first.until("done").await;
    let b = second.until("done").await;
    assert_eq!(a, b, "both watchers see the same events in the same order");
    assert_eq!(types(&a).first(), Some(&"session_started"));
    assert!(ids(&a).windows(2).all(|w| w[0] < w[1]), "{:?}", ids(&a));
    let text: String = a
        .iter()
        .filter(|e| e["type"] == "action_delta")
        .map(|e| e["data"].as_str().unwrap())
        .collect();
    assert_eq!(text, "Hello from the served session.");
    // A watcher that saw only the first two events comes back for the rest.
    let seen = a[1]["id"].as_u64().unwrap();
    let mut late = server.watch(&id, Some(seen)).await;
    let missed = late.until("done").await;
    assert_eq!(missed, a[2..].to_vec());
    // The transcript route has the stored conversation.
    let (status, messages) = server
        .request("GET", &format!("/sessions/{id}/messages"), None)
        .await;
    assert_eq!(status, StatusCode::OK);
    let messages = messages.to_string();
    assert!(messages.contains("say hello") && messages.contains("Hello from the served session."));
    // And the list of sessions has it.
    let (status, list) = server.request("GET", "/sessions", None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(list[0]["id"], id.as_str(), "{list}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approval_answered_over_http_runs_the_call_and_a_second_answer_gets_409() {
    let mock = MockLlm::start().await;
    mock.push(Reply::Sse {
        body: openai_tool_sse("call_1", "bash", r#"{"command":"printf made > made.txt"}"#),
        split: Split::Whole,
    });
    mock.push(Reply::Sse {
        body: openai_text_sse("Made it."),
        split: Split::Whole,
    });
    let server = Server::start(&mock, &[], &[]);
    let id = server.open(json!({})).await;
    let mut watcher = server.watch(&id, None).await;
    server.prompt(&id, "make a file").await;
    let asked = watcher.until("approval_required").await;
    let approval = asked.last().unwrap().clone();
    assert_eq!(approval["data"]["tool_call"]["name"], "bash");
    // A watcher that connects while the approval waits sees it first.
    let mut newcomer = server.watch(&id, None).await;
    assert_eq!(newcomer.next().await, approval);
    let path = format!("/sessions/{id}/approvals/call_1");
    let (status, body) = server
        .request("POST", &path, Some(json!({"decision": "once"})))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, _) = server
        .request("POST", &path, Some(json!({"decision": "deny"})))
        .await;
    assert_eq!(status, StatusCode::CONFLICT, "the first answer won");
    let rest = watcher.until("done").await;
    let result = rest.iter().find(|e| e["type"] == "tool_result").unwrap();
    assert_eq!(result["data"]["is_error"], false, "{result}");
    assert_eq!(
        std::fs::read_to_string(server.run.workdir.join("made.txt")).unwrap(),
        "made"
    );
    // An approval that never existed is not found; a bad decision is a 400.
    let (status, _) = server
        .request(
            "POST",
            &format!("/sessions/{id}/approvals/nope"),
            Some(json!({"decision": "once"})),
        )
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, body) = server
        .request("POST", &path, Some(json!({"decision": "maybe"})))
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(body["error"].as_str().unwrap().contains("once"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn strangers_browsers_and_bad_requests_are_refused() {
    let mock = MockLlm::start().await;
    let server = Server::start(&mock, &[], &[]);
    let http = reqwest::Client::new();
    let url = |path: &str| format!("{}{path}", server.url);
    // No token, a wrong one, or one in the query string: 401.
    let status = |r: reqwest::Response| r.status();
    assert_eq!(
        status(http.get(url("/sessions")).send().await.unwrap()),
        401
    );
    let wrong = http
        .get(url("/sessions"))
        .bearer_auth("x")
        .send()
        .await
        .unwrap();
    assert_eq!(wrong.status(), 401);
    let query = format!(
        "/sessions?token={}&access_token={}",
        server.token, server.token
    );
    assert_eq!(status(http.get(url(&query)).send().await.unwrap()), 401);
    let cookie = http
        .get(url("/sessions"))
        .header("Cookie", format!("token={}", server.token))
        .send()
        .await
        .unwrap();
    assert_eq!(cookie.status(), 401);
    // /health needs none.
    let health: Value = http
        .get(url("/health"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(health["ok"], true);
    // A page in a browser: any Origin is refused, even with the token; no CORS, ever.
    let from_page = http
        .post(url("/sessions"))
        .bearer_auth(&server.token)
        .header("Origin", "http://127.0.0.1:3000")
        .send()
        .await
        .unwrap();
    assert_eq!(from_page.status(), 403);
    let preflight = http
        .request(reqwest::Method::OPTIONS, url("/sessions"))
        .header("Origin", "https://evil.example")
        .header("Access-Control-Request-Method", "POST")
        .send()
        .await
        .unwrap();
    assert_eq!(preflight.status(), 403);
    assert!(
        !preflight
            .headers()
            .keys()
            .any(|k| k.as_str().starts_with("access-control-")),
        "{:?}",
        preflight.headers()
    );
    // DNS rebinding: a page served under another name reaches 127.0.0.1 with its own Host.
    let rebound = http
        .get(url("/sessions"))
        .bearer_auth(&server.token)
        .header("Host", "attacker.example:7979")
        .send()
        .await
        .unwrap();
    assert_eq!(rebound.status(), 421);
    // Unknown sessions and routes: 404. Bad JSON or fields: 400 with a message.
    let (code, _) = server
        .request("POST", "/sessions/nope/prompt", Some(json!({"text": "hi"})))
        .await;
    assert_eq!(code, 404);
    let (code, _) = server.request("GET", "/sessions/nope/events", None).await;
    assert_eq!(code, 404);
    let (code, _) = server.request("GET", "/sessions/nope/messages", None).await;
    assert_eq!(code, 404);
    let (code, _) = server.request("GET", "/nowhere", None).await;
    assert_eq!(code, 404);
    let bad = http
        .post(url("/sessions"))
        .bearer_auth(&server.token)
        .body("{not json")
        .send()
        .await
        .unwrap();
    assert_eq!(bad.status(), 400);
    let message: Value = bad.json().await.unwrap();
    assert!(
        message["error"].as_str().unwrap().contains("JSON"),
        "{message}"
    );
    let (code, body) = server
        .request("POST", "/sessions", Some(json!({"mode": "fast"})))
        .await;
    assert_eq!(code, 400, "{body}");
    let id = server.open(json!({})).await;
    let (code, _) = server
        .request(
            "POST",
            &format!("/sessions/{id}/prompt"),
            Some(json!({"text": "  "})),
        )
        .await;
    assert_eq!(code, 400);
    let (code, _) = server
        .request(
            "POST",
            &format!("/sessions/{id}/prompt"),
            Some(json!({"txt": "hi"})),
        )
        .await;
    assert_eq!(code, 400);
    // yolo is not handed out by a server that was not started in it.
    let (code, _) = server
        .request("POST", "/sessions", Some(json!({"mode": "yolo"})))
        .await;
    assert_eq!(code, 403);
    let (code, _) = server
        .request(
            "POST",
            &format!("/sessions/{id}/mode"),
            Some(json!({"mode": "yolo"})),
        )
        .await;
    assert_eq!(code, 403);
    let (code, _) = server
        .request(
            "POST",
            "/sessions",
            Some(json!({"resume": "no-such-session"})),
        )
        .await;
    assert_eq!(code, 404);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn interrupt_stops_the_run_and_a_mode_switch_holds_from_the_next_run() {
    let mock = MockLlm::start().await;
    let gate = Gate::default();
    let body = openai_text_sse("never finished");
    mock.push(Reply::Gated {
        head: crate::support::openai_text_chunk("Working on"),
        rest: body,
        gate: gate.clone(),
    });
    mock.push(Reply::Sse {
        body: openai_text_sse("A plan."),
        split: Split::Whole,
    });
    let server = Server::start(&mock, &[], &[]);
    let id = server.open(json!({"mode": "auto-edit"})).await;
    let mut watcher = server.watch(&id, None).await;
    server.prompt(&id, "work").await;
    let started = watcher.until("action_delta").await;
    assert_eq!(started[0]["data"]["mode"], "auto-edit");
    let (code, _) = server
        .request("POST", &format!("/sessions/{id}/interrupt"), None)
        .await;
    assert_eq!(code, StatusCode::ACCEPTED);
    let ended = watcher.until("error").await;
    let error = ended.last().unwrap();
    assert_eq!(error["kind"], "interrupted", "{error}");
    let (code, body) = server
        .request(
            "POST",
            &format!("/sessions/{id}/mode"),
            Some(json!({"mode": "plan"})),
        )
        .await;
    assert_eq!(code, StatusCode::OK, "{body}");
    server.prompt(&id, "plan it").await;
    let next = watcher.until("done").await;
    let started = next
        .iter()
        .find(|e| e["type"] == "session_started")
        .unwrap();
    assert_eq!(started["data"]["mode"], "plan");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_token_never_reaches_a_command_and_a_public_address_needs_one() {
    let mock = MockLlm::start().await;
    mock.push(Reply::Sse {
        body: openai_tool_sse(
            "call_env",
            "bash",
            r#"{"command":"env; cat /proc/$PPID/environ | tr '\\0' '\\n'"}"#,
        ),
        split: Split::Whole,
    });
    mock.push(Reply::Sse {
        body: openai_text_sse("Looked."),
        split: Split::Whole,
    });
    let secret = "serve-token-that-must-stay-secret-1234";
    let server = Server::start(
        &mock,
        &["--mode", "yolo"],
        &[("HARNESS9_SERVE_TOKEN", secret)],
    );
    let id = server.open(json!({"mode": "yolo"})).await;
    let mut watcher = server.watch(&id, None).await;
    server.prompt(&id, "look around").await;
    let events = watcher.until("done").await;
    let result = events.iter().find(|e| e["type"] == "tool_result").unwrap();
    let output = result["data"]["output"].as_str().unwrap();
    assert!(output.contains("PATH="), "the command ran: {output}");
    assert!(!output.contains(secret), "{output}");
    drop(server);
    // Beyond loopback without a token of the user's own: refused, exit 2.
    let run = Run::new();
    let out = run
        .command(&mock, &["serve", "--listen", "0.0.0.0:0"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("HARNESS9_SERVE_TOKEN"));
}

/// A prompt sent while a run goes on is queued and runs next.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prompt_sent_during_a_run_is_queued_behind_it() {
    let mock = MockLlm::start().await;
    let gate = Gate::default();
    mock.push(Reply::Gated {
        head: crate::support::openai_text_chunk("First "),
        rest: openai_text_sse("answer."),
        gate: gate.clone(),
    });
    mock.push(Reply::Sse {
        body: openai_text_sse("Second answer."),
        split: Split::Whole,
    });
    let server = Server::start(&mock, &[], &[]);
    let id = server.open(json!({})).await;
    let mut watcher = server.watch(&id, None).await;
    server.prompt(&id, "one").await;
    watcher.until("action_delta").await;
    server.prompt(&id, "two").await;
    gate.open();
    watcher.until("done").await;
    let second = watcher.until("done").await;
    assert!(
        second
            .iter()
            .any(|e| e["type"] == "run_started" && e["data"]["prompt"] == "two")
    );
    assert!(
        second.iter().any(|e| e["data"] == "Second answer."),
        "{second:?}"
    );
}

/// `harness9 attach`: the TUI over a served session, typed into as a person would.
#[test]
fn attach_streams_a_prompt_and_runs_an_approved_call() {
    use crate::tui::{Pty, harness9, press_until};
    let mock = MockLlm::start_in_background();
    mock.push(Reply::Sse {
        body: openai_text_sse("Hello through the server."),
        split: Split::Random(3),
    });
    mock.push(Reply::Sse {
        body: openai_tool_sse(
            "call_a",
            "bash",
            r#"{"command":"echo attached-run && touch made"}"#,
        ),
        split: Split::Whole,
    });
    mock.push(Reply::Sse {
        body: openai_text_sse("It ran."),
        split: Split::Whole,
    });
    let server = Server::start(&mock, &[], &[]);
    let env = vec![
        ("HOME", server.run.home.display().to_string()),
        ("HARNESS9_HOME", server.run.home.display().to_string()),
        ("COLORFGBG", "15;0".into()),
    ];
    let mut pty = Pty::spawn(
        harness9(),
        &["attach", &server.url],
        &server.run.workdir,
        &env,
    );
    pty.wait_for("Ask harness9 to do something");
    pty.send("say hello\r");
    pty.wait_for_all(&["› say hello", "Hello through the server."]);
    pty.send("run it\r");
    pty.wait_for_all(&["Approve bash?", "$ echo attached-run"]);
    press_until(&mut pty, "y", "✓ bash");
    pty.wait_for_all(&["│ attached-run", "It ran."]);
    assert!(server.run.workdir.join("made").exists());
    // `/export` is written on attach's side (here the session's directory, on this machine).
    pty.send("/export attached.md\r");
    pty.wait_for("exported the transcript");
    let exported = std::fs::read_to_string(server.run.workdir.join("attached.md")).unwrap();
    assert!(exported.contains("Hello through the server."), "{exported}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_run_side_by_side_and_resuming_an_open_one_returns_it() {
    let mock = MockLlm::start().await;
    let gate = Gate::default();
    mock.push(Reply::Gated {
        head: crate::support::openai_text_chunk("Slow "),
        rest: openai_text_sse("one."),
        gate: gate.clone(),
    });
    mock.push(Reply::Sse {
        body: openai_text_sse("Quick one."),
        split: Split::Whole,
    });
    // `--trust` covers serve's own folder only.
    let server = Server::start(&mock, &["--trust"], &[]);
    let slow = server.open(json!({})).await;
    let quick = server.open(json!({})).await;
    assert_ne!(slow, quick);
    let mut slow_watcher = server.watch(&slow, None).await;
    let mut quick_watcher = server.watch(&quick, None).await;
    server.prompt(&slow, "take your time").await;
    slow_watcher.until("action_delta").await;
    // The second session answers while the first still waits on its model.
    server.prompt(&quick, "be quick").await;
    let events = quick_watcher.until("done").await;
    assert!(
        events.iter().any(|e| e["data"] == "Quick one."),
        "{events:?}"
    );
    assert!(
        !events.iter().any(|e| e["data"] == "Slow "),
        "each watcher sees its own session"
    );
    gate.open();
    slow_watcher.until("done").await;
    // Resuming a session that is open returns it, not a second core over the same session.
    let (code, again) = server
        .request("POST", "/sessions", Some(json!({"resume": slow})))
        .await;
    assert_eq!(code, StatusCode::CREATED);
    assert_eq!(again["id"], slow.as_str());
    // A folder other than serve's own follows folder trust (`--trust` is not for it): it is not
    // trusted, so its allow rules are ignored.
    let other = server.run.home.parent().unwrap().join("other");
    std::fs::create_dir_all(other.join(".harness9")).unwrap();
    std::fs::write(
        other.join(".harness9/settings.json"),
        r#"{"permissions": {"allow": ["bash(*)"]}}"#,
    )
    .unwrap();
    let (code, opened) = server
        .request("POST", "/sessions", Some(json!({"workdir": other})))
        .await;
    assert_eq!(code, StatusCode::CREATED, "{opened}");
    assert!(
        opened["notices"].to_string().contains("not trusted"),
        "{opened}"
    );
    let (code, _) = server
        .request(
            "POST",
            "/sessions",
            Some(json!({"workdir": "/no/such/dir"})),
        )
        .await;
    assert_eq!(code, StatusCode::BAD_REQUEST);
}
