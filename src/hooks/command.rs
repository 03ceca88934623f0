//! Runs one command hook: `sh -c COMMAND` in the working directory, in a process group of its
//! own, with the event's JSON on stdin. Its stdout and stderr are read to their end but only
//! their first `OUTPUT_LIMIT` bytes kept; past its timeout (or when the run is interrupted) the
//! whole group is killed, children too, and when the hook exits whatever it left running is
//! killed with it, so a hook can neither hang the session nor hold its pipes open.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio_util::sync::CancellationToken;

/// Bytes of a hook's stdout, and of its stderr, that are kept.
pub const OUTPUT_LIMIT: usize = 64 * 1024;

/// The API keys never reach a hook, as they never reach `bash` (CONTRACT "Files").
const HIDDEN_VARIABLES: &[&str] = &["OPENAI_API_KEY", "ANTHROPIC_API_KEY"];

/// How a hook's process ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Exit {
    Code(i32),
    /// Killed by a signal it did not expect (not our timeout).
    Signal,
    TimedOut(Duration),
    /// The run was interrupted while the hook ran.
    Cancelled,
    /// It could not be started at all.
    NotStarted(String),
}

/// What one hook did.
#[derive(Debug, Clone)]
pub struct Ran {
    pub exit: Exit,
    pub stdout: String,
    pub stderr: String,
}

/// Kills a process group when dropped: the hook ended, timed out, or its future was dropped.
struct Group(Option<i32>);

impl Drop for Group {
    fn drop(&mut self) {
        if let Some(pgid) = self.0.take() {
            // SAFETY: killpg only sends a signal; a group that already ended gives ESRCH.
            unsafe {
                libc::killpg(pgid, libc::SIGKILL);
            }
        }
    }
}

