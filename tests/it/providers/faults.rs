//! A hostile or broken server against both providers: tool-call indexes and argument sizes it
//! chose, bodies and SSE lines that never end, error bodies echoing a key, and the provider's
//! "context too long" refusal. Each ends as a clear error, never a crash or unbounded memory.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::http::StatusCode;
use axum::response::Response;
use harness9::provider::{
    ApiKey, LlmProvider, ProviderConfig, ProviderKind, RetryPolicy, TransportOptions,
};
use harness9::schema::{Message, ProviderError, ProviderErrorKind, StreamChunk};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use super::{SECRET, done, provider, stream};
use crate::support::{MockLlm, PATIENCE, Reply, Split};

fn last_error(chunks: &[StreamChunk]) -> ProviderError {
    match chunks.last() {
        Some(StreamChunk::Error(error)) => error.clone(),
        other => panic!("expected an error, got {other:?}"),
    }
}

/// An OpenAI stream with one tool call at `index`.
fn openai_call_at(index: &str) -> Vec<u8> {
    format!(
        "data: {{\"choices\":[{{\"delta\":{{\"tool_calls\":[{{\"index\":{index},\"id\":\"c1\",\"function\":{{\"name\":\"bash\",\"arguments\":\"{{}}\"}}}}]}}}}]}}\n\n\
         data: {{\"choices\":[{{\"delta\":{{}},\"finish_reason\":\"tool_calls\"}}]}}\n\ndata: [DONE]\n\n"
    )
    .into_bytes()
}

/// An Anthropic stream whose tool-use block starts at `index`.
fn anthropic_call_at(index: &str) -> Vec<u8> {
    format!(
        "event: message_start\ndata: {{\"type\":\"message_start\",\"message\":{{\"usage\":{{\"input_tokens\":5}}}}}}\n\n\
         event: content_block_start\ndata: {{\"type\":\"content_block_start\",\"index\":{index},\"content_block\":{{\"type\":\"tool_use\",\"id\":\"t1\",\"name\":\"bash\",\"input\":{{}}}}}}\n\n\
         event: content_block_delta\ndata: {{\"type\":\"content_block_delta\",\"index\":{index},\"delta\":{{\"type\":\"input_json_delta\",\"partial_json\":\"{{}}\"}}}}\n\n\
         event: message_delta\ndata: {{\"type\":\"message_delta\",\"delta\":{{\"stop_reason\":\"tool_use\"}}}}\n\n\
         event: message_stop\ndata: {{\"type\":\"message_stop\"}}\n\n"
    )
    .into_bytes()
}

#[tokio::test]
async fn a_tool_call_index_the_server_chose_is_bounded_on_both_providers() {
    let mock = MockLlm::start().await;
    for (kind, body) in [
        (ProviderKind::OpenAi, openai_call_at as fn(&str) -> Vec<u8>),
        (ProviderKind::Anthropic, anthropic_call_at),
    ] {
        // 4294967295 aborted the process, 20,000,000 cost 1.4 GB, u64::MAX panicked.
        for index in ["4294967295", "20000000", "18446744073709551615", "1024"] {
            let before = mock.requests().len();
            mock.push(Reply::Sse {
                body: body(index),
                split: Split::Whole,
            });
            let chunks = stream(provider(kind, &mock).as_ref(), &[Message::user("hi")]).await;
            let error = last_error(&chunks);
            assert_eq!(error.kind, ProviderErrorKind::Protocol, "{kind} {index}");
            assert!(!error.retryable, "{kind} {index}: not retried as a cut");
            assert!(
                error.message.contains(index) && error.message.contains("1024"),
                "{kind}: {}",
                error.message
            );
            assert_eq!(
                mock.requests().len(),
                before + 1,
                "{kind} {index}: no retry"
            );
        }
        // The largest accepted index still works, and costs one entry.
        mock.push(Reply::Sse {
            body: body("1023"),
            split: Split::Whole,
        });
        let chunks = stream(provider(kind, &mock).as_ref(), &[Message::user("hi")]).await;
        assert_eq!(done(&chunks).message.tool_calls.len(), 1, "{kind}");
    }
}

