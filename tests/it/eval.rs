//! `harness9 eval` through the real binary: every task of `evals/` passes with its recorded
//! trajectory (replayed by the mock server), a model that does nothing passes only the tasks that
//! ask for nothing, and the harness's own cases (setup failure, timeout, concurrency, JSON).

use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::exec::{Run, json_lines};
use crate::support::{Gate, MockLlm, PATIENCE, Reply, Split, openai_text_sse, replay_recorded};

fn evals() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("evals")
}

fn eval(run: &Run, mock: &MockLlm, args: &[&str]) -> std::process::Output {
    let mut all = vec!["eval"];
    all.extend_from_slice(args);
    let mut command = run.command(mock, &all);
    // The Rust task's check runs cargo: the test's HOME is a scratch folder, so rustup and
    // cargo are told where the machine's toolchain lives.
    let home = std::env::var("HOME").unwrap_or_default();
    for (name, default) in [("RUSTUP_HOME", ".rustup"), ("CARGO_HOME", ".cargo")] {
        let value = std::env::var(name).unwrap_or_else(|_| format!("{home}/{default}"));
        command.env(name, value);
    }
    command.output().expect("harness9 runs")
}

fn tasks() -> Vec<PathBuf> {
    let mut tasks: Vec<PathBuf> = std::fs::read_dir(evals())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("task.toml").is_file())
        .collect();
    tasks.sort();
    tasks
}

#[test]
fn every_task_passes_with_its_recorded_trajectory() {
    let tasks = tasks();
    assert!(tasks.len() >= 12, "{tasks:?}");
    for task in tasks {
        let mock = MockLlm::start_in_background();
        let run = Run::new();
        let tools = replay_recorded(&mock, &task);
        let out = eval(&run, &mock, &["--json", task.to_str().unwrap()]);
        let results = json_lines(&out.stdout);
        assert_eq!(results.len(), 1, "{}", String::from_utf8_lossy(&out.stderr));
        let result = &results[0];
        assert_eq!(result["pass"], true, "{}: {result}", task.display());
        assert_eq!(out.status.code(), Some(0));
        assert_eq!(result["tool_calls"], tools, "{result}");
        assert!(result["session_id"].is_string() && result["error"].is_null());
        for key in ["turns", "input_tokens", "output_tokens", "wall_ms"] {
            assert!(result[key].as_u64().is_some(), "{key}: {result}");
        }
        // The phases are parts of the wall time.
        let part = |key: &str| {
            result[key]
                .as_u64()
                .unwrap_or_else(|| panic!("{key}: {result}"))
        };
        let parts = part("setup_ms") + part("agent_ms") + part("check_ms");
        assert!(parts <= part("wall_ms"), "{result}");
    }
}

#[test]
fn a_model_that_does_nothing_passes_only_the_tasks_that_ask_for_nothing() {
    let mock = MockLlm::start_in_background();
    mock.set_fallback(Reply::Sse {
        body: openai_text_sse("I looked and changed nothing."),
        split: Split::Whole,
    });
    let run = Run::new();
    let out = eval(
        &run,
        &mock,
        &["--json", "-j", "2", evals().to_str().unwrap()],
    );
    assert_eq!(out.status.code(), Some(1));
    let results = json_lines(&out.stdout);
    assert_eq!(results.len(), tasks().len());
    let passed: Vec<&str> = results
        .iter()
        .filter(|r| r["pass"] == true)
        .map(|r| r["task"].as_str().unwrap())
        .collect();
    println!("passed while doing nothing: {passed:?}");
    for task in &passed {
        assert!(
            ["plan-changes-nothing", "protected-path-untouched"].contains(task),
            "{task} passed without the agent doing anything: its check is not real"
        );
    }
}

fn write_task(root: &Path, name: &str, toml: &str) {
    let dir = root.join(name);
    std::fs::create_dir_all(dir.join("repo")).unwrap();
    std::fs::write(dir.join("task.toml"), toml).unwrap();
    std::fs::write(dir.join("repo/seed.txt"), "seed\n").unwrap();
}

#[test]
fn setup_failures_timeouts_concurrency_and_the_summary() {
    let mock = MockLlm::start_in_background();
    let run = Run::new();
    let root = run.home.parent().unwrap().join("tasks");
    write_task(
        &root,
        "a-broken-setup",
        "prompt = \"x\"\nsetup = \"echo no such tool >&2; exit 3\"\ncheck = \"true\"\n",
    );
    write_task(&root, "b-not-a-task", "prompt = 1\n");
    let out = eval(&run, &mock, &[root.to_str().unwrap()]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("ERROR a-broken-setup") && stdout.contains("setup failed: no such tool"),
        "{stdout}"
    );
    assert!(stdout.contains("ERROR b-not-a-task"), "{stdout}");
    assert!(
        stdout.trim_end().ends_with("0 passed, 2 failed"),
        "{stdout}"
    );
    assert_eq!(mock.requests().len(), 0, "no agent ran");

    // A task past its time is stopped and reported; the check still runs in its copy.
    let slow = run.home.parent().unwrap().join("slow");
    write_task(
        &slow,
        "hangs",
        "prompt = \"wait\"\ncheck = \"test -f seed.txt\"\ntimeout_secs = 1\n",
    );
    mock.push(Reply::Hang);
    let out = eval(&run, &mock, &["--json", slow.to_str().unwrap()]);
    let result = &json_lines(&out.stdout)[0];
    assert!(
        result["error"].as_str().unwrap().contains("ran past 1s"),
        "{result}"
    );

    // Two tasks at once with -j 2: both reach the model before either answer ends.
    let pair = run.home.parent().unwrap().join("pair");
    for name in ["one", "two"] {
        write_task(&pair, name, "prompt = \"answer\"\ncheck = \"true\"\n");
    }
    let gates = [Gate::default(), Gate::default()];
    for gate in &gates {
        mock.push(Reply::Gated {
            head: crate::support::openai_text_chunk("Ans"),
            rest: openai_text_sse("wer."),
            gate: gate.clone(),
        });
    }
    let before = mock.requests().len();
    let child = run
        .command(
            &mock,
            &["eval", "--json", "-j", "2", pair.to_str().unwrap()],
        )
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let until = Instant::now() + PATIENCE;
    while mock.requests().len() < before + 2 {
        assert!(
            Instant::now() < until,
            "both tasks should be waiting on the model"
        );
        std::thread::yield_now();
    }
    for gate in &gates {
        gate.open();
    }
    let out = child.wait_with_output().unwrap();
    let results = json_lines(&out.stdout);
    assert_eq!(results.len(), 2);
    assert!(results.iter().all(|r| r["pass"] == true), "{results:?}");
}
