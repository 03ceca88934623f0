//! `bash`: runs a command in the working directory, inside the session's sandbox (plan mode:
//! read-only; `"sandbox": false`, once the user approved it, outside), in a process group of
//! its own with stdin closed, the API keys removed from its environment and git told not to run
//! programs named by repositories it merely finds (`GIT_GUARDS`). stdout and stderr
//! come back merged in order, capped to head and tail; a command the sandbox stopped says so
//! and how to ask to leave it. When the command ends, times out, is cancelled or the call is
//! dropped, the whole group is killed, so background children never outlive the call (inside
//! the sandbox, neither do those that left the group; outside it, those do: only background
//! jobs run under the reaper, see `reaper`).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::io::AsyncReadExt;

use super::live_output::LiveOutput;
use super::output::HeadTail;
use super::shell_process::{Spawned, spawn};
use super::{Tool, ToolContext, ToolError};
use crate::planning::Mode;
use crate::sandbox::{Outcome, Prepared, Sandbox, SandboxRequest, denial_hint};
use crate::schema::ToolKind;

/// Bytes of output kept: the first and last half of this, with a line saying what was cut.
pub const OUTPUT_LIMIT: usize = 30 * 1024;
/// The engine's per-call limit when nobody sets one (`--tool-timeout`'s default).
pub const DEFAULT_TOOL_TIMEOUT: Duration = Duration::from_secs(60);
/// Our own deadline ends this much before the engine's, so a command that runs too long comes
/// back with its output rather than as a bare "timed out" from the engine.
const DEADLINE_MARGIN: Duration = Duration::from_millis(500);
/// The `bash` tool of a session: its sandbox and the engine's per-call timeout, which is the
/// one limit a command has (stated to the model in the schema).
pub struct Bash {
    sandbox: Arc<Sandbox>,
    /// The engine's per-call timeout; `None` = none.
    timeout: Option<Duration>,
    /// Plan mode's read-only command check (switched off only to test the sandbox alone).
    plan_classifier: bool,
    /// The session's background commands (`"background": true`), shared with `bash_output`
    /// and `bash_kill`.
    jobs: Arc<super::background::Jobs>,
    /// harness9's own binary, run as the reaper for commands outside the sandbox (Linux);
    /// `None`: they keep to their process group alone.
    reaper: Option<PathBuf>,
}

impl Default for Bash {
    /// Unsandboxed, with the default timeout: for tests and embedders; real runs use `new`.
    fn default() -> Self {
        Bash::new(
            Arc::new(Sandbox::disabled(Path::new("."))),
            Some(DEFAULT_TOOL_TIMEOUT),
        )
    }
}

impl Bash {
    pub fn new(sandbox: Arc<Sandbox>, timeout: Option<Duration>) -> Bash {
        Bash {
            sandbox,
            timeout,
            plan_classifier: true,
            jobs: Arc::default(),
            reaper: None,
        }
    }

    /// Runs commands outside the sandbox under the reaper found at `helper` (harness9's own
    /// binary, which answers `__reap`), so nothing they start outlives them (`reaper`).
    pub fn with_reaper(mut self, helper: PathBuf) -> Bash {
        self.reaper = Some(helper);
        self
    }

    /// Test builds only: plan mode without its command check, to show the sandbox alone keeps
    /// plan mode from changing anything.
    #[cfg(debug_assertions)]
    pub fn without_plan_classifier(mut self) -> Bash {
        self.plan_classifier = false;
        self
    }

    /// The session's background commands.
    pub fn jobs(&self) -> Arc<super::background::Jobs> {
        Arc::clone(&self.jobs)
    }

    /// For the permission decision: whether this call runs sandboxed, and whether it asks to
    /// leave the sandbox.
    pub fn sandbox_request(&self, arguments: &Value, mode: Mode) -> SandboxRequest {
        self.sandbox.request(mode, arguments)
    }

