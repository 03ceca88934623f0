//! Starting a shell command the way every `bash` call does, in the foreground or in the
//! background: inside the session's sandbox (or, outside it, without the capability to read
//! harness9's memory), in a session (so a process group) of its own that a `GroupGuard` kills,
//! without a controlling terminal, stdin closed, the API keys out of its environment and git
//! told not to run programs named by repositories it merely finds (`GIT_GUARDS`). On Linux, given the reaper binary (the background jobs), the
//! command runs under the `reaper`, which also stops what left the group (`setsid`, double
//! forks, daemons) and outlives harness9 to stop everything when harness9 dies; a sandboxed
//! command runs inside it too (its PID namespace ends with the sandbox's helper).

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use tokio::process::Command;

use super::ToolError;
use super::reaper::{self, Until};
use crate::sandbox::Prepared;

/// Variables a command must never see: the model could read them back.
const HIDDEN_VARIABLES: &[&str] = &["OPENAI_API_KEY", "ANTHROPIC_API_KEY"];
/// Git settings every command gets on top of its configuration files. A repository is
/// untrusted input, and git runs programs named in repository config: a bare repository
/// committed as plain files (`evil/HEAD`, `evil/config` with `core.fsmonitor`) would run its
/// program on a mere `git status` inside it. These are git's own switches for that.
const GIT_GUARDS: &[(&str, &str)] = &[
    // Only repositories named with `--git-dir`/`GIT_DIR` may be bare (git's own defence
    // against embedded bare repositories).
    ("safe.bareRepository", "explicit"),
    // `core.fsmonitor` names a program run by status, diff and add.
    ("core.fsmonitor", "false"),
];

/// Stops a command and everything it started when dropped: the call ended, timed out, or its
/// future was dropped.
pub(super) struct GroupGuard(Stop);

enum Stop {
    /// Kill this process group.
    Group(i32),
    /// Close the reaper's control pipe: the reaper then kills every descendant and exits (it
    /// must not be killed itself, or the orphans it holds would go to init).
    Reaper(std::io::PipeWriter),
    Done,
}

