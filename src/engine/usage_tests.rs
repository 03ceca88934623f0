//! What a run counts when its server sends no usage (llama.cpp's server, some proxies).

use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use super::tests::{builder, call, calls_reply, drain, text_reply, weather};
use super::*;
use crate::memory::{NewSession, SessionStore, SqliteSession};
use crate::provider::ScriptedProvider;

#[tokio::test]
async fn a_server_without_usage_leaves_estimated_totals_not_zeros() {
    let store = SessionStore::open_in_memory().unwrap();
    let record = store
        .create(NewSession {
            workdir: "/w".into(),
            provider: "scripted".into(),
            model: "script".into(),
            mode: "default".into(),
        })
        .await
        .unwrap();
    let provider = Arc::new(
        ScriptedProvider::new([
            calls_reply(
                "Looking.",
                vec![call("c1", "get_weather", r#"{"city":"Oslo"}"#)],
            ),
            text_reply("Cold, about minus five."),
        ])
        .without_usage(),
    );
    let engine = Arc::new(
        builder(&provider, vec![weather()])
            .session(Arc::new(SqliteSession::new(
                store.clone(),
                record.id.clone(),
            )))
            .build(),
    );
    let events = drain(engine.run_stream("weather?".into(), CancellationToken::new())).await;

    // Each finished call says what harness9 counted for it, marked as its estimate.
    let counted: Vec<&TokenUpdate> = events
        .iter()
        .filter_map(|event| match &event.kind {
            EventKind::TokenUpdate(update) if update.counts_toward_totals() => Some(update),
            _ => None,
        })
        .collect();
    assert_eq!(counted.len(), 2, "one per model call: {counted:?}");
    assert!(counted.iter().all(|update| update.estimated));
    assert!(
        counted
            .iter()
            .all(|update| update.input_tokens > 0 && update.output_tokens > 0)
    );

    // The run's totals are their sum, said to be an estimate, never a silent zero.
    let Some(EventKind::Done(done)) = events.last().map(|event| &event.kind) else {
        panic!("the run ends done: {events:?}");
    };
    assert!(done.estimated);
    assert_eq!(
        done.input_tokens,
        counted
            .iter()
            .map(|update| update.input_tokens)
            .sum::<u64>()
    );
    assert_eq!(
        done.output_tokens,
        counted
            .iter()
            .map(|update| update.output_tokens)
            .sum::<u64>()
    );
    assert_eq!(done.cost_usd, None, "no count, no known cost");
    let wire = events.last().unwrap().to_json();
    assert_eq!(wire["data"]["estimated"], true, "{wire}");

    // And the session keeps them, for `sessions` and the next resume.
    store.flush().await.unwrap();
    let stored = store.get(&record.id).await.unwrap().unwrap();
    assert_eq!(stored.totals.input_tokens, done.input_tokens);
    assert_eq!(stored.totals.output_tokens, done.output_tokens);
}
