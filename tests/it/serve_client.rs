//! A client of `harness9 serve` for the tests: the real binary as a child process, requests with
//! reqwest, and SSE watchers that check each frame's `id:` against its JSON.

use std::io::BufRead;
use std::process::{Child, Stdio};

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::exec::Run;
use crate::support::{MockLlm, PATIENCE};

/// A `harness9 serve` child process.
pub struct Server {
    child: Child,
    pub url: String,
    pub token: String,
    pub run: Run,
    http: reqwest::Client,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Server {
    pub fn start(mock: &MockLlm, args: &[&str], envs: &[(&str, &str)]) -> Server {
        let run = Run::new();
        let mut command = run.command(mock, &["serve", "--listen", "127.0.0.1:0"]);
        command
            .args(args)
            .stderr(Stdio::piped())
            .stdout(Stdio::null());
        for (key, value) in envs {
            command.env(key, value);
        }
        let mut child = command.spawn().expect("serve starts");
        let stderr = child.stderr.take().expect("stderr");
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                if let Some(url) = line.strip_prefix("harness9 serve: listening on ") {
                    let _ = tx.send(url.to_owned());
                }
            }
        });
        let url = rx
            .recv_timeout(PATIENCE)
            .expect("serve says where it listens");
        let token = envs
            .iter()
            .find(|(k, _)| *k == "HARNESS9_SERVE_TOKEN")
            .map(|(_, v)| (*v).to_owned())
            .unwrap_or_else(|| {
                std::fs::read_to_string(run.home.join("serve.token"))
                    .expect("the token file")
                    .trim()
                    .to_owned()
            });
        Server {
            child,
            url,
            token,
            run,
            http: reqwest::Client::new(),
        }
    }

    pub async fn request(
        &self,
        method: &str,
        path: &str,
        body: Option<Value>,
    ) -> (StatusCode, Value) {
        let method = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
        let mut request = self
            .http
            .request(method, format!("{}{path}", self.url))
            .bearer_auth(&self.token);
        if let Some(body) = body {
            request = request.json(&body);
        }
        let response = request.send().await.expect("serve answers");
        let status = response.status();
        let value = response.json().await.unwrap_or(Value::Null);
        (status, value)
    }

    pub async fn open(&self, body: Value) -> String {
        let (status, value) = self.request("POST", "/sessions", Some(body)).await;
        assert_eq!(status, StatusCode::CREATED, "{value}");
        value["id"].as_str().expect("an id").to_owned()
    }

    pub async fn prompt(&self, id: &str, text: &str) {
        let (status, value) = self
            .request(
                "POST",
                &format!("/sessions/{id}/prompt"),
                Some(json!({ "text": text })),
            )
            .await;
        assert_eq!(status, StatusCode::ACCEPTED, "{value}");
    }

    pub async fn watch(&self, id: &str, last_event_id: Option<u64>) -> Watcher {
        let mut request = self
            .http
            .get(format!("{}/sessions/{id}/events", self.url))
            .bearer_auth(&self.token);
        if let Some(last) = last_event_id {
            request = request.header("Last-Event-ID", last.to_string());
        }
        let response = request.send().await.expect("events");
        assert_eq!(response.status(), StatusCode::OK);
        assert_eq!(
            response.headers()["content-type"].to_str().unwrap(),
            "text/event-stream"
        );
        Watcher {
            response,
            buffer: Vec::new(),
        }
    }
}

/// One SSE watcher of a session.
pub struct Watcher {
    response: reqwest::Response,
    buffer: Vec<u8>,
}

impl Watcher {
    /// The next event (its JSON, with the SSE `id:` checked against the JSON's `id`).
    pub async fn next(&mut self) -> Value {
        loop {
            if let Some(end) = self.buffer.windows(2).position(|w| w == b"\n\n") {
                let frame: Vec<u8> = self.buffer.drain(..end + 2).collect();
                let text = String::from_utf8(frame).unwrap();
                if text.starts_with(':') {
                    continue;
                }
                let mut id = None;
                let mut data = None;
                for line in text.lines() {
                    if let Some(v) = line.strip_prefix("id: ") {
                        id = Some(v.parse::<u64>().unwrap());
                    } else if let Some(v) = line.strip_prefix("data: ") {
                        data = Some(serde_json::from_str::<Value>(v).unwrap());
                    }
                }
                let data = data.expect("a data line");
                assert_eq!(data["id"].as_u64(), id, "the SSE id is the event's id");
                return data;
            }
            let chunk = tokio::time::timeout(PATIENCE, self.response.chunk())
                .await
                .expect("an event in time")
                .expect("the stream reads")
                .expect("the stream goes on");
            self.buffer.extend_from_slice(&chunk);
        }
    }

    /// Events up to and including the first of type `until`.
    pub async fn until(&mut self, until: &str) -> Vec<Value> {
        let mut events = Vec::new();
        loop {
            let event = self.next().await;
            let done = event["type"] == until;
            events.push(event);
            if done {
                return events;
            }
        }
    }
}
