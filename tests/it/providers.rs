//! Both wire protocols against a real HTTP server on 127.0.0.1: streams delivered whole and in
//! awkward pieces, the exact request bodies, and every fault the issue names.

use std::sync::Arc;
use std::time::Duration;

use harness9::provider::{
    ApiKey, Completion, LlmProvider, ProviderConfig, ProviderKind, RetryPolicy, TransportOptions,
};
use harness9::schema::{
    Message, ProviderErrorKind, StreamChunk, ThinkingBlock, ToolCall, ToolDefinition, Usage,
};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::support::{MockLlm, PATIENCE, Reply, Split, fixture};

mod caching;
mod faults;
mod responses;
mod retries;
mod servers;
mod web_search;

const SECRET: &str = "sk-test-secret-0123456789";

fn provider(kind: ProviderKind, mock: &MockLlm) -> Arc<dyn LlmProvider> {
    provider_with_idle(kind, mock, Duration::from_secs(5))
}

fn provider_with_idle(kind: ProviderKind, mock: &MockLlm, idle: Duration) -> Arc<dyn LlmProvider> {
    let base = match kind {
        ProviderKind::OpenAi | ProviderKind::Responses => mock.openai_base(),
        ProviderKind::Anthropic => mock.base_url.clone(),
    };
    let mut config = ProviderConfig::new(kind, ApiKey::new(SECRET), base);
    config.transport = TransportOptions {
        connect_timeout: Duration::from_secs(5),
        idle_timeout: idle,
        retry: RetryPolicy {
            max_attempts: 4,
            base_delay: Duration::from_millis(5),
            max_delay: Duration::from_millis(20),
            max_retry_after: Duration::from_secs(2),
        },
    };
    config.build().expect("provider builds")
}

/// Every chunk of one streamed call, in order.
async fn stream(provider: &dyn LlmProvider, messages: &[Message]) -> Vec<StreamChunk> {
    let mut rx = provider.generate_stream(messages, &tools(), CancellationToken::new());
    let mut chunks = Vec::new();
    tokio::time::timeout(PATIENCE, async {
        while let Some(chunk) = rx.recv().await {
            chunks.push(chunk);
        }
    })
    .await
    .expect("the stream ends");
    let terminals = chunks.iter().filter(|c| c.is_terminal()).count();
    assert_eq!(terminals, 1, "exactly one Done or Error: {chunks:?}");
    assert!(
        chunks.last().unwrap().is_terminal(),
        "the terminal chunk is last"
    );
    chunks
}

fn done(chunks: &[StreamChunk]) -> Completion {
    match chunks.last() {
        Some(StreamChunk::Done { message, usage }) => Completion {
            message: message.clone(),
            usage: *usage,
            stop: chunks.iter().find_map(|chunk| match chunk {
                StreamChunk::Stopped(stop) => Some(*stop),
                _ => None,
            }),
        },
        other => panic!("expected Done, got {other:?}"),
    }
}

fn text_of(chunks: &[StreamChunk], thinking: bool) -> String {
    chunks
        .iter()
        .filter_map(|c| match (c, thinking) {
            (StreamChunk::TextDelta(t), false) | (StreamChunk::ThinkingDelta(t), true) => {
                Some(t.as_str())
            }
            _ => None,
        })
        .collect()
}

fn tools() -> Vec<ToolDefinition> {
    vec![
        ToolDefinition {
            name: "read_file".into(),
            description: "Read a file".into(),
            input_schema: json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}),
            provider_may_run: false,
        },
        ToolDefinition {
            name: "bash".into(),
            description: "Run a command".into(),
            input_schema: json!({"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}),
            provider_may_run: false,
        },
    ]
}

const THINKING: &str = "Quis ex amet mollit dolore incididunt ex aute velit labore qui nostrud cillum eiusmod in `parser()` magna! Officia cupidatat";
const ANSWER: &str = "The project has **two** modules:\n\n- `engine` runs the loop\n- `tui` draws it\n\n```rust\nfn main() {}\n```\n";
const SIGNATURE: &str = "mock-sig-1bb6c10f093e430927d81e41fcecf991626a8f356b5b06c41885a9977422c2f3";

