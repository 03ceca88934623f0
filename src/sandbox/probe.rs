//! Whether this machine can sandbox commands, asked once per process and cached. On Linux the
//! probe runs the helper itself on `true` (namespaces, mounts, Landlock, capabilities, seccomp:
//! the whole path a command takes), with a timeout, so a kernel or container that refuses any
//! part is found at start, not at the first command. Invariant: the answer is a platform or a
//! sentence saying why not; it never panics and never waits longer than `PROBE_TIMEOUT`.

use std::path::Path;
use std::sync::{Arc, OnceLock};
#[cfg(target_os = "linux")]
use std::time::Duration;

use super::Platform;

/// Why this machine runs commands without a sandbox. Cloned out of the once-per-process cache.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ProbeError {
    #[error("/usr/bin/sandbox-exec is missing")]
    NoSandboxExec,
    #[error("this operating system has no sandbox support in harness9")]
    NoSupport,
    #[error("this kernel has no Landlock (simulated)")]
    NoLandlockSimulated,
    #[error("this kernel has no Landlock (Linux 5.13 or later with Landlock enabled is needed)")]
    NoLandlock,
    /// The helper ran and said why it could not confine `true` (its own words, from stderr).
    #[error("the kernel refused the sandbox ({reason})")]
    Refused { reason: String },
    #[error("the sandbox specification could not be encoded: {0}")]
    Encode(Arc<serde_json::Error>),
    #[error("cannot start the sandbox helper {}: {source}", helper.display())]
    Start {
        helper: std::path::PathBuf,
        source: Arc<std::io::Error>,
    },
    #[error("the sandbox helper could not be waited for: {0}")]
    Wait(Arc<std::io::Error>),
    #[error("the sandbox probe did not answer within {}s", .0.as_secs())]
    Timeout(std::time::Duration),
}

impl ProbeError {
    /// Whether the machine lacks what the sandbox needs (rather than the probe itself failing):
    /// no Landlock, no `sandbox-exec`, a kernel or container that refuses a step.
    pub fn is_unsupported(&self) -> bool {
        matches!(
            self,
            ProbeError::NoSandboxExec
                | ProbeError::NoSupport
                | ProbeError::NoLandlockSimulated
                | ProbeError::NoLandlock
                | ProbeError::Refused { .. }
        )
    }
}

/// How long the probe may take before the sandbox counts as unavailable.
#[cfg(target_os = "linux")]
const PROBE_TIMEOUT: Duration = Duration::from_secs(5);

/// Debug builds only: makes the probe fail as on a kernel without Landlock, so the fallback
/// can be tested end to end (`HARNESS9_SANDBOX_SIMULATE=no-landlock`).
#[cfg(all(target_os = "linux", debug_assertions))]
const SIMULATE_VARIABLE: &str = "HARNESS9_SANDBOX_SIMULATE";

static ANSWER: OnceLock<Result<(), ProbeError>> = OnceLock::new();

/// The platform that sandboxes commands here, or why there is none.
pub(super) fn platform(helper: &Path) -> Result<Arc<dyn Platform>, ProbeError> {
    let answer = ANSWER.get_or_init(|| check(helper));
    answer.clone().map(|()| make(helper))
}

#[cfg(target_os = "linux")]
fn make(helper: &Path) -> Arc<dyn Platform> {
    Arc::new(super::HelperPlatform {
        helper: helper.to_owned(),
    })
}

#[cfg(target_os = "macos")]
fn make(_helper: &Path) -> Arc<dyn Platform> {
    Arc::new(super::SeatbeltPlatform)
}

#[cfg(not(any(target_os = "linux", target_os = "macos")))]
fn make(_helper: &Path) -> Arc<dyn Platform> {
    unreachable!("check() never succeeds on this platform")
}

#[cfg(target_os = "macos")]
fn check(_helper: &Path) -> Result<(), ProbeError> {
    if Path::new("/usr/bin/sandbox-exec").exists() {
        Ok(())
    } else {
        Err(ProbeError::NoSandboxExec)
    }
}

#[cfg(not(any(target_os = "linux", target_os = "macos")))]
fn check(_helper: &Path) -> Result<(), ProbeError> {
    Err(ProbeError::NoSupport)
}

/// The Landlock ABI version the kernel offers (0: none).
#[cfg(target_os = "linux")]
fn landlock_abi() -> i64 {
    const LANDLOCK_CREATE_RULESET_VERSION: libc::c_uint = 1;
    // SAFETY: with a null attribute and size 0 this call only reports the ABI version.
    let version = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            LANDLOCK_CREATE_RULESET_VERSION,
        )
    };
    version.max(0)
}

#[cfg(target_os = "linux")]
fn check(helper: &Path) -> Result<(), ProbeError> {
    #[cfg(debug_assertions)]
    if std::env::var(SIMULATE_VARIABLE).as_deref() == Ok("no-landlock") {
        return Err(ProbeError::NoLandlockSimulated);
    }
    if landlock_abi() < 1 {
        return Err(ProbeError::NoLandlock);
    }
    run_probe(helper)
}

/// Runs `helper __sandbox-exec SPEC -- true` and waits at most `PROBE_TIMEOUT`.
#[cfg(target_os = "linux")]
fn run_probe(helper: &Path) -> Result<(), ProbeError> {
    use std::process::{Command, Stdio};

    let temp = std::env::temp_dir();
    let spec = super::Spec::build(
        super::SandboxMode::WorkspaceWrite,
        false,
        &[],
        &super::guard::Survey::top_only(&temp, Path::new("")),
    );
    let platform = super::HelperPlatform {
        helper: helper.to_owned(),
    };
    let (program, args) = platform
        .wrap(&spec, "true".as_ref(), &[])
        .map_err(|super::SandboxError::Encode(e)| ProbeError::Encode(Arc::new(e)))?;
    let mut command = Command::new(program);
    // As every command's helper runs: without harness9's terminal.
    crate::detach::detach(&mut command);
    let mut child = command
        .args(args)
        .current_dir(&temp)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| ProbeError::Start {
            helper: helper.to_owned(),
            source: Arc::new(e),
        })?;
    let stderr = child.stderr.take();
    let (sender, receiver) = std::sync::mpsc::channel();
    let pid = child.id();
    std::thread::spawn(move || {
        let mut text = String::new();
        if let Some(mut stderr) = stderr {
            use std::io::Read;
            let _ = stderr.read_to_string(&mut text);
        }
        let _ = sender.send((child.wait(), text));
    });
    match receiver.recv_timeout(PROBE_TIMEOUT) {
        Ok((Ok(status), _)) if status.success() => Ok(()),
        Ok((Ok(_), text)) => {
            let reason = text
                .lines()
                .find_map(|l| l.strip_prefix("harness9 sandbox: "))
                .map(|l| l.trim_end_matches("; the command was not run").to_owned())
                .unwrap_or_else(|| "the sandbox helper failed".to_owned());
            Err(ProbeError::Refused { reason })
        }
        Ok((Err(e), _)) => Err(ProbeError::Wait(Arc::new(e))),
        Err(_) => {
            // SAFETY: kill only sends a signal to the child we started.
            unsafe {
                libc::kill(pid as libc::pid_t, libc::SIGKILL);
            }
            Err(ProbeError::Timeout(PROBE_TIMEOUT))
        }
    }
}
