//! What a sub-agent costs beyond its model calls (issue 17), with a model that answers at once.
//! `with_task`: a parent turn that calls `task`, a child that answers in one call, the parent's
//! last turn (three model calls); `without_task`: the same three model calls with a trivial tool
//! in place of the child. The difference is the child's start (its session row, its tool set,
//! its engine), prompt building, event forwarding and teardown. Both store their sessions in an
//! in-memory `sessions.db`. Then, once: the live heap of a parent with eight children running at
//! the same time, each parked in its first model call.
//! Run with `cargo bench --bench subagents`.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use harness9::agents::AgentCatalog;
use harness9::engine::AgentEngine;
use harness9::engine::subagent::{SubagentBase, SubagentLauncher};
use harness9::memory::{NewSession, SessionStore, SqliteSession};
use harness9::provider::{ChunkReceiver, Completion, LlmProvider, ScriptStep, ScriptedProvider};
use harness9::schema::ToolKind;
use harness9::schema::{
    Message, ProviderError, RetryNotice, StreamChunk, ToolCall, ToolDefinition, Usage,
};
use harness9::tools::{ReadFile, Registry, Tool, ToolContext, ToolError};
use tokio_util::sync::CancellationToken;

/// The system allocator, counting the bytes live now.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size(), Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

fn main() {
    divan::main();
    eight_children_memory();
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

fn call(id: &str, name: &str, arguments: &str) -> ToolCall {
    ToolCall {
        id: id.into(),
        name: name.into(),
        arguments: arguments.into(),
    }
}

fn calls_reply(calls: Vec<ToolCall>) -> ScriptStep {
    let mut message = Message::assistant("");
    message.tool_calls = calls;
    ScriptStep::Reply(message)
}

/// A read-only tool that does nothing: the baseline's stand-in for the child.
struct Noop;

#[async_trait]
impl Tool for Noop {
    fn name(&self) -> &str {
        "noop"
    }
    fn description(&self) -> &str {
        "does nothing"
    }
    fn input_schema(&self) -> serde_json::Value {
        serde_json::json!({"type": "object"})
    }
    fn kind(&self) -> ToolKind {
        ToolKind::ReadOnly
    }
    async fn execute(&self, _: serde_json::Value, _: &ToolContext) -> Result<String, ToolError> {
        Ok("nothing".into())
    }
}

/// A parent engine over `provider`, with `task` (children get `read_file` and `noop`), bound
/// to a fresh session of `store`.
async fn parent(provider: Arc<dyn LlmProvider>, store: &SessionStore) -> AgentEngine {
    let mut registry = Registry::new();
    registry.register(Arc::new(ReadFile)).unwrap();
    registry.register(Arc::new(Noop)).unwrap();
    let for_children = Arc::clone(&provider);
    let mut tools = registry.clone();
    SubagentLauncher::register(
        &mut tools,
        Arc::new(AgentCatalog::builtin()),
        base(&registry, for_children, store),
    );
    let record = store
        .create(NewSession {
            workdir: "/bench".into(),
            provider: "scripted".into(),
            model: "script".into(),
            mode: "default".into(),
        })
        .await
        .unwrap();
    AgentEngine::builder(provider, Arc::new(tools), std::env::temp_dir())
        .session(Arc::new(SqliteSession::new(store.clone(), record.id)))
        .build()
}

fn base(registry: &Registry, provider: Arc<dyn LlmProvider>, store: &SessionStore) -> SubagentBase {
    SubagentBase {
        tools: registry.clone(),
        providers: Arc::new(move |_: &str| Ok(Arc::clone(&provider))),
        small_model: None,
        workdir: std::env::temp_dir(),
        max_turns: 10,
        skills: Default::default(),
        tool_timeout: Some(Duration::from_secs(60)),
        max_concurrent_tools: 0,
        context_window: 128_000,
        hooks: Default::default(),
        rules: Arc::new(harness9::permission::rules::PermissionRules::none()),
        store: Some(store.clone()),
        observer: Arc::new(harness9::observe::NoopObserver),
        checkpoints: None,
        language_servers: None,
    }
}

const TASK: &str = r#"{"agent":"explore","description":"look","prompt":"find the parser"}"#;

#[divan::bench(sample_count = 200)]
fn with_task(bencher: divan::Bencher) {
    let rt = runtime();
    let store = SessionStore::open_in_memory().unwrap();
    bencher.bench_local(|| {
        rt.block_on(async {
            let provider = Arc::new(ScriptedProvider::new([
                calls_reply(vec![call("t1", "task", TASK)]),
                ScriptStep::Reply(Message::assistant("the parser is in src/parse.rs")),
                ScriptStep::Reply(Message::assistant("done")),
            ]));
            let engine = parent(provider, &store).await;
            let events = drain(Arc::new(engine)).await;
            assert!(events > 0);
        })
    });
}

#[divan::bench(sample_count = 200)]
fn without_task(bencher: divan::Bencher) {
    let rt = runtime();
    let store = SessionStore::open_in_memory().unwrap();
    bencher.bench_local(|| {
        rt.block_on(async {
            let provider = Arc::new(ScriptedProvider::new([
                calls_reply(vec![call("t1", "noop", "{}")]),
                calls_reply(vec![call("t2", "noop", "{}")]),
                ScriptStep::Reply(Message::assistant("done")),
            ]));
            let engine = parent(provider, &store).await;
            let events = drain(Arc::new(engine)).await;
            assert!(events > 0);
        })
    });
}

async fn drain(engine: Arc<AgentEngine>) -> usize {
    let mut rx = engine.run_stream("go".into(), CancellationToken::new());
    let mut count = 0;
    while let Some(event) = rx.recv().await {
        if let harness9::engine::EventKind::Error(failure) = &event.kind {
            panic!("{}", failure.message);
        }
        count += 1;
    }
    count
}

/// The parent asks for eight tasks; each child's first call parks until all eight are in,
/// when the live heap is read; then they answer.
struct Parked {
    arrived: AtomicUsize,
    all_in: tokio::sync::Notify,
    live_at_peak: AtomicUsize,
}

#[async_trait]
impl LlmProvider for ParkedProvider {
    fn name(&self) -> &str {
        "scripted"
    }
    fn model(&self) -> &str {
        "script"
    }
    async fn generate(
        &self,
        _: &[Message],
        _: &[ToolDefinition],
        _: &CancellationToken,
        _: &(dyn Fn(RetryNotice) + Send + Sync),
    ) -> Result<Completion, ProviderError> {
        unreachable!("streamed only")
    }
    fn generate_stream(
        &self,
        messages: &[Message],
        _: &[ToolDefinition],
        _cancel: CancellationToken,
    ) -> ChunkReceiver {
        let child = messages[0].content.contains("sub-agent");
        let answered = messages.iter().any(|m| m.tool_call_id.is_some());
        let parked = Arc::clone(&self.0);
        let (tx, rx) = tokio::sync::mpsc::channel(4);
        tokio::spawn(async move {
            let message = if !child && !answered {
                let mut message = Message::assistant("");
                message.tool_calls = (0..8)
                    .map(|i| call(&format!("t{i}"), "task", TASK))
                    .collect();
                message
            } else if child {
                let notified = parked.all_in.notified();
                if parked.arrived.fetch_add(1, Ordering::SeqCst) + 1 == 8 {
                    parked
                        .live_at_peak
                        .store(LIVE.load(Ordering::SeqCst), Ordering::SeqCst);
                    parked.all_in.notify_waiters();
                } else {
                    notified.await;
                }
                Message::assistant("found it in src/parse.rs at line 42")
            } else {
                Message::assistant("done")
            };
            let usage = Some(Usage {
                input_tokens: 100,
                output_tokens: 10,
                ..Usage::default()
            });
            let _ = tx.send(StreamChunk::Done { message, usage }).await;
        });
        rx
    }
}

struct ParkedProvider(Arc<Parked>);

fn eight_children_memory() {
    let rt = runtime();
    rt.block_on(async {
        let store = SessionStore::open_in_memory().unwrap();
        // One warm-up run, so lazily built state (the tokio workers, SQLite's caches) is not
        // counted as the children's.
        for round in 0..2 {
            let parked = Arc::new(Parked {
                arrived: AtomicUsize::new(0),
                all_in: tokio::sync::Notify::new(),
                live_at_peak: AtomicUsize::new(0),
            });
            let provider: Arc<dyn LlmProvider> = Arc::new(ParkedProvider(Arc::clone(&parked)));
            let engine = Arc::new(parent(provider, &store).await);
            let before = LIVE.load(Ordering::SeqCst);
            drain(engine).await;
            let peak = parked.live_at_peak.load(Ordering::SeqCst);
            let after = LIVE.load(Ordering::SeqCst);
            if round == 1 {
                println!(
                    "eight concurrent children: live heap {} KB above the parent's before the \
                     run ({} KB per child, parent's share included); {} KB above it after the run",
                    (peak.saturating_sub(before)) / 1024,
                    (peak.saturating_sub(before)) / 8 / 1024,
                    (after as i64 - before as i64) / 1024
                );
            }
        }
    });
}
