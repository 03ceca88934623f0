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

fn what_it_allows(mode: SandboxMode, network: bool) -> &'static str {
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
}
