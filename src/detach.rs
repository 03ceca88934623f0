//! Every child process harness9 starts (commands, hooks, MCP servers, eval scripts, the sandbox
//! helper) runs in a session of its own, so it has no controlling terminal: it cannot open
//! `/dev/tty`, type into the user's terminal with `TIOCSTI`, or write escape sequences past what
//! harness9 strips from its output. A new session is also a new process group whose id is the
//! child's pid, so `killpg(pid)` still stops the child and what it started.

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
