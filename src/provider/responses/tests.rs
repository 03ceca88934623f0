use super::*;
use crate::provider::ApiKey;
use crate::provider::protocol::ApiProvider;
use crate::schema::{ProviderErrorKind, ToolCall};

fn provider(model: &str, effort: Option<&str>) -> ApiProvider<Responses> {
    let mut config = ProviderConfig::new(
        crate::provider::ProviderKind::Responses,
        ApiKey::new("k"),
        "http://127.0.0.1:9/v1",
    );
    config.model = model.into();
    config.reasoning_effort = effort.map(str::to_owned);
    config.max_tokens = Some(1000);
    ApiProvider::new(config).unwrap()
}

#[test]
fn a_reasoning_model_asks_for_its_encrypted_reasoning_and_others_do_not() {
    let messages = [Message::system("sys"), Message::user("hi")];
    let body = provider("gpt-5", None).request_body(&messages, &[], true);
    assert_eq!(
        body["reasoning"],
        json!({"effort": "medium", "summary": "auto"})
    );
    assert_eq!(body["include"], json!(["reasoning.encrypted_content"]));
    assert_eq!(body["max_output_tokens"], 1000);
    assert_eq!(body["instructions"], "sys");
    let plain = provider("gpt-4.1", None).request_body(&messages, &[], true);
    assert!(plain.get("reasoning").is_none() && plain.get("include").is_none());
    let chosen = provider("gpt-4.1", Some("high")).request_body(&messages, &[], true);
    assert_eq!(chosen["reasoning"]["effort"], "high");
}

#[test]
fn other_providers_reasoning_is_not_replayed_and_empty_arguments_become_an_object() {
    let mut turn = Message::assistant("");
    turn.thinking = vec![
        ThinkingBlock::Thinking {
            thinking: "from chat completions".into(),
            signature: String::new(),
        },
        ThinkingBlock::Redacted {
            data: "anthropic".into(),
        },
    ];
    turn.tool_calls = vec![ToolCall {
        id: "c1".into(),
        name: "todo_read".into(),
        arguments: " ".into(),
    }];
    let (_, input) = convert_input(&[Message::user("go"), turn]);
    assert_eq!(input.len(), 2, "{input:?}");
    assert_eq!(input[1]["type"], "function_call");
    assert_eq!(input[1]["arguments"], "{}");
}

#[test]
fn the_cache_key_follows_the_first_prompt() {
    let a = cache_key(&[Message::system("s"), Message::user("one")]);
    let b = cache_key(&[
        Message::user("one"),
        Message::assistant("x"),
        Message::user("two"),
    ]);
    let c = cache_key(&[Message::user("other")]);
    assert_eq!(a, b);
    assert_ne!(a, c);
    assert_eq!(cache_key(&[Message::system("s")]), None);
}

#[test]
fn an_incomplete_stream_is_a_connection_error_and_failures_are_typed() {
    use crate::provider::transport::StreamDecoder;
    let mut decoder = ResponsesDecoder::default();
    let mut out = Vec::new();
    let delta = r#"{"type":"response.output_text.delta","output_index":0,"delta":"Hel"}"#;
    assert!(!decoder.on_event(delta, &mut out).unwrap());
    let error = decoder.finish().unwrap_err();
    assert_eq!(error.kind, ProviderErrorKind::Connection);
    let overflow =
        r#"{"type":"response.function_call_arguments.delta","output_index":99999999,"delta":"x"}"#;
    let error = ResponsesDecoder::default()
        .on_event(overflow, &mut out)
        .unwrap_err();
    assert_eq!(error.kind, ProviderErrorKind::Protocol);
    let too_long = r#"{"type":"response.failed","response":{"status":"failed","error":{"code":"context_length_exceeded","message":"too long"}}}"#;
    let error = ResponsesDecoder::default()
        .on_event(too_long, &mut out)
        .unwrap_err();
    assert_eq!(error.kind, ProviderErrorKind::ContextTooLong);
    assert!(matches!(
        Responses::parse_completion(b"{\"status\":\"failed\",\"error\":{\"code\":\"server_error\"}}"),
        Err(e) if e.kind == ProviderErrorKind::Server
    ));
}

/// Issue 31 point 2: a response that ends incomplete names why, as the model's stop.
#[test]
fn an_incomplete_response_names_why_the_model_stopped() {
    use crate::provider::transport::StreamDecoder;
    use crate::schema::ModelStop;
    let incomplete = |reason: &str| {
        json!({"type": "response.incomplete", "response": {"status": "incomplete",
            "incomplete_details": {"reason": reason}}})
        .to_string()
    };
    for (reason, stop) in [
        ("max_output_tokens", Some(ModelStop::MaxTokens)),
        ("content_filter", Some(ModelStop::Refusal)),
        ("something new", None),
    ] {
        let mut decoder = ResponsesDecoder::default();
        decoder
            .on_event(&incomplete(reason), &mut Vec::new())
            .unwrap();
        assert_eq!(decoder.finish().unwrap().stop, stop, "{reason}");
    }
    let whole = json!({"status": "incomplete", "output": [],
        "incomplete_details": {"reason": "max_output_tokens"}});
    let completion = Responses::parse_completion(whole.to_string().as_bytes()).unwrap();
    assert_eq!(completion.stop, Some(ModelStop::MaxTokens));
}