impl GroupGuard {
    pub fn kill(&mut self) {
        match std::mem::replace(&mut self.0, Stop::Done) {
            // SAFETY: killpg only sends a signal; a group that already ended gives ESRCH.
            Stop::Group(pgid) => unsafe {
                libc::killpg(pgid, libc::SIGKILL);
            },
            Stop::Reaper(pipe) => drop(pipe),
            Stop::Done => {}
        }
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Where the reaper binary is and when it should end by itself (see `reaper`).
#[derive(Debug, Clone, Copy)]
pub(super) struct Reaping<'a> {
    pub helper: &'a Path,
    pub until: Until,
}

/// A started shell command: its process, the guard that kills its group, and its two pipes.
pub(super) struct Spawned {
    pub child: tokio::process::Child,
    pub guard: GroupGuard,
    pub stdout: tokio::process::ChildStdout,
    pub stderr: tokio::process::ChildStderr,
}

/// Starts `command` with `bash -c` (or `sh`) in `workdir`: inside `sandbox` when given (else
/// without `CAP_SYS_PTRACE`, and under the reaper when `reaping` is given on Linux), in a
/// process group of its own, stdin closed, stderr merged into stdout, the API keys removed and
/// git's guards set.
pub(super) fn spawn(
    command: &str,
    workdir: &Path,
    sandbox: Option<&Prepared>,
    reaping: Option<Reaping<'_>>,
) -> Result<Spawned, ToolError> {
    let shell = if std::path::Path::new("/bin/bash").exists() {
        "/bin/bash"
    } else {
        "/bin/sh"
    };
    // `exec 2>&1` merges stderr into the one pipe, so the two keep their relative order.
    let script = format!("exec 2>&1\n{command}");
    let shell_args: Vec<OsString> = vec!["-c".into(), script.into()];
    let reaping = reaping.filter(|r| cfg!(target_os = "linux") && !r.helper.as_os_str().is_empty());
    let (program, argv) = match sandbox {
        Some(prepared) => prepared
            .wrap(shell.as_ref(), &shell_args)
            .map_err(|e| ToolError::new(format!("could not set up the sandbox: {e}")))?,
        None => (PathBuf::from(shell), shell_args),
    };
    // Under the reaper, a sandboxed command too: the sandbox's namespace ends with its helper
    // when harness9 stops it, but only the reaper outlives harness9 itself to stop it.
    let mut control = None;
    let (program, argv) = match reaping {
        Some(reaping) => {
            // The reaper's stdin: the pipe whose closing stops it. Both ends are close-on-exec,
            // so no other child of harness9 keeps the write end.
            let (read, write) = std::io::pipe()
                .map_err(|e| ToolError::new(format!("could not make the reaper's pipe: {e}")))?;
            control = Some((read, write));
            reaper::wrap(reaping.helper, reaping.until, program.as_os_str(), &argv)
        }
        None => (program, argv),
    };
    let mut child = Command::new(program);
    child.args(argv);
    // A session of its own (so also a group of its own, which `GroupGuard` kills), without
    // harness9's terminal.
    crate::detach::detach(child.as_std_mut());
    if sandbox.is_none() {
        crate::detach::drop_ptrace(child.as_std_mut());
    }
    let (stdin, stop_pipe) = match control {
        // The reaper gives the command /dev/null in its place.
        Some((read, write)) => (Stdio::from(read), Some(write)),
        None => (Stdio::null(), None),
    };
    child
        .current_dir(workdir)
        .stdin(stdin)
        .stdout(Stdio::piped())
        // The sandbox helper reports its own failures on stderr; a plain shell has already
        // sent stderr to stdout.
        .stderr(Stdio::piped())
        // A killed reaper would leave its orphans to init: it is stopped through its pipe.
        .kill_on_drop(stop_pipe.is_none());
    for name in HIDDEN_VARIABLES {
        child.env_remove(name);
    }
    child.envs(git_guard_env(
        std::env::var("GIT_CONFIG_COUNT").ok().as_deref(),
    ));
    let spawned = child.spawn();
    // The builder holds harness9's copy of the reaper pipe's read end; only the reaper needs it.
    drop(child);
    let mut child = spawned.map_err(|e| match reaping {
        Some(reaping) => ToolError::new(format!(
            "could not start the reaper {} for {shell}: {e}",
            reaping.helper.display()
        )),
        None => ToolError::new(format!("could not start {shell}: {e}")),
    })?;
    let guard = GroupGuard(match (stop_pipe, child.id()) {
        (Some(pipe), _) => Stop::Reaper(pipe),
        (None, Some(pid)) => Stop::Group(pid as i32),
        (None, None) => Stop::Done,
    });
    let stdout = child
        .stdout
        .take()
        .ok_or_else(|| ToolError::new("could not capture the command's output"))?;
    let stderr = child
        .stderr
        .take()
        .ok_or_else(|| ToolError::new("could not capture the command's output"))?;

    Ok(Spawned {
        child,
        guard,
        stdout,
        stderr,
    })
}

/// The `GIT_CONFIG_COUNT`/`GIT_CONFIG_KEY_n`/`GIT_CONFIG_VALUE_n` variables that add
/// `GIT_GUARDS` after whatever the environment already sets (`existing` count): settings from
/// the environment win over every configuration file.
pub(super) fn git_guard_env(existing: Option<&str>) -> Vec<(String, String)> {
    let first = existing
        .and_then(|count| count.trim().parse::<usize>().ok())
        .unwrap_or(0);
    let mut vars = vec![(
        "GIT_CONFIG_COUNT".to_owned(),
        (first + GIT_GUARDS.len()).to_string(),
    )];
    for (offset, (key, value)) in GIT_GUARDS.iter().enumerate() {
        let n = first + offset;
        vars.push((format!("GIT_CONFIG_KEY_{n}"), (*key).to_owned()));
        vars.push((format!("GIT_CONFIG_VALUE_{n}"), (*value).to_owned()));
    }
    vars
}
