//! A worktree's NAME, checked against an allowlist before it becomes a branch (`harness9/NAME`)
//! and a folder name: letters, digits, `-`, `_` and `.` (not first), so it can neither climb out
//! of the worktrees' folder nor make a ref git refuses.

use super::WorktreeError;

/// The longest NAME taken (a folder name and a ref component, with room to spare).
const MAX_LEN: usize = 64;

/// A NAME that passed the allowlist.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Name(String);

impl Name {
    /// `raw` if it is a valid NAME, else why not.
    pub fn parse(raw: &str) -> Result<Name, WorktreeError> {
        let invalid = |reason: &'static str| WorktreeError::InvalidName {
            name: raw.to_owned(),
            reason,
        };
        if raw.is_empty() {
            return Err(invalid("it is empty"));
        }
        if raw.len() > MAX_LEN {
            return Err(invalid("it is longer than 64 characters"));
        }
        if !raw
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        {
            return Err(invalid(
                "use only letters, digits, '-', '_' and '.' (no '/', no spaces)",
            ));
        }
        if raw.starts_with('.') || raw.starts_with('-') {
            return Err(invalid("it may not start with '.' or '-'"));
        }
        // What git refuses in a ref name.
        if raw.contains("..") || raw.ends_with('.') || raw.ends_with(".lock") {
            return Err(invalid(
                "it may not contain '..' nor end with '.' or '.lock'",
            ));
        }
        Ok(Name(raw.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The branch the worktree is on: `harness9/NAME`.
    pub fn branch(&self) -> String {
        format!("{BRANCH_PREFIX}{}", self.0)
    }
}

impl std::fmt::Display for Name {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// The branches harness9's worktrees are on.
pub const BRANCH_PREFIX: &str = "harness9/";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_names_pass() {
        for ok in ["fix-bug", "feature_2", "v1.2", "A", "x.y-z_0"] {
            assert_eq!(Name::parse(ok).unwrap().as_str(), ok);
        }
        assert_eq!(Name::parse("fix").unwrap().branch(), "harness9/fix");
    }

    #[test]
    fn names_that_climb_out_or_break_a_ref_are_refused() {
        let too_long = "a".repeat(65);
        for bad in [
            "",
            "..",
            ".",
            "../up",
            "a/b",
            "/abs",
            ".hidden",
            "-flag",
            "a..b",
            "end.",
            "x.lock",
            "with space",
            "tab\t",
            "new\nline",
            "ünï",
            "a\\b",
            "a:b",
            "a~1",
            "a^",
            "*",
            too_long.as_str(),
        ] {
            assert!(
                matches!(Name::parse(bad), Err(WorktreeError::InvalidName { .. })),
                "{bad:?} passed"
            );
        }
    }
}
