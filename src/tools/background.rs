//! Background commands: `bash` with `"background": true` starts a command (a dev server, a
//! watcher) the way every `bash` call starts one (sandbox, process group, no keys) and returns
//! at once with an id; `bash_output {id}` returns what it printed since the last look and whether
//! it still runs; `bash_kill {id}` stops it with everything it started. The jobs belong to the
//! session's tools: when the session ends (its registry is dropped) every job is stopped: its
//! process group killed or, under the reaper (outside the sandbox on Linux), the reaper told to
//! kill everything the job started, which it also does when harness9 dies. Under the reaper a
//! job runs until the last process it started has ended (`reaper::Until::Descendants`). Output
//! is kept in a bounded buffer (the newest `KEPT` bytes), so a chatty server cannot grow the
//! process. A job's end is told to the user (`Jobs::take_ends`): its status, its last lines and
//! what the sandbox refused it, so a server that died at once does not vanish silently.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::io::AsyncReadExt;

use super::output::HeadTail;
use super::reaper::Until;
use super::shell_process::{GroupGuard, Reaping, Spawned, spawn};
use super::{Tool, ToolContext, ToolError};
use crate::sandbox::{Outcome, Prepared, SandboxMode, refusal, refusal_notice};
use crate::schema::ToolKind;
use crate::terminal_text::sanitize;

/// Bytes of a job's output kept (the newest).
const KEPT: usize = 1024 * 1024;
/// Bytes one `bash_output` returns at most (its head and tail).
const SHOWN: usize = 30 * 1024;
/// How long the session's close waits for a killed job's output to end (a process that left
/// the group may hold its pipe; only the sandbox's guard needs the wait).
const STOP_PATIENCE: Duration = Duration::from_secs(2);
/// Jobs that may run at once in a session.
const MAX_JOBS: usize = 16;
/// Lines of output a job's end notice shows.
const END_LINES: usize = 5;

#[derive(Default)]
struct Output {
    /// The newest bytes, at most `KEPT`.
    kept: Vec<u8>,
    /// Bytes ever written; `kept` ends at this offset.
    total: u64,
    /// The offset up to which `bash_output` has shown the output.
    shown: u64,
    /// The exit status once it ended: `Some(None)` when killed by a signal.
    ended: Option<Option<i32>>,
    /// When it ended, and how long it had run.
    ended_at: Option<(SystemTime, Duration)>,
}

/// How a job ended, as `/ps` shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JobEnd {
    /// The exit status; `None`: ended by a signal (stopped).
    pub status: Option<i32>,
    pub at: SystemTime,
}

/// The ends of jobs not yet told to the user, and a counter that moves with each.
struct Ends {
    notices: Mutex<Vec<String>>,
    signal: tokio::sync::watch::Sender<u64>,
}

impl Default for Ends {
    fn default() -> Self {
        Ends {
            notices: Mutex::new(Vec::new()),
            signal: tokio::sync::watch::channel(0).0,
        }
    }
}

struct Job {
    command: String,
    started: Instant,
    output: Arc<Mutex<Output>>,
    guard: Arc<Mutex<GroupGuard>>,
    /// The task that reads its output and, once it ended, puts back the protected paths.
    task: Option<tokio::task::JoinHandle<()>>,
}

/// The session's background jobs. Dropping it kills them all.
#[derive(Default)]
pub struct Jobs {
    table: Mutex<BTreeMap<u32, Job>>,
    next: Mutex<u32>,
    ends: Arc<Ends>,
}

impl Drop for Jobs {
    fn drop(&mut self) {
        self.kill_all();
    }
}

/// A job as `/ps` and the model see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobSummary {
    pub id: String,
    pub command: String,
    pub running: bool,
    /// How long it has run (until its end, once ended).
    pub elapsed: Duration,
    /// How it ended; `None` while it runs.
    pub ended: Option<JobEnd>,
    /// Its last lines.
    pub tail: String,
}

impl Jobs {
    /// Moves each time a job ends; then `take_ends` has its notice.
    pub fn watch_ends(&self) -> tokio::sync::watch::Receiver<u64> {
        self.ends.signal.subscribe()
    }

    /// The notices of the jobs that ended since the last call, oldest first: each one's status,
    /// last lines, and what the sandbox refused it with how to allow it.
    pub fn take_ends(&self) -> Vec<String> {
        self.ends
            .notices
            .lock()
            .map(|mut notices| std::mem::take(&mut *notices))
            .unwrap_or_default()
    }

    /// Stops every job with everything it started (the session is closing).
    pub fn kill_all(&self) {
        if let Ok(table) = self.table.lock() {
            for job in table.values() {
                if let Ok(mut guard) = job.guard.lock() {
                    guard.kill();
                }
            }
        }
    }

