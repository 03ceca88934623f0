//! `harness9 eval [DIR] [--json] [-j N]`: runs evaluation tasks with the configured provider and
//! says how many passed. A task is a folder with `task.toml` (`prompt`, optional `setup`, `check`,
//! optional `mode` and `max_turns`) and a `repo/` copied fresh to a temporary directory for each
//! run; `setup`, the agent and `check` all work in that copy, and `check`'s exit status decides.
//! The agent runs headless as in `exec` (a client of the session core; nobody answers
//! approvals). A task whose setup fails, or whose file is malformed, is an error, not a fail.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use serde::Deserialize;
use serde_json::json;

use crate::assemble::SessionChoice;
use crate::config::{EvalArgs, Settings};
use crate::engine::{ApprovalDecision, EventKind};
use crate::planning::Mode;
use crate::session::{self, CoreOptions, Request, Update};

/// How long `setup` and `check` may take.
const SHELL_LIMIT: Duration = Duration::from_secs(300);
/// How long the agent may work on one task unless its `timeout_secs` says otherwise.
const RUN_LIMIT: Duration = Duration::from_secs(900);

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TaskFile {
    prompt: String,
    #[serde(default)]
    setup: Option<String>,
    check: String,
    #[serde(default)]
    mode: Option<String>,
    #[serde(default)]
    max_turns: Option<u32>,
    /// How long the agent may work on it [default: 900].
    #[serde(default)]
    timeout_secs: Option<u64>,
}

/// One task's outcome (the contract's object).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TaskResult {
    pub task: String,
    pub pass: bool,
    pub turns: u32,
    pub tool_calls: u32,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cost_usd: Option<f64>,
    pub wall_ms: u64,
    /// Where the wall time went: the task's own `setup` and `check` scripts, and the agent's
    /// run (from the session's opening to its close). The rest is eval's own overhead.
    pub phases: Phases,
    pub session_id: Option<String>,
    /// The task could not be run as written (setup failed, a malformed file), or the run
    /// itself failed; `pass` is then decided by `check` only when the agent ran.
    pub error: Option<String>,
}

/// The timed parts of one task's run.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Phases {
    pub setup: Duration,
    pub agent: Duration,
    pub check: Duration,
}

impl TaskResult {
    pub fn to_json(&self) -> serde_json::Value {
        json!({
            "task": self.task,
            "pass": self.pass,
            "turns": self.turns,
            "tool_calls": self.tool_calls,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cost_usd": self.cost_usd,
            "wall_ms": self.wall_ms,
            "setup_ms": self.phases.setup.as_millis() as u64,
            "agent_ms": self.phases.agent.as_millis() as u64,
            "check_ms": self.phases.check.as_millis() as u64,
            "session_id": self.session_id,
            "error": self.error,
        })
    }

    fn line(&self) -> String {
        let verdict = match (&self.error, self.pass) {
            (_, true) => "PASS ",
            (Some(_), false) if self.session_id.is_none() => "ERROR",
            _ => "FAIL ",
        };
        let mut line = format!(
            "{verdict} {}  ({} turns, {} tool calls, {} in / {} out tokens, {:.1}s)",
            self.task,
            self.turns,
            self.tool_calls,
            self.input_tokens,
            self.output_tokens,
            self.wall_ms as f64 / 1000.0
        );
        if let Some(error) = &self.error {
            line.push_str(&format!(": {}", crate::terminal_text::sanitize(error)));
        }
        line
    }
}

/// The tasks under `dir`: `dir` itself when it is one, else its subfolders that are, by name.
fn find_tasks(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    if dir.join("task.toml").is_file() {
        return Ok(vec![dir.to_path_buf()]);
    }
    let mut tasks: Vec<PathBuf> = std::fs::read_dir(dir)?
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.join("task.toml").is_file())
        .collect();
    tasks.sort();
    Ok(tasks)
}