fn expected_tool_turn(kind: ProviderKind) -> Message {
    let (ids, signature) = match kind {
        ProviderKind::OpenAi => (
            [
                "call_OBSmT0lKsanb0WTPxYXnySCn",
                "call_Zzcn4unxRfN7alK9vZ6aL8SL",
            ],
            "",
        ),
        ProviderKind::Anthropic => (
            [
                "toolu_01QV4CI8r5qsGVe6oIKdslXfnt",
                "toolu_01kOMZl5LmMNLQFrIIwSkgeE2l",
            ],
            SIGNATURE,
        ),
        ProviderKind::Responses => unreachable!("the Responses turn is in providers/responses.rs"),
    };
    let mut message = Message::assistant("Let me look at the project first.");
    message.thinking = vec![ThinkingBlock::Thinking {
        thinking: THINKING.into(),
        signature: signature.into(),
    }];
    message.tool_calls = vec![
        ToolCall {
            id: ids[0].into(),
            name: "bash".into(),
            arguments: r#"{"command": "ls -la src"}"#.into(),
        },
        ToolCall {
            id: ids[1].into(),
            name: "read_file".into(),
            arguments: r#"{"path": "README.md", "limit": 40}"#.into(),
        },
    ];
    message
}

fn fixture_names(kind: ProviderKind) -> (&'static str, &'static str, &'static str) {
    match kind {
        ProviderKind::OpenAi => (
            "openai_chat_thinking_tools.sse",
            "openai_chat_text.sse",
            "openai_chat_tools.json",
        ),
        ProviderKind::Anthropic => (
            "anthropic_thinking_tools.sse",
            "anthropic_text.sse",
            "anthropic_tools.json",
        ),
        ProviderKind::Responses => {
            unreachable!("the Responses fixtures are in providers/responses.rs")
        }
    }
}

const SPLITS: [Split; 5] = [
    Split::Whole,
    Split::Every(1),
    Split::Every(7),
    Split::Random(7),
    Split::Random(20261202),
];

async fn streams_fixtures_identically(kind: ProviderKind) {
    let (tools_fixture, text_fixture, _) = fixture_names(kind);
    let mock = MockLlm::start().await;
    let provider = provider(kind, &mock);
    let history = [Message::system("sys"), Message::user("look around")];
    for split in SPLITS {
        mock.push(Reply::Sse {
            body: fixture(tools_fixture),
            split,
        });
        let chunks = stream(provider.as_ref(), &history).await;
        let completion = done(&chunks);
        assert_eq!(
            completion.message,
            expected_tool_turn(kind),
            "split {split:?}"
        );
        assert_eq!(text_of(&chunks, false), "Let me look at the project first.");
        assert_eq!(text_of(&chunks, true), THINKING);

        mock.push(Reply::Sse {
            body: fixture(text_fixture),
            split,
        });
        let chunks = stream(provider.as_ref(), &history).await;
        let completion = done(&chunks);
        assert_eq!(
            completion.message,
            Message::assistant(ANSWER),
            "split {split:?}"
        );
        assert_eq!(text_of(&chunks, false), ANSWER);
    }
}

#[tokio::test]
async fn openai_streams_every_fixture_identically_however_it_is_split() {
    streams_fixtures_identically(ProviderKind::OpenAi).await;
}

#[tokio::test]
async fn anthropic_streams_every_fixture_identically_however_it_is_split() {
    streams_fixtures_identically(ProviderKind::Anthropic).await;
}

#[tokio::test]
async fn usage_is_reported_from_both_protocols() {
    let mock = MockLlm::start().await;
    for (kind, expected) in [
        (ProviderKind::OpenAi, (128, 71)),
        (ProviderKind::Anthropic, (108, 71)),
    ] {
        let (tools_fixture, _, _) = fixture_names(kind);
        mock.push(Reply::Sse {
            body: fixture(tools_fixture),
            split: Split::Whole,
        });
        let chunks = stream(provider(kind, &mock).as_ref(), &[Message::user("hi")]).await;
        let usage = done(&chunks).usage.expect("usage reported");
        assert_eq!((usage.input_tokens, usage.output_tokens), expected);
    }
}