    /// How long a call may run: what the model asked, never past the engine's timeout; and
    /// which of the two it is (for the message when it is reached).
    fn deadline(&self, requested: Option<u64>) -> Option<Limit> {
        let session = self.timeout.map(|t| {
            let run_for = t
                .saturating_sub(DEADLINE_MARGIN)
                .max(Duration::from_millis(100));
            Limit {
                run_for,
                session: Some(t),
            }
        });
        match (requested.map(Duration::from_secs), session) {
            (Some(asked), Some(cap)) if asked >= cap.run_for => Some(cap),
            (Some(asked), _) => Some(Limit {
                run_for: asked,
                session: None,
            }),
            (None, cap) => cap,
        }
    }
}

#[derive(Deserialize)]
struct Args {
    command: String,
    #[serde(default)]
    timeout_secs: Option<u64>,
    #[serde(default)]
    background: bool,
}

#[async_trait]
impl Tool for Bash {
    fn name(&self) -> &'static str {
        "bash"
    }

    fn description(&self) -> &'static str {
        "Run a shell command (bash -c) in the working directory and return its exit status and \
         combined stdout/stderr. Use it to build, run tests, use git, and run project scripts. \
         Prefer read_file, grep, glob and list_dir for reading and searching: they are faster \
         and their output is structured. stdin is closed, so interactive commands (editors, \
         pagers, prompts) fail: pass flags like --yes or --no-pager. Output over ~30 KB keeps \
         its head and tail. Commands are killed, with every process they started, after \
         `timeout_secs` (its default and maximum are in the schema) or when the user \
         interrupts. Commands run in a sandbox (usually: write only inside the working \
         directory and the temp directory, no network); a command the sandbox stopped says \
         so, and may be repeated with \"sandbox\": false, which asks the user first."
    }

    fn input_schema(&self) -> Value {
        let timeout = match self.timeout {
            Some(limit) => format!(
                "Kill the command after this many seconds (default and maximum {}: the \
                 session's tool timeout).",
                limit.as_secs()
            ),
            None => "Kill the command after this many seconds (default: no limit).".to_owned(),
        };
        json!({
            "type": "object",
            "properties": {
                "command": {"type": "string", "description": "The command line, run with bash -c."},
                "timeout_secs": {"type": "integer", "minimum": 1, "description": timeout},
                "sandbox": {"type": "boolean", "description": "false: run outside the sandbox. Only after the sandbox stopped a command that needs more; the user is asked first."},
                "background": {"type": "boolean", "description": "true: start a command that keeps running (a dev server, a watcher) and return at once with a job id; read its output with bash_output, stop it with bash_kill. It ends with the session."},
            },
            "required": ["command"],
            "additionalProperties": false,
        })
    }

    fn bounds_own_output(&self) -> bool {
        true
    }

    fn kind(&self) -> ToolKind {
        ToolKind::Dangerous
    }

    fn runs_sandboxed(&self, arguments: &Value, mode: Mode) -> bool {
        self.sandbox_request(arguments, mode).sandboxed
    }

    fn offered_in_plan(&self) -> bool {
        true
    }

    fn approval_note(&self, arguments: &Value, mode: Mode) -> Option<String> {
        let background = arguments.get("background").and_then(Value::as_bool) == Some(true);
        background.then(|| {
            format!(
                "A background command: it keeps running after this call returns, until it ends, \
                 is stopped or the session ends; it runs {}.",
                self.sandbox.allows_text(mode, arguments)
            )
        })
    }

    fn plan_mode_refusal(&self, arguments: &Value) -> Option<String> {
        if !self.plan_classifier {
            return None;
        }
        let command = arguments
            .get("command")
            .and_then(Value::as_str)
            .unwrap_or("");
        if arguments.get("background").and_then(Value::as_bool) == Some(true) {
            return Some(
                "You are in plan mode, which only reads: background commands are not started. \
                 Write the plan with todo_write and stop."
                    .to_owned(),
            );
        }
        crate::planning::readonly::check(command).err().map(|why| {
            format!(
                "You are in plan mode, which only reads: `{command}` was not run because {why}. \
                 Read-only commands such as ls, cat, head, grep, rg, find (without -exec or \
                 -delete) and git status/log/diff/show run; chains run only when every part is \
                 read-only. Write the plan with todo_write and stop; the user will switch modes \
                 to carry it out."
            )
        })
    }

    async fn execute(&self, arguments: Value, ctx: &ToolContext) -> Result<String, ToolError> {
        let sandbox_mode = self.sandbox.mode_for(ctx.mode, &arguments);
        let args: Args = super::parse_args(arguments)?;
        if args.command.trim().is_empty() {
            return Err(ToolError::new(
                "`command` is empty: give the command line to run.",
            ));
        }
        // The user chose the editor's terminal (ACP): a foreground command runs there, judged
        // as every call is before it ran.
        if let Some(terminal) = ctx.editor_terminal.as_deref().filter(|_| !args.background) {
            let run_for = self.deadline(args.timeout_secs).map(|l| l.run_for);
            let (command, cwd) = (&args.command, &ctx.workdir);
            return super::editor_terminal::run(terminal, command, cwd, run_for, &ctx.cancel).await;
        }
        let prepared = self.sandbox.prepare(sandbox_mode);
        if args.background {
            return self.jobs.start(
                &args.command,
                &ctx.workdir,
                prepared,
                sandbox_mode,
                self.reaper.as_deref(),
            );
        }
        let limit = self.deadline(args.timeout_secs);
        let network = prepared.as_ref().is_some_and(|p| p.spec.network);
        // Foreground calls keep to their process group: the reaper's exec of harness9's binary
        // would add about 3 ms to every call (docs/PERFORMANCE.md), doubling a plain one.
        let ran = run(&args.command, ctx, limit, prepared.as_ref()).await?;
        // Only now is every process of the command gone: nothing can race the guard.
        let restored = prepared
            .as_ref()
            .and_then(|p| p.snapshot.as_ref())
            .map(|snapshot| snapshot.restore())
            .unwrap_or_default();
        let hint = prepared.as_ref().and_then(|_| {
            denial_hint(&Outcome {
                mode: sandbox_mode,
                network,
                exit_code: ran.exit_code,
                output: &ran.text,
                restored: &restored,
            })
        });
        let text = match hint {
            Some(hint) => format!("{}\n{hint}", ran.text),
            None => ran.text,
        };
        if ran.success && restored.is_clean() {
            Ok(text)
        } else {
            Err(ToolError::new(text))
        }
    }
}