#[tokio::test]
async fn sparse_openai_indexes_keep_the_servers_order() {
    let mock = MockLlm::start().await;
    let body = concat!(
        "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":7,\"id\":\"late\",\"function\":{\"name\":\"bash\",\"arguments\":\"{}\"}}]}}]}\n\n",
        "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":2,\"id\":\"early\",\"function\":{\"name\":\"read_file\",\"arguments\":\"{}\"}}]}}]}\n\n",
        "data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n",
    );
    mock.push(Reply::Sse {
        body: body.as_bytes().to_vec(),
        split: Split::Every(7),
    });
    let chunks = stream(
        provider(ProviderKind::OpenAi, &mock).as_ref(),
        &[Message::user("hi")],
    )
    .await;
    let ids: Vec<String> = done(&chunks)
        .message
        .tool_calls
        .into_iter()
        .map(|call| call.id)
        .collect();
    assert_eq!(ids, ["early", "late"]);
}

#[tokio::test]
async fn too_many_calls_or_too_large_arguments_are_refused() {
    let mock = MockLlm::start().await;
    // Calls without an index, each with a new id: the 1025th is one too many.
    let mut body = String::new();
    for i in 0..1025 {
        body.push_str(&format!(
            "data: {{\"choices\":[{{\"delta\":{{\"tool_calls\":[{{\"id\":\"c{i}\",\"function\":{{\"name\":\"bash\",\"arguments\":\"{{}}\"}}}}]}}}}]}}\n\n"
        ));
    }
    body.push_str("data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n");
    mock.push(Reply::Sse {
        body: body.into_bytes(),
        split: Split::Whole,
    });
    let chunks = stream(
        provider(ProviderKind::OpenAi, &mock).as_ref(),
        &[Message::user("hi")],
    )
    .await;
    let error = last_error(&chunks);
    assert_eq!(error.kind, ProviderErrorKind::Protocol);
    assert!(error.message.contains("1024"), "{}", error.message);

    // Arguments streamed 1 MB at a time: the fifth megabyte is past the bound.
    let piece = "x".repeat(1024 * 1024);
    for kind in [ProviderKind::OpenAi, ProviderKind::Anthropic] {
        let mut body = String::new();
        if kind == ProviderKind::Anthropic {
            body.push_str("event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"t\",\"name\":\"bash\",\"input\":{}}}\n\n");
        }
        for _ in 0..6 {
            body.push_str(&match kind {
                ProviderKind::OpenAi => format!(
                    "data: {{\"choices\":[{{\"delta\":{{\"tool_calls\":[{{\"index\":0,\"id\":\"c\",\"function\":{{\"name\":\"bash\",\"arguments\":\"{piece}\"}}}}]}}}}]}}\n\n"
                ),
                ProviderKind::Anthropic => format!(
                    "event: content_block_delta\ndata: {{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{{\"type\":\"input_json_delta\",\"partial_json\":\"{piece}\"}}}}\n\n"
                ),
                ProviderKind::Responses => unreachable!("only the two kinds above"),
            });
        }
        mock.push(Reply::Sse {
            body: body.into_bytes(),
            split: Split::Every(64 * 1024),
        });
        let chunks = stream(provider(kind, &mock).as_ref(), &[Message::user("hi")]).await;
        let error = last_error(&chunks);
        assert_eq!(error.kind, ProviderErrorKind::Protocol, "{kind}");
        assert!(
            error.message.contains("arguments larger than 4 MB"),
            "{kind}: {}",
            error.message
        );
    }
}

