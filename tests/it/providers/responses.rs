//! OpenAI's Responses API against the mock server: text and usage with cached tokens, reasoning
//! summaries shown as thinking and the encrypted reasoning replayed on the next request,
//! parallel calls with arguments split across deltas, and the faults (a `response.failed`, a
//! cut stream, an in-band `error`).

use harness9::provider::ProviderKind;
use harness9::schema::{
    Message, ProviderErrorKind, StreamChunk, ThinkingBlock, ToolCall, ToolResult, Usage,
};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::{done, provider, stream, text_of, tools};
use crate::support::{MockLlm, Reply, Split, fixture};

const ENCRYPTED: &str = "gAAAAABoofDCx3Q2v9_encrypted-reasoning-blob_Zk1pQ0FfX2xvb2tzX2xpa2VfYmFzZTY0X2J1dF9pc19vcGFxdWU=";
const SUMMARY: &str = "**Inspecting the project**\n\nI should list the files and read the main module\n\n**Planning the reads**\n\nBoth calls can run at once.";

fn expected_tool_turn() -> Message {
    let mut message = Message::assistant("I'll look at the files first.");
    message.thinking = vec![ThinkingBlock::Encrypted {
        summary: SUMMARY.into(),
        encrypted_content: ENCRYPTED.into(),
    }];
    message.tool_calls = vec![
        ToolCall {
            id: "call_Kq3vZ8bW1xYt0pLm2nRs4uVw".into(),
            name: "bash".into(),
            arguments: r#"{"command":"ls -la"}"#.into(),
        },
        ToolCall {
            id: "call_P9sT2dFh6jK1lQw3eRt5yUi7".into(),
            name: "read_file".into(),
            arguments: r#"{"path":"src/main.rs"}"#.into(),
        },
    ];
    message
}

fn failed(code: &str) -> Vec<u8> {
    let body = json!({"type": "response.failed", "sequence_number": 1, "response": {
        "id": "resp_x", "object": "response", "status": "failed", "output": [],
        "error": {"code": code, "message": "The server had an error processing your request."}}});
    format!("event: response.failed\ndata: {body}\n\n").into_bytes()
}

fn in_band_error(code: &str) -> Vec<u8> {
    let body = json!({"type": "error", "sequence_number": 2, "code": code,
        "message": "something went wrong", "param": null});
    format!("event: error\ndata: {body}\n\n").into_bytes()
}

#[tokio::test]
async fn reasoning_and_parallel_calls_decode_in_any_pieces_and_text_counts_cached_tokens() {
    let mock = MockLlm::start().await;
    for split in [
        Split::Whole,
        Split::Every(1),
        Split::Random(3),
        Split::Random(11),
    ] {
        mock.push(Reply::Sse {
            body: fixture("responses_reasoning_tools.sse"),
            split,
        });
        let provider = provider(ProviderKind::Responses, &mock);
        let chunks = stream(provider.as_ref(), &[Message::user("look")]).await;
        let completion = done(&chunks);
        assert_eq!(completion.message, expected_tool_turn(), "{split:?}");
        assert_eq!(text_of(&chunks, true), SUMMARY);
        assert_eq!(text_of(&chunks, false), "I'll look at the files first.");
        assert_eq!(
            completion.usage,
            Some(Usage {
                input_tokens: 5210 - 4096,
                output_tokens: 377,
                cache_read_tokens: 4096,
                cache_creation_tokens: 0,
            })
        );
    }
    mock.push(Reply::Sse {
        body: fixture("responses_text.sse"),
        split: Split::Random(5),
    });
    let provider = provider(ProviderKind::Responses, &mock);
    let completion = done(&stream(provider.as_ref(), &[Message::user("and?")]).await);
    assert_eq!(
        completion.message.content,
        "The project has one binary, `src/main.rs`, and a `Cargo.toml`."
    );
    assert_eq!(completion.usage.unwrap().cache_read_tokens, 5120);
    assert_eq!(completion.usage.unwrap().input_tokens, 760);
}

