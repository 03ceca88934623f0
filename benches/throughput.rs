//! Throughput benchmarks: SSE parsing plus tool-call accumulation for each provider (MB/s of
//! stream). Run with `cargo bench --bench throughput`.

use std::convert::Infallible;

use divan::Bencher;
use divan::counter::BytesCount;
use harness9::provider::{ProviderKind, decode_stream};
use tokio::sync::mpsc;

fn main() {
    divan::main();
}

/// Deltas per synthetic stream: text tokens, then a tool call whose arguments arrive in pieces.
const TEXT_DELTAS: usize = 4_000;
const ARGUMENT_DELTAS: usize = 4_000;
/// The size of one network read.
const READ_SIZE: usize = 4096;

fn openai_stream() -> Vec<u8> {
    let mut out = String::new();
    let head = r#"{"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1796212775,"model":"gpt-4o","system_fingerprint":"fp_mock","choices":[{"index":0,"delta":"#;
    for i in 0..TEXT_DELTAS {
        out.push_str(&format!(
            "data: {head}{{\"content\":\" word{i}\"}},\"logprobs\":null,\"finish_reason\":null}}],\"usage\":null}}\n\n"
        ));
    }
    out.push_str(&format!("data: {head}{{\"tool_calls\":[{{\"index\":0,\"id\":\"call_1\",\"type\":\"function\",\"function\":{{\"name\":\"write_file\",\"arguments\":\"\"}}}}]}},\"logprobs\":null,\"finish_reason\":null}}],\"usage\":null}}\n\n"));
    for i in 0..ARGUMENT_DELTAS {
        out.push_str(&format!("data: {head}{{\"tool_calls\":[{{\"index\":0,\"function\":{{\"arguments\":\"line {i}\\\\n\"}}}}]}},\"logprobs\":null,\"finish_reason\":null}}],\"usage\":null}}\n\n"));
    }
    out.push_str(&format!("data: {head}{{}},\"logprobs\":null,\"finish_reason\":\"tool_calls\"}}],\"usage\":null}}\n\n"));
    out.push_str("data: [DONE]\n\n");
    out.into_bytes()
}

fn anthropic_stream() -> Vec<u8> {
    let mut out = String::new();
    out.push_str("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_bench\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude-sonnet-4-20250514\",\"content\":[],\"usage\":{\"input_tokens\":10,\"output_tokens\":1}}}\n\n");
    out.push_str("event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n");
    for i in 0..TEXT_DELTAS {
        out.push_str(&format!("event: content_block_delta\ndata: {{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{{\"type\":\"text_delta\",\"text\":\" word{i}\"}}}}\n\n"));
    }
    out.push_str(
        "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n",
    );
    out.push_str("event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"write_file\",\"input\":{}}}\n\n");
    for i in 0..ARGUMENT_DELTAS {
        out.push_str(&format!("event: content_block_delta\ndata: {{\"type\":\"content_block_delta\",\"index\":1,\"delta\":{{\"type\":\"input_json_delta\",\"partial_json\":\"line {i}\\\\n\"}}}}\n\n"));
    }
    out.push_str(
        "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":1}\n\n",
    );
    out.push_str("event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\"},\"usage\":{\"output_tokens\":8000}}\n\n");
    out.push_str("event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n");
    out.into_bytes()
}

fn responses_stream() -> Vec<u8> {
    let mut out = String::new();
    let mut seq = 0;
    let mut event = |kind: &str, rest: String| {
        out.push_str(&format!(
            "event: {kind}\ndata: {{\"type\":\"{kind}\",\"sequence_number\":{seq}{rest}}}\n\n"
        ));
        seq += 1;
    };
    event("response.created", ",\"response\":{\"id\":\"resp_bench\",\"object\":\"response\",\"status\":\"in_progress\",\"model\":\"gpt-5\",\"output\":[]}".into());
    event("response.output_item.added", ",\"output_index\":0,\"item\":{\"id\":\"msg_bench\",\"type\":\"message\",\"status\":\"in_progress\",\"content\":[],\"role\":\"assistant\"}".into());
    for i in 0..TEXT_DELTAS {
        event(
            "response.output_text.delta",
            format!(
                ",\"item_id\":\"msg_bench\",\"output_index\":0,\"content_index\":0,\"delta\":\" word{i}\",\"logprobs\":[],\"obfuscation\":\"Xk2a\""
            ),
        );
    }
    event("response.output_item.added", ",\"output_index\":1,\"item\":{\"id\":\"fc_bench\",\"type\":\"function_call\",\"status\":\"in_progress\",\"arguments\":\"\",\"call_id\":\"call_1\",\"name\":\"write_file\"}".into());
    for i in 0..ARGUMENT_DELTAS {
        event(
            "response.function_call_arguments.delta",
            format!(
                ",\"item_id\":\"fc_bench\",\"output_index\":1,\"delta\":\"line {i}\\\\n\",\"obfuscation\":\"q\""
            ),
        );
    }
    event("response.completed", ",\"response\":{\"id\":\"resp_bench\",\"object\":\"response\",\"status\":\"completed\",\"output\":[],\"usage\":{\"input_tokens\":10,\"input_tokens_details\":{\"cached_tokens\":0},\"output_tokens\":8000,\"output_tokens_details\":{\"reasoning_tokens\":0},\"total_tokens\":8010}}".into());
    out.into_bytes()
}

