//! Telling the model that the sandbox stopped a command, and how to ask to leave it. The
//! signals, most certain first: protected paths the guard had to undo (we saw it happen); the
//! helper's own failure (status 125 with its message); else a failed command whose output
//! carries the kernel's words for EPERM, EACCES or EROFS (the only trace a denial leaves in an
//! ordinary program's output). Invariant: a command that succeeded gets no hint unless the
//! guard undid something.

use super::SandboxMode;
use super::guard::Restored;

/// How the kernel's denials read in program output (strerror of EPERM, EACCES, EROFS).
const DENIAL_WORDS: &[&str] = &[
    "operation not permitted",
    "permission denied",
    "read-only file system",
];

/// What a sandboxed command's end looked like.
#[derive(Debug)]
pub struct Outcome<'a> {
    pub mode: SandboxMode,
    pub network: bool,
    /// The exit code, `None` when killed by a signal.
    pub exit_code: Option<i32>,
    pub output: &'a str,
    /// What the guard removed or put back, or could not.
    pub restored: &'a Restored,
}

pub(super) fn what_it_allows(mode: SandboxMode, network: bool) -> &'static str {
    match (mode, network) {
        (SandboxMode::ReadOnly, _) => "it may read files but write none and use no network",
        (_, false) => {
            "it may write only inside the working directory and the temp directory (not git's \
             hooks, config and the files that redirect them, nor create a .git, nor .harness9, \
             .mcp.json or .env files) and may not use the network or any socket"
        }
        (_, true) => {
            "it may write only inside the working directory and the temp directory (not git's \
             hooks, config and the files that redirect them, nor create a .git, nor .harness9, \
             .mcp.json or .env files)"
        }
    }
}

/// The lines to append to the result, or `None` when nothing points at the sandbox.
pub fn denial_hint(outcome: &Outcome<'_>) -> Option<String> {
    let escalate = "If the command needs this, call bash again with the same command and \
                    \"sandbox\": false; the user will be asked to approve running it outside \
                    the sandbox.";
    let allows = what_it_allows(outcome.mode, outcome.network);
    if !outcome.restored.is_clean() {
        return Some(format!(
            "[sandbox] In the sandbox ({}), {}. {allows}. {escalate}",
            outcome.mode,
            outcome.restored.report().join("; ")
        ));
    }
    if outcome.exit_code == Some(0) {
        return None;
    }
    if outcome.exit_code == Some(super::SETUP_FAILED)
        && outcome.output.contains("harness9 sandbox:")
    {
        return Some(format!(
            "[sandbox] The sandbox could not start, so the command did not run. {escalate}"
        ));
    }
    let lower = outcome.output.to_lowercase();
    if DENIAL_WORDS.iter().any(|w| lower.contains(w)) {
        return Some(format!(
            "[sandbox] This command ran in the sandbox ({}): {allows}. The failure above looks \
             like the sandbox stopping it. {escalate}",
            outcome.mode
        ));
    }
    None
}

/// What the sandbox refused a command that ended (a background job), for the user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// The sandbox could not start, so the command did not run.
    Setup,
    /// A socket: the sandbox has no network (`sandbox.network` is off, or the mode is read-only).
    Network,
    /// A write: what the guard undid, or the kernel's words in the output.
    Write(String),
}

/// Words of a socket call in program output (a traceback's `bind`, Node's `listen EACCES`).
const SOCKET_WORDS: &[&str] = &["socket", "connect", "bind", "listen", "address"];
/// Denials as runtimes word them beside the kernel's own words.
const RUNTIME_DENIALS: &[&str] = &["permissionerror", "eacces", "eperm", "erofs"];

/// What the sandbox refused a command that ended, judged first from what the sandbox itself
/// knows (the guard's undoing, its helper's failure, whether it gives a network at all), then
/// from the denial words in a failed command's output. `None` when nothing points at it.
pub fn refusal(outcome: &Outcome<'_>) -> Option<Refusal> {
    if !outcome.restored.is_clean() {
        return Some(Refusal::Write(outcome.restored.report().join("; ")));
    }
    if outcome.exit_code == Some(0) {
        return None;
    }
    if outcome.exit_code == Some(super::SETUP_FAILED)
        && outcome.output.contains("harness9 sandbox:")
    {
        return Some(Refusal::Setup);
    }
    let lower = outcome.output.to_lowercase();
    let denied = DENIAL_WORDS
        .iter()
        .chain(RUNTIME_DENIALS)
        .any(|w| lower.contains(w));
    if !denied {
        return None;
    }
    let no_network = !outcome.network || outcome.mode == SandboxMode::ReadOnly;
    if no_network && SOCKET_WORDS.iter().any(|w| lower.contains(w)) {
        return Some(Refusal::Network);
    }
    Some(Refusal::Write(format!(
        "in {} mode {}",
        outcome.mode,
        what_it_allows(outcome.mode, outcome.network)
    )))
}

