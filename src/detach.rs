//! Every child process harness9 starts (commands, hooks, MCP servers, eval scripts, the sandbox
//! helper) runs in a session of its own, so it has no controlling terminal: it cannot open
//! `/dev/tty`, type into the user's terminal with `TIOCSTI`, or write escape sequences past what
//! harness9 strips from its output. A new session is also a new process group whose id is the
//! child's pid, so `killpg(pid)` still stops the child and what it started. Children that run
//! outside the sandbox also lose `CAP_SYS_PTRACE` (`drop_ptrace`). Servers someone else wrote (MCP
//! servers, language servers) inherit only `SERVER_VARIABLES` of harness9's environment.

use std::os::unix::process::CommandExt;

/// Makes `command`'s child call `setsid()` before it runs its program; a refusal fails the spawn
/// rather than run the child with the terminal. Do not combine with `process_group(0)`: a group
/// leader cannot start a session.
pub fn detach(command: &mut std::process::Command) {
    // SAFETY: the closure makes one async-signal-safe system call and allocates nothing.
    unsafe {
        command.pre_exec(|| {
            if libc::setsid() < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// `CAP_SYS_PTRACE` (linux/capability.h).
const CAP_SYS_PTRACE: libc::c_ulong = 19;

/// Makes `command`'s child take `CAP_SYS_PTRACE` out of its bounding set before it runs its
/// program, so even as root it cannot open harness9's memory (`/proc/PPID/mem`, where the keys
/// live) or its environment: harness9 is not dumpable, and only that capability overrides it.
/// Without the power to change the bounding set (not root) there is nothing to drop, and
/// nothing fails.
pub fn drop_ptrace(command: &mut std::process::Command) {
    // SAFETY: the closure makes one async-signal-safe system call and allocates nothing.
    unsafe {
        command.pre_exec(|| {
            // A refusal changes nothing: the capability was not ours to drop.
            libc::prctl(libc::PR_CAPBSET_DROP, CAP_SYS_PTRACE, 0, 0, 0);
            Ok(())
        });
    }
}

/// The variables a server someone else wrote (an MCP server over stdio, a language server)
/// inherits from harness9's environment (the MCP SDKs' default set): no API key, no other secret
/// of the user's. One decision for every such server.
pub const SERVER_VARIABLES: &[&str] = &["HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"];

/// The values of `SERVER_VARIABLES` that are set, for `Command::env_clear().envs(..)`.
pub fn server_environment() -> impl Iterator<Item = (&'static str, std::ffi::OsString)> {
    SERVER_VARIABLES
        .iter()
        .filter_map(|name| std::env::var_os(name).map(|value| (*name, value)))
}
