//! The protocol layer in process, over a pipe: what a broken, early, unknown, huge or vanishing
//! client gets. Sessions and prompt turns are driven through the real binary (tests/it/acp.rs).

use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, ReadHalf, WriteHalf};
use tokio::task::JoinHandle;
use tokio_util::compat::{TokioAsyncReadCompatExt, TokioAsyncWriteCompatExt};

use super::{AcpContext, AcpError, serve};

const PATIENCE: Duration = Duration::from_secs(20);

/// An editor on the other end of a pipe, writing and reading JSON-RPC lines.
struct Editor {
    writer: Option<WriteHalf<DuplexStream>>,
    lines: tokio::io::Lines<BufReader<ReadHalf<DuplexStream>>>,
    served: JoinHandle<Result<(), AcpError>>,
    _dir: tempfile::TempDir,
}

impl Editor {
    fn start() -> Editor {
        let dir = tempfile::tempdir().unwrap();
        let context = AcpContext {
            options: Default::default(),
            workdir: dir.path().to_path_buf(),
            home: dir.path().join("home"),
            secrets: Vec::new(),
        };
        let (editor_side, agent_side) = tokio::io::duplex(64 * 1024);
        let (agent_read, agent_write) = tokio::io::split(agent_side);
        let served = tokio::spawn(serve(
            context,
            agent_write.compat_write(),
            agent_read.compat(),
        ));
        let (editor_read, editor_write) = tokio::io::split(editor_side);
        Editor {
            writer: Some(editor_write),
            lines: BufReader::new(editor_read).lines(),
            served,
            _dir: dir,
        }
    }

    async fn send_line(&mut self, line: &str) {
        let writer = self.writer.as_mut().unwrap();
        writer.write_all(line.as_bytes()).await.unwrap();
        writer.write_all(b"\n").await.unwrap();
        writer.flush().await.unwrap();
    }

    async fn request(&mut self, id: u64, method: &str, params: Value) -> Value {
        let message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.send_line(&message.to_string()).await;
        self.answer(id).await
    }

    /// The answer to request `id` (notifications before it are passed over).
    async fn answer(&mut self, id: u64) -> Value {
        loop {
            let line = tokio::time::timeout(PATIENCE, self.lines.next_line())
                .await
                .expect("an answer in time")
                .unwrap()
                .expect("the agent is still there");
            let message: Value = serde_json::from_str(&line).unwrap();
            if message["id"] == json!(id)
                || (message["id"].is_null() && message.get("error").is_some())
            {
                return message;
            }
        }
    }

    async fn initialize(&mut self) {
        let answer = self
            .request(
                0,
                "initialize",
                json!({"protocolVersion": 1, "clientCapabilities": {}}),
            )
            .await;
        assert_eq!(answer["result"]["protocolVersion"], 1, "{answer}");
    }
}

#[tokio::test]
async fn malformed_json_is_a_parse_error_and_the_connection_goes_on() {
    let mut editor = Editor::start();
    editor
        .send_line("{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\":")
        .await;
    let answer = editor.answer(1).await;
    assert_eq!(answer["error"]["code"], -32700, "{answer}");
    assert!(answer["id"].is_null());
    editor.initialize().await;
}

#[tokio::test]
async fn a_request_before_initialize_is_refused_and_an_unknown_method_is_not_found() {
    let mut editor = Editor::start();
    let early = editor
        .request(1, "session/new", json!({"cwd": "/", "mcpServers": []}))
        .await;
    assert_eq!(early["error"]["code"], -32600, "{early}");
    assert!(
        early["error"]["data"].to_string().contains("initializ"),
        "{early}"
    );
    editor.initialize().await;
    let unknown = editor.request(2, "session/fly", json!({})).await;
    assert_eq!(unknown["error"]["code"], -32601, "{unknown}");
}

#[tokio::test]
async fn the_version_offered_is_at_most_ours_and_audio_is_refused() {
    let mut editor = Editor::start();
    let answer = editor
        .request(
            0,
            "initialize",
            json!({"protocolVersion": 7, "clientCapabilities": {}}),
        )
        .await;
    let result = &answer["result"];
    assert_eq!(result["protocolVersion"], 1, "{answer}");
    assert_eq!(result["agentCapabilities"]["loadSession"], true);
    let prompts = &result["agentCapabilities"]["promptCapabilities"];
    assert_eq!(prompts["image"], true);
    assert_eq!(prompts["embeddedContext"], true);
    assert_eq!(prompts["audio"], false);
    assert_eq!(result["agentInfo"]["name"], "harness9");
}

#[tokio::test]
async fn a_huge_message_is_read_whole_and_answered() {
    let mut editor = Editor::start();
    editor.initialize().await;
    // Eight megabytes of prompt in one line, for a session that does not exist.
    let text = "x".repeat(8 * 1024 * 1024);
    let answer = editor
        .request(
            1,
            "session/prompt",
            json!({"sessionId": "nope", "prompt": [{"type": "text", "text": text}]}),
        )
        .await;
    assert_eq!(
        answer["error"]["code"],
        -32002,
        "{}",
        &answer.to_string()[..200]
    );
    // And the connection still serves.
    let unknown = editor.request(2, "session/fly", json!({})).await;
    assert_eq!(unknown["error"]["code"], -32601);
}

#[tokio::test]
async fn a_client_that_disappears_ends_the_agent() {
    let mut editor = Editor::start();
    editor.initialize().await;
    let mut writer = editor.writer.take().unwrap();
    writer.shutdown().await.unwrap();
    let ended = tokio::time::timeout(PATIENCE, &mut editor.served)
        .await
        .expect("the agent ends when its client goes away")
        .unwrap();
    assert!(ended.is_ok(), "{ended:?}");
}
