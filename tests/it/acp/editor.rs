//! The editor's side of the tests: JSON-RPC lines written to `harness9 acp`'s stdin and read
//! from its stdout, the agent's own requests answered as the test says.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc;

use serde_json::{Value, json};

use crate::exec::Run;
use crate::support::{MockLlm, PATIENCE};

/// An editor at the other end of `harness9 acp`.
pub struct Editor {
    child: Child,
    stdin: Option<ChildStdin>,
    messages: mpsc::Receiver<Value>,
    next_id: u64,
}

impl Editor {
    pub fn start(run: &Run, mock: &MockLlm) -> Editor {
        let command = run.command(mock, &["acp"]);
        Editor::spawn(command)
    }

    pub fn spawn(mut command: std::process::Command) -> Editor {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("harness9 acp starts");
        let stdout = child.stdout.take().unwrap();
        let (tx, messages) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                // Nothing but protocol messages on stdout.
                let message: Value = serde_json::from_str(&line)
                    .unwrap_or_else(|e| panic!("not a JSON-RPC line ({e}): {line}"));
                if tx.send(message).is_err() {
                    break;
                }
            }
        });
        Editor {
            stdin: child.stdin.take(),
            child,
            messages,
            next_id: 0,
        }
    }

    fn send(&mut self, message: &Value) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
    }

    /// Sends a request; returns its id.
    pub fn request(&mut self, method: &str, params: Value) -> u64 {
        self.next_id += 1;
        let id = self.next_id;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        id
    }

    pub fn notify(&mut self, method: &str, params: Value) {
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    pub fn next(&mut self) -> Value {
        self.messages
            .recv_timeout(PATIENCE)
            .expect("a message from harness9 acp in time")
    }

    /// The answer to request `id`, with the notifications before it; the agent's own requests
    /// (`session/request_permission`) are answered with what `answer` gives.
    pub fn answer_to(
        &mut self,
        id: u64,
        mut answer: impl FnMut(&Value) -> Value,
    ) -> (Value, Vec<Value>) {
        let mut notifications = Vec::new();
        loop {
            let message = self.next();
            if message.get("method").is_some() && message.get("id").is_some() {
                let result = answer(&message);
                notifications.push(message.clone());
                self.send(&json!({"jsonrpc": "2.0", "id": message["id"], "result": result}));
            } else if message.get("method").is_some() {
                notifications.push(message);
            } else if message["id"] == json!(id) {
                return (message, notifications);
            }
        }
    }

    /// A request and its answer; the agent must not ask anything meanwhile.
    pub fn call(&mut self, method: &str, params: Value) -> (Value, Vec<Value>) {
        let id = self.request(method, params);
        self.answer_to(id, |asked| {
            panic!("unexpected request from the agent: {asked}")
        })
    }

    pub fn initialize(&mut self) -> Value {
        let (answer, _) = self.call(
            "initialize",
            json!({"protocolVersion": 1, "clientCapabilities": {}, "clientInfo": {"name": "test", "version": "1"}}),
        );
        answer
    }

    pub fn new_session(&mut self, run: &Run) -> String {
        let (answer, _) = self.call("session/new", json!({"cwd": run.workdir, "mcpServers": []}));
        answer["result"]["sessionId"]
            .as_str()
            .unwrap_or_else(|| panic!("no session: {answer}"))
            .to_owned()
    }

    pub fn prompt(&mut self, session: &str, text: &str) -> u64 {
        self.request(
            "session/prompt",
            json!({"sessionId": session, "prompt": [{"type": "text", "text": text}]}),
        )
    }

    /// Closes stdin (the editor goes away) and waits for the exit status.
    pub fn close(mut self) -> Option<i32> {
        drop(self.stdin.take());
        let until = std::time::Instant::now() + PATIENCE;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status.code();
            }
            assert!(
                std::time::Instant::now() < until,
                "harness9 acp did not exit"
            );
            // Waiting on a child's exit has no event to block on here but the exit itself.
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }
}

impl Drop for Editor {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The `session/update`s of kind `kind` among `notifications`.
pub fn updates<'a>(notifications: &'a [Value], kind: &str) -> Vec<&'a Value> {
    notifications
        .iter()
        .filter(|n| n["method"] == "session/update")
        .map(|n| &n["params"]["update"])
        .filter(|u| u["sessionUpdate"] == kind)
        .collect()
}

pub fn texts(notifications: &[Value], kind: &str) -> String {
    updates(notifications, kind)
        .iter()
        .filter_map(|u| u["content"]["text"].as_str())
        .collect()
}