/// A server that answers every request with `status`, `head`, then `filler` over and over
/// until `limit` bytes were sent (the test's bound on an "endless" body), or, when
/// `stall` is set, then holds the connection open in silence. Counts the bytes it sent.
async fn endless_server(
    status: u16,
    content_type: &'static str,
    head: &'static [u8],
    filler: Bytes,
    limit: usize,
    stall: bool,
) -> (String, Arc<AtomicUsize>) {
    let sent = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&sent);
    let app = Router::new().fallback(move || {
        let counter = Arc::clone(&counter);
        let piece = filler.clone();
        async move {
            let (tx, rx) = tokio::sync::mpsc::channel::<Result<Bytes, std::io::Error>>(1);
            tokio::spawn(async move {
                let mut total = head.len();
                if tx.send(Ok(Bytes::from_static(head))).await.is_err() {
                    return;
                }
                counter.fetch_add(head.len(), Ordering::SeqCst);
                while total < limit {
                    if tx.send(Ok(piece.clone())).await.is_err() {
                        return;
                    }
                    total += piece.len();
                    counter.fetch_add(piece.len(), Ordering::SeqCst);
                }
                if stall {
                    tx.closed().await;
                }
            });
            let body = futures_util::stream::unfold(rx, |mut rx| async move {
                rx.recv().await.map(|item| (item, rx))
            });
            Response::builder()
                .status(StatusCode::from_u16(status).unwrap())
                .header("content-type", content_type)
                .body(Body::from_stream(body))
                .unwrap()
        }
    });
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (format!("http://{addr}"), sent)
}