#[tokio::test]
async fn blocking_generate_reads_whole_responses() {
    let mock = MockLlm::start().await;
    for kind in [ProviderKind::OpenAi, ProviderKind::Anthropic] {
        let (_, _, json_fixture) = fixture_names(kind);
        mock.push(Reply::Json(
            String::from_utf8(fixture(json_fixture)).unwrap(),
        ));
        let completion = provider(kind, &mock)
            .generate(
                &[Message::user("hi")],
                &tools(),
                &CancellationToken::new(),
                &|_| {},
            )
            .await
            .expect("generate succeeds");
        let expected = expected_tool_turn(kind);
        assert_eq!(completion.message.content, expected.content);
        assert_eq!(completion.message.thinking_text(), THINKING);
        let names: Vec<_> = completion
            .message
            .tool_calls
            .iter()
            .map(|c| c.name.as_str())
            .collect();
        assert_eq!(names, ["bash", "read_file"]);
        let args: serde_json::Value =
            serde_json::from_str(&completion.message.tool_calls[1].arguments).unwrap();
        assert_eq!(args, json!({"path": "README.md", "limit": 40}));
        assert!(completion.usage.unwrap().output_tokens == 71);
        let body = mock.requests().pop().unwrap().body;
        assert_ne!(
            body["stream"],
            json!(true),
            "a blocking call is not streamed"
        );
    }
}

/// system, user, assistant with two tool calls (and signed thinking), two tool results (one an
/// error): the history every provider must convert exactly.
fn four_message_history() -> Vec<Message> {
    let mut assistant = expected_tool_turn(ProviderKind::Anthropic);
    assistant.content = "Let me look.".into();
    let ok = harness9::schema::ToolResult::ok("toolu_01QV4CI8r5qsGVe6oIKdslXfnt", "src/main.rs");
    let err =
        harness9::schema::ToolResult::error("toolu_01kOMZl5LmMNLQFrIIwSkgeE2l", "no such file");
    vec![
        Message::system("You are harness9."),
        Message::user("What is in src?"),
        assistant,
        Message::tool_result(&ok),
        Message::tool_result(&err),
    ]
}

#[tokio::test]
async fn openai_request_body_matches_the_chat_completions_shape() {
    let mock = MockLlm::start().await;
    mock.push(Reply::Sse {
        body: fixture("openai_chat_text.sse"),
        split: Split::Whole,
    });
    stream(
        provider(ProviderKind::OpenAi, &mock).as_ref(),
        &four_message_history(),
    )
    .await;
    let request = mock.requests().pop().unwrap();
    assert_eq!(request.path, "/v1/chat/completions");
    assert_eq!(
        request.headers["authorization"].to_str().unwrap(),
        format!("Bearer {SECRET}")
    );
    let body = request.body;
    assert_eq!(body["model"], "gpt-4o");
    assert_eq!(body["stream"], true);
    assert_eq!(body["stream_options"], json!({"include_usage": true}));
    let messages = body["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 5);
    assert_eq!(
        messages[0],
        json!({"role": "system", "content": "You are harness9."})
    );
    assert_eq!(
        messages[1],
        json!({"role": "user", "content": "What is in src?"})
    );
    assert_eq!(messages[2]["role"], "assistant");
    assert_eq!(messages[2]["content"], "Let me look.");
    assert_eq!(
        messages[2]["tool_calls"][0],
        json!({"id": "toolu_01QV4CI8r5qsGVe6oIKdslXfnt", "type": "function",
               "function": {"name": "bash", "arguments": "{\"command\": \"ls -la src\"}"}})
    );
    assert_eq!(
        messages[2]["tool_calls"][1]["function"]["name"],
        "read_file"
    );
    assert!(
        messages[2].get("reasoning_content").is_none(),
        "reasoning is not sent back"
    );
    assert_eq!(
        messages[3],
        json!({"role": "tool", "tool_call_id": "toolu_01QV4CI8r5qsGVe6oIKdslXfnt", "content": "src/main.rs"})
    );
    assert_eq!(messages[4]["role"], "tool");
    assert_eq!(
        messages[4]["tool_call_id"],
        "toolu_01kOMZl5LmMNLQFrIIwSkgeE2l"
    );
    let tools = body["tools"].as_array().unwrap();
    let names: Vec<_> = tools
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["bash", "read_file"], "tools are sorted by name");
    assert_eq!(tools[0]["type"], "function");
    assert_eq!(
        tools[0]["function"]["parameters"]["required"],
        json!(["command"])
    );
    assert!(
        body.get("max_tokens").is_none(),
        "no limit unless one is configured"
    );
}

