//! Tools running side by side (overlap, order, the semaphore) and what observers and tracing
//! subscribers see of a run. The tools that take time sleep on tokio's paused clock: it moves
//! only when every task waits, so their overlap is exact and costs no real time.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::time::Instant;

use tokio_util::sync::CancellationToken;

use super::tests::{builder, call, calls_reply, drain, text_reply, tool, weather};
use super::*;
use crate::memory::InMemorySession;
use crate::provider::ScriptedProvider;
use crate::schema::ToolKind;

#[tokio::test(start_paused = true)]
async fn concurrent_tools_overlap_and_land_in_the_models_order() {
    let spans: Arc<Mutex<Vec<(u64, Instant, Instant)>>> = Arc::default();
    let recorded = Arc::clone(&spans);
    let sleeper = tool("sleep", ToolKind::ReadOnly, move |args, _| {
        let recorded = Arc::clone(&recorded);
        async move {
            let ms = args["ms"].as_u64().unwrap();
            let start = Instant::now();
            tokio::time::sleep(Duration::from_millis(ms)).await;
            recorded.lock().unwrap().push((ms, start, Instant::now()));
            Ok(format!("slept {ms}"))
        }
    });
    let provider = Arc::new(ScriptedProvider::new([
        calls_reply(
            "",
            vec![
                call("a", "sleep", r#"{"ms":150}"#),
                call("b", "sleep", r#"{"ms":30}"#),
                call("c", "sleep", r#"{"ms":90}"#),
            ],
        ),
        text_reply("done"),
    ]));
    let engine = Arc::new(builder(&provider, vec![sleeper]).build());
    let events = drain(engine.run_stream("go".into(), CancellationToken::new())).await;

    let finished: Vec<_> = events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::ToolResult(o) => Some(o.result.tool_call_id.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(
        finished,
        ["b", "c", "a"],
        "results are reported as tools finish"
    );
    let observation: Vec<_> = provider.calls()[1]
        .messages
        .iter()
        .filter_map(|m| m.tool_call_id.clone())
        .collect();
    assert_eq!(
        observation,
        ["a", "b", "c"],
        "but appended in the model's order"
    );
    let spans = spans.lock().unwrap();
    let latest_start = spans.iter().map(|s| s.1).max().unwrap();
    let earliest_end = spans.iter().map(|s| s.2).min().unwrap();
    assert!(
        latest_start < earliest_end,
        "all three ran at the same time"
    );
}

#[tokio::test(start_paused = true)]
async fn the_semaphore_bounds_concurrency() {
    let running = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let peak = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let (r, p) = (Arc::clone(&running), Arc::clone(&peak));
    let counted = tool("count", ToolKind::ReadOnly, move |_, _| {
        let (r, p) = (Arc::clone(&r), Arc::clone(&p));
        async move {
            use std::sync::atomic::Ordering;
            let now = r.fetch_add(1, Ordering::SeqCst) + 1;
            p.fetch_max(now, Ordering::SeqCst);
            tokio::time::sleep(Duration::from_millis(20)).await;
            r.fetch_sub(1, Ordering::SeqCst);
            Ok(String::new())
        }
    });
    let calls = (0..6)
        .map(|i| call(&format!("c{i}"), "count", "{}"))
        .collect();
    let provider = Arc::new(ScriptedProvider::new([
        calls_reply("", calls),
        text_reply("ok"),
    ]));
    let engine = Arc::new(
        builder(&provider, vec![counted])
            .max_concurrent_tools(2)
            .build(),
    );
    drain(engine.run_stream("go".into(), CancellationToken::new())).await;
    assert_eq!(peak.load(std::sync::atomic::Ordering::SeqCst), 2);
}

#[tokio::test]
async fn the_tracing_observer_sees_interaction_and_turns() {
    struct Recording(Mutex<Vec<String>>);
    impl crate::observe::EngineObserver for Recording {
        fn on_interaction_start(&self, session_id: &str, _: &str) -> tracing::Span {
            self.0.lock().unwrap().push(format!("start {session_id}"));
            tracing::Span::none()
        }
        fn on_interaction_end(&self, _: &tracing::Span, turns: u32, error: Option<&str>) {
            self.0
                .lock()
                .unwrap()
                .push(format!("end {turns} {error:?}"));
        }
        fn on_turn_start(&self, _: &tracing::Span, turn: u32) -> tracing::Span {
            self.0.lock().unwrap().push(format!("turn {turn}"));
            tracing::Span::none()
        }
        fn on_turn_end(&self, _: &tracing::Span, turn: u32, tools: bool) {
            self.0
                .lock()
                .unwrap()
                .push(format!("turn end {turn} {tools}"));
        }
    }
    let observer = Arc::new(Recording(Mutex::default()));
    let provider = Arc::new(ScriptedProvider::new([
        calls_reply("", vec![call("1", "get_weather", r#"{"city":"A"}"#)]),
        text_reply("ok"),
    ]));
    let engine = builder(&provider, vec![weather()])
        .session(Arc::new(InMemorySession::new("sid")))
        .observer(observer.clone())
        .build();
    engine
        .run("go", CancellationToken::new(), &|_| {})
        .await
        .unwrap();
    assert_eq!(
        *observer.0.lock().unwrap(),
        [
            "start sid",
            "turn 1",
            "turn end 1 true",
            "turn 2",
            "turn end 2 false",
            "end 2 None"
        ]
    );
}

#[tokio::test]
async fn a_subscriber_sees_interaction_turn_llm_call_and_tool_call() {
    use tracing_subscriber::layer::{Context, SubscriberExt};
    use tracing_subscriber::registry::LookupSpan;

    type Pairs = Arc<Mutex<Vec<(String, Option<String>)>>>;
    struct Tree(Pairs);
    impl<S: tracing::Subscriber + for<'a> LookupSpan<'a>> tracing_subscriber::Layer<S> for Tree {
        fn on_new_span(
            &self,
            _: &tracing::span::Attributes<'_>,
            id: &tracing::span::Id,
            ctx: Context<'_, S>,
        ) {
            let span = ctx.span(id).unwrap();
            let parent = span.parent().map(|p| p.name().to_owned());
            self.0
                .lock()
                .unwrap()
                .push((span.name().to_owned(), parent));
        }
    }
    let pairs: Pairs = Arc::default();
    let subscriber = tracing_subscriber::registry().with(Tree(Arc::clone(&pairs)));
    // Interest in each callsite is cached process-wide: a test running beside this one with no
    // subscriber could cache "never" and hide spans from this thread's subscriber. A global
    // subscriber that answers "sometimes" keeps the per-call check, which consults this one.
    static SOMETIMES: std::sync::Once = std::sync::Once::new();
    SOMETIMES.call_once(|| {
        let _ = tracing::subscriber::set_global_default(Sometimes);
        tracing::callsite::rebuild_interest_cache();
    });
    let _guard = tracing::subscriber::set_default(subscriber);

    let provider = Arc::new(ScriptedProvider::new([
        calls_reply("", vec![call("1", "get_weather", r#"{"city":"A"}"#)]),
        text_reply("ok"),
    ]));
    let engine = builder(&provider, vec![weather()])
        .observer(Arc::new(crate::observe::TracingObserver))
        .build();
    engine
        .run("go", CancellationToken::new(), &|_| {})
        .await
        .unwrap();
    let pairs = pairs.lock().unwrap().clone();
    let has = |name: &str, parent: &str| {
        pairs
            .iter()
            .any(|(n, p)| n == name && p.as_deref() == Some(parent))
    };
    assert!(pairs.contains(&("interaction".into(), None)), "{pairs:?}");
    assert!(has("turn", "interaction"), "{pairs:?}");
    assert!(has("llm_call", "turn"), "{pairs:?}");
    assert!(has("tool_call", "turn"), "{pairs:?}");
}

/// Wants to be asked about every callsite every time, and records nothing itself.
struct Sometimes;

impl tracing::Subscriber for Sometimes {
    fn register_callsite(
        &self,
        _: &'static tracing::Metadata<'static>,
    ) -> tracing::subscriber::Interest {
        tracing::subscriber::Interest::sometimes()
    }
    fn enabled(&self, _: &tracing::Metadata<'_>) -> bool {
        false
    }
    fn new_span(&self, _: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        tracing::span::Id::from_u64(1)
    }
    fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}
    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
    fn event(&self, _: &tracing::Event<'_>) {}
    fn enter(&self, _: &tracing::span::Id) {}
    fn exit(&self, _: &tracing::span::Id) {}
}