/// A name no other output of this process has: `bash-MILLIS-N.txt`.
fn output_file_name() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let millis = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or_default();
    format!("bash-{millis}-{}.txt", NEXT.fetch_add(1, Ordering::Relaxed))
}

/// When a foreground call is stopped.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Limit {
    run_for: Duration,
    /// The session's limit for one tool call, when it is what applies (the model's
    /// `timeout_secs` was absent or larger).
    session: Option<Duration>,
}

impl Limit {
    /// What the model is told when the limit is reached: the timeout that applied, by name,
    /// and what can help (a larger `timeout_secs` cannot go past the session's limit).
    fn reached(&self) -> String {
        match self.session {
            Some(session) => format!(
                "timed out after {}s, the session's limit for one tool call (--tool-timeout): \
                 the command and everything it started were killed. A larger timeout_secs \
                 cannot go past it; run it with background: true (then bash_output), or split \
                 the work.",
                seconds(session)
            ),
            None => format!(
                "timed out after {}s, the timeout_secs it was given: the command and \
                 everything it started were killed. Pass a larger timeout_secs if it needs \
                 longer (up to the maximum in the schema), or split the work.",
                seconds(self.run_for)
            ),
        }
    }
}

/// A duration as the user set it: whole seconds, or tenths when it has a fraction.
fn seconds(duration: Duration) -> String {
    if duration.subsec_millis() == 0 {
        duration.as_secs().to_string()
    } else {
        format!("{:.1}", duration.as_secs_f64())
    }
}

