//! The providers' own web search from fixtures in the APIs' shapes (Anthropic's
//! `server_tool_use` / `web_search_tool_result` blocks and cited text; OpenAI Responses'
//! `web_search_call` items): the request declares the provider's tool only for a `web_search`
//! the engine marked and a model the catalogue says has it, the stream shows the search and its
//! sources however it is split, and the next request sends the blocks back verbatim.

use std::sync::Arc;
use std::time::Duration;

use harness9::provider::{ApiKey, LlmProvider, ProviderConfig, ProviderKind, TransportOptions};
use harness9::schema::{Message, ServerToolEvent, StreamChunk, ToolDefinition};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::support::{MockLlm, PATIENCE, Reply, Split, fixture};

fn provider(kind: ProviderKind, mock: &MockLlm, model_searches: bool) -> Arc<dyn LlmProvider> {
    let base = match kind {
        ProviderKind::Anthropic => mock.base_url.clone(),
        _ => mock.openai_base(),
    };
    let mut config = ProviderConfig::new(kind, ApiKey::new("sk-test"), base);
    config.web_search = model_searches;
    config.transport = TransportOptions {
        idle_timeout: Duration::from_secs(5),
        ..TransportOptions::default()
    };
    config.build().expect("provider builds")
}

fn tools(marked: bool) -> Vec<ToolDefinition> {
    vec![
        ToolDefinition {
            name: "web_search".into(),
            description: "Search the web".into(),
            input_schema: json!({"type": "object", "properties": {"query": {"type": "string"}}}),
            provider_may_run: marked,
        },
        ToolDefinition {
            name: "read_file".into(),
            description: "Read a file".into(),
            input_schema: json!({"type": "object", "properties": {"path": {"type": "string"}}}),
            provider_may_run: false,
        },
    ]
}

async fn stream(
    provider: &dyn LlmProvider,
    messages: &[Message],
    tools: &[ToolDefinition],
) -> Vec<StreamChunk> {
    let mut rx = provider.generate_stream(messages, tools, CancellationToken::new());
    let mut chunks = Vec::new();
    tokio::time::timeout(PATIENCE, async {
        while let Some(chunk) = rx.recv().await {
            chunks.push(chunk);
        }
    })
    .await
    .expect("the stream ends");
    chunks
}

fn done(chunks: &[StreamChunk]) -> Message {
    match chunks.last() {
        Some(StreamChunk::Done { message, .. }) => message.clone(),
        other => panic!("expected Done, got {other:?}"),
    }
}

/// The search as the transcript gets it: (name, arguments) of the start, the result's text.
fn shown(chunks: &[StreamChunk]) -> Vec<String> {
    chunks
        .iter()
        .filter_map(|chunk| match chunk {
            StreamChunk::ServerTool(ServerToolEvent::Start(call)) => Some(format!(
                "start {} {} {}",
                call.id, call.name, call.arguments
            )),
            StreamChunk::ServerTool(ServerToolEvent::Result {
                call,
                output,
                is_error,
            }) => Some(format!("result {} {is_error}\n{output}", call.id)),
            _ => None,
        })
        .collect()
}

const SPLITS: [Split; 4] = [
    Split::Whole,
    Split::Every(1),
    Split::Every(5),
    Split::Random(20261203),
];

const SHANNON_ID: &str = "srvtoolu_01WYG3ziw53XMcoyKL4XcZmE";

