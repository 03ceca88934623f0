//! Process hardening, done first thing in `main` while the process has one thread: no core
//! dumps and not dumpable (so no other process of the user, nor a crash, gets our memory), and
//! the secrets moved out of the process environment, including the bytes of the initial
//! environment block that `/proc/PID/environ` shows, so a command run by the agent cannot read
//! them back from its parent (CONTRACT "Files": keys unreadable from harness9's own process).

/// The variables that hold secrets: taken out of the environment at start.
pub const SECRET_VARIABLES: &[&str] = &[
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "HARNESS9_SERVE_TOKEN",
];

/// What `harden` did.
#[derive(Debug, Default)]
pub struct Hardened {
    /// The secrets taken out of the environment, for `config::Environment`.
    pub secrets: Vec<(String, String)>,
    /// Steps that could not be done (said on stderr by the caller; the run goes on).
    pub problems: Vec<String>,
}

/// Hardens the process. Call it before anything starts a thread (the async runtime, the
/// store, logging): it edits the environment, which is only sound while nothing else reads it.
/// When the process already has other threads it leaves the environment alone and says so.
pub fn harden() -> Hardened {
    let mut hardened = Hardened::default();
    #[cfg(target_os = "linux")]
    linux::limit_dumps(&mut hardened.problems);
    for name in SECRET_VARIABLES {
        if let Some(value) = std::env::var_os(name) {
            match value.into_string() {
                Ok(value) => hardened.secrets.push(((*name).to_owned(), value)),
                Err(_) => hardened
                    .problems
                    .push(format!("{name} is not valid UTF-8; it is ignored")),
            }
        }
    }
    if !SECRET_VARIABLES
        .iter()
        .any(|name| std::env::var_os(name).is_some())
    {
        return hardened;
    }
    #[cfg(target_os = "linux")]
    {
        if !linux::single_threaded() {
            hardened.problems.push(
                "the process already runs several threads: the API keys stay in its environment"
                    .into(),
            );
            return hardened;
        }
        for name in SECRET_VARIABLES {
            // SAFETY: the process has a single thread (checked just above), so nothing reads or
            // writes the environment while these calls do.
            unsafe {
                linux::scrub_initial_block(name);
                std::env::remove_var(name);
            }
        }
    }
    hardened
}

#[cfg(target_os = "linux")]
mod linux {
    //! The Linux calls behind `harden`.

    /// `PR_SET_DUMPABLE 0` and a core size limit of 0.
    pub(super) fn limit_dumps(problems: &mut Vec<String>) {
        // SAFETY: prctl with PR_SET_DUMPABLE takes an integer argument and touches no memory of
        // ours.
        let dumpable = unsafe { libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0) };
        if dumpable != 0 {
            problems.push(format!(
                "cannot mark the process not dumpable: {}",
                std::io::Error::last_os_error()
            ));
        }
        let none = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: setrlimit reads the struct we pass by reference and nothing else.
        if unsafe { libc::setrlimit(libc::RLIMIT_CORE, &none) } != 0 {
            problems.push(format!(
                "cannot turn core dumps off: {}",
                std::io::Error::last_os_error()
            ));
        }
    }

    /// Whether this process has exactly one thread (`/proc/self/task` lists one entry per
    /// thread). Unknown counts as no.
    pub(super) fn single_threaded() -> bool {
        std::fs::read_dir("/proc/self/task").is_ok_and(|tasks| tasks.count() == 1)
    }

    /// Overwrites with zeros the value of every `name=value` string that `environ` points at.
    ///
    /// `/proc/PID/environ` shows the initial environment block that the kernel put on the
    /// stack at `execve`, whatever `environ` says later: `unsetenv` only drops the pointer, so
    /// the value would still be readable there. At start, before any `setenv`, the entries of
    /// `environ` point into that block, so zeroing through them clears it. The name stays (it
    /// says nothing secret) and the entry is then dropped by `remove_var`.
    ///
    /// # Safety
    /// No other thread may read or write the environment meanwhile.
    pub(super) unsafe fn scrub_initial_block(name: &str) {
        let prefix = format!("{name}=");
        // SAFETY: `environ` is a null-terminated array of pointers to NUL-terminated strings,
        // owned by libc; the caller guarantees no thread changes it while we walk it. The
        // strings are writable (the stack block, or memory `setenv` allocated), and we write
        // only within each string's own length, leaving its terminating NUL in place.
        unsafe {
            let mut entry = libc::environ;
            if entry.is_null() {
                return;
            }
            while !(*entry).is_null() {
                let text = std::ffi::CStr::from_ptr(*entry);
                let bytes = text.to_bytes();
                if bytes.starts_with(prefix.as_bytes()) {
                    let value_len = bytes.len() - prefix.len();
                    std::ptr::write_bytes((*entry).add(prefix.len()), 0, value_len);
                }
                entry = entry.add(1);
            }
        }
    }
}
