//! The reaper: on Linux, a background `bash` command (inside its sandbox's helper, when
//! sandboxed) runs under `harness9 __reap UNTIL -- PROGRAM ARGS...`, a fresh single-threaded
//! process (dispatched in `main` before any thread exists) that keeps everything the command
//! starts from outliving it.
//! A process group is not enough: `setsid`, a double fork or a daemonising server leaves the
//! group, and its orphans are adopted by init, out of reach of `killpg`.
//!
//! The reaper makes itself a child subreaper (`PR_SET_CHILD_SUBREAPER`), so every orphan among
//! the command's descendants is reparented to it, whatever group or session it moved to. Its
//! stdin is the read end of a pipe whose write end only harness9 holds; the reaper moves it to a
//! close-on-exec descriptor (the command gets `/dev/null` as stdin and never sees the pipe).
//! When the pipe turns readable or hung up (harness9 closed it to stop the job, or harness9 is
//! gone for any reason, SIGKILL included), the reaper kills every descendant and exits. Without
//! a stop it waits: `UNTIL` = `command` ends it (killing the rest) when the command itself
//! ends, `descendants` only when nothing the command started is left. Either way its exit
//! status is the command's: the same code, or death by the same signal.
//!
//! Killing: the reaper sends SIGKILL to its direct children only (read from
//! `/proc/self/task/*/children`), reaps one, and repeats until it has no child left. A killed
//! process's children are reparented to the reaper before the killed one can be reaped, so the
//! next round sees them; a process with SIGKILL pending cannot fork, so a forking process cannot
//! outrun the rounds. Signalling only its own children, whose zombies only it reaps, means no
//! pid it signals can have been reused by an unrelated process.
//!
//! The reaper keeps leftovers from outliving their command; it is no confinement (that is the
//! sandbox's job): a command outside the sandbox can kill the reaper, or ask another service to
//! start a process for it.
//!
//! macOS has no subreaper: there commands keep to their process group (`shell_process`).

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

/// The hidden first argument that makes `harness9` act as the reaper.
pub const REAPER_ARG: &str = "__reap";

/// When the reaper ends by itself (no stop asked).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Until {
    /// When the command ends: what it left running is killed. For foreground calls, which do
    /// not use the reaper today: its exec would double a plain call (docs/PERFORMANCE.md).
    Command,
    /// When the command and everything it started have ended (a background job).
    Descendants,
}

impl Until {
    fn as_str(self) -> &'static str {
        match self {
            Until::Command => "command",
            Until::Descendants => "descendants",
        }
    }

    fn parse(word: &OsStr) -> Option<Until> {
        match word.to_str()? {
            "command" => Some(Until::Command),
            "descendants" => Some(Until::Descendants),
            _ => None,
        }
    }
}

/// The program and arguments that run `program args` under the reaper found at `helper`.
pub fn wrap(
    helper: &Path,
    until: Until,
    program: &OsStr,
    args: &[OsString],
) -> (PathBuf, Vec<OsString>) {
    let mut argv: Vec<OsString> = vec![
        REAPER_ARG.into(),
        until.as_str().into(),
        "--".into(),
        program.to_owned(),
    ];
    argv.extend(args.iter().cloned());
    (helper.to_owned(), argv)
}

/// Set by `dispatch`: this process's binary answers `__reap`.
static ANSWERS: AtomicBool = AtomicBool::new(false);

/// If `args` are the reaper's (`harness9 __reap ...`), runs it and returns the exit status to
/// leave with; `main` calls this first, before any thread exists. Otherwise notes that this
/// binary answers `__reap` (see `this_binary`).
pub fn dispatch(args: &[OsString]) -> Option<i32> {
    if args.get(1).map(OsString::as_os_str) != Some(OsStr::new(REAPER_ARG)) {
        ANSWERS.store(true, Ordering::Relaxed);
        return None;
    }
    #[cfg(target_os = "linux")]
    {
        Some(linux::reaper_main(&args[2..]))
    }
    #[cfg(not(target_os = "linux"))]
    {
        eprintln!("harness9 reaper: the reaper only exists on Linux");
        Some(125)
    }
}

/// The binary to run as the reaper: this process's own when its `main` answers `__reap`
/// (called `dispatch`), on Linux; `None` in test binaries and embedders, whose commands then keep
/// to their process group. `/proc/self/exe` rather than a path: it still names this binary after
/// an upgrade replaced or removed the file.
pub fn this_binary() -> Option<PathBuf> {
    (cfg!(target_os = "linux") && ANSWERS.load(Ordering::Relaxed))
        .then(|| PathBuf::from("/proc/self/exe"))
}

/// The status the reaper leaves with when it could not run the command (like `env`'s 125).
const SETUP_FAILED: i32 = 125;

#[cfg(target_os = "linux")]
mod linux {
    use std::ffi::{CString, OsString};
    use std::os::unix::ffi::OsStrExt;

    use super::{SETUP_FAILED, Until};

