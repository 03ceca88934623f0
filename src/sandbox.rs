//! The sandbox for commands run by `bash` (CONTRACT.md, "Sandbox"): what they may read, write
//! and reach, enforced by the kernel rather than guessed from the command line. Invariant: a
//! command either runs inside the configured sandbox or, when the kernel cannot sandbox it, the
//! user was told once why it runs without one; nothing in between.
//!
//! Design (Linux). harness9 re-executes its own binary as a helper (`harness9 __sandbox-exec
//! SPEC -- bash -c ...`, dispatched in `main` before the async runtime exists), so the sandbox
//! is built in a fresh single-threaded process and never touches harness9 itself. The helper:
//! 1. enters a new user, mount and PID namespace (unprivileged; root is mapped to itself and
//!    keeps no power outside the namespace);
//! 2. mounts everything read-only but the writable roots (Landlock does not cover `chmod`,
//!    `chown` or times: a read-only mount does, with EROFS); then it
//!    pins the directories that must stay where they are (binds them onto themselves, still
//!    writable: a mount point cannot be renamed or removed), outermost first: the workdir,
//!    `.git`, and every directory between a writable root and a protected or hidden path.
//!    Without this a command could rename `.git`, the workdir (one under /tmp) or the parent
//!    of `$HARNESS9_HOME` away and put a directory holding a planted config in its place. Then
//!    it bind-mounts the protected paths that exist inside the writable roots read-only
//!    (`guard`, `git_metadata`) and mounts an empty read-only tmpfs over `$HARNESS9_HOME`:
//!    Landlock alone can only grant rights on whole hierarchies, so a read-only hole inside a
//!    writable directory needs a mount. Last it enters its working directory again, so that it
//!    sees the new mounts rather than the one beneath them;
//! 3. forks a PID-namespace init, which applies Landlock (read everywhere, write only the
//!    workdir, the temp dirs, `writable_roots` and a few devices), sets `no_new_privs`, drops
//!    every capability (bounding, ambient, effective, permitted, inheritable, with `NOROOT`
//!    securebits so exec cannot give root its powers back) and installs a seccomp filter
//!    (`socket()` of every family, Unix included, unless the network is on, and calls that
//!    change the machine, fail with EPERM);
//! 4. forks the command; when it exits, the init exits and the kernel kills everything else in
//!    the PID namespace, so no child outlives the call even if it left the process group.
//!
//! Paths that are protected but do not exist yet cannot be mounted over; for those the
//! parent takes a snapshot before the command and, after it (when every process of the
//! namespace is dead, so nothing can race), removes whatever the command created there and
//! says so in the result (`guard`), even where the command made the planted directories
//! unwritable. The kernel is probed once per process, by running the helper itself with a
//! timeout; when anything is missing the sandbox degrades to `off` with one notice.
//!
//! What stays out of reach of a command in `workspace-write` (tests/it/sandbox.rs tries
//! these through the real binary): writing anywhere but the workdir, the temp dirs,
//! `writable_roots` and a linked worktree's git directories; `.harness9/`, `.mcp.json`,
//! `.env*`; the git metadata git obeys (`.git/hooks`, `config`, `config.worktree`,
//! `commondir`, `modules/`, `worktrees/`, and the same in a linked worktree's git
//! directories), read-only where it exists and undone where it did not; a `.git` file
//! (read-only) or a new `.git` (undone: `git init` needs `"sandbox": false`); moving the
//! workdir, `.git` or `$HARNESS9_HOME` away, or putting a directory of its own where
//! `$HARNESS9_HOME` does not exist or is a link (undone); reading `$HARNESS9_HOME`; any
//! socket, Unix ones included (Docker's), unless `sandbox.network` (pipes and
//! `socketpair()` stay); the clock and the hostname, and the other calls `linux::seccomp`
//! refuses.
//!
//! What does not (known limits):
//! - the same names deeper in the workdir (`nested`: a nested repository, a subfolder's `.env`)
//!   are found by a walk bounded to 20,000 folders; past that, the result says so;
//! - everything else in the temp dirs and `writable_roots` is writable, repositories there
//!   included, and so is a `.git` created in a directory above a workdir that lies there (git
//!   in the workdir would find it when the workdir has none);
//! - the rest of `.git` (refs, index, objects, `info/`, an interactive rebase's state, whose
//!   `exec` lines run when the user continues it) and of the workdir (sources, build scripts)
//!   stays writable: the sandbox keeps commands from planting what runs by itself later, not
//!   what the user chooses to run;
//! - commands read everything but `$HARNESS9_HOME`; without the network, what they read goes
//!   no further than their output;
//! - on x86_64 every x32 system call is refused outright (a kernel built with
//!   `CONFIG_X86_X32_ABI` offers the same calls under other numbers, which the per-call rules
//!   would not match); the test sees the filter's EPERM where the kernel alone says ENOSYS.
//!
//! macOS: a Seatbelt profile passed to `sandbox-exec`, generated by `seatbelt::profile`.

