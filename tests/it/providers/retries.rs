//! Faults worth retrying and the ones that are not: rate limits with `Retry-After`, server
//! errors and overload, a stream cut before or after output or gone silent, a server that never
//! answers, a refused connection; and a refused key, reported without the key.

use std::time::Duration;

use harness9::provider::{ApiKey, ProviderConfig, ProviderKind, RetryPolicy};
use harness9::schema::{Message, ProviderErrorKind, StreamChunk};

use super::{ANSWER, SECRET, done, provider, provider_with_idle, stream, text_of};
use crate::support::{MockLlm, Reply, Split, fixture};

#[tokio::test]
async fn rate_limit_honours_retry_after_then_succeeds() {
    let mock = MockLlm::start().await;
    mock.push(Reply::Status {
        status: 429,
        body: r#"{"error": {"message": "Rate limit reached", "type": "rate_limit_error", "param": null, "code": "rate_limit_exceeded"}}"#.into(),
        headers: vec![("retry-after", "1".into())],
    });
    mock.push(Reply::Sse {
        body: fixture("openai_chat_text.sse"),
        split: Split::Random(3),
    });
    let chunks = stream(
        provider(ProviderKind::OpenAi, &mock).as_ref(),
        &[Message::user("hi")],
    )
    .await;
    let StreamChunk::Retry(notice) = &chunks[0] else {
        panic!("first chunk is the retry notice: {chunks:?}");
    };
    assert_eq!(notice.attempt, 2);
    assert_eq!(notice.max_attempts, 4);
    assert_eq!(notice.delay, Duration::from_secs(1), "retry-after honoured");
    assert!(
        notice.reason.contains("Rate limit reached"),
        "{}",
        notice.reason
    );
    assert_eq!(done(&chunks).message.content, ANSWER);
    assert_eq!(mock.requests().len(), 2);
}

