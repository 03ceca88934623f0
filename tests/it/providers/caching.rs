//! What the provider's cache depends on and what a run costs, through the real binary: each
//! provider's next request starts with the previous one byte for byte (system prompt, tools and
//! history), and `token_update` / `done` carry cached tokens and the cost the catalogue prices.

use serde_json::Value;

use crate::support::{MockLlm, Reply, Split, fixture};

/// A request's parts that must not change between turns, and its history with Anthropic's
/// moving cache breakpoint (`cache_control`) taken out, each element as its JSON text.
fn stable_parts(body: &Value) -> (Vec<String>, Vec<String>) {
    let mut fixed = Vec::new();
    for key in [
        "model",
        "system",
        "instructions",
        "tools",
        "reasoning",
        "prompt_cache_key",
    ] {
        fixed.push(format!("{key}={}", body[key]));
    }
    let history = body
        .get("messages")
        .or_else(|| body.get("input"))
        .and_then(Value::as_array)
        .expect("a history");
    let history = history
        .iter()
        .map(|item| {
            let mut text = item.to_string();
            for marker in [
                r#","cache_control":{"type":"ephemeral"}"#,
                r#""cache_control":{"type":"ephemeral"},"#,
            ] {
                text = text.replace(marker, "");
            }
            text
        })
        .collect();
    (fixed, history)
}

#[test]
fn every_provider_starts_the_next_request_with_the_previous_one() {
    let cases = [
        (
            "openai",
            "openai_chat_thinking_tools.sse",
            "openai_chat_text.sse",
        ),
        (
            "anthropic",
            "anthropic_thinking_tools.sse",
            "anthropic_text.sse",
        ),
        (
            "responses",
            "responses_reasoning_tools.sse",
            "responses_text.sse",
        ),
    ];
    for (provider, first, second) in cases {
        let mock = MockLlm::start_in_background();
        mock.push(Reply::Sse {
            body: fixture(first),
            split: Split::Random(4),
        });
        mock.push(Reply::Sse {
            body: fixture(second),
            split: Split::Whole,
        });
        let run = crate::exec::Run::new();
        let mut command = run.command(&mock, &["exec", "--provider", provider, "look around"]);
        command.env("ANTHROPIC_API_KEY", "sk-ant-test");
        command.env("ANTHROPIC_BASE_URL", &mock.base_url);
        let out = command.output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{provider}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let requests = mock.requests();
        assert_eq!(requests.len(), 2, "{provider}");
        let (fixed0, history0) = stable_parts(&requests[0].body);
        let (fixed1, history1) = stable_parts(&requests[1].body);
        assert_eq!(
            fixed0, fixed1,
            "{provider}: the system prompt and tools stay the same"
        );
        assert!(history1.len() > history0.len(), "{provider}");
        assert_eq!(
            history0,
            history1[..history0.len()],
            "{provider}: the history is only appended to"
        );
    }
}

/// `token_update` and `done` carry the cache counts and, for a model with known prices, the cost
/// (from the built-in catalogue, or the user's `models.toml` over it).
#[test]
fn exec_json_reports_cached_tokens_and_the_cost_from_the_catalogue() {
    let mock = MockLlm::start_in_background();
    let run = crate::exec::Run::new();
    let events = |args: &[&str]| {
        mock.push(Reply::Sse {
            body: fixture("responses_text.sse"),
            split: Split::Whole,
        });
        let mut all = vec!["exec", "--json", "--provider", "responses"];
        all.extend_from_slice(args);
        all.push("hi");
        let out = run.exec(&mock, &all);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        crate::exec::json_lines(&out.stdout)
    };
    let find = |events: &[Value], kind: &str| -> Value {
        events
            .iter()
            .rev()
            .find(|e| e["type"] == kind)
            .unwrap_or_else(|| panic!("no {kind}: {events:?}"))["data"]
            .clone()
    };
    // gpt-5: 760 input at 1.25, 5,120 cached at 0.125, 41 output at 10.00 per million.
    let priced = events(&[]);
    let update = find(&priced, "token_update");
    assert_eq!(update["input_tokens"], 5880);
    assert_eq!(update["cache_read_tokens"], 5120);
    assert_eq!(update["cache_write_tokens"], 0);
    let cost = update["cost_usd"].as_f64().unwrap();
    assert!((cost - 0.002).abs() < 1e-12, "{cost}");
    let done = find(&priced, "done");
    assert_eq!(done["cache_read_tokens"], 5120);
    assert!((done["cost_usd"].as_f64().unwrap() - 0.002).abs() < 1e-12);
    // A model the catalogue does not know has no cost; the user's file can give it prices.
    let unknown = events(&["-m", "my-fine-tune"]);
    assert!(find(&unknown, "done").get("cost_usd").is_none());
    std::fs::create_dir_all(&run.home).unwrap();
    std::fs::write(
        run.home.join("models.toml"),
        "[[model]]\nname = \"my-fine-tune\"\ninput = 1.0\noutput = 1.0\n",
    )
    .unwrap();
    let priced_by_user = events(&["-m", "my-fine-tune"]);
    let cost = find(&priced_by_user, "done")["cost_usd"].as_f64().unwrap();
    // 760 + 5,120 (no cached price: the input price) + 41 tokens at 1.00 per million.
    assert!((cost - 0.005921).abs() < 1e-12, "{cost}");
    // Each session keeps its totals: `harness9 sessions --json` lists them.
    let out = run.exec(&mock, &["sessions", "--json"]);
    let sessions: Value = serde_json::from_slice(&out.stdout).unwrap();
    let gpt5 = sessions
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["model"] == "gpt-5")
        .unwrap_or_else(|| panic!("{sessions}"));
    assert_eq!(gpt5["input_tokens"], 760);
    assert_eq!(gpt5["cache_read_tokens"], 5120);
    assert_eq!(gpt5["output_tokens"], 41);
    assert!(
        (gpt5["cost_usd"].as_f64().unwrap() - 0.002).abs() < 1e-12,
        "{gpt5}"
    );
}