mod denial;
mod git_metadata;
mod guard;
#[cfg(target_os = "linux")]
pub mod linux;
mod nested;
mod probe;
pub mod seatbelt;
mod settings;
mod spec;
mod undo;

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use denial::{Outcome, Refusal, denial_hint, refusal, refusal_notice};
pub use guard::{ProtectedSnapshot, Restored, Survey};
pub use probe::ProbeError;
pub use settings::{SandboxSettings, read_settings};
pub use spec::Spec;

use crate::planning::Mode;

/// The helper's exit status when it failed before running the command (like `env`'s 125).
pub const SETUP_FAILED: i32 = 125;

/// The hidden first argument that makes `harness9` act as the sandbox helper.
pub const HELPER_ARG: &str = "__sandbox-exec";

/// What commands run by `bash` may touch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum SandboxMode {
    /// No sandbox.
    Off,
    /// Read everything, write nothing.
    ReadOnly,
    /// Read everything, write the workdir, the temp dirs and `writable_roots`.
    WorkspaceWrite,
}

impl SandboxMode {
    pub fn as_str(self) -> &'static str {
        match self {
            SandboxMode::Off => "off",
            SandboxMode::ReadOnly => "read-only",
            SandboxMode::WorkspaceWrite => "workspace-write",
        }
    }

    /// Lower is stricter; a project file may only move the mode down this scale.
    fn looseness(self) -> u8 {
        match self {
            SandboxMode::ReadOnly => 0,
            SandboxMode::WorkspaceWrite => 1,
            SandboxMode::Off => 2,
        }
    }

    /// The stricter of two modes.
    pub fn stricter(self, other: SandboxMode) -> SandboxMode {
        if other.looseness() < self.looseness() {
            other
        } else {
            self
        }
    }
}

impl std::fmt::Display for SandboxMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A failure to set up or apply the sandbox.
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    #[error("the sandbox specification could not be encoded: {0}")]
    Encode(#[from] serde_json::Error),
}

/// One way of running a command inside a `Spec`: the platform part of the sandbox.
pub trait Platform: Send + Sync + std::fmt::Debug {
    /// The program and arguments that run `program args` confined to `spec`.
    fn wrap(
        &self,
        spec: &Spec,
        program: &OsStr,
        args: &[OsString],
    ) -> Result<(PathBuf, Vec<OsString>), SandboxError>;
}

/// Linux: our own binary re-executed as the helper (see the module doc).
#[derive(Debug, Clone)]
pub struct HelperPlatform {
    pub helper: PathBuf,
}

impl Platform for HelperPlatform {
    fn wrap(
        &self,
        spec: &Spec,
        program: &OsStr,
        args: &[OsString],
    ) -> Result<(PathBuf, Vec<OsString>), SandboxError> {
        let mut argv: Vec<OsString> = vec![
            HELPER_ARG.into(),
            serde_json::to_string(spec)?.into(),
            "--".into(),
            program.to_owned(),
        ];
        argv.extend(args.iter().cloned());
        Ok((self.helper.clone(), argv))
    }
}

/// macOS: `sandbox-exec` with a generated Seatbelt profile.
#[derive(Debug, Clone)]
pub struct SeatbeltPlatform;

impl Platform for SeatbeltPlatform {
    fn wrap(
        &self,
        spec: &Spec,
        program: &OsStr,
        args: &[OsString],
    ) -> Result<(PathBuf, Vec<OsString>), SandboxError> {
        let mut argv: Vec<OsString> = vec![
            "-p".into(),
            seatbelt::profile(spec).into(),
            "--".into(),
            program.to_owned(),
        ];
        argv.extend(args.iter().cloned());
        Ok((PathBuf::from("/usr/bin/sandbox-exec"), argv))
    }
}

/// What decides a session's sandbox, besides the settings files.
#[derive(Debug, Clone)]
pub struct SandboxInputs {
    /// `--sandbox`, when given.
    pub flag: Option<SandboxMode>,
    pub workdir: PathBuf,
    /// `$HARNESS9_HOME`: its `settings.json` is the user's; it is hidden from commands.
    pub home: PathBuf,
    /// The binary to re-execute as the Linux helper (normally `std::env::current_exe()`).
    pub helper: PathBuf,
}

/// How one `bash` call runs with respect to the sandbox (for the permission decision).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SandboxRequest {
    /// The call will run inside the sandbox.
    pub sandboxed: bool,
    /// The model asked to run it outside (`"sandbox": false`); this always asks except in yolo.
    pub leave_requested: bool,
}

/// Whether a `bash` call's arguments ask to leave the sandbox (`"sandbox": false`).
pub fn leave_requested(arguments: &Value) -> bool {
    arguments.get("sandbox").and_then(Value::as_bool) == Some(false)
}