    /// Stops every job and waits (up to `STOP_PATIENCE` each) until its task has put back the
    /// protected paths it changed: the session's close, so a process that exits right after
    /// leaves no job's `.harness9/` or `.git/hooks` behind.
    pub async fn stop_all(&self) {
        let tasks: Vec<_> = match self.table.lock() {
            Ok(mut table) => table
                .values_mut()
                .filter_map(|job| {
                    if let Ok(mut guard) = job.guard.lock() {
                        guard.kill();
                    }
                    job.task.take()
                })
                .collect(),
            Err(_) => Vec::new(),
        };
        for task in tasks {
            let _ = tokio::time::timeout(STOP_PATIENCE, task).await;
        }
    }

    /// Starts `command` in the background; the text for the model names its id.
    pub(super) fn start(
        &self,
        command: &str,
        workdir: &Path,
        sandbox: Option<Prepared>,
        sandbox_mode: SandboxMode,
        reaper: Option<&Path>,
    ) -> Result<String, ToolError> {
        let running = self
            .table
            .lock()
            .map(|t| t.values().filter(|j| job_running(j)).count())
            .unwrap_or(0);
        if running >= MAX_JOBS {
            return Err(ToolError::new(format!(
                "{MAX_JOBS} background commands are running already: stop one with bash_kill \
                 first"
            )));
        }
        // A job ends when nothing it started is left (or when it is stopped).
        let reaping = reaper.map(|helper| Reaping {
            helper,
            until: Until::Descendants,
        });
        let Spawned {
            mut child,
            guard,
            stdout,
            stderr,
        } = spawn(command, workdir, sandbox.as_ref(), reaping)?;
        let id = {
            let mut next = self
                .next
                .lock()
                .map_err(|_| ToolError::new("jobs poisoned"))?;
            *next += 1;
            *next
        };
        let output = Arc::new(Mutex::new(Output::default()));
        let guard = Arc::new(Mutex::new(guard));
        let sink = Arc::clone(&output);
        let group = Arc::clone(&guard);
        let ends = Arc::clone(&self.ends);
        let started = Instant::now();
        let label = format!("background job {id} (`{}`)", sanitize(command));
        let task = tokio::spawn(async move {
            read_into(stdout, stderr, &sink).await;
            let status = child.wait().await.ok().and_then(|s| s.code());
            // The shell ended: what it left behind in its group goes with it, and only then
            // may the sandbox's guard look at what changed (nothing can race it).
            if let Ok(mut guard) = group.lock() {
                guard.kill();
            }
            let restored = sandbox
                .as_ref()
                .and_then(|p| p.snapshot.as_ref())
                .map(|snapshot| snapshot.restore())
                .unwrap_or_default();
            let Ok(mut out) = sink.lock() else {
                return;
            };
            for line in restored.report() {
                push(&mut out, format!("\n{line}\n").as_bytes());
            }
            out.ended = Some(status);
            out.ended_at = Some((SystemTime::now(), started.elapsed()));
            let refused = sandbox.as_ref().and_then(|prepared| {
                refusal(&Outcome {
                    mode: sandbox_mode,
                    network: prepared.spec.network,
                    exit_code: status,
                    output: &String::from_utf8_lossy(&out.kept),
                    restored: &restored,
                })
            });
            let notice = end_notice(&label, &out, refused.as_ref().map(refusal_notice));
            drop(out);
            if let Ok(mut notices) = ends.notices.lock() {
                notices.push(notice);
            }
            ends.signal.send_modify(|count| *count += 1);
        });
        if let Ok(mut table) = self.table.lock() {
            table.insert(
                id,
                Job {
                    command: command.to_owned(),
                    started,
                    output,
                    guard,
                    task: Some(task),
                },
            );
        }
        Ok(format!(
            "started in the background as job {id}: read its output with bash_output \
             {{\"id\": \"{id}\"}}, stop it with bash_kill {{\"id\": \"{id}\"}}. It runs until it \
             ends, is stopped, or the session ends."
        ))
    }

    fn with_job<T>(&self, id: &str, look: impl FnOnce(&Job) -> T) -> Result<T, ToolError> {
        let number: u32 = id.trim().trim_start_matches("job ").parse().map_err(|_| {
            ToolError::new(format!(
                "`{id}` is not a job id: give the number bash returned"
            ))
        })?;
        let table = self
            .table
            .lock()
            .map_err(|_| ToolError::new("jobs poisoned"))?;
        let job = table.get(&number).ok_or_else(|| {
            ToolError::new(format!(
                "there is no background job {number} in this session: {}",
                known(&table)
            ))
        })?;
        Ok(look(job))
    }