/// How a command ended, worded for the model.
struct Ran {
    text: String,
    /// The exit code; `None` when it was killed, timed out or cancelled.
    exit_code: Option<i32>,
    success: bool,
}

async fn run(
    command: &str,
    ctx: &ToolContext,
    limit: Option<Limit>,
    sandbox: Option<&Prepared>,
) -> Result<Ran, ToolError> {
    let Spawned {
        mut child,
        mut guard,
        stdout,
        stderr,
    } = spawn(command, &ctx.workdir, sandbox, None)?;
    let spill = ctx.outputs.as_ref().map(|dir| dir.join(output_file_name()));
    // Taken here: the reader's task does not inherit the call's task-locals.
    let mut live = LiveOutput::new(super::progress::output());

    let reader = tokio::spawn(async move {
        let mut output = HeadTail::new(OUTPUT_LIMIT).spilling_to(spill);
        let mut out_buffer = vec![0u8; 64 * 1024];
        let mut err_buffer = vec![0u8; 4 * 1024];
        let (mut stdout, mut stderr) = (Some(stdout), Some(stderr));
        while stdout.is_some() || stderr.is_some() {
            let due = live.due();
            tokio::select! {
                read = async { stdout.as_mut()?.read(&mut out_buffer).await.ok() }, if stdout.is_some() => match read {
                    Some(n) if n > 0 => {
                        output.push(&out_buffer[..n]);
                        live.push(&out_buffer[..n]);
                    }
                    _ => stdout = None,
                },
                read = async { stderr.as_mut()?.read(&mut err_buffer).await.ok() }, if stderr.is_some() => match read {
                    Some(n) if n > 0 => {
                        output.push(&err_buffer[..n]);
                        live.push(&err_buffer[..n]);
                    }
                    _ => stderr = None,
                },
                () = async { tokio::time::sleep_until(due.unwrap_or_else(tokio::time::Instant::now)).await }, if due.is_some() => {}
            }
            live.flush(false);
        }
        live.flush(true);
        output
    });

    enum End {
        Exited(std::io::Result<std::process::ExitStatus>),
        TimedOut(Limit),
        Cancelled,
    }
    let deadline = async {
        match limit {
            Some(limit) => {
                tokio::time::sleep(limit.run_for).await;
                limit
            }
            None => std::future::pending().await,
        }
    };
    let end = tokio::select! {
        status = child.wait() => End::Exited(status),
        limit = deadline => End::TimedOut(limit),
        _ = ctx.cancel.cancelled() => End::Cancelled,
    };
    // Whatever happened, nothing the command started may outlive the call; this also closes
    // the pipe that background children would otherwise hold open.
    guard.kill();
    let _ = child.wait().await;
    let output = reader
        .await
        .map(|o| o.finish())
        .unwrap_or_else(|_| String::from("(the output could not be read)"));
    let shown = if output.is_empty() {
        "(no output)".to_owned()
    } else {
        output
    };
    let (text, exit_code) = match end {
        End::Exited(Ok(status)) => match status.code() {
            Some(code) => (format!("{shown}\nexit status: {code}"), Some(code)),
            None => (format!("{shown}\nthe command was killed by a signal"), None),
        },
        End::Exited(Err(e)) => {
            return Err(ToolError::new(format!(
                "could not wait for the command: {e}"
            )));
        }
        End::TimedOut(limit) => (format!("{shown}\n{}", limit.reached()), None),
        End::Cancelled => (
            format!(
                "{shown}\ncancelled: the user interrupted the command; it and everything it \
                 started were killed."
            ),
            None,
        ),
    };
    Ok(Ran {
        success: exit_code == Some(0),
        text,
        exit_code,
    })
}

#[cfg(test)]
mod tests;