fn provider_at(kind: ProviderKind, base: &str, idle: Duration) -> Arc<dyn LlmProvider> {
    let base = match kind {
        ProviderKind::OpenAi | ProviderKind::Responses => format!("{base}/v1"),
        ProviderKind::Anthropic => base.to_owned(),
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

const MB: usize = 1024 * 1024;

fn spaces() -> Bytes {
    Bytes::from(vec![b' '; 64 * 1024])
}

/// 64 KB of SSE comment lines: valid framing the client must still count.
fn comment_lines() -> Bytes {
    let line = format!(": {}\n", "z".repeat(1021));
    Bytes::from(line.repeat(64))
}

#[tokio::test]
async fn a_huge_non_streamed_body_is_refused_at_the_cap() {
    // A body of "1 GB" as far as the client can tell: the test stops at 80 MB. The client
    // stops at 32 MB; the kernel's socket buffers on loopback can take several MB more before
    // the server's writes block, so the bound is well above the cap.
    let (base, sent) = endless_server(
        200,
        "application/json",
        b"{\"choices\": [",
        spaces(),
        80 * MB,
        false,
    )
    .await;
    for kind in [ProviderKind::OpenAi, ProviderKind::Anthropic] {
        let provider = provider_at(kind, &base, Duration::from_secs(5));
        let before = sent.load(Ordering::SeqCst);
        let error = tokio::time::timeout(
            PATIENCE,
            provider.generate(
                &[Message::user("hi")],
                &[],
                &CancellationToken::new(),
                &|_| {},
            ),
        )
        .await
        .expect("the call ends")
        .expect_err("a body past the cap is an error");
        assert_eq!(error.kind, ProviderErrorKind::Protocol, "{kind}");
        assert!(
            error.message.contains("larger than 32 MB"),
            "{kind}: {}",
            error.message
        );
        let delivered = sent.load(Ordering::SeqCst) - before;
        assert!(
            delivered < 80 * MB,
            "{kind}: the client stopped reading ({delivered} bytes sent)"
        );
    }
}

#[tokio::test]
async fn an_sse_line_without_an_end_is_refused_at_the_cap() {
    let (base, sent) = endless_server(
        200,
        "text/event-stream",
        b"data: ",
        Bytes::from(vec![b'a'; 64 * 1024]),
        16 * MB,
        false,
    )
    .await;
    for kind in [ProviderKind::OpenAi, ProviderKind::Anthropic] {
        let before = sent.load(Ordering::SeqCst);
        let chunks = stream(
            provider_at(kind, &base, Duration::from_secs(5)).as_ref(),
            &[Message::user("hi")],
        )
        .await;
        let error = last_error(&chunks);
        assert_eq!(error.kind, ProviderErrorKind::Protocol, "{kind}");
        assert!(!error.retryable);
        assert!(
            error.message.contains("line longer than"),
            "{}",
            error.message
        );
        let delivered = sent.load(Ordering::SeqCst) - before;
        assert!(
            delivered < 16 * MB,
            "{kind}: not read to the end ({delivered})"
        );
    }
}

#[tokio::test]
async fn a_stream_of_valid_events_is_bounded_in_total() {
    // One text delta of 1 MB after another: past 64 MB the answer is refused.
    let event = format!(
        "data: {{\"choices\":[{{\"delta\":{{\"content\":\"{}\"}}}}]}}\n\n",
        "y".repeat(MB)
    );
    let event: &'static [u8] = Box::leak(event.into_bytes().into_boxed_slice());
    let (base, _) = endless_server(
        200,
        "text/event-stream",
        event,
        comment_lines(),
        80 * MB,
        false,
    )
    .await;
    let provider = provider_at(ProviderKind::OpenAi, &base, Duration::from_secs(5));
    let mut rx = provider.generate_stream(&[Message::user("hi")], &[], CancellationToken::new());
    let last = tokio::time::timeout(PATIENCE, async {
        let mut last = None;
        while let Some(chunk) = rx.recv().await {
            last = Some(chunk);
        }
        last
    })
    .await
    .expect("the stream ends");
    let Some(StreamChunk::Error(error)) = last else {
        panic!("expected an error, got {last:?}");
    };
    assert_eq!(error.kind, ProviderErrorKind::Protocol);
    assert!(
        error.message.contains("larger than 64 MB"),
        "{}",
        error.message
    );
}

#[tokio::test]
async fn an_error_body_is_read_only_in_part_and_never_waited_on_forever() {
    // An endless 400 body: the message comes from its first 64 KB; the rest is never read.
    let (base, sent) = endless_server(
        400,
        "application/json",
        b"{\"error\": {\"type\": \"invalid_request_error\", \"message\": \"bad request\"}}",
        spaces(),
        64 * MB,
        false,
    )
    .await;
    let chunks = stream(
        provider_at(ProviderKind::Anthropic, &base, Duration::from_secs(5)).as_ref(),
        &[Message::user("hi")],
    )
    .await;
    let error = last_error(&chunks);
    assert_eq!(error.status, Some(400));
    assert!(error.message.contains("400"), "{}", error.message);
    assert!(
        sent.load(Ordering::SeqCst) < 32 * MB,
        "the body was not read to the end"
    );

    // A 500 whose body goes silent after its start: each attempt gives up after the idle time.
    let (base, _) = endless_server(500, "text/plain", b"upstream", spaces(), 1024, true).await;
    let chunks = stream(
        provider_at(ProviderKind::OpenAi, &base, Duration::from_millis(200)).as_ref(),
        &[Message::user("hi")],
    )
    .await;
    let error = last_error(&chunks);
    assert_eq!(error.status, Some(500));
    assert!(error.message.contains("4 attempts"), "{}", error.message);
}

#[tokio::test]
async fn a_401_echoing_an_altered_or_truncated_key_shows_none_of_it() {
    let mock = MockLlm::start().await;
    let truncated = &SECRET[..16];
    let mut altered = SECRET.to_owned();
    altered.replace_range(12..13, "Z");
    let aws = "AKIAIOSFODNN7EXAMPLE";
    let other = "ghp_0123456789abcdefghijABCDEFGHIJ";
    let echoes = [
        truncated.to_owned(),
        altered.clone(),
        aws.to_owned(),
        other.to_owned(),
    ];
    for (kind, echo) in [ProviderKind::OpenAi, ProviderKind::Anthropic]
        .into_iter()
        .flat_map(|kind| echoes.iter().map(move |echo| (kind, echo)))
    {
        mock.push(Reply::Status {
            status: 401,
            body: format!(
                r#"{{"error": {{"message": "Incorrect API key provided: {echo}. Find yours at the console.", "type": "invalid_request_error", "code": "invalid_api_key"}}}}"#
            ),
            headers: vec![],
        });
        let chunks = stream(provider(kind, &mock).as_ref(), &[Message::user("hi")]).await;
        let error = last_error(&chunks);
        assert_eq!(error.kind, ProviderErrorKind::Auth);
        assert!(
            error
                .message
                .contains("Incorrect API key provided: [redacted]."),
            "{kind}: {}",
            error.message
        );
        for secret_part in [&SECRET[..12], &SECRET[13..], aws, other] {
            assert!(
                !error.message.contains(secret_part),
                "{kind}: {secret_part} leaked: {}",
                error.message
            );
        }
    }

    // A retried failure's notice, and the non-streamed call, go through the same redaction.
    mock.push(Reply::Status {
        status: 503,
        body: format!("proxy saw key {truncated}"),
        headers: vec![],
    });
    mock.push(Reply::Json(crate::support::openai_text_json("ok")));
    let notices = std::sync::Mutex::new(Vec::new());
    let provider = provider(ProviderKind::OpenAi, &mock);
    provider
        .generate(
            &[Message::user("hi")],
            &[],
            &CancellationToken::new(),
            &|n| notices.lock().unwrap().push(n.reason),
        )
        .await
        .unwrap();
    mock.push(Reply::Status {
        status: 503,
        body: format!("proxy saw key {altered}"),
        headers: vec![],
    });
    mock.push(Reply::Sse {
        body: crate::support::openai_text_sse("ok"),
        split: Split::Whole,
    });
    let chunks = stream(provider.as_ref(), &[Message::user("hi")]).await;
    for chunk in &chunks {
        if let StreamChunk::Retry(notice) = chunk {
            notices.lock().unwrap().push(notice.reason.clone());
        }
    }
    let notices = notices.into_inner().unwrap();
    assert_eq!(notices.len(), 2, "{notices:?}");
    for reason in notices {
        assert!(
            reason.contains("[redacted]") && !reason.contains(&SECRET[..12]),
            "{reason}"
        );
    }
}

#[tokio::test]
async fn a_context_too_long_refusal_is_its_own_kind_and_never_retried() {
    let mock = MockLlm::start().await;
    let bodies = [
        (
            ProviderKind::OpenAi,
            r#"{"error": {"message": "This model's maximum context length is 128000 tokens. However, your messages resulted in 131072 tokens. Please reduce the length of the messages.", "type": "invalid_request_error", "param": "messages", "code": "context_length_exceeded"}}"#,
        ),
        (
            ProviderKind::Anthropic,
            r#"{"type": "error", "error": {"type": "invalid_request_error", "message": "prompt is too long: 208310 tokens > 200000 maximum"}}"#,
        ),
    ];
    for (kind, body) in bodies {
        for streamed in [true, false] {
            let before = mock.requests().len();
            mock.push(Reply::Status {
                status: 400,
                body: body.to_owned(),
                headers: vec![],
            });
            let provider = provider(kind, &mock);
            let error = if streamed {
                last_error(&stream(provider.as_ref(), &[Message::user("hi")]).await)
            } else {
                provider
                    .generate(
                        &[Message::user("hi")],
                        &[],
                        &CancellationToken::new(),
                        &|_| {},
                    )
                    .await
                    .unwrap_err()
            };
            assert_eq!(error.kind, ProviderErrorKind::ContextTooLong, "{kind}");
            assert_eq!(error.status, Some(400));
            assert!(!error.retryable);
            assert_eq!(mock.requests().len(), before + 1, "{kind}: not retried");
        }
    }
    // The same refusal sent as an error event inside a stream.
    let events = [
        (
            ProviderKind::Anthropic,
            "event: error\ndata: {\"type\": \"error\", \"error\": {\"type\": \"invalid_request_error\", \"message\": \"prompt is too long: 208310 tokens > 200000 maximum\"}}\n\n",
        ),
        (
            ProviderKind::OpenAi,
            "data: {\"error\": {\"message\": \"too many tokens\", \"type\": \"invalid_request_error\", \"code\": \"context_length_exceeded\"}}\n\n",
        ),
    ];
    for (kind, body) in events {
        mock.push(Reply::Sse {
            body: body.as_bytes().to_vec(),
            split: Split::Every(9),
        });
        let error =
            last_error(&stream(provider(kind, &mock).as_ref(), &[Message::user("hi")]).await);
        assert_eq!(
            error.kind,
            ProviderErrorKind::ContextTooLong,
            "{kind}: {error:?}"
        );
    }
    // Any other 400 stays an invalid request.
    mock.push(Reply::Status {
        status: 400,
        body: r#"{"type": "error", "error": {"type": "invalid_request_error", "message": "max_tokens: must be positive"}}"#.into(),
        headers: vec![],
    });
    let error = last_error(
        &stream(
            provider(ProviderKind::Anthropic, &mock).as_ref(),
            &[Message::user("hi")],
        )
        .await,
    );
    assert_eq!(error.kind, ProviderErrorKind::InvalidRequest);
}