    /// What the job printed since the last look, and its state.
    fn read_new(&self, id: &str) -> Result<String, ToolError> {
        self.with_job(id, |job| {
            let Ok(mut out) = job.output.lock() else {
                return "(the output could not be read)".to_owned();
            };
            let kept_from = out.total - out.kept.len() as u64;
            let mut text = String::new();
            if out.shown < kept_from {
                text.push_str(&format!(
                    "({} bytes of output were dropped: only the newest {} KB are kept)\n",
                    kept_from - out.shown,
                    KEPT / 1024
                ));
            }
            let from = (out.shown.max(kept_from) - kept_from) as usize;
            let mut shown = HeadTail::new(SHOWN);
            shown.push(&out.kept[from..]);
            let new = shown.finish();
            out.shown = out.total;
            text.push_str(if new.is_empty() {
                "(no new output)"
            } else {
                &new
            });
            text.push('\n');
            text.push_str(&state_line(&out, job.started.elapsed()));
            text
        })
    }

    /// Kills the job's process group.
    fn kill(&self, id: &str) -> Result<String, ToolError> {
        self.with_job(id, |job| {
            let was_running = job_running(job);
            if let Ok(mut guard) = job.guard.lock() {
                guard.kill();
            }
            if was_running {
                // Shown to the user too (`/ps stop N`): no control sequences of the command.
                format!(
                    "job {id} (`{}`) was stopped with everything it started",
                    sanitize(&job.command)
                )
            } else {
                let state = job
                    .output
                    .lock()
                    .map(|o| state_line(&o, job.started.elapsed()))
                    .unwrap_or_default();
                format!("job {id} had already ended: {state}")
            }
        })
    }

    /// All of a job's output that is kept (the newest `KEPT` bytes), for the user's `/ps N`;
    /// it does not move what `bash_output` shows the model next.
    pub fn whole_output(&self, id: &str) -> Result<String, ToolError> {
        self.with_job(id, |job| {
            let Ok(out) = job.output.lock() else {
                return "(the output could not be read)".to_owned();
            };
            let dropped = out.total - out.kept.len() as u64;
            let mut text = format!(
                "background job {id} (`{}`): {}",
                sanitize(&job.command),
                state_line(&out, job.started.elapsed())
            );
            if dropped > 0 {
                text.push_str(&format!(
                    "\n({dropped} bytes of older output were dropped: the newest {} KB are kept)",
                    KEPT / 1024
                ));
            }
            let kept = String::from_utf8_lossy(&out.kept);
            if kept.trim().is_empty() {
                text.push_str("\n(no output)");
            }
            for line in kept.lines() {
                text.push_str("\n    ");
                text.push_str(&sanitize(line));
            }
            text
        })
    }

    /// Stops a job with everything it started, for the user's `/ps stop N`.
    pub fn stop(&self, id: &str) -> Result<String, ToolError> {
        self.kill(id)
    }

    /// Every job of the session, oldest first.
    pub fn list(&self) -> Vec<JobSummary> {
        let Ok(table) = self.table.lock() else {
            return Vec::new();
        };
        table
            .iter()
            .map(|(id, job)| {
                let (tail, ended) = job
                    .output
                    .lock()
                    .map(|o| (last_lines(&o.kept, 3), o.ended.zip(o.ended_at)))
                    .unwrap_or_default();
                JobSummary {
                    id: id.to_string(),
                    command: job.command.clone(),
                    running: ended.is_none(),
                    elapsed: ended.map_or_else(|| job.started.elapsed(), |(_, (_, ran))| ran),
                    ended: ended.map(|(status, (at, _))| JobEnd { status, at }),
                    tail,
                }
            })
            .collect()
    }
}

fn job_running(job: &Job) -> bool {
    job.output
        .lock()
        .map(|o| o.ended.is_none())
        .unwrap_or(false)
}

fn known(table: &BTreeMap<u32, Job>) -> String {
    if table.is_empty() {
        "none was started".to_owned()
    } else {
        let ids: Vec<String> = table.keys().map(u32::to_string).collect();
        format!("the jobs are {}", ids.join(", "))
    }
}

fn state_line(out: &Output, elapsed: Duration) -> String {
    match out.ended {
        None => format!("still running ({}s)", elapsed.as_secs()),
        Some(Some(code)) => format!("exited with status {code}"),
        Some(None) => "ended by a signal (stopped)".to_owned(),
    }
}