#[tokio::test]
async fn anthropic_request_body_matches_the_messages_shape() {
    let mock = MockLlm::start().await;
    mock.push(Reply::Sse {
        body: fixture("anthropic_text.sse"),
        split: Split::Whole,
    });
    stream(
        provider(ProviderKind::Anthropic, &mock).as_ref(),
        &four_message_history(),
    )
    .await;
    let request = mock.requests().pop().unwrap();
    assert_eq!(request.path, "/v1/messages");
    assert_eq!(request.headers["x-api-key"].to_str().unwrap(), SECRET);
    assert_eq!(
        request.headers["anthropic-version"].to_str().unwrap(),
        "2023-06-01"
    );
    let body = request.body;
    assert_eq!(body["model"], "claude-sonnet-4-20250514");
    assert_eq!(body["max_tokens"], 8192, "max_tokens is always sent");
    assert_eq!(body["stream"], true);
    assert_eq!(
        body["system"],
        json!([{"type": "text", "text": "You are harness9.", "cache_control": {"type": "ephemeral"}}])
    );
    let messages = body["messages"].as_array().unwrap();
    assert_eq!(
        messages.len(),
        3,
        "system lifted out, both results in one user message"
    );
    assert_eq!(
        messages[0],
        json!({"role": "user", "content": [{"type": "text", "text": "What is in src?"}]})
    );
    let assistant = messages[1]["content"].as_array().unwrap();
    assert_eq!(messages[1]["role"], "assistant");
    assert_eq!(
        assistant[0],
        json!({"type": "thinking", "thinking": THINKING, "signature": SIGNATURE})
    );
    assert_eq!(
        assistant[1],
        json!({"type": "text", "text": "Let me look."})
    );
    assert_eq!(
        assistant[2],
        json!({"type": "tool_use", "id": "toolu_01QV4CI8r5qsGVe6oIKdslXfnt", "name": "bash",
               "input": {"command": "ls -la src"}})
    );
    assert_eq!(
        assistant[3]["input"],
        json!({"path": "README.md", "limit": 40})
    );
    let results = messages[2]["content"].as_array().unwrap();
    assert_eq!(messages[2]["role"], "user");
    assert_eq!(
        results[0],
        json!({"type": "tool_result", "tool_use_id": "toolu_01QV4CI8r5qsGVe6oIKdslXfnt", "content": "src/main.rs"})
    );
    assert_eq!(
        results[1],
        json!({"type": "tool_result", "tool_use_id": "toolu_01kOMZl5LmMNLQFrIIwSkgeE2l",
               "content": "no such file", "is_error": true,
               "cache_control": {"type": "ephemeral"}}),
        "is_error kept; the latest block marked for caching"
    );
    let tools = body["tools"].as_array().unwrap();
    assert_eq!(tools[0]["name"], "bash");
    assert_eq!(tools[0]["input_schema"]["required"], json!(["command"]));
    assert!(tools[0].get("cache_control").is_none());
    assert_eq!(tools[1]["cache_control"], json!({"type": "ephemeral"}));
}

#[tokio::test]
async fn a_garbage_line_is_an_error_that_names_it() {
    let mock = MockLlm::start().await;
    mock.push(Reply::Sse {
        body: b"data: {\"choices\": [{\"delta\": {\"content\": \"Hi\"}}]}\n\ndata: {this is not json\n\n".to_vec(),
        split: Split::Whole,
    });
    let chunks = stream(
        provider(ProviderKind::OpenAi, &mock).as_ref(),
        &[Message::user("hi")],
    )
    .await;
    let StreamChunk::Error(error) = chunks.last().unwrap() else {
        unreachable!()
    };
    assert_eq!(error.kind, ProviderErrorKind::Protocol);
    assert!(
        error.message.contains("not valid JSON") && error.message.contains("{this is not json"),
        "{}",
        error.message
    );

    mock.push(Reply::Sse {
        body: b"event: content_block_delta\ndata: {\"type\": \"content_block_delta\", \"index\": 0, \"delta\": 5}\n\n".to_vec(),
        split: Split::Whole,
    });
    let chunks = stream(
        provider(ProviderKind::Anthropic, &mock).as_ref(),
        &[Message::user("hi")],
    )
    .await;
    let StreamChunk::Error(error) = chunks.last().unwrap() else {
        unreachable!()
    };
    assert_eq!(error.kind, ProviderErrorKind::Protocol);
}