/// The refusal as the user reads it, with how to allow what was refused.
pub fn refusal_notice(refusal: &Refusal) -> String {
    let outside = "or have it run outside the sandbox (`\"sandbox\": false`, which asks you first)";
    match refusal {
        Refusal::Setup => format!("the sandbox could not start, so it did not run: {outside}"),
        Refusal::Network => format!(
            "the sandbox refused it the network: to allow it, set `sandbox.network` to true in \
             your settings (workspace-write mode), {outside}"
        ),
        Refusal::Write(what) => {
            format!("the sandbox refused it a write ({what}): to allow it, {outside}")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use std::path::PathBuf;

    fn outcome<'a>(code: Option<i32>, output: &'a str, restored: &'a Restored) -> Outcome<'a> {
        Outcome {
            mode: SandboxMode::WorkspaceWrite,
            network: false,
            exit_code: code,
            output,
            restored,
        }
    }

    #[test]
    fn a_denial_gets_the_escalation_hint_and_a_success_does_not() {
        let hint = denial_hint(&outcome(
            Some(1),
            "touch: cannot touch '/etc/x': Permission denied",
            &Restored::default(),
        ))
        .unwrap();
        assert!(hint.contains("\"sandbox\": false"), "{hint}");
        let clean = Restored::default();
        assert!(denial_hint(&outcome(Some(0), "Permission denied", &clean)).is_none());
        assert!(denial_hint(&outcome(Some(1), "error: tests failed", &clean)).is_none());
        let undone = Restored {
            undone: vec![PathBuf::from("/w/.mcp.json")],
            ..Restored::default()
        };
        let hint = denial_hint(&outcome(Some(0), "", &undone)).unwrap();
        assert!(hint.contains("/w/.mcp.json") && hint.contains("\"sandbox\": false"));
        // What could not be undone is never called undone.
        let failed = Restored {
            failed: vec![PathBuf::from("/w/.env")],
            ..Restored::default()
        };
        let hint = denial_hint(&outcome(Some(0), "", &failed)).unwrap();
        assert!(
            hint.contains("could NOT undo") && !hint.contains("undid"),
            "{hint}"
        );
    }

    #[test]
    fn a_refused_socket_is_the_network_and_a_refused_write_is_a_write() {
        let clean = Restored::default();
        let python = "Traceback (most recent call last):\n  self.socket.bind(self.server_address)\n\
                      PermissionError: [Errno 1] Operation not permitted";
        assert_eq!(
            refusal(&outcome(Some(1), python, &clean)),
            Some(Refusal::Network)
        );
        let notice = refusal_notice(&Refusal::Network);
        assert!(notice.contains("sandbox.network") && notice.contains("outside the sandbox"));
        // With the network given, the same words are not the network's refusal.
        let mut networked = outcome(Some(1), python, &clean);
        networked.network = true;
        assert!(matches!(refusal(&networked), Some(Refusal::Write(_))));
        let erofs = "touch: cannot touch '/usr/x': Read-only file system";
        assert!(matches!(
            refusal(&outcome(Some(1), erofs, &clean)),
            Some(Refusal::Write(_))
        ));
        // A success, or a failure that is not a denial, is not the sandbox's.
        assert_eq!(refusal(&outcome(Some(0), python, &clean)), None);
        assert_eq!(
            refusal(&outcome(Some(2), "error: no such file", &clean)),
            None
        );
        let undone = Restored {
            undone: vec![PathBuf::from("/w/.mcp.json")],
            ..Restored::default()
        };
        let Some(Refusal::Write(what)) = refusal(&outcome(Some(0), "", &undone)) else {
            panic!("the guard's undoing is a refused write");
        };
        assert!(what.contains("/w/.mcp.json"), "{what}");
    }
}