#[tokio::test]
async fn the_encrypted_reasoning_is_replayed_and_the_request_prefix_stays_the_same() {
    let mock = MockLlm::start().await;
    mock.push(Reply::Sse {
        body: fixture("responses_reasoning_tools.sse"),
        split: Split::Whole,
    });
    mock.push(Reply::Sse {
        body: fixture("responses_text.sse"),
        split: Split::Whole,
    });
    let provider = provider(ProviderKind::Responses, &mock);
    let mut history = vec![Message::system("You are harness9."), Message::user("look")];
    let first = done(&stream(provider.as_ref(), &history).await);
    history.push(first.message.clone());
    for call in &first.message.tool_calls {
        history.push(Message::tool_result(&ToolResult::ok(&call.id, "output")));
    }
    done(&stream(provider.as_ref(), &history).await);
    let requests = mock.requests();
    assert_eq!(requests.len(), 2);
    assert!(requests.iter().all(|r| r.path == "/v1/responses"));
    let body = &requests[1].body;
    assert_eq!(body["store"], false);
    assert_eq!(body["stream"], true);
    assert_eq!(body["instructions"], "You are harness9.");
    assert_eq!(body["include"], json!(["reasoning.encrypted_content"]));
    assert_eq!(
        body["tools"][0]["name"], "bash",
        "sorted, flat function tools"
    );
    let input = body["input"].as_array().unwrap();
    let kinds: Vec<&str> = input.iter().map(|i| i["type"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        [
            "message",
            "reasoning",
            "message",
            "function_call",
            "function_call",
            "function_call_output",
            "function_call_output"
        ]
    );
    assert_eq!(input[1]["encrypted_content"], ENCRYPTED);
    assert!(
        input[1].get("id").is_none(),
        "nothing is stored under the id"
    );
    assert_eq!(input[3]["call_id"], "call_Kq3vZ8bW1xYt0pLm2nRs4uVw");
    assert_eq!(input[5]["call_id"], "call_Kq3vZ8bW1xYt0pLm2nRs4uVw");
    // The second request starts with the first one's input, byte for byte, and keeps its key.
    let first_input = requests[0].body["input"].as_array().unwrap();
    assert_eq!(&input[..first_input.len()], first_input.as_slice());
    for key in ["instructions", "tools", "prompt_cache_key", "reasoning"] {
        assert_eq!(requests[0].body[key], body[key], "{key}");
    }
    assert!(
        body["prompt_cache_key"]
            .as_str()
            .is_some_and(|k| k.len() == 32)
    );
}

#[tokio::test]
async fn a_failed_response_is_retried_a_cut_is_retryable_and_a_bad_request_is_not() {
    let mock = MockLlm::start().await;
    mock.push(Reply::Sse {
        body: failed("server_error"),
        split: Split::Whole,
    });
    mock.push(Reply::Sse {
        body: in_band_error("rate_limit_exceeded"),
        split: Split::Whole,
    });
    let text = fixture("responses_text.sse");
    mock.push(Reply::Sse {
        body: text.clone(),
        split: Split::Random(2),
    });
    let provider = provider(ProviderKind::Responses, &mock);
    let chunks = stream(provider.as_ref(), &[Message::user("hi")]).await;
    let retries = chunks
        .iter()
        .filter(|c| matches!(c, StreamChunk::Retry(_)))
        .count();
    assert_eq!(retries, 2, "{chunks:?}");
    assert!(
        done(&chunks)
            .message
            .content
            .starts_with("The project has one binary")
    );
    // A stream cut after the answer began is a retryable cut: the engine restarts the turn.
    mock.push(Reply::Cut {
        body: text.clone(),
        cut_at: text.len() / 2,
    });
    let chunks = stream(provider.as_ref(), &[Message::user("hi")]).await;
    let Some(StreamChunk::Error(error)) = chunks.last() else {
        panic!("an error: {chunks:?}");
    };
    assert_eq!(error.kind, ProviderErrorKind::StreamCut);
    assert!(error.retryable);
    // A request the server refuses in-band is not retried: the error says what it was.
    mock.push(Reply::Sse {
        body: in_band_error("invalid_prompt"),
        split: Split::Whole,
    });
    let chunks = stream(provider.as_ref(), &[Message::user("hi")]).await;
    let Some(StreamChunk::Error(error)) = chunks.last() else {
        panic!("an error: {chunks:?}");
    };
    assert_eq!(error.kind, ProviderErrorKind::InvalidRequest);
    assert!(
        error.message.contains("invalid_prompt"),
        "{}",
        error.message
    );
}

#[tokio::test]
async fn a_whole_response_reads_like_the_stream() {
    let mock = MockLlm::start().await;
    mock.push(Reply::Json(
        String::from_utf8(fixture("responses_reasoning_tools.json")).unwrap(),
    ));
    let provider = provider(ProviderKind::Responses, &mock);
    let completion = provider
        .generate(
            &[Message::user("look")],
            &tools(),
            &CancellationToken::new(),
            &|_| {},
        )
        .await
        .unwrap();
    assert_eq!(completion.message, expected_tool_turn());
    assert_eq!(completion.usage.unwrap().cache_read_tokens, 4096);
    let body: &Value = &mock.requests()[0].body;
    assert_eq!(body["stream"], false);
}

/// Through the real binary: the encrypted reasoning is stored with the turn in sessions.db and
/// replayed when the session is continued by a later process.
#[test]
fn exec_stores_the_encrypted_reasoning_and_a_continued_session_replays_it() {
    let mock = MockLlm::start_in_background();
    mock.push(Reply::Sse {
        body: fixture("responses_reasoning_tools.sse"),
        split: Split::Random(9),
    });
    mock.push(Reply::Sse {
        body: fixture("responses_text.sse"),
        split: Split::Whole,
    });
    mock.push(Reply::Sse {
        body: fixture("responses_text.sse"),
        split: Split::Whole,
    });
    let run = crate::exec::Run::new();
    std::fs::create_dir_all(run.workdir.join("src")).unwrap();
    std::fs::write(run.workdir.join("src/main.rs"), "fn main() {}\n").unwrap();
    let first = run.exec(&mock, &["exec", "--provider", "responses", "look"]);
    assert_eq!(
        first.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
    assert!(String::from_utf8_lossy(&first.stdout).contains("The project has one binary"));
    let second = run.exec(
        &mock,
        &["exec", "--provider", "responses", "--continue", "and now?"],
    );
    assert_eq!(
        second.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&second.stderr)
    );
    let requests = mock.requests();
    assert_eq!(requests.len(), 3);
    assert!(requests.iter().all(|r| r.path == "/v1/responses"));
    let input = requests[2].body["input"].as_array().unwrap().clone();
    let replayed: Vec<&Value> = input.iter().filter(|i| i["type"] == "reasoning").collect();
    assert_eq!(replayed.len(), 1, "{input:?}");
    assert_eq!(replayed[0]["encrypted_content"], ENCRYPTED);
    assert_eq!(
        requests[0].body["prompt_cache_key"],
        requests[2].body["prompt_cache_key"]
    );
}