#[tokio::test]
async fn anthropic_search_is_declared_shown_with_its_sources_and_replayed_verbatim() {
    let mock = MockLlm::start().await;
    let provider = provider(ProviderKind::Anthropic, &mock, true);
    let history = vec![Message::user("When was Claude Shannon born?")];
    let mut first: Option<Message> = None;
    for split in SPLITS {
        mock.push(Reply::Sse {
            body: fixture("anthropic_web_search.sse"),
            split,
        });
        let chunks = stream(provider.as_ref(), &history, &tools(true)).await;
        assert_eq!(
            shown(&chunks),
            [
                format!(
                    "start {SHANNON_ID} web_search {{\"query\": \"claude shannon birth date\"}}"
                ),
                format!(
                    "result {SHANNON_ID} false\n2 sources for `claude shannon birth date` (the \
                     provider's web search)\n1. Claude Shannon - Wikipedia\n   \
                     https://en.wikipedia.org/wiki/Claude_Shannon (April 30, 2025)\n2. Claude \
                     Shannon | Biography, Facts, & Information Theory | Britannica\n   \
                     https://www.britannica.com/biography/Claude-Shannon"
                ),
            ],
            "split {split:?}"
        );
        let message = done(&chunks);
        assert_eq!(
            message.content,
            "I'll search for when Claude Shannon was born.Based on the search results, Claude \
             Shannon was born on April 30, 1916, in Petoskey, Michigan"
        );
        assert!(message.tool_calls.is_empty(), "nothing for us to run");
        match &first {
            None => first = Some(message),
            Some(first) => assert_eq!(&message, first, "split {split:?}"),
        }
    }
    let answer = first.expect("an answer");
    let kept = answer.provider_blocks.clone().expect("blocks kept");
    assert_eq!(kept.protocol, "anthropic");
    let types: Vec<&str> = kept
        .blocks
        .iter()
        .map(|b| b["type"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(
        types,
        [
            "text",
            "server_tool_use",
            "web_search_tool_result",
            "text",
            "text"
        ]
    );

    // Stored and read back (sessions.db keeps the message as JSON), then sent again.
    let stored: Message =
        serde_json::from_str(&serde_json::to_string(&answer).unwrap()).expect("round trip");
    assert_eq!(stored, answer);
    mock.push(Reply::Sse {
        body: fixture("anthropic_text.sse"),
        split: Split::Whole,
    });
    let next = [
        history[0].clone(),
        stored,
        Message::user("And where did he work?"),
    ];
    stream(provider.as_ref(), &next, &tools(true)).await;
    let requests = mock.requests();
    let first_body = &requests[0].body;
    let last_body = &requests.last().expect("a request").body;
    // The provider's tool replaces ours (the last tool carries the cache mark); the other
    // tools are ours.
    assert_eq!(
        last_body["tools"][1],
        json!({"type": "web_search_20250305", "name": "web_search", "max_uses": 5,
            "cache_control": {"type": "ephemeral"}})
    );
    assert_eq!(last_body["tools"][0]["name"], "read_file");
    assert_eq!(first_body["tools"], last_body["tools"]);
    // The assistant turn is the blocks exactly as the API sent them.
    let replayed = &last_body["messages"][1];
    assert_eq!(replayed["role"], "assistant");
    let raw = fixture_blocks();
    assert_eq!(replayed["content"], Value::Array(raw));
}

/// The content blocks of the Anthropic fixture, assembled by hand from its events.
fn fixture_blocks() -> Vec<Value> {
    let text = String::from_utf8(fixture("anthropic_web_search.sse")).unwrap();
    let events: Vec<Value> = text
        .lines()
        .filter_map(|line| line.strip_prefix("data: "))
        .map(|data| serde_json::from_str(data).unwrap())
        .collect();
    let start = |index: u64| {
        events
            .iter()
            .find(|e| e["type"] == "content_block_start" && e["index"] == index)
            .map(|e| e["content_block"].clone())
            .unwrap()
    };
    let citation = events
        .iter()
        .find(|e| e["delta"]["type"] == "citations_delta")
        .map(|e| e["delta"]["citation"].clone())
        .unwrap();
    vec![
        json!({"type": "text", "text": "I'll search for when Claude Shannon was born."}),
        json!({"type": "server_tool_use", "id": SHANNON_ID, "name": "web_search",
            "input": {"query": "claude shannon birth date"}}),
        start(2),
        json!({"type": "text", "text": "Based on the search results, "}),
        json!({"type": "text",
            "text": "Claude Shannon was born on April 30, 1916, in Petoskey, Michigan",
            "citations": [citation]}),
    ]
}

#[tokio::test]
async fn our_tool_stays_unless_marked_and_the_model_has_search() {
    let mock = MockLlm::start().await;
    for (model_searches, marked) in [(true, false), (false, true), (false, false)] {
        mock.push(Reply::Sse {
            body: fixture("anthropic_text.sse"),
            split: Split::Whole,
        });
        let provider = provider(ProviderKind::Anthropic, &mock, model_searches);
        stream(provider.as_ref(), &[Message::user("hi")], &tools(marked)).await;
        let body = mock.requests().pop().unwrap().body;
        assert_eq!(body["tools"][1]["name"], "web_search");
        assert!(
            body["tools"][1].get("input_schema").is_some(),
            "our function tool, not the provider's: {}",
            body["tools"][1]
        );
    }
    for (model_searches, marked) in [(true, false), (false, true)] {
        mock.push(Reply::Sse {
            body: fixture("responses_text.sse"),
            split: Split::Whole,
        });
        let provider = provider(ProviderKind::Responses, &mock, model_searches);
        stream(provider.as_ref(), &[Message::user("hi")], &tools(marked)).await;
        let body = mock.requests().pop().unwrap().body;
        assert_eq!(body["tools"][1]["type"], "function");
    }
}

#[tokio::test]
async fn responses_search_is_declared_shown_with_its_sources_and_replayed() {
    let mock = MockLlm::start().await;
    let provider = provider(ProviderKind::Responses, &mock, true);
    let history = vec![Message::user("A positive news story from today?")];
    let mut first: Option<Message> = None;
    for split in SPLITS {
        mock.push(Reply::Sse {
            body: fixture("responses_web_search.sse"),
            split,
        });
        let chunks = stream(provider.as_ref(), &history, &tools(true)).await;
        assert_eq!(
            shown(&chunks),
            [
                "start ws_67c9fa0502748190b7dd390736892e100be649c1a5ff9609 web_search \
                 {\"query\":\"positive news story today\"}",
                "result ws_67c9fa0502748190b7dd390736892e100be649c1a5ff9609 false\n2 sources \
                 for `positive news story today` (the provider's web search)\n1. \
                 https://www.goodnewsnetwork.org/\n   https://www.goodnewsnetwork.org/\n2. \
                 https://apnews.com/hub/good-news\n   https://apnews.com/hub/good-news",
            ],
            "split {split:?}"
        );
        let message = done(&chunks);
        assert!(message.content.starts_with("A rescued sea turtle"));
        match &first {
            None => first = Some(message),
            Some(first) => assert_eq!(&message, first, "split {split:?}"),
        }
    }
    let answer = first.expect("an answer");
    mock.push(Reply::Sse {
        body: fixture("responses_text.sse"),
        split: Split::Whole,
    });
    let next = [history[0].clone(), answer, Message::user("More?")];
    stream(provider.as_ref(), &next, &tools(true)).await;
    let body = mock.requests().pop().unwrap().body;
    assert_eq!(body["tools"][1], json!({"type": "web_search"}));
    assert_eq!(
        body["include"],
        json!([
            "reasoning.encrypted_content",
            "web_search_call.action.sources"
        ])
    );
    let text = String::from_utf8(fixture("responses_web_search.sse")).unwrap();
    let search_item = text
        .lines()
        .filter_map(|line| line.strip_prefix("data: "))
        .map(|data| serde_json::from_str::<Value>(data).unwrap())
        .find(|e| e["type"] == "response.output_item.done")
        .map(|e| e["item"].clone())
        .unwrap();
    let input = body["input"].as_array().unwrap();
    assert_eq!(input[1], search_item, "the search item, verbatim");
    assert_eq!(input[2]["type"], "message");
    assert_eq!(input[2]["role"], "assistant");
}

/// Through the real binary: with the user's rule allowing `web_search`, a model the catalogue
/// marks gets Anthropic's own search, and `exec --json` shows it as a `web_search` call and its
/// sources; without the rule the request carries our tool (which would ask).
#[test]
fn exec_shows_the_providers_search_as_a_web_search_call_only_when_allowed() {
    let mock = MockLlm::start_in_background();
    let run = crate::exec::Run::new();
    std::fs::create_dir_all(&run.home).unwrap();
    let exec = || {
        mock.push(Reply::Sse {
            body: fixture("anthropic_web_search.sse"),
            split: Split::Random(11),
        });
        let mut command = run.command(
            &mock,
            &["exec", "--json", "--provider", "anthropic", "Shannon?"],
        );
        command.env("ANTHROPIC_API_KEY", "sk-ant-test");
        command.env("ANTHROPIC_BASE_URL", &mock.base_url);
        let out = command.output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let tools = mock.requests().pop().unwrap().body["tools"].clone();
        let search = tools
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == "web_search")
            .cloned();
        (crate::exec::json_lines(&out.stdout), search)
    };
    // No backend, and a search of the provider's that would need asking: no `web_search`
    // at all (ours could only fail).
    let (_, search) = exec();
    assert_eq!(search, None);
    // With a backend configured, ours (never reached here: the model does not call it).
    std::fs::write(
        run.home.join("settings.json"),
        r#"{"web": {"search": "http://127.0.0.1:9/search"}}"#,
    )
    .unwrap();
    let (_, search) = exec();
    let search = search.expect("ours is offered");
    assert!(search.get("input_schema").is_some(), "ours: {search}");

    std::fs::write(
        run.home.join("settings.json"),
        r#"{"permissions": {"allow": ["web_search"]}}"#,
    )
    .unwrap();
    let (events, search) = exec();
    let search = search.expect("the provider's is offered");
    assert_eq!(search["type"], "web_search_20250305");
    let start = events
        .iter()
        .find(|e| e["type"] == "tool_start")
        .expect("a tool_start");
    assert_eq!(start["data"]["name"], "web_search");
    assert_eq!(start["data"]["id"], SHANNON_ID);
    assert_eq!(
        start["data"]["arguments"],
        json!({"query": "claude shannon birth date"})
    );
    let result = events
        .iter()
        .find(|e| e["type"] == "tool_result")
        .expect("a tool_result");
    assert_eq!(result["data"]["name"], "web_search");
    assert_eq!(result["data"]["is_error"], false);
    let output = result["data"]["output"].as_str().unwrap();
    assert!(
        output.contains("https://en.wikipedia.org/wiki/Claude_Shannon"),
        "{output}"
    );
}

/// A search that failed on the provider's side (`web_search_tool_result_error`) is shown as a
/// failed `web_search`, and the message still keeps its blocks.
#[tokio::test]
async fn an_anthropic_search_error_is_shown_as_a_failed_call() {
    let id = "srvtoolu_01Ab3dEf5gH7iJ9kL1mN3oP5";
    let events = [
        json!({"type": "message_start", "message": {"id": "msg_01", "type": "message",
            "role": "assistant", "model": "claude-sonnet-4-20250514", "content": [],
            "stop_reason": null, "stop_sequence": null,
            "usage": {"input_tokens": 10, "output_tokens": 1}}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {
            "type": "server_tool_use", "id": id, "name": "web_search",
            "input": {"query": "anything"}}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "content_block_start", "index": 1, "content_block": {
            "type": "web_search_tool_result", "tool_use_id": id, "content": {
                "type": "web_search_tool_result_error", "error_code": "max_uses_exceeded"}}}),
        json!({"type": "content_block_stop", "index": 1}),
        json!({"type": "content_block_start", "index": 2,
            "content_block": {"type": "text", "text": "I could not search."}}),
        json!({"type": "content_block_stop", "index": 2}),
        json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"},
            "usage": {"output_tokens": 5, "server_tool_use": {"web_search_requests": 0}}}),
        json!({"type": "message_stop"}),
    ];
    let body: String = events
        .iter()
        .map(|e| format!("event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap()))
        .collect();
    let mock = MockLlm::start().await;
    mock.push(Reply::Sse {
        body: body.into_bytes(),
        split: Split::Every(3),
    });
    let provider = provider(ProviderKind::Anthropic, &mock, true);
    let chunks = stream(provider.as_ref(), &[Message::user("go")], &tools(true)).await;
    assert_eq!(
        shown(&chunks),
        [
            format!("start {id} web_search {{\"query\":\"anything\"}}"),
            format!("result {id} true\nthe provider's web search failed: max_uses_exceeded"),
        ]
    );
    let message = done(&chunks);
    assert_eq!(message.content, "I could not search.");
    assert_eq!(message.provider_blocks.expect("kept").blocks.len(), 3);
}

/// A conversation that already called our own `web_search` keeps it: the APIs check a
/// history's function calls against the tools the request declares.
#[tokio::test]
async fn a_history_with_our_web_search_call_keeps_our_tool() {
    let mock = MockLlm::start().await;
    let mut asked = Message::assistant("");
    asked.tool_calls = vec![harness9::schema::ToolCall {
        id: "toolu_01".into(),
        name: "web_search".into(),
        arguments: r#"{"query":"rust"}"#.into(),
    }];
    let history = [
        Message::user("search"),
        asked,
        Message::tool_result(&harness9::schema::ToolResult::ok("toolu_01", "No results.")),
    ];
    for (kind, reply) in [
        (ProviderKind::Anthropic, "anthropic_text.sse"),
        (ProviderKind::Responses, "responses_text.sse"),
    ] {
        mock.push(Reply::Sse {
            body: fixture(reply),
            split: Split::Whole,
        });
        let provider = provider(kind, &mock, true);
        stream(provider.as_ref(), &history, &tools(true)).await;
        let body = mock.requests().pop().unwrap().body;
        let ours = &body["tools"][1];
        assert_eq!(ours["name"], "web_search", "{kind}");
        assert!(
            ours.get("input_schema").is_some() || ours["type"] == "function",
            "{kind}: our function tool: {ours}"
        );
    }
}