fn decode(kind: ProviderKind, body: &[u8]) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let (tx, mut rx) = mpsc::channel(256);
        let chunks = futures_util::stream::iter(body.chunks(READ_SIZE).map(Ok::<_, Infallible>));
        let drain = async move { while rx.recv().await.is_some() {} };
        let decode = async move {
            let completion = decode_stream(kind, chunks, &tx).await.expect("decodes");
            assert_eq!(completion.message.tool_calls.len(), 1);
        };
        tokio::join!(decode, drain);
    });
}

#[divan::bench(sample_count = 20)]
fn sse_openai(bencher: Bencher) {
    let body = openai_stream();
    bencher
        .counter(BytesCount::new(body.len()))
        .bench(|| decode(ProviderKind::OpenAi, &body));
}

#[divan::bench(sample_count = 20)]
fn sse_anthropic(bencher: Bencher) {
    let body = anthropic_stream();
    bencher
        .counter(BytesCount::new(body.len()))
        .bench(|| decode(ProviderKind::Anthropic, &body));
}

#[divan::bench(sample_count = 20)]
fn sse_responses(bencher: Bencher) {
    let body = responses_stream();
    bencher
        .counter(BytesCount::new(body.len()))
        .bench(|| decode(ProviderKind::Responses, &body));
}

mod engine {
    //! Engine overhead: a provider that answers instantly and a no-op tool.

    use std::sync::Arc;

    use async_trait::async_trait;
    use divan::Bencher;
    use divan::counter::ItemsCount;
    use harness9::engine::AgentEngine;
    use harness9::provider::{ScriptStep, ScriptedProvider};
    use harness9::schema::ToolKind;
    use harness9::schema::{Message, ToolCall};
    use harness9::tools::{Registry, Tool, ToolContext, ToolError};
    use serde_json::{Value, json};
    use tokio_util::sync::CancellationToken;

    const TURNS: u32 = 200;
    const WORDS: usize = 20_000;

    struct Noop;

    #[async_trait]
    impl Tool for Noop {
        fn name(&self) -> &'static str {
            "noop"
        }
        fn description(&self) -> &'static str {
            "does nothing"
        }
        fn input_schema(&self) -> Value {
            json!({"type": "object"})
        }
        fn kind(&self) -> ToolKind {
            ToolKind::ReadOnly
        }
        async fn execute(&self, _: Value, _: &ToolContext) -> Result<String, ToolError> {
            Ok("ok".into())
        }
    }

    fn engine(provider: ScriptedProvider) -> Arc<AgentEngine> {
        let mut registry = Registry::new();
        registry.register(Arc::new(Noop)).unwrap();
        Arc::new(
            AgentEngine::builder(Arc::new(provider), Arc::new(registry), std::env::temp_dir())
                .max_turns(TURNS)
                .build(),
        )
    }

    fn tool_turns() -> ScriptedProvider {
        let mut message = Message::assistant("");
        message.tool_calls = vec![ToolCall {
            id: "c".into(),
            name: "noop".into(),
            arguments: "{}".into(),
        }];
        ScriptedProvider::new([]).repeating(ScriptStep::Reply(message))
    }

    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .unwrap()
    }

    /// `run` (blocking emitter): TURNS turns of one no-op tool call each.
    #[divan::bench(sample_count = 20)]
    fn turn_overhead_run(bencher: Bencher) {
        let runtime = runtime();
        bencher.counter(ItemsCount::new(TURNS)).bench(|| {
            let engine = engine(tool_turns());
            let _ = runtime.block_on(engine.run("go", CancellationToken::new(), &|_| {}));
        });
    }

    /// `run_stream`: the same turns, every event sent to and drained by a consumer.
    #[divan::bench(sample_count = 20)]
    fn turn_overhead_run_stream(bencher: Bencher) {
        let runtime = runtime();
        bencher.counter(ItemsCount::new(TURNS)).bench(|| {
            let engine = engine(tool_turns());
            runtime.block_on(async {
                let mut rx = engine.run_stream("go".into(), CancellationToken::new());
                while rx.recv().await.is_some() {}
            });
        });
    }

    /// Events per second through `run_stream`: one answer of WORDS deltas.
    #[divan::bench(sample_count = 20)]
    fn events_per_second(bencher: Bencher) {
        let runtime = runtime();
        let text: String = (0..WORDS).map(|i| format!("w{i} ")).collect();
        bencher.counter(ItemsCount::new(WORDS)).bench(|| {
            let engine = engine(ScriptedProvider::new([ScriptStep::Reply(
                Message::assistant(text.clone()),
            )]));
            runtime.block_on(async {
                let mut rx = engine.run_stream("go".into(), CancellationToken::new());
                let mut events = 0usize;
                while rx.recv().await.is_some() {
                    events += 1;
                }
                assert!(events > WORDS);
            });
        });
    }
}