/// The session's sandbox: the configured policy and, when the kernel allows it, the platform
/// that enforces it.
#[derive(Debug, Clone)]
pub struct Sandbox {
    mode: SandboxMode,
    network: bool,
    writable_roots: Vec<PathBuf>,
    workdir: PathBuf,
    home: PathBuf,
    /// `None`: this machine cannot sandbox commands (`notices` says why).
    platform: Option<Arc<dyn Platform>>,
    notices: Vec<String>,
    /// The workdir's listings of the last walk for nested protected names.
    listings: Arc<std::sync::Mutex<nested::ListingCache>>,
    /// The workspace-write calls alive now and the baseline they restore to.
    overlap: Arc<std::sync::Mutex<guard::Overlap>>,
}

impl Sandbox {
    /// No sandbox at all (tests, embedders that confine commands themselves).
    pub fn disabled(workdir: &Path) -> Sandbox {
        Sandbox {
            mode: SandboxMode::Off,
            network: true,
            writable_roots: Vec::new(),
            workdir: workdir.to_owned(),
            home: PathBuf::new(),
            platform: None,
            notices: Vec::new(),
            listings: Arc::default(),
            overlap: Arc::default(),
        }
    }

    /// The session's sandbox from the flag, the three settings files and the kernel.
    pub fn resolve(inputs: &SandboxInputs) -> Sandbox {
        let mut notices = Vec::new();
        let settings = read_settings(&inputs.workdir, &inputs.home, inputs.flag, &mut notices);
        let platform = match probe::platform(&inputs.helper) {
            Ok(platform) => Some(platform),
            Err(why) => {
                notices.push(format!(
                    "sandbox off: {why}. Commands run by bash are not confined; plan mode \
                     relies on its read-only command check alone."
                ));
                None
            }
        };
        Sandbox::from_parts(inputs, settings, platform, notices)
    }

    /// A sandbox with a known platform (or none), skipping the probe: tests and embedders.
    pub fn from_parts(
        inputs: &SandboxInputs,
        settings: SandboxSettings,
        platform: Option<Arc<dyn Platform>>,
        notices: Vec<String>,
    ) -> Sandbox {
        Sandbox {
            mode: settings.mode,
            network: settings.network,
            writable_roots: settings.writable_roots,
            workdir: inputs.workdir.clone(),
            home: inputs.home.clone(),
            platform,
            notices,
            listings: Arc::default(),
            overlap: Arc::default(),
        }
    }

    /// The configured mode (before plan mode or the kernel are taken into account).
    pub fn configured_mode(&self) -> SandboxMode {
        self.mode
    }

    /// Whether commands run sandboxed by default: a mode other than `off`, and a kernel that
    /// can enforce it. The permission engine's `sandboxed` input comes from here.
    pub fn is_active(&self) -> bool {
        self.platform.is_some() && self.mode != SandboxMode::Off
    }

    /// Whether this machine can sandbox commands at all.
    pub fn is_supported(&self) -> bool {
        self.platform.is_some()
    }

    /// What to tell the user once, at start (settings ignored, the kernel cannot sandbox).
    pub fn notices(&self) -> &[String] {
        &self.notices
    }

    /// For the status line: `sandbox: workspace-write`, `sandbox: off`.
    pub fn label(&self) -> String {
        match (&self.platform, self.mode) {
            (None, _) => "sandbox: off (unsupported)".to_owned(),
            (Some(_), SandboxMode::WorkspaceWrite) if self.network => {
                "sandbox: workspace-write +net".to_owned()
            }
            (Some(_), mode) => format!("sandbox: {mode}"),
        }
    }

    /// The mode one call runs in: plan mode is always read-only (when the kernel allows it);
    /// `"sandbox": false` leaves it otherwise (the permission engine asked first).
    pub fn mode_for(&self, mode: Mode, arguments: &Value) -> SandboxMode {
        if self.platform.is_none() {
            return SandboxMode::Off;
        }
        if mode == Mode::Plan {
            return SandboxMode::ReadOnly;
        }
        if leave_requested(arguments) {
            return SandboxMode::Off;
        }
        self.mode
    }

    /// What one call in `mode` may do, for its approval: the sandbox's mode and what it allows,
    /// or that it runs outside it.
    pub fn allows_text(&self, mode: Mode, arguments: &Value) -> String {
        match self.mode_for(mode, arguments) {
            SandboxMode::Off => "outside the sandbox: it may do whatever you may".to_owned(),
            sandbox_mode => format!(
                "in the sandbox ({sandbox_mode}): {}",
                denial::what_it_allows(sandbox_mode, self.network)
            ),
        }
    }

