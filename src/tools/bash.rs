//! `bash`: runs a command in the working directory, in a process group of its own with stdin
//! closed and the API keys removed from its environment. stdout and stderr come back merged in
//! order, capped to head and tail. When the command ends, times out, is cancelled or the call is
//! dropped, the whole group is killed, so background children never outlive the call.

use std::process::Stdio;
use std::time::Duration;

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::io::AsyncReadExt;
use tokio::process::Command;

use super::output::HeadTail;
use super::{Tool, ToolContext, ToolError, ToolKind};

/// Bytes of output kept: the first and last half of this, with a line saying what was cut.
pub const OUTPUT_LIMIT: usize = 30 * 1024;
/// How long a command may run when the model names no limit (the engine's own timeout, when
/// shorter, applies first).
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);
/// Variables a command must never see: the model could read them back.
const HIDDEN_VARIABLES: &[&str] = &["OPENAI_API_KEY", "ANTHROPIC_API_KEY"];

pub struct Bash;

#[derive(Deserialize)]
struct Args {
    command: String,
    #[serde(default)]
    timeout_secs: Option<u64>,
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
         `timeout_secs` (default 120) or when the user interrupts."
    }

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "command": {"type": "string", "description": "The command line, run with bash -c."},
                "timeout_secs": {"type": "integer", "minimum": 1, "description": "Kill the command after this many seconds (default 120)."},
            },
            "required": ["command"],
            "additionalProperties": false,
        })
    }

    fn kind(&self) -> ToolKind {
        ToolKind::Dangerous
    }

    fn offered_in_plan(&self) -> bool {
        true
    }

    fn plan_mode_refusal(&self, arguments: &Value) -> Option<String> {
        let command = arguments
            .get("command")
            .and_then(Value::as_str)
            .unwrap_or("");
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
        let args: Args = super::parse_args(arguments)?;
        if args.command.trim().is_empty() {
            return Err(ToolError::new(
                "`command` is empty: give the command line to run.",
            ));
        }
        let limit = args
            .timeout_secs
            .map(Duration::from_secs)
            .unwrap_or(DEFAULT_TIMEOUT);
        run(&args.command, ctx, limit).await
    }
}

/// Kills a process group when dropped: the call ended, timed out, or its future was dropped.
struct GroupGuard(Option<i32>);

impl GroupGuard {
    fn kill(&mut self) {
        if let Some(pgid) = self.0.take() {
            // SAFETY: killpg only sends a signal; a group that already ended gives ESRCH.
            unsafe {
                libc::killpg(pgid, libc::SIGKILL);
            }
        }
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        self.kill();
    }
}

async fn run(command: &str, ctx: &ToolContext, limit: Duration) -> Result<String, ToolError> {
    let shell = if std::path::Path::new("/bin/bash").exists() {
        "/bin/bash"
    } else {
        "/bin/sh"
    };
    // `exec 2>&1` merges stderr into the one pipe, so the two keep their relative order.
    let script = format!("exec 2>&1\n{command}");
    let mut child = Command::new(shell);
    child
        .arg("-c")
        .arg(script)
        .current_dir(&ctx.workdir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .process_group(0)
        .kill_on_drop(true);
    for name in HIDDEN_VARIABLES {
        child.env_remove(name);
    }
    let mut child = child
        .spawn()
        .map_err(|e| ToolError::new(format!("could not start {shell}: {e}")))?;
    let mut guard = GroupGuard(child.id().map(|pid| pid as i32));
    let mut stdout = child
        .stdout
        .take()
        .ok_or_else(|| ToolError::new("could not capture the command's output"))?;

    let reader = tokio::spawn(async move {
        let mut output = HeadTail::new(OUTPUT_LIMIT);
        let mut buffer = vec![0u8; 64 * 1024];
        loop {
            match stdout.read(&mut buffer).await {
                Ok(0) | Err(_) => break,
                Ok(n) => output.push(&buffer[..n]),
            }
        }
        output
    });

    enum End {
        Exited(std::io::Result<std::process::ExitStatus>),
        TimedOut,
        Cancelled,
    }
    let end = tokio::select! {
        status = child.wait() => End::Exited(status),
        _ = tokio::time::sleep(limit) => End::TimedOut,
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
    match end {
        End::Exited(Ok(status)) => match status.code() {
            Some(0) => Ok(format!("{shown}\nexit status: 0")),
            Some(code) => Err(ToolError::new(format!("{shown}\nexit status: {code}"))),
            None => Err(ToolError::new(format!(
                "{shown}\nthe command was killed by a signal"
            ))),
        },
        End::Exited(Err(e)) => Err(ToolError::new(format!(
            "could not wait for the command: {e}"
        ))),
        End::TimedOut => Err(ToolError::new(format!(
            "{shown}\ntimed out after {}s: the command and everything it started were killed. \
             Pass a larger timeout_secs if it needs longer.",
            limit.as_secs()
        ))),
        End::Cancelled => Err(ToolError::new(format!(
            "{shown}\ncancelled: the user interrupted the command; it and everything it started were killed."
        ))),
    }
}
