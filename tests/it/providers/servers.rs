//! Streams as the servers users run send them (tests/fixtures/servers/README.md says where each
//! came from), replayed through the chat-completions decoder whole and in awkward pieces.

use super::*;

/// What one replayed stream must come to.
struct Expected {
    fixture: &'static str,
    thinking: &'static str,
    text: &'static str,
    /// Each call's id (`None`: harness9 names it), name, and arguments as JSON.
    calls: Vec<(Option<&'static str>, &'static str, serde_json::Value)>,
    /// Input not from a cache, cache reads, output; `None` when the server sends no usage.
    usage: Option<(u64, u64, u64)>,
}

fn expectations() -> Vec<Expected> {
    let llama_tool_id = "call__0_read_file_cmpl-d55bca53-22fb-4323-b8f7-8db944a957e6";
    vec![
        Expected {
            fixture: "servers/llama_cpp_python_text.sse",
            thinking: "",
            text: "Hello there, welcome to my world! I'm here to",
            calls: vec![],
            usage: None,
        },
        Expected {
            fixture: "servers/llama_cpp_python_tool.sse",
            thinking: "",
            text: "",
            calls: vec![(
                Some(llama_tool_id),
                "read_file",
                json!({"path": "Pitbull, a British rapper and rapper-rock band from the UK. They are known for their heavy metal sound."}),
            )],
            usage: None,
        },
        Expected {
            fixture: "servers/ollama_reasoning_tool.sse",
            thinking: "The user wants the files listed, so I will run ls.",
            text: "Let me look at the files.",
            calls: vec![(Some("call_hk81qg8b"), "bash", json!({"command": "ls -la"}))],
            usage: Some((312, 0, 41)),
        },
        Expected {
            fixture: "servers/ollama_stop_with_tool_calls.sse",
            thinking: "",
            text: "",
            calls: vec![
                (Some("call_wteop8bt"), "bash", json!({"command": "ls"})),
                (Some("call_rk2xye1l"), "bash", json!({"command": "ls -l"})),
            ],
            usage: None,
        },
        Expected {
            fixture: "servers/vllm_reasoning_tool.sse",
            thinking: "I should read the file.",
            text: "",
            calls: vec![(
                Some("chatcmpl-tool-5b6f1a"),
                "read_file",
                json!({"path": "src/main.rs"}),
            )],
            usage: Some((201, 0, 59)),
        },
        Expected {
            fixture: "servers/lmstudio_tool.sse",
            thinking: "Weather needs a tool.",
            text: "",
            calls: vec![(Some("365174485"), "get_weather", json!({"city": "Oslo"}))],
            usage: None,
        },
        Expected {
            fixture: "servers/openrouter_reasoning.sse",
            thinking: "Two modules, engine and tui.",
            text: "The project has two modules.",
            calls: vec![],
            usage: Some((180 - 64, 64, 33)),
        },
        Expected {
            fixture: "servers/deepseek_reasoner.sse",
            thinking: "9.11 and 9.8: compare the tenths.",
            text: "9.8 is greater.",
            calls: vec![],
            usage: Some((176, 1024, 150)),
        },
        Expected {
            fixture: "servers/no_call_ids.sse",
            thinking: "",
            text: "",
            calls: vec![(None, "read_file", json!({"path": "a.txt"}))],
            usage: None,
        },
    ]
}

#[tokio::test]
async fn every_servers_stream_decodes_to_the_same_turn_however_it_is_split() {
    let mock = MockLlm::start().await;
    let provider = provider(ProviderKind::OpenAi, &mock);
    let history = [Message::system("sys"), Message::user("look around")];
    for expected in expectations() {
        for split in SPLITS {
            let context = format!("{} split {split:?}", expected.fixture);
            mock.push(Reply::Sse {
                body: fixture(expected.fixture),
                split,
            });
            let chunks = stream(provider.as_ref(), &history).await;
            let completion = done(&chunks);
            let message = &completion.message;
            // Thinking and text arrive as deltas, and the finished turn holds the same.
            assert_eq!(text_of(&chunks, true), expected.thinking, "{context}");
            assert_eq!(text_of(&chunks, false), expected.text, "{context}");
            assert_eq!(message.content, expected.text, "{context}");
            let kept_thinking: String = message
                .thinking
                .iter()
                .map(|block| match block {
                    ThinkingBlock::Thinking { thinking, .. } => thinking.as_str(),
                    _ => "",
                })
                .collect();
            assert_eq!(kept_thinking, expected.thinking, "{context}");

            assert_eq!(
                message.tool_calls.len(),
                expected.calls.len(),
                "{context}: {message:?}"
            );
            for (call, (id, name, arguments)) in message.tool_calls.iter().zip(&expected.calls) {
                match id {
                    Some(id) => assert_eq!(call.id, *id, "{context}"),
                    None => assert!(!call.id.is_empty(), "{context}: a call gets an id"),
                }
                assert_eq!(call.name, *name, "{context}");
                let parsed: serde_json::Value =
                    serde_json::from_str(&call.arguments).expect("whole JSON arguments");
                assert_eq!(&parsed, arguments, "{context}");
            }

            let usage = completion
                .usage
                .map(|u| (u.input_tokens, u.cache_read_tokens, u.output_tokens));
            assert_eq!(usage, expected.usage, "{context}");
        }
    }
}