    /// The permission engine's two inputs for a `bash` call.
    pub fn request(&self, mode: Mode, arguments: &Value) -> SandboxRequest {
        SandboxRequest {
            sandboxed: self.mode_for(mode, arguments) != SandboxMode::Off,
            leave_requested: leave_requested(arguments),
        }
    }

    /// What a call in `mode` may touch, computed now (protected paths that exist now are
    /// mounted read-only; the others are guarded by the snapshot). `None` when it runs outside.
    pub fn prepare(&self, mode: SandboxMode) -> Option<Prepared> {
        let platform = self.platform.clone()?;
        if mode == SandboxMode::Off {
            return None;
        }
        // One walk of the workdir serves the mounts and the snapshot.
        let survey = if mode == SandboxMode::WorkspaceWrite {
            Survey::take(&self.workdir, &self.home, &self.listings)
        } else {
            Survey::top_only(&self.workdir, &self.home)
        };
        let spec = Spec::build(mode, self.network, &self.writable_roots, &survey);
        // Calls that overlap restore to the snapshot of the first (`guard::Overlap`).
        let (snapshot, live) = match mode {
            SandboxMode::WorkspaceWrite => {
                let (snapshot, live) = guard::join_overlap(&self.overlap, &survey);
                (Some(snapshot), Some(live))
            }
            _ => (None, None),
        };
        Some(Prepared {
            platform,
            spec,
            snapshot,
            _live: live,
        })
    }
}

/// One call's sandbox, ready to wrap a command.
#[derive(Debug)]
pub struct Prepared {
    platform: Arc<dyn Platform>,
    pub spec: Spec,
    /// Protected paths that did not exist before the command (workspace-write only).
    pub snapshot: Option<ProtectedSnapshot>,
    /// Counted among the session's live sandboxed calls until dropped.
    _live: Option<guard::LiveCall>,
}

impl Prepared {
    pub fn wrap(
        &self,
        program: &OsStr,
        args: &[OsString],
    ) -> Result<(PathBuf, Vec<OsString>), SandboxError> {
        self.platform.wrap(&self.spec, program, args)
    }
}

/// `harness9 sandbox -- CMD ARGS...`: runs one command in the configured sandbox, as `bash`
/// would (plan mode aside), with the terminal's stdin and outputs. Returns the exit status.
pub fn run_one(flag: Option<SandboxMode>, workdir: &Path, home: &Path, command: &[OsString]) -> u8 {
    let helper = match std::env::current_exe() {
        Ok(helper) => helper,
        Err(e) => {
            eprintln!("harness9: cannot find its own binary for the sandbox: {e}");
            return 1;
        }
    };
    let sandbox = Sandbox::resolve(&SandboxInputs {
        flag,
        workdir: workdir.to_owned(),
        home: home.to_owned(),
        helper,
    });
    for notice in sandbox.notices() {
        eprintln!("harness9: notice: {notice}");
    }
    let Some((program, args)) = command.split_first() else {
        eprintln!("harness9: give the command to run after --");
        return 2;
    };
    let prepared = sandbox.prepare(sandbox.mode_for(Mode::Default, &Value::Null));
    let wrapped = match &prepared {
        Some(prepared) => prepared.wrap(program, args),
        None => Ok((PathBuf::from(program), args.to_vec())),
    };
    let (program, args) = match wrapped {
        Ok(wrapped) => wrapped,
        Err(e) => {
            eprintln!("harness9: {e}");
            return 1;
        }
    };
    let status = std::process::Command::new(&program)
        .args(&args)
        .current_dir(workdir)
        .env_remove("OPENAI_API_KEY")
        .env_remove("ANTHROPIC_API_KEY")
        .status();
    let restored = prepared
        .as_ref()
        .and_then(|p| p.snapshot.as_ref())
        .map(ProtectedSnapshot::restore)
        .unwrap_or_default();
    for line in restored.report() {
        eprintln!("harness9: {line}");
    }
    match status {
        Ok(status) => {
            let code = status.code().unwrap_or(1);
            if restored.is_clean() {
                code.clamp(0, 255) as u8
            } else {
                1
            }
        }
        Err(e) => {
            eprintln!("harness9: cannot run {}: {e}", program.display());
            127
        }
    }
}

/// If `args` are the helper's (`harness9 __sandbox-exec ...`), runs it and returns the exit
/// status to leave with; `main` calls this first, before any thread exists.
pub fn dispatch_helper(args: &[OsString]) -> Option<i32> {
    if args.get(1).map(OsString::as_os_str) != Some(OsStr::new(HELPER_ARG)) {
        return None;
    }
    #[cfg(target_os = "linux")]
    {
        Some(linux::helper_main(&args[2..]))
    }
    #[cfg(not(target_os = "linux"))]
    {
        eprintln!("harness9 sandbox: the helper only exists on Linux");
        Some(125)
    }
}

#[cfg(test)]
mod tests;
