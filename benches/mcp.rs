//! MCP costs: (1) process start to the TUI's first frame with three configured MCP servers that
//! are slow to start, against none (it must be the same: servers start in the background);
//! (2) the latency of one MCP tool call through the registry to a stdio echo server (this
//! binary, started again as the suite's rmcp server), which is what MCP adds to a call.
//! Run with `cargo bench --bench mcp`; it prints a table for PERFORMANCE.md.

#[path = "../tests/it/support.rs"]
#[allow(dead_code)]
mod support;

#[path = "../tests/it/mcp/server.rs"]
#[allow(dead_code)]
mod server;

use std::io::Read;
use std::num::NonZeroU16;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use harness9::mcp::McpManager;
use harness9::mcp::config::{Scope, ServerSpec, parse};
use harness9::planning::{Mode, TodoStore};
use harness9::schema::ToolCall;
use harness9::tools::{Registry, ToolContext};
use portable_pty::{CommandBuilder, PtySize, native_pty_system};
use serde_json::json;
use support::MockLlm;

const READY: &str = "Ask harness9 to do something";

/// Process start until the screen shows the prompt's placeholder.
fn first_frame(home: &Path, workdir: &Path, mock: &MockLlm) -> Duration {
    let pair = native_pty_system()
        .openpty(PtySize {
            rows: 40,
            cols: 160,
            pixel_width: 0,
            pixel_height: 0,
        })
        .unwrap();
    let mut command = CommandBuilder::new(env!("CARGO_BIN_EXE_harness9"));
    command.arg("--trust");
    command.cwd(workdir);
    command.env_clear();
    command.env("PATH", std::env::var("PATH").unwrap_or_default());
    command.env("TERM", "xterm-256color");
    command.env("HOME", home);
    command.env("HARNESS9_HOME", home);
    command.env("OPENAI_API_KEY", "sk-bench");
    command.env("OPENAI_BASE_URL", mock.openai_base());
    let started = Instant::now();
    let mut child = pair.slave.spawn_command(command).unwrap();
    drop(pair.slave);
    let mut reader = pair.master.try_clone_reader().unwrap();
    let parser = Arc::new(Mutex::new(vt100::Parser::new(
        NonZeroU16::new(40).unwrap(),
        NonZeroU16::new(160).unwrap(),
        0,
    )));
    let feed = Arc::clone(&parser);
    std::thread::spawn(move || {
        let mut buffer = [0u8; 65536];
        while let Ok(n) = reader.read(&mut buffer) {
            if n == 0 {
                break;
            }
            feed.lock().unwrap().process(&buffer[..n]);
        }
    });
    let until = Instant::now() + Duration::from_secs(60);
    while !parser.lock().unwrap().screen().contents().contains(READY) {
        assert!(Instant::now() < until, "no first frame");
        std::thread::sleep(Duration::from_micros(200));
    }
    let elapsed = started.elapsed();
    let _ = child.kill();
    let _ = child.wait();
    elapsed
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(|a, b| a.partial_cmp(b).unwrap());
    values[values.len() / 2]
}

fn percentile(mut values: Vec<f64>, p: f64) -> f64 {
    values.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let index = ((values.len() - 1) as f64 * p).round() as usize;
    values[index]
}

fn first_frames(servers: bool, mock: &MockLlm) -> Vec<f64> {
    let dir = tempfile::tempdir().unwrap();
    let (home, workdir) = (dir.path().join("home"), dir.path().join("repo"));
    std::fs::create_dir_all(&workdir).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    if servers {
        // Three servers that take their time: a shell that waits 2 s before it would answer.
        let slow = json!({"command": "sh", "args": ["-c", "sleep 2"]});
        std::fs::write(
            home.join("mcp.json"),
            json!({"mcpServers": {"one": slow, "two": slow, "three": slow}}).to_string(),
        )
        .unwrap();
    }
    // One run to warm the caches, then the measured ones, alternating is left to the caller.
    first_frame(&home, &workdir, mock);
    (0..9)
        .map(|_| first_frame(&home, &workdir, mock).as_secs_f64() * 1000.0)
        .collect()
}

fn call_latencies() -> (Vec<f64>, String) {
    let exe = std::env::current_exe().unwrap();
    let definition =
        json!({"command": exe.display().to_string(), "env": {server::SERVER_ENV: "modern"}});
    let spec = ServerSpec {
        name: "b".into(),
        scope: Scope::User,
        transport: parse(&definition, &|_| None),
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async move {
        let manager = McpManager::start(vec![spec], Vec::new(), std::env::temp_dir());
        assert!(manager.wait_ready(Duration::from_secs(30)).await);
        let protocol = manager.statuses()[0].protocol.clone();
        let mut registry = Registry::new();
        registry.set_late_tools(Arc::new(manager.clone()));
        let ctx = ToolContext {
            workdir: std::env::temp_dir(),
            cancel: Default::default(),
            mode: Mode::Yolo,
            todos: Arc::new(TodoStore::default()),
            read_guard: Default::default(),
            outputs: None,
            editor_files: None,
            editor_terminal: None,
        };
        let call = ToolCall {
            id: "c".into(),
            name: "mcp__b__echo".into(),
            arguments: json!({"message": "ping"}).to_string(),
        };
        for _ in 0..200 {
            let result = registry.execute(&call, &ctx).await;
            assert_eq!(result.output, "echo: ping");
        }
        let mut times = Vec::new();
        for _ in 0..2000 {
            let started = Instant::now();
            let result = registry.execute(&call, &ctx).await;
            times.push(started.elapsed().as_secs_f64() * 1e6);
            assert!(!result.is_error);
        }
        manager.shutdown();
        (times, protocol)
    })
}

fn main() {
    if std::env::var_os(server::SERVER_ENV).is_some() {
        // Started by `call_latencies` as the stdio echo server.
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async {
            use rmcp::ServiceExt;
            if let Ok(running) = server::TestServer::new(false)
                .serve(rmcp::transport::stdio())
                .await
            {
                let _ = running.waiting().await;
            }
        });
        return;
    }
    if std::env::args().any(|a| a == "--test" || a == "--list") {
        return; // `cargo test --benches` only checks that it builds.
    }
    let mock = MockLlm::start_in_background();
    let without = first_frames(false, &mock);
    let with = first_frames(true, &mock);
    let (calls, protocol) = call_latencies();
    println!("| measure | value |");
    println!("| --- | --- |");
    println!(
        "| first frame, no MCP servers (median of 9) | {:.1} ms (min {:.1}, max {:.1}) |",
        median(without.clone()),
        without.iter().cloned().fold(f64::MAX, f64::min),
        without.iter().cloned().fold(0.0, f64::max)
    );
    println!(
        "| first frame, three slow MCP servers (median of 9) | {:.1} ms (min {:.1}, max {:.1}) |",
        median(with.clone()),
        with.iter().cloned().fold(f64::MAX, f64::min),
        with.iter().cloned().fold(0.0, f64::max)
    );
    println!(
        "| MCP tool call to a stdio echo server, protocol {protocol} (2,000 calls) | median {:.0} µs, p90 {:.0} µs, p99 {:.0} µs |",
        median(calls.clone()),
        percentile(calls.clone(), 0.9),
        percentile(calls, 0.99)
    );
}