/// Runs `harness9 eval`; returns the exit status (0 when every task passed).
pub async fn run(settings: Settings, args: EvalArgs) -> u8 {
    let dir = args
        .dir
        .clone()
        .unwrap_or_else(|| settings.workdir.join("evals"));
    let tasks = match find_tasks(&dir) {
        Ok(tasks) if !tasks.is_empty() => tasks,
        Ok(_) => {
            eprintln!(
                "harness9: no tasks in {} (a task is a folder with task.toml)",
                dir.display()
            );
            return 2;
        }
        Err(error) => {
            eprintln!("harness9: cannot read {}: {error}", dir.display());
            return 2;
        }
    };
    let settings = &settings;
    let mut runs = futures_util::stream::iter(tasks)
        .map(|task| async move { run_task(settings, &task).await })
        .buffer_unordered(args.jobs.max(1));
    let (mut passed, mut failed) = (0, 0);
    while let Some(result) = runs.next().await {
        if result.pass {
            passed += 1;
        } else {
            failed += 1;
        }
        if args.json {
            println!("{}", result.to_json());
        } else {
            println!("{}", result.line());
        }
    }
    if !args.json {
        println!("{passed} passed, {failed} failed");
    }
    if failed == 0 { 0 } else { 1 }
}

/// Runs one task in a fresh copy of its repository.
pub async fn run_task(settings: &Settings, task_dir: &Path) -> TaskResult {
    let started = Instant::now();
    let name = task_dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut result = TaskResult {
        task: name,
        ..TaskResult::default()
    };
    let outcome = attempt(settings, task_dir, &mut result).await;
    if let Err(error) = outcome {
        result.error = Some(error);
    }
    result.wall_ms = started.elapsed().as_millis() as u64;
    result
}

async fn attempt(
    settings: &Settings,
    task_dir: &Path,
    result: &mut TaskResult,
) -> Result<(), String> {
    let text = std::fs::read_to_string(task_dir.join("task.toml"))
        .map_err(|e| format!("cannot read task.toml: {e}"))?;
    let task: TaskFile =
        toml::from_str(&text).map_err(|e| format!("task.toml is not a task: {e}"))?;
    let mode = match task.mode.as_deref() {
        None => Mode::AutoEdit,
        Some(name) => Mode::parse(name).ok_or_else(|| format!("unknown mode {name:?}"))?,
    };
    if mode == Mode::Yolo && settings.mode != Mode::Yolo {
        return Err("the task asks for yolo mode: run eval with --mode yolo to allow it".into());
    }
    let copy = tempfile::Builder::new()
        .prefix("harness9-eval-")
        .tempdir()
        .map_err(|e| format!("cannot make a working copy: {e}"))?;
    let workdir = copy
        .path()
        .canonicalize()
        .map_err(|e| format!("cannot resolve the working copy: {e}"))?;
    let repo = task_dir.join("repo");
    if repo.is_dir() {
        copy_tree(&repo, &workdir).map_err(|e| format!("cannot copy repo/: {e}"))?;
    }
    if let Some(setup) = &task.setup {
        let started = Instant::now();
        let (ok, output) = shell(setup, &workdir).await;
        result.phases.setup = started.elapsed();
        if !ok {
            return Err(format!("setup failed: {}", output.trim()));
        }
    }
    let mut settings = settings.clone();
    settings.workdir = workdir.clone();
    settings.mode = mode;
    settings.mode_given = true;
    if let Some(turns) = task.max_turns {
        settings.max_turns = turns;
    }
    let limit = task.timeout_secs.map_or(RUN_LIMIT, Duration::from_secs);
    let mut todos = Vec::new();
    let started = Instant::now();
    let run_error = drive(&settings, &task.prompt, limit, result, &mut todos).await;
    result.phases.agent = started.elapsed();
    // The check may judge the agent's todo list too: its JSON, outside the copy (so a check
    // that nothing changed still holds), named by HARNESS9_EVAL_TODOS.
    let todo_file = copy.path().with_extension("todos.json");
    let _ = std::fs::write(
        &todo_file,
        serde_json::to_string(&todos).unwrap_or_default(),
    );
    let started = Instant::now();
    let (pass, output) = shell_with(&task.check, &workdir, Some(&todo_file)).await;
    result.phases.check = started.elapsed();
    let _ = std::fs::remove_file(&todo_file);
    result.pass = pass;
    match run_error {
        Some(error) => Err(error),
        None if !pass => Err(format!("check failed: {}", last_lines(&output, 5))),
        None => Ok(()),
    }
}

