//! `harness9 eval`'s own overhead per task: the real binary runs each task of `evals/` against a
//! local mock server that replays the task's recorded trajectory at once, so the model costs
//! nothing and what is left is harness9's. For each task it reports the median over a few runs
//! of: the process's whole life, the task's wall time as eval reports it, the agent's run (session
//! opened to closed, with its tool calls), the task's own `setup` and `check` scripts, and eval's
//! overhead (wall time less setup, agent and check: the copy of `repo/`, the temporary folder,
//! the todo file). Run with `cargo bench --bench eval`; the table is in docs/PERFORMANCE.md.

#[path = "../tests/it/support.rs"]
#[allow(dead_code)]
mod support;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::Value;
use support::MockLlm;

const RUNS: usize = 5;

/// One run of one task: (process time, the task's JSON result).
fn run(task: &Path, home: &Path) -> (Duration, Value) {
    let mock = MockLlm::start_in_background();
    support::replay_recorded(&mock, task);
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_harness9"));
    command
        .args(["eval", "--json"])
        .arg(task)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("HARNESS9_HOME", home)
        .env("OPENAI_API_KEY", "sk-bench")
        .env("OPENAI_BASE_URL", mock.openai_base());
    // The Rust task's check runs cargo: the toolchain is where the user's HOME has it.
    let user_home = std::env::var("HOME").unwrap_or_default();
    for (name, default) in [("RUSTUP_HOME", ".rustup"), ("CARGO_HOME", ".cargo")] {
        let value = std::env::var(name).unwrap_or_else(|_| format!("{user_home}/{default}"));
        command.env(name, value);
    }
    let started = Instant::now();
    let output = command.output().expect("harness9 runs");
    let elapsed = started.elapsed();
    let line = String::from_utf8_lossy(&output.stdout);
    let result: Value = serde_json::from_str(line.trim()).expect("one JSON result");
    assert_eq!(result["pass"], true, "{result}");
    (elapsed, result)
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn main() {
    let evals = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("evals");
    let mut tasks: Vec<PathBuf> = std::fs::read_dir(&evals)
        .expect("evals/")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.join("task.toml").is_file())
        .collect();
    tasks.sort();
    let home = tempfile::tempdir().expect("a home");
    println!(
        "| task | tool calls | process ms | wall ms | agent ms | setup ms | check ms | eval overhead ms | all but agent and scripts ms |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|");
    let mut overheads = Vec::new();
    let mut agents = Vec::new();
    for task in &tasks {
        let mut columns: [Vec<f64>; 7] = Default::default();
        let mut tools = 0;
        for _ in 0..RUNS {
            let (process, result) = run(task, home.path());
            let ms = |key: &str| result[key].as_u64().unwrap_or(0) as f64;
            let wall = ms("wall_ms");
            let parts = ms("setup_ms") + ms("agent_ms") + ms("check_ms");
            let overhead = wall - parts;
            let outside = process.as_secs_f64() * 1000.0 - parts;
            tools = result["tool_calls"].as_u64().unwrap_or(0);
            for (column, value) in columns.iter_mut().zip([
                process.as_secs_f64() * 1000.0,
                wall,
                ms("agent_ms"),
                ms("setup_ms"),
                ms("check_ms"),
                overhead,
                outside,
            ]) {
                column.push(value);
            }
        }
        let medians: Vec<f64> = columns.into_iter().map(median).collect();
        overheads.push(medians[6]);
        agents.push(medians[2]);
        let name = task.file_name().unwrap_or_default().to_string_lossy();
        println!(
            "| {name} | {tools} | {:.0} | {:.0} | {:.0} | {:.0} | {:.0} | {:.0} | {:.0} |",
            medians[0], medians[1], medians[2], medians[3], medians[4], medians[5], medians[6]
        );
    }
    println!(
        "\nmedian over tasks: all but the agent and the scripts (process start to exit) {:.0} ms, agent run with an instant model {:.0} ms",
        median(overheads),
        median(agents)
    );
}
