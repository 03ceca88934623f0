//! What the tool-call chain adds to each tool call (issue 15). `decide_only` is the permission
//! decision alone, what the engine called before the chain; `chain_without_hooks` is the whole
//! chain with no command hook configured (span, output bound, permission); `chain_one_hook` the
//! same with one trivial `PreToolUse` command hook (`true`), which starts a process per call.
//! Run with `cargo bench --bench hooks`.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use divan::Bencher;
use harness9::hooks::settings::{CommandHook, HookEvent, Matcher, Origin};
use harness9::hooks::{
    ChainCall, CommandStage, Hooks, ObserveStage, OutputBound, PermissionStage, ToolChain, ToolHook,
};
use harness9::permission::rules::PermissionRules;
use harness9::permission::{CallInput, decide};
use harness9::planning::Mode;
use harness9::schema::ToolResult;
use harness9::tools::{ReadFile, Tool};
use tokio_util::sync::CancellationToken;

fn main() {
    divan::main();
}

fn workdir() -> PathBuf {
    std::env::temp_dir().canonicalize().unwrap()
}

fn rules(work: &std::path::Path) -> Arc<PermissionRules> {
    Arc::new(PermissionRules::new(work, &work.join("no-home"), true))
}

fn chain(rules: &Arc<PermissionRules>, hooks: Option<Arc<Hooks>>) -> ToolChain {
    let mut stages: Vec<Arc<dyn ToolHook>> = vec![Arc::new(ObserveStage), Arc::new(OutputBound)];
    if let Some(hooks) = hooks {
        stages.push(Arc::new(CommandStage { hooks }));
    }
    stages.push(Arc::new(PermissionStage {
        rules: Arc::clone(rules),
        created: None,
    }));
    ToolChain::new(stages)
}

fn call(work: &std::path::Path) -> ChainCall {
    ChainCall {
        tool: Arc::new(ReadFile),
        id: "call_1".into(),
        arguments: serde_json::json!({"path": "Cargo.toml"}),
        mode: Mode::Default,
        workdir: work.to_path_buf(),
        session_id: "bench".into(),
        granted: HashSet::new(),
        hook_allowed: false,
        rewritten: false,
        span: tracing::Span::none(),
        notices: Vec::new(),
        cancel: CancellationToken::new(),
    }
}

/// One pass through the chain, before and after, as the engine makes it.
async fn through(chain: &ToolChain, work: &std::path::Path) -> ToolResult {
    let mut call = call(work);
    let (_, passed) = chain.before(&mut call).await;
    let mut result = ToolResult::ok("call_1", "contents");
    chain.after(passed, &mut call, &mut result, true).await;
    result
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

#[divan::bench]
fn decide_only(bencher: Bencher) {
    let work = workdir();
    let rules = rules(&work);
    let arguments = serde_json::json!({"path": "Cargo.toml"});
    let granted = HashSet::new();
    bencher.bench_local(|| {
        let input = CallInput::new(&ReadFile as &dyn Tool, &arguments, Mode::Default, &work);
        decide(&input, &granted, &rules)
    });
}

#[divan::bench]
fn chain_without_hooks(bencher: Bencher) {
    let work = workdir();
    let rules = rules(&work);
    let chain = chain(&rules, None);
    let runtime = runtime();
    bencher.bench_local(|| runtime.block_on(through(&chain, &work)));
}

#[divan::bench(sample_count = 30)]
fn chain_one_hook(bencher: Bencher) {
    let work = workdir();
    let rules = rules(&work);
    let hook = CommandHook {
        event: HookEvent::PreToolUse,
        matcher: Matcher::All,
        command: "true".into(),
        timeout: Duration::from_secs(60),
        origin: Origin::User,
        file: "settings.json".into(),
    };
    let hooks = Arc::new(Hooks::new(vec![hook], work.clone()));
    let chain = chain(&rules, Some(hooks));
    let runtime = runtime();
    bencher.bench_local(|| runtime.block_on(through(&chain, &work)));
}
