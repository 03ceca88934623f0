//! The Linux helper: `harness9 __sandbox-exec SPEC -- PROGRAM ARGS...`, run in a fresh
//! single-threaded process. It builds the namespaces and mounts, forks the PID namespace's
//! init, which confines itself (Landlock, capabilities, seccomp) and runs the command as its
//! only child. Invariant: the command is exec'd only after every restriction is in place; any
//! failure before that ends the helper with status 125 and a message, never an unconfined run.

mod caps;
mod landlock_rules;
mod mounts;
mod seccomp;

use std::ffi::{CString, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

use super::{SETUP_FAILED, Spec};

/// Why the helper could not confine a command (it then exits with `SETUP_FAILED`, the command
/// not run). The text crosses to the parent on stderr, where the probe reads it.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    #[error("usage: harness9 __sandbox-exec SPEC -- PROGRAM [ARGS...]")]
    Usage,
    #[error("bad sandbox specification: {0}")]
    Spec(#[source] serde_json::Error),
    #[error("an argument holds a NUL byte")]
    NulArgument,
    #[error("{} holds a NUL byte", .0.display())]
    NulPath(PathBuf),
    /// One step the kernel refused; `step` says which, in the user's words.
    #[error("{step}: {source}")]
    System {
        step: String,
        #[source]
        source: std::io::Error,
    },
    #[error("Landlock: {0}")]
    Landlock(#[source] Box<dyn std::error::Error + Send + Sync>),
    #[error("Landlock is not enforced by this kernel")]
    LandlockNotEnforced,
    #[error("seccomp filters are not built for this architecture")]
    Architecture,
    /// Building a seccomp rule; `prefixed` is whether the message names seccomp.
    #[error("{}{source}", if *.prefixed { "seccomp: " } else { "" })]
    Seccomp {
        prefixed: bool,
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    #[error("capabilities are still held after dropping them")]
    CapabilitiesHeld,
    #[error("the bounding set still holds capabilities")]
    BoundingSetHeld,
}

/// What a setup failure means for the caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SetupKind {
    /// The kernel (or the container around it) does not offer what the sandbox needs.
    Unsupported,
    /// The helper was called wrongly: a bug, not a property of the machine.
    Invalid,
    /// The kernel offers it but a step failed.
    Failed,
}

impl SetupError {
    /// The last OS error, for the step just refused.
    pub(crate) fn last(step: impl Into<String>) -> SetupError {
        SetupError::System {
            step: step.into(),
            source: std::io::Error::last_os_error(),
        }
    }

    pub fn kind(&self) -> SetupKind {
        match self {
            SetupError::Usage
            | SetupError::Spec(_)
            | SetupError::NulArgument
            | SetupError::NulPath(_) => SetupKind::Invalid,
            SetupError::Landlock(_)
            | SetupError::LandlockNotEnforced
            | SetupError::Architecture => SetupKind::Unsupported,
            SetupError::System { source, .. }
                if matches!(
                    source.raw_os_error(),
                    Some(libc::EPERM | libc::EINVAL | libc::ENOSYS | libc::EOPNOTSUPP)
                ) =>
            {
                SetupKind::Unsupported
            }
            _ => SetupKind::Failed,
        }
    }
}

/// Runs the helper; returns the status the process exits with.
pub fn helper_main(args: &[OsString]) -> i32 {
    match run(args) {
        Ok(code) => code,
        Err(why) => {
            eprintln!("harness9 sandbox: {why}; the command was not run");
            SETUP_FAILED
        }
    }
}

fn run(args: &[OsString]) -> Result<i32, SetupError> {
    let (spec, command) = match args {
        [spec, dashes, command @ ..] if dashes == "--" && !command.is_empty() => (spec, command),
        _ => return Err(SetupError::Usage),
    };
    let spec: Spec = serde_json::from_str(&spec.to_string_lossy()).map_err(SetupError::Spec)?;
    // Everything the child needs is allocated before the forks.
    let argv: Vec<CString> = command
        .iter()
        .map(|a| CString::new(a.as_bytes()).map_err(|_| SetupError::NulArgument))
        .collect::<Result<_, _>>()?;

    mounts::enter_namespaces()?;
    mounts::read_only_outside(&spec.writable)?;
    mounts::protect(&spec)?;

    // The first child is PID 1 of the new PID namespace: when it exits, the kernel kills every
    // process left in it, wherever it moved its process group.
    // SAFETY: the helper is single-threaded (dispatched before any thread is started).
    let init = unsafe { libc::fork() };
    if init < 0 {
        return Err(SetupError::last("fork"));
    }
    if init > 0 {
        return Ok(wait_for(init));
    }
    // In the init. If the helper above dies (killed with the call), so does the namespace.
    // SAFETY: plain prctl calls on this process.
    unsafe {
        libc::prctl(
            libc::PR_SET_PDEATHSIG,
            libc::SIGKILL as libc::c_ulong,
            0,
            0,
            0,
        );
    }
    let code = match confine(&spec) {
        Ok(()) => run_command(&argv),
        Err(why) => {
            eprintln!("harness9 sandbox: {why}; the command was not run");
            SETUP_FAILED
        }
    };
    // SAFETY: leaving the forked child without running the parent's destructors twice.
    unsafe { libc::_exit(code) }
}

/// The order matters: Landlock needs `no_new_privs` (set first); dropping capabilities needs
/// CAP_SETPCAP (so after Landlock, before seccomp, which would not stop it but comes last so
/// that nothing above is filtered).
fn confine(spec: &Spec) -> Result<(), SetupError> {
    // SAFETY: prctl on this process.
    if unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) } != 0 {
        return Err(SetupError::last("no_new_privs"));
    }
    landlock_rules::apply(spec)?;
    caps::drop_all()?;
    seccomp::apply(spec.network)?;
    Ok(())
}

/// Forks the command and reaps every orphan until it ends; returns its status.
fn run_command(argv: &[CString]) -> i32 {
    // SAFETY: still single-threaded.
    let child = unsafe { libc::fork() };
    if child < 0 {
        eprintln!(
            "harness9 sandbox: fork: {}",
            std::io::Error::last_os_error()
        );
        return SETUP_FAILED;
    }
    if child == 0 {
        let mut ptrs: Vec<*const libc::c_char> = argv.iter().map(|a| a.as_ptr()).collect();
        ptrs.push(std::ptr::null());
        // SAFETY: argv is NUL-terminated C strings ending in a null pointer.
        unsafe {
            libc::execvp(ptrs[0], ptrs.as_ptr());
        }
        let error = std::io::Error::last_os_error();
        eprintln!(
            "harness9 sandbox: cannot run {}: {error}",
            argv[0].to_string_lossy()
        );
        // SAFETY: leaving the forked child.
        unsafe { libc::_exit(127) }
    }
    wait_for(child)
}

/// Waits for `pid`, reaping any other child on the way (the init adopts orphans); returns a
/// shell-style status: the exit code, or 128 + the signal.
fn wait_for(pid: libc::pid_t) -> i32 {
    loop {
        let mut status = 0;
        // SAFETY: waitpid writes the status into our local.
        let got = unsafe { libc::waitpid(-1, &mut status, 0) };
        if got < 0 {
            if std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
                continue;
            }
            return SETUP_FAILED;
        }
        if got != pid {
            continue;
        }
        if libc::WIFEXITED(status) {
            return libc::WEXITSTATUS(status);
        }
        if libc::WIFSIGNALED(status) {
            return 128 + libc::WTERMSIG(status);
        }
    }
}