#[tokio::test]
async fn anthropic_error_events_are_surfaced() {
    let mock = MockLlm::start().await;
    let mut body = fixture("anthropic_text.sse");
    let cut = String::from_utf8_lossy(&body)
        .find("event: content_block_stop")
        .unwrap();
    body.truncate(cut);
    body.extend_from_slice(b"event: error\ndata: {\"type\": \"error\", \"error\": {\"type\": \"overloaded_error\", \"message\": \"Overloaded\"}}\n\n");
    mock.push(Reply::Sse {
        body,
        split: Split::Whole,
    });
    let chunks = stream(
        provider(ProviderKind::Anthropic, &mock).as_ref(),
        &[Message::user("hi")],
    )
    .await;
    let StreamChunk::Error(error) = chunks.last().unwrap() else {
        unreachable!()
    };
    assert_eq!(error.kind, ProviderErrorKind::Overloaded);
    assert!(
        error.retryable,
        "output was already streamed, so the turn must restart"
    );
    assert!(error.message.contains("Overloaded"));
}

#[tokio::test]
async fn servers_that_send_the_call_id_once_and_no_index_still_accumulate() {
    let mock = MockLlm::start().await;
    let body = concat!(
        "data: {\"choices\":[{\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}\n\n",
        "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"id\":\"a1\",\"function\":{\"name\":\"bash\",\"arguments\":\"{\\\"command\\\":\"}}]}}]}\n\n",
        "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"function\":{\"arguments\":\"\\\"ls\\\"}\"}}]}}]}\n\n",
        "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"id\":\"b2\",\"function\":{\"name\":\"read_file\",\"arguments\":\"{}\"}}]}}]}\n\n",
        "data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n",
    );
    mock.push(Reply::Sse {
        body: body.as_bytes().to_vec(),
        split: Split::Every(5),
    });
    let chunks = stream(
        provider(ProviderKind::OpenAi, &mock).as_ref(),
        &[Message::user("hi")],
    )
    .await;
    let message = done(&chunks).message;
    assert_eq!(message.content, "", "empty content is no text");
    assert_eq!(message.tool_calls.len(), 2);
    assert_eq!(message.tool_calls[0].arguments, "{\"command\":\"ls\"}");
    assert_eq!(message.tool_calls[1].id, "b2");
}

#[tokio::test]
async fn cancellation_ends_a_hanging_call_promptly() {
    let mock = MockLlm::start().await;
    mock.push(Reply::Hang);
    let provider = provider(ProviderKind::OpenAi, &mock);
    let cancel = CancellationToken::new();
    let mut rx = provider.generate_stream(&[Message::user("hi")], &[], cancel.clone());
    cancel.cancel();
    let started = std::time::Instant::now();
    let last = tokio::time::timeout(PATIENCE, rx.recv()).await.unwrap();
    assert!(
        matches!(last, Some(StreamChunk::Error(ref e)) if e.kind == ProviderErrorKind::Cancelled)
    );
    assert!(started.elapsed() < Duration::from_millis(200));
}

#[test]
fn usage_counts_cached_tokens_in_the_prompt() {
    let usage = Usage {
        input_tokens: 10,
        output_tokens: 5,
        cache_read_tokens: 100,
        cache_creation_tokens: 7,
    };
    assert_eq!(usage.prompt_tokens(), 117);
}

#[tokio::test]
async fn redacted_thinking_is_carried_back_verbatim() {
    let mock = MockLlm::start().await;
    let body = concat!(
        "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":5,\"output_tokens\":1}}}\n\n",
        "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"redacted_thinking\",\"data\":\"EmwKAhgBEgy3va\"}}\n\n",
        "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n",
        "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n",
        "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"text_delta\",\"text\":\"Done.\"}}\n\n",
        "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":3}}\n\n",
        "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
    );
    mock.push(Reply::Sse {
        body: body.as_bytes().to_vec(),
        split: Split::Every(11),
    });
    let provider = provider(ProviderKind::Anthropic, &mock);
    let chunks = stream(provider.as_ref(), &[Message::user("hi")]).await;
    let message = done(&chunks).message;
    assert_eq!(
        message.thinking,
        vec![ThinkingBlock::Redacted {
            data: "EmwKAhgBEgy3va".into()
        }]
    );
    assert_eq!(message.content, "Done.");

    mock.push(Reply::Sse {
        body: fixture("anthropic_text.sse"),
        split: Split::Whole,
    });
    stream(
        provider.as_ref(),
        &[Message::user("hi"), message, Message::user("again")],
    )
    .await;
    let sent = mock.requests().pop().unwrap().body;
    assert_eq!(
        sent["messages"][1]["content"][0],
        json!({"type": "redacted_thinking", "data": "EmwKAhgBEgy3va"})
    );
}
