//! `git` run as a program with an argument vector (never a shell string), with the variables
//! that would point it at another repository removed and no prompt, and its porcelain output
//! parsed.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::WorktreeError;

/// Variables that would make git work on another repository or index than the folder's.
const REPOSITORY_VARIABLES: &[&str] = &[
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_COMMON_DIR",
    "GIT_OBJECT_DIRECTORY",
    "GIT_NAMESPACE",
];

/// Runs `git ARGS` in `dir`; its standard output when it succeeds, else its error message.
pub fn run<S: AsRef<OsStr>>(dir: &Path, args: &[S]) -> Result<String, WorktreeError> {
    let output = command(dir, args).output().map_err(WorktreeError::Spawn)?;
    if output.status.success() {
        return Ok(String::from_utf8_lossy(&output.stdout).into_owned());
    }
    let message = String::from_utf8_lossy(&output.stderr).trim().to_owned();
    Err(WorktreeError::Git {
        args: args
            .iter()
            .map(|a| a.as_ref().to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join(" "),
        message: if message.is_empty() {
            format!("exited with {}", output.status)
        } else {
            message
        },
    })
}

fn command<S: AsRef<OsStr>>(dir: &Path, args: &[S]) -> Command {
    let mut command = Command::new("git");
    command
        .arg("-C")
        .arg(dir)
        // A repository's fsmonitor setting names a program to run: not for our own queries.
        .args(["-c", "core.fsmonitor=false", "-c", "core.quotepath=off"])
        .args(args)
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("LC_ALL", "C")
        .stdin(Stdio::null());
    for variable in REPOSITORY_VARIABLES {
        command.env_remove(variable);
    }
    command
}

/// One entry of `git worktree list --porcelain -z`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub path: PathBuf,
    /// `refs/heads/...` without the prefix; `None` when detached.
    pub branch: Option<String>,
    /// Git's own word that the folder is gone.
    pub prunable: bool,
    pub bare: bool,
}

/// The worktrees of the repository `dir` belongs to, the main one first.
pub fn worktrees(dir: &Path) -> Result<Vec<Entry>, WorktreeError> {
    Ok(parse_list(&run(
        dir,
        &["worktree", "list", "--porcelain", "-z"],
    )?))
}

/// `git worktree list --porcelain -z`: fields separated by NUL, entries by an empty field.
pub fn parse_list(text: &str) -> Vec<Entry> {
    let mut entries = Vec::new();
    let mut current: Option<Entry> = None;
    for field in text.split('\0') {
        if field.is_empty() {
            entries.extend(current.take());
            continue;
        }
        let (key, value) = field.split_once(' ').unwrap_or((field, ""));
        match (key, current.as_mut()) {
            ("worktree", _) => {
                entries.extend(current.take());
                current = Some(Entry {
                    path: PathBuf::from(value),
                    branch: None,
                    prunable: false,
                    bare: false,
                });
            }
            ("branch", Some(entry)) => {
                entry.branch = Some(value.strip_prefix("refs/heads/").unwrap_or(value).into());
            }
            ("prunable", Some(entry)) => entry.prunable = true,
            ("bare", Some(entry)) => entry.bare = true,
            _ => {}
        }
    }
    entries.extend(current);
    entries
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_porcelain_list_is_parsed_with_missing_folders() {
        let text = "worktree /r\0HEAD 48\0branch refs/heads/main\0\0\
                    worktree /r.worktrees/a\0HEAD 48\0branch refs/heads/harness9/a\0\0\
                    worktree /r.worktrees/b b\0HEAD 48\0detached\0prunable gitdir file points \
                    to non-existent location\0\0";
        let entries = parse_list(text);
        assert_eq!(entries.len(), 3);
        assert_eq!(entries[0].branch.as_deref(), Some("main"));
        assert_eq!(entries[1].branch.as_deref(), Some("harness9/a"));
        assert_eq!(entries[2].path, Path::new("/r.worktrees/b b"));
        assert!(entries[2].prunable && entries[2].branch.is_none());
        assert!(!entries[1].prunable);
    }
}