/// Runs the agent on `prompt`; the run's failure, if it failed.
async fn drive(
    settings: &Settings,
    prompt: &str,
    limit: Duration,
    result: &mut TaskResult,
    todos: &mut Vec<crate::planning::TodoItem>,
) -> Option<String> {
    let opened = match session::open(settings, SessionChoice::New, CoreOptions::default()).await {
        Ok(opened) => opened,
        Err(error) => return Some(error.to_string()),
    };
    result.session_id = Some(opened.loaded.session_id.clone());
    let handle = opened.handle;
    let mut updates = opened.updates;
    handle.send(Request::Submit(prompt.to_owned()));
    let mut error = None;
    let deadline = tokio::time::sleep(limit);
    tokio::pin!(deadline);
    let mut timed_out = false;
    loop {
        let update = tokio::select! {
            update = updates.recv() => update,
            _ = &mut deadline, if !timed_out => {
                timed_out = true;
                error = Some(format!("the agent ran past {}s", limit.as_secs()));
                handle.send(Request::Interrupt);
                continue;
            }
        };
        let Some(update) = update else { break };
        match update {
            Update::Engine(event) => {
                result.turns = result.turns.max(event.turn);
                let ended = match event.kind {
                    EventKind::ToolStart(_) => {
                        result.tool_calls += 1;
                        false
                    }
                    EventKind::ApprovalRequired(request) => {
                        request.respond(ApprovalDecision::NoApprover);
                        false
                    }
                    EventKind::Done(done) => {
                        result.input_tokens = done.input_tokens;
                        result.output_tokens = done.output_tokens;
                        result.cost_usd = done.cost_usd;
                        true
                    }
                    EventKind::Error(failure) => {
                        error.get_or_insert(failure.message);
                        true
                    }
                    _ => false,
                };
                if ended {
                    handle.send(Request::Close {
                        discard_if_empty: false,
                    });
                }
            }
            Update::Todos(list) => *todos = list,
            Update::Closed(_) => break,
            _ => {}
        }
    }
    error
}

/// Runs `script` with `sh -c` in `dir`; whether it exited 0, and what it printed.
async fn shell(script: &str, dir: &Path) -> (bool, String) {
    shell_with(script, dir, None).await
}

/// `shell`, telling the script where the agent's todo list is.
async fn shell_with(script: &str, dir: &Path, todos: Option<&Path>) -> (bool, String) {
    let mut command = tokio::process::Command::new("sh");
    if let Some(todos) = todos {
        command.env("HARNESS9_EVAL_TODOS", todos);
    }
    command
        .arg("-c")
        .arg(script)
        .current_dir(dir)
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true);
    // The repository's scripts get no terminal to type into.
    crate::detach::detach(command.as_std_mut());
    crate::detach::drop_ptrace(command.as_std_mut());
    for name in [
        "OPENAI_API_KEY",
        "ANTHROPIC_API_KEY",
        "HARNESS9_SERVE_TOKEN",
    ] {
        command.env_remove(name);
    }
    match tokio::time::timeout(SHELL_LIMIT, command.output()).await {
        Ok(Ok(output)) => {
            let mut text = String::from_utf8_lossy(&output.stdout).into_owned();
            text.push_str(&String::from_utf8_lossy(&output.stderr));
            (output.status.success(), text)
        }
        Ok(Err(error)) => (false, format!("cannot run sh: {error}")),
        Err(_) => (false, format!("ran past {}s", SHELL_LIMIT.as_secs())),
    }
}

fn last_lines(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.trim().lines().rev().take(n).collect();
    lines.into_iter().rev().collect::<Vec<_>>().join(" / ")
}

/// Copies the tree at `from` into `to` (files and folders; symbolic links as links).
fn copy_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        let kind = entry.file_type()?;
        if kind.is_dir() {
            std::fs::create_dir_all(&target)?;
            copy_tree(&entry.path(), &target)?;
        } else if kind.is_symlink() {
            #[cfg(unix)]
            std::os::unix::fs::symlink(std::fs::read_link(entry.path())?, &target)?;
        } else {
            std::fs::copy(entry.path(), &target)?;
        }
    }
    Ok(())
}