/// Runs `command` with `input` on its stdin.
pub async fn run(
    command: &str,
    input: &[u8],
    workdir: &Path,
    timeout: Duration,
    cancel: &CancellationToken,
) -> Ran {
    let mut process = tokio::process::Command::new("/bin/sh");
    process
        .arg("-c")
        .arg(command)
        .current_dir(workdir)
        .env("HARNESS9_PROJECT_DIR", workdir)
        // Claude Code's name, so hooks written for it work unchanged.
        .env("CLAUDE_PROJECT_DIR", workdir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    // A session of its own, so a group `Group` kills, without harness9's terminal.
    crate::detach::detach(process.as_std_mut());
    crate::detach::drop_ptrace(process.as_std_mut());
    for name in HIDDEN_VARIABLES {
        process.env_remove(name);
    }
    let mut child = match process.spawn() {
        Ok(child) => child,
        Err(error) => {
            return Ran {
                exit: Exit::NotStarted(error.to_string()),
                stdout: String::new(),
                stderr: String::new(),
            };
        }
    };
    let group = Group(child.id().and_then(|id| i32::try_from(id).ok()));
    let stdin = child.stdin.take();
    let stdout = child.stdout.take();
    let stderr = child.stderr.take();
    let input = input.to_vec();
    // A hook that never reads its stdin must not block us: the write is its own task, and a
    // closed pipe is no error.
    let feed = async move {
        if let Some(mut stdin) = stdin {
            let _ = stdin.write_all(&input).await;
        }
    };
    let work = async {
        let (_, out, err, status) = tokio::join!(feed, capped(stdout), capped(stderr), async {
            let status = child.wait().await;
            // Whatever it left behind goes with it, or it would hold the pipes open.
            drop(Group(group.0));
            status
        });
        (out, err, status)
    };
    let outcome = tokio::select! {
        _ = cancel.cancelled() => None,
        outcome = tokio::time::timeout(timeout, work) => Some(outcome),
    };
    drop(group);
    match outcome {
        None => Ran {
            exit: Exit::Cancelled,
            stdout: String::new(),
            stderr: String::new(),
        },
        Some(Err(_)) => Ran {
            exit: Exit::TimedOut(timeout),
            stdout: String::new(),
            stderr: String::new(),
        },
        Some(Ok((stdout, stderr, status))) => {
            let exit = match status {
                Ok(status) => status.code().map_or(Exit::Signal, Exit::Code),
                Err(error) => Exit::NotStarted(error.to_string()),
            };
            Ran {
                exit,
                stdout,
                stderr,
            }
        }
    }
}

/// A pipe read to its end, its first `OUTPUT_LIMIT` bytes kept (lossy UTF-8).
async fn capped(pipe: Option<impl AsyncRead + Unpin>) -> String {
    let Some(mut pipe) = pipe else {
        return String::new();
    };
    let mut kept = Vec::new();
    let mut cut = 0usize;
    let mut buffer = [0u8; 8192];
    loop {
        match pipe.read(&mut buffer).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                let room = OUTPUT_LIMIT.saturating_sub(kept.len());
                let take = room.min(n);
                kept.extend_from_slice(&buffer[..take]);
                cut += n - take;
            }
        }
    }
    let mut text = String::from_utf8_lossy(&kept).into_owned();
    if cut > 0 {
        text.push_str(&format!("\n[… {cut} more bytes of output cut]"));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn never() -> CancellationToken {
        CancellationToken::new()
    }

    #[tokio::test]
    async fn input_on_stdin_and_both_outputs_come_back() {
        let dir = tempfile::tempdir().unwrap();
        let ran = run(
            "cat; echo oops >&2; exit 3",
            b"{\"a\":1}",
            dir.path(),
            Duration::from_secs(30),
            &never(),
        )
        .await;
        assert_eq!(ran.exit, Exit::Code(3));
        assert_eq!(ran.stdout, "{\"a\":1}");
        assert_eq!(ran.stderr.trim(), "oops");
    }

    #[tokio::test]
    async fn output_is_capped() {
        let dir = tempfile::tempdir().unwrap();
        let ran = run(
            "head -c 200000 /dev/zero | tr '\\0' x",
            b"",
            dir.path(),
            Duration::from_secs(30),
            &never(),
        )
        .await;
        assert_eq!(ran.exit, Exit::Code(0));
        assert!(ran.stdout.len() < OUTPUT_LIMIT + 100);
        assert!(ran.stdout.ends_with("more bytes of output cut]"));
    }

    #[tokio::test]
    async fn past_its_timeout_the_hook_and_its_child_are_killed() {
        let dir = tempfile::tempdir().unwrap();
        let pidfile = dir.path().join("child.pid");
        let command = format!("sleep 300 & echo $! > {}; wait", pidfile.display());
        let ran = run(
            &command,
            b"",
            dir.path(),
            Duration::from_millis(500),
            &never(),
        )
        .await;
        assert_eq!(ran.exit, Exit::TimedOut(Duration::from_millis(500)));
        let pid: i32 = std::fs::read_to_string(&pidfile)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        // The group was sent SIGKILL before `run` returned; wait for the child's exit as an
        // event (its pidfd turns readable), never by sleeping.
        assert!(exits_within(pid, 10_000), "the hook's child still runs");
    }

    /// Whether process `pid` has ended (or ends within `ms`), seen through a pidfd.
    fn exits_within(pid: i32, ms: i32) -> bool {
        // SAFETY: plain syscalls on a descriptor this function owns and closes.
        unsafe {
            let fd = libc::syscall(libc::SYS_pidfd_open, pid, 0) as i32;
            if fd < 0 {
                // Already gone (and reaped).
                return true;
            }
            let mut poll = libc::pollfd {
                fd,
                events: libc::POLLIN,
                revents: 0,
            };
            // A signal (another test's child exiting: SIGCHLD) interrupts `poll` whatever
            // SA_RESTART says; ask again with the time left.
            let deadline = std::time::Instant::now() + std::time::Duration::from_millis(ms as u64);
            let ready = loop {
                let left = deadline.saturating_duration_since(std::time::Instant::now());
                let ready = libc::poll(&mut poll, 1, left.as_millis() as i32);
                if ready >= 0 || *libc::__errno_location() != libc::EINTR {
                    break ready;
                }
            };
            libc::close(fd);
            ready == 1
        }
    }

    #[tokio::test]
    async fn a_missing_command_is_an_exit_code_not_a_crash() {
        let dir = tempfile::tempdir().unwrap();
        let ran = run(
            "/nonexistent/hook",
            b"",
            dir.path(),
            Duration::from_secs(30),
            &never(),
        )
        .await;
        assert_eq!(ran.exit, Exit::Code(127));
    }
}