#[tokio::test]
async fn server_error_then_success_and_overload_are_retried() {
    let mock = MockLlm::start().await;
    mock.push(Reply::Status {
        status: 500,
        body: "upstream exploded".into(),
        headers: vec![],
    });
    mock.push(Reply::Status {
        status: 529,
        body:
            r#"{"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}"#
                .into(),
        headers: vec![],
    });
    mock.push(Reply::Sse {
        body: fixture("anthropic_text.sse"),
        split: Split::Whole,
    });
    let chunks = stream(
        provider(ProviderKind::Anthropic, &mock).as_ref(),
        &[Message::user("hi")],
    )
    .await;
    let notices: Vec<_> = chunks
        .iter()
        .filter_map(|c| match c {
            StreamChunk::Retry(n) => Some(n.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(notices.len(), 2);
    assert!(notices[0].reason.contains("500") && notices[0].reason.contains("upstream exploded"));
    assert!(notices[1].reason.contains("Overloaded"));
    assert_eq!(done(&chunks).message.content, ANSWER);
}

#[tokio::test]
async fn retries_stop_after_four_attempts() {
    let mock = MockLlm::start().await;
    mock.set_fallback(Reply::Status {
        status: 503,
        body: r#"{"error": {"message": "try later", "type": "server_error"}}"#.into(),
        headers: vec![],
    });
    let chunks = stream(
        provider(ProviderKind::OpenAi, &mock).as_ref(),
        &[Message::user("hi")],
    )
    .await;
    assert_eq!(mock.requests().len(), 4);
    let StreamChunk::Error(error) = chunks.last().unwrap() else {
        unreachable!()
    };
    assert_eq!(error.kind, ProviderErrorKind::Server);
    assert!(error.message.contains("try later") && error.message.contains("4 attempts"));
}

#[tokio::test]
async fn a_cut_after_output_is_a_retryable_error_never_a_truncated_done() {
    let mock = MockLlm::start().await;
    for (kind, fixture_name) in [
        (ProviderKind::OpenAi, "openai_chat_text.sse"),
        (ProviderKind::Anthropic, "anthropic_text.sse"),
    ] {
        let body = fixture(fixture_name);
        let cut_at = body.len() / 2;
        mock.push(Reply::Cut { body, cut_at });
        let chunks = stream(provider(kind, &mock).as_ref(), &[Message::user("hi")]).await;
        assert!(
            !text_of(&chunks, false).is_empty(),
            "some text was streamed"
        );
        let StreamChunk::Error(error) = chunks.last().unwrap() else {
            panic!("{kind}: expected an error, got {:?}", chunks.last());
        };
        assert!(error.retryable, "{kind}: {error:?}");
        assert_eq!(error.kind, ProviderErrorKind::StreamCut);
    }
}

#[tokio::test]
async fn a_cut_before_any_output_is_retried_silently() {
    let mock = MockLlm::start().await;
    let body = fixture("anthropic_text.sse");
    mock.push(Reply::Cut {
        body: body.clone(),
        cut_at: 40,
    });
    mock.push(Reply::Sse {
        body,
        split: Split::Every(3),
    });
    let chunks = stream(
        provider(ProviderKind::Anthropic, &mock).as_ref(),
        &[Message::user("hi")],
    )
    .await;
    assert!(matches!(chunks[0], StreamChunk::Retry(_)));
    assert_eq!(done(&chunks).message.content, ANSWER);
}

#[tokio::test]
async fn unauthorized_reads_as_an_invalid_key_without_the_key() {
    let mock = MockLlm::start().await;
    mock.push(Reply::Status {
        status: 401,
        body: format!(r#"{{"error": {{"message": "Incorrect API key provided: {SECRET}.", "type": "invalid_request_error", "param": null, "code": "invalid_api_key"}}}}"#),
        headers: vec![],
    });
    let chunks = stream(
        provider(ProviderKind::OpenAi, &mock).as_ref(),
        &[Message::user("hi")],
    )
    .await;
    assert_eq!(mock.requests().len(), 1, "401 is not retried");
    let StreamChunk::Error(error) = chunks.last().unwrap() else {
        unreachable!()
    };
    assert_eq!(error.kind, ProviderErrorKind::Auth);
    assert_eq!(error.status, Some(401));
    assert!(!error.retryable);
    assert!(
        error.message.contains("Incorrect API key provided"),
        "{}",
        error.message
    );
    assert!(error.message.contains("invalid_api_key"));
    assert!(
        !error.message.contains(SECRET),
        "the key never appears: {}",
        error.message
    );

    mock.push(Reply::Status {
        status: 401,
        body: r#"{"type": "error", "error": {"type": "authentication_error", "message": "invalid x-api-key"}}"#.into(),
        headers: vec![],
    });
    let chunks = stream(
        provider(ProviderKind::Anthropic, &mock).as_ref(),
        &[Message::user("hi")],
    )
    .await;
    let StreamChunk::Error(error) = chunks.last().unwrap() else {
        unreachable!()
    };
    assert!(
        error.message.contains("authentication_error")
            && error.message.contains("invalid x-api-key")
    );
}

#[tokio::test]
async fn a_stream_that_goes_silent_mid_answer_is_cut_and_retryable() {
    let mock = MockLlm::start().await;
    let body = fixture("anthropic_text.sse");
    let stall_at = String::from_utf8_lossy(&body)
        .find("event: message_delta")
        .unwrap();
    mock.push(Reply::Stall { body, stall_at });
    let provider = provider_with_idle(ProviderKind::Anthropic, &mock, Duration::from_millis(300));
    let chunks = stream(provider.as_ref(), &[Message::user("hi")]).await;
    assert!(!text_of(&chunks, false).is_empty());
    let StreamChunk::Error(error) = chunks.last().unwrap() else {
        unreachable!()
    };
    assert_eq!(error.kind, ProviderErrorKind::StreamCut);
    assert!(error.retryable);
    assert!(error.message.contains("went silent"), "{}", error.message);
}

#[tokio::test]
async fn a_server_that_never_answers_times_out_after_every_attempt() {
    let mock = MockLlm::start().await;
    mock.set_fallback(Reply::Hang);
    let provider = provider_with_idle(ProviderKind::OpenAi, &mock, Duration::from_millis(200));
    let chunks = stream(provider.as_ref(), &[Message::user("hi")]).await;
    assert_eq!(
        chunks
            .iter()
            .filter(|c| matches!(c, StreamChunk::Retry(_)))
            .count(),
        3
    );
    let StreamChunk::Error(error) = chunks.last().unwrap() else {
        unreachable!()
    };
    assert_eq!(error.kind, ProviderErrorKind::Timeout);
    assert!(
        error.message.contains("did not answer"),
        "{}",
        error.message
    );
    assert_eq!(mock.requests().len(), 4);
}

#[tokio::test]
async fn a_refused_connection_is_retried_then_reported() {
    // A port on loopback with nothing listening: the connection is refused at once.
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let mut config = ProviderConfig::new(
        ProviderKind::OpenAi,
        ApiKey::new(SECRET),
        format!("http://127.0.0.1:{port}/v1"),
    );
    config.transport.retry = RetryPolicy {
        max_attempts: 4,
        base_delay: Duration::from_millis(5),
        max_delay: Duration::from_millis(20),
        max_retry_after: Duration::from_secs(1),
    };
    let provider = config.build().unwrap();
    let chunks = stream(provider.as_ref(), &[Message::user("hi")]).await;
    assert_eq!(
        chunks
            .iter()
            .filter(|c| matches!(c, StreamChunk::Retry(_)))
            .count(),
        3
    );
    let StreamChunk::Error(error) = chunks.last().unwrap() else {
        unreachable!()
    };
    assert_eq!(error.kind, ProviderErrorKind::Connection);
    assert!(
        error.message.contains("could not reach OpenAI") && error.message.contains("4 attempts"),
        "{}",
        error.message
    );
    assert!(!error.message.contains(SECRET));
}