    /// Runs the reaper; returns the status to exit with (or dies by the command's signal).
    pub fn reaper_main(args: &[OsString]) -> i32 {
        match run(args) {
            Ok(status) => leave_like(status),
            Err(why) => {
                eprintln!("harness9 reaper: {why}; the command was not run");
                SETUP_FAILED
            }
        }
    }

    fn last_error() -> std::io::Error {
        std::io::Error::last_os_error()
    }

    fn run(args: &[OsString]) -> Result<libc::c_int, String> {
        let (until, command) = match args {
            [until, dashes, command @ ..] if dashes == "--" && !command.is_empty() => {
                (Until::parse(until), command)
            }
            _ => (None, args),
        };
        let until =
            until.ok_or("usage: harness9 __reap command|descendants -- PROGRAM [ARGS...]")?;
        // Everything the child needs is allocated before the fork.
        let argv: Vec<CString> = command
            .iter()
            .map(|a| {
                CString::new(a.as_bytes()).map_err(|_| "an argument holds a NUL byte".to_owned())
            })
            .collect::<Result<_, _>>()?;
        let mut pointers: Vec<*const libc::c_char> = argv.iter().map(|a| a.as_ptr()).collect();
        pointers.push(std::ptr::null());

        // SAFETY: prctl with integer arguments on this process.
        if unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) } != 0 {
            return Err(format!("cannot become a subreaper: {}", last_error()));
        }
        let control = take_control_pipe()?;
        let (children, old_mask) = watch_children()?;

        // SAFETY: the reaper is single-threaded (dispatched before any thread is started).
        let command = unsafe { libc::fork() };
        if command < 0 {
            return Err(format!("fork: {}", last_error()));
        }
        if command == 0 {
            // SAFETY: in the child: restore what exec should inherit, then exec; only
            // async-signal-safe calls and no allocation.
            unsafe {
                libc::sigprocmask(libc::SIG_SETMASK, &old_mask, std::ptr::null_mut());
                // A group of its own: a command signalling its group (`kill 0`) must not end
                // the reaper, whose death would hand the orphans to init.
                libc::setpgid(0, 0);
                // Rust ignores SIGPIPE in its own processes; commands expect the default.
                libc::signal(libc::SIGPIPE, libc::SIG_DFL);
                libc::execvp(pointers[0], pointers.as_ptr());
                let error = last_error();
                eprintln!(
                    "harness9 reaper: cannot run {}: {error}",
                    argv[0].to_string_lossy()
                );
                libc::_exit(127)
            }
        }
        Ok(supervise(command, until, control, children))
    }

    /// Moves the control pipe (stdin) to a close-on-exec descriptor and puts `/dev/null` in its
    /// place, so the command's stdin stays closed and the pipe never reaches it.
    fn take_control_pipe() -> Result<libc::c_int, String> {
        // SAFETY: descriptor calls on descriptors this process owns.
        unsafe {
            let control = libc::fcntl(0, libc::F_DUPFD_CLOEXEC, 3);
            if control < 0 {
                return Err(format!("no control pipe on stdin: {}", last_error()));
            }
            let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC);
            if null < 0 || libc::dup2(null, 0) < 0 {
                return Err(format!("cannot open /dev/null: {}", last_error()));
            }
            libc::close(null);
            Ok(control)
        }
    }

    /// Blocks SIGCHLD and returns a descriptor that turns readable when it arrives (so one
    /// `poll` waits for a child and the control pipe at once), with the mask to restore.
    fn watch_children() -> Result<(libc::c_int, libc::sigset_t), String> {
        // SAFETY: signal-set calls on locals; signalfd returns a new descriptor.
        unsafe {
            let mut set: libc::sigset_t = std::mem::zeroed();
            let mut old: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            libc::sigaddset(&mut set, libc::SIGCHLD);
            if libc::sigprocmask(libc::SIG_BLOCK, &set, &mut old) != 0 {
                return Err(format!("sigprocmask: {}", last_error()));
            }
            let fd = libc::signalfd(-1, &set, libc::SFD_CLOEXEC | libc::SFD_NONBLOCK);
            if fd < 0 {
                return Err(format!("signalfd: {}", last_error()));
            }
            Ok((fd, old))
        }
    }

    /// Reaps children until the end `until` names, or until the control pipe asks to stop;
    /// returns the command's wait status.
    fn supervise(
        command: libc::pid_t,
        until: Until,
        control: libc::c_int,
        children: libc::c_int,
    ) -> libc::c_int {
        let mut status = None;
        loop {
            let left = reap_ready(command, &mut status);
            if !left {
                break;
            }
            if status.is_some() && until == Until::Command {
                kill_all(command, &mut status);
                break;
            }
            let mut fds = [
                libc::pollfd {
                    fd: control,
                    events: libc::POLLIN,
                    revents: 0,
                },
                libc::pollfd {
                    fd: children,
                    events: libc::POLLIN,
                    revents: 0,
                },
            ];
            // SAFETY: poll on two descriptors this process owns.
            let ready = unsafe { libc::poll(fds.as_mut_ptr(), 2, -1) };
            if ready < 0 {
                if last_error().raw_os_error() == Some(libc::EINTR) {
                    continue;
                }
                kill_all(command, &mut status);
                break;
            }
            // Any byte, the end of the pipe or an error on it: harness9 wants the job stopped
            // or is gone.
            if fds[0].revents != 0 {
                kill_all(command, &mut status);
                break;
            }
            if fds[1].revents != 0 {
                drain(children);
            }
        }
        // Without a status the command was never waited for, which cannot happen once forked.
        status.unwrap_or(SETUP_FAILED << 8)
    }

    /// Reaps every child that has ended, noting the command's status; returns whether any
    /// child is left.
    fn reap_ready(command: libc::pid_t, status: &mut Option<libc::c_int>) -> bool {
        loop {
            let mut got = 0;
            // SAFETY: waitpid writes into our local.
            let pid = unsafe { libc::waitpid(-1, &mut got, libc::WNOHANG) };
            match pid {
                0 => return true,
                p if p < 0 => return last_error().raw_os_error() == Some(libc::EINTR),
                p => {
                    if p == command {
                        *status = Some(got);
                    }
                }
            }
        }
    }

    /// Kills every descendant, in rounds (see the module doc), until no child is left.
    fn kill_all(command: libc::pid_t, status: &mut Option<libc::c_int>) {
        loop {
            for pid in own_children() {
                // SAFETY: kill only sends a signal, to our own child (its pid cannot have been
                // reused: only we reap it).
                unsafe {
                    libc::kill(pid, libc::SIGKILL);
                }
            }
            let mut got = 0;
            // SAFETY: waitpid writes into our local.
            let pid = unsafe { libc::waitpid(-1, &mut got, 0) };
            if pid < 0 {
                if last_error().raw_os_error() == Some(libc::EINTR) {
                    continue;
                }
                // ECHILD: nothing is left.
                return;
            }
            if pid == command {
                *status = Some(got);
            }
        }
    }

    /// The reaper's children, from `/proc/self/task/*/children`; when the kernel does not offer
    /// that file, from every process's parent in `/proc/*/stat`.
    fn own_children() -> Vec<libc::pid_t> {
        // SAFETY: getpid cannot fail.
        let me = unsafe { libc::getpid() };
        // The reaper has one thread, whose id is its pid.
        match std::fs::read_to_string(format!("/proc/{me}/task/{me}/children")) {
            Ok(list) => list
                .split_ascii_whitespace()
                .filter_map(|pid| pid.parse().ok())
                .collect(),
            Err(_) => children_from_stat(me),
        }
    }

    fn children_from_stat(me: libc::pid_t) -> Vec<libc::pid_t> {
        let Ok(entries) = std::fs::read_dir("/proc") else {
            return Vec::new();
        };
        entries
            .filter_map(|entry| {
                entry
                    .ok()?
                    .file_name()
                    .to_str()?
                    .parse::<libc::pid_t>()
                    .ok()
            })
            .filter(|pid| {
                std::fs::read_to_string(format!("/proc/{pid}/stat"))
                    .ok()
                    .and_then(|stat| parent_in_stat(&stat))
                    == Some(me)
            })
            .collect()
    }

    /// The parent pid in a `/proc/PID/stat` line: the second field after the command name,
    /// which is in parentheses and may itself hold spaces and parentheses.
    pub(super) fn parent_in_stat(stat: &str) -> Option<libc::pid_t> {
        let after_name = &stat[stat.rfind(')')? + 1..];
        after_name.split_ascii_whitespace().nth(1)?.parse().ok()
    }

    fn drain(fd: libc::c_int) {
        let mut info = [0u8; std::mem::size_of::<libc::signalfd_siginfo>()];
        // SAFETY: reads into a local buffer of the size signalfd writes; non-blocking.
        while unsafe { libc::read(fd, info.as_mut_ptr().cast(), info.len()) } > 0 {}
    }

    /// Leaves with the command's wait status: its exit code, or death by its signal (without a
    /// core dump), so harness9 sees what it would have seen without the reaper.
    fn leave_like(status: libc::c_int) -> i32 {
        if libc::WIFEXITED(status) {
            return libc::WEXITSTATUS(status);
        }
        let signal = libc::WTERMSIG(status);
        // SAFETY: plain calls on this process, which is about to end.
        unsafe {
            let none = libc::rlimit {
                rlim_cur: 0,
                rlim_max: 0,
            };
            libc::setrlimit(libc::RLIMIT_CORE, &none);
            libc::signal(signal, libc::SIG_DFL);
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            libc::sigaddset(&mut set, signal);
            libc::sigprocmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
            libc::raise(signal);
        }
        128 + signal
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::linux::parent_in_stat;

    #[test]
    fn the_parent_is_read_past_a_name_with_spaces_and_parentheses() {
        assert_eq!(parent_in_stat("42 (sleep) S 7 42 42 0"), Some(7));
        assert_eq!(parent_in_stat("42 (a) b (c) R 9 1 1"), Some(9));
        assert_eq!(parent_in_stat("42 (x"), None);
    }
}