/// A job's end as the user reads it: how it ended and after how long, its last lines, and
/// what the sandbox refused it.
fn end_notice(label: &str, out: &Output, refused: Option<String>) -> String {
    let ran = out.ended_at.map(|(_, ran)| ran.as_secs()).unwrap_or(0);
    let how = match out.ended {
        Some(Some(code)) => format!("exited with status {code}"),
        _ => "was stopped (ended by a signal)".to_owned(),
    };
    let mut text = format!("{label} {how} after {ran}s");
    let tail = last_lines(&out.kept, END_LINES);
    let tail: Vec<&str> = tail.lines().filter(|l| !l.trim().is_empty()).collect();
    if tail.is_empty() {
        text.push_str(", printing nothing");
    } else {
        text.push_str("; its last lines:");
        for line in tail {
            text.push_str("\n    ");
            text.push_str(&sanitize(line));
        }
    }
    if let Some(refused) = refused {
        text.push('\n');
        text.push_str(&refused);
    }
    text
}

fn last_lines(bytes: &[u8], n: usize) -> String {
    let text = String::from_utf8_lossy(bytes);
    let lines: Vec<&str> = text.lines().rev().take(n).collect();
    lines.into_iter().rev().collect::<Vec<_>>().join("\n")
}

fn push(out: &mut Output, bytes: &[u8]) {
    out.kept.extend_from_slice(bytes);
    out.total += bytes.len() as u64;
    if out.kept.len() > KEPT {
        let cut = out.kept.len() - KEPT;
        out.kept.drain(..cut);
    }
}

async fn read_into(
    stdout: tokio::process::ChildStdout,
    stderr: tokio::process::ChildStderr,
    sink: &Mutex<Output>,
) {
    let mut out_buffer = vec![0u8; 16 * 1024];
    let mut err_buffer = vec![0u8; 4 * 1024];
    let (mut stdout, mut stderr) = (Some(stdout), Some(stderr));
    while stdout.is_some() || stderr.is_some() {
        let read = tokio::select! {
            read = async { stdout.as_mut()?.read(&mut out_buffer).await.ok() }, if stdout.is_some() => match read {
                Some(n) if n > 0 => Some(&out_buffer[..n]),
                _ => { stdout = None; None }
            },
            read = async { stderr.as_mut()?.read(&mut err_buffer).await.ok() }, if stderr.is_some() => match read {
                Some(n) if n > 0 => Some(&err_buffer[..n]),
                _ => { stderr = None; None }
            },
        };
        if let Some(bytes) = read
            && let Ok(mut out) = sink.lock()
        {
            push(&mut out, bytes);
        }
    }
}

#[derive(Deserialize)]
struct JobArgs {
    id: Value,
}

fn job_id(arguments: Value) -> Result<String, ToolError> {
    let args: JobArgs = super::parse_args(arguments)?;
    Ok(match args.id {
        Value::String(id) => id,
        other => other.to_string(),
    })
}

fn id_schema(what: &str) -> Value {
    json!({
        "type": "object",
        "properties": {"id": {"type": ["string", "integer"], "description": what}},
        "required": ["id"],
        "additionalProperties": false,
    })
}

/// `bash_output {id}`.
pub struct BashOutput(pub(super) Arc<Jobs>);

#[async_trait]
impl Tool for BashOutput {
    fn name(&self) -> &'static str {
        "bash_output"
    }
    fn description(&self) -> &'static str {
        "Read what a background command (started with bash and \"background\": true) printed \
         since the last look, and whether it still runs."
    }
    fn input_schema(&self) -> Value {
        id_schema("The job id bash returned.")
    }
    fn kind(&self) -> ToolKind {
        ToolKind::ReadOnly
    }
    fn bounds_own_output(&self) -> bool {
        true
    }
    async fn execute(&self, arguments: Value, _ctx: &ToolContext) -> Result<String, ToolError> {
        self.0.read_new(&job_id(arguments)?)
    }
}

/// `bash_kill {id}`.
pub struct BashKill(pub(super) Arc<Jobs>);

#[async_trait]
impl Tool for BashKill {
    fn name(&self) -> &'static str {
        "bash_kill"
    }
    fn description(&self) -> &'static str {
        "Stop a background command started with bash and \"background\": true, with every \
         process it started."
    }
    fn input_schema(&self) -> Value {
        id_schema("The job id bash returned.")
    }
    // It only stops what this session itself started.
    fn kind(&self) -> ToolKind {
        ToolKind::ReadOnly
    }
    async fn execute(&self, arguments: Value, _ctx: &ToolContext) -> Result<String, ToolError> {
        self.0.kill(&job_id(arguments)?)
    }
}
