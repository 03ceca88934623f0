//! The reaper (`harness9 __reap`), which runs commands outside the sandbox on Linux: what a
//! command started, even after leaving its process group (`setsid`, a double fork), ends when
//! harness9 stops the job, when the session ends, and when harness9 itself is SIGKILLed; the
//! command's output and exit status come through, and the reaper's pipe does not reach it.
//! The tests wait on events (a fifo the escaped process writes its pid into, pidfds), never on
//! sleeps.

#![cfg(target_os = "linux")]

mod direct;
mod session;

use std::io::Read;
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::support::process_ended;

/// The real binary, which answers `__reap`.
pub fn binary() -> PathBuf {
    crate::tui::harness9().to_path_buf()
}

/// A fifo in `dir`: the escaped process writes its pid there, and the test's read of it is the
/// event that says the process runs.
pub fn fifo(dir: &Path) -> PathBuf {
    let path = dir.join("escaped.fifo");
    let name = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: mkfifo on a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0);
    path
}

/// The pid the escaped process wrote into `fifo`: waited for as an event (the fifo turns
/// readable), for 10 s at most, so a process that never starts fails the test instead of
/// hanging it.
pub fn read_pid(fifo: &Path) -> i32 {
    let file = std::fs::File::options()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(fifo)
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut text = Vec::new();
    let mut buffer = [0u8; 64];
    loop {
        let mut poll = libc::pollfd {
            fd: file.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        let left = deadline.saturating_duration_since(Instant::now());
        // SAFETY: poll on a descriptor this function owns.
        let ready = unsafe { libc::poll(&mut poll, 1, left.as_millis() as i32) };
        if ready == 0 {
            panic!("no pid in {} within 10 s", fifo.display());
        }
        if ready < 0 {
            continue; // EINTR (a child's SIGCHLD): ask again with the time left.
        }
        match (&file).read(&mut buffer) {
            Ok(0) => break,
            Ok(n) => text.extend_from_slice(&buffer[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            Err(e) => panic!("{e}"),
        }
    }
    let text = String::from_utf8_lossy(&text);
    text.trim()
        .parse()
        .unwrap_or_else(|_| panic!("no pid: {text:?}"))
}

/// Kills `pid` when dropped, so a failing test leaves no `sleep 1000` behind.
pub struct Escaped(pub i32);

impl Escaped {
    /// Whether the process has ended (within 10 s), waited on through its pidfd.
    pub fn ended(&self) -> bool {
        process_ended(self.0)
    }
}

impl Drop for Escaped {
    fn drop(&mut self) {
        // SAFETY: a signal to a pid this test learned from the process itself.
        unsafe {
            libc::kill(self.0, libc::SIGKILL);
        }
    }
}

/// A command that leaves its process group and session, writes its pid into `fifo`, and runs
/// on. The command waits (with a deadline) until the escaped process has left the group, so
/// that a group kill at the command's end could not catch it on its way out.
pub fn escaping(fifo: &Path) -> String {
    let left = fifo.with_extension("left");
    format!(
        "setsid sh -c 'echo $$ > {left}; echo $$ > {fifo}; exec sleep 1000' >/dev/null 2>&1 & \
         for i in $(seq 1000); do [ -s {left} ] && break; sleep 0.01; done;",
        left = left.display(),
        fifo = fifo.display()
    )
}
