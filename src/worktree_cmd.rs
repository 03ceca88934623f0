//! `harness9 worktree list|merge NAME|remove NAME [--force]` (issue 35), and the worktree a
//! run enters: `--worktree NAME`, or the one a resumed session ran in. Sessions are found
//! through the session core (`Catalogue`, `session::worktrees`, which the TUI's `/worktree`
//! shares); the git work is `crate::worktree`'s.

use std::path::{Path, PathBuf};

use crate::config::worktree::{Entered, enter, of_session};
use crate::config::{WorktreeAction, WorktreeArgs};
use crate::session::{Catalogue, worktrees};
use crate::worktree::{self, WorktreeError};

/// The exit status of a worktree error: 2 for a usage error (not a repository, a bad NAME).
pub fn exit_code(error: &WorktreeError) -> u8 {
    if error.is_usage() { 2 } else { 1 }
}

/// Runs a `harness9 worktree` command; returns the exit status.
pub async fn run(home: &Path, workdir: &Path, args: WorktreeArgs) -> u8 {
    let action = match args.action {
        WorktreeAction::List => worktrees::WorktreeAction::List,
        WorktreeAction::Merge { name } => worktrees::WorktreeAction::Merge { name },
        WorktreeAction::Remove { name, force } => worktrees::WorktreeAction::Remove { name, force },
    };
    match worktrees::act(home, workdir, action).await {
        Ok(lines) => {
            for line in lines {
                println!("{line}");
            }
            0
        }
        Err(error) => {
            eprintln!("harness9: {error}");
            exit_code(&error)
        }
    }
}

/// The worktree a run works in: the one it names (`--worktree NAME`), the one a session it
/// resumes (`resume`: its id, prefix or name) ran in, or `workdir` itself when that is one of
/// harness9's worktrees; `None` otherwise.
pub async fn enter_for_run(
    workdir: &Path,
    home: &Path,
    name: Option<&str>,
    resume: Option<&str>,
    trust_flag: bool,
) -> Result<Option<Entered>, WorktreeError> {
    if let Some(name) = name {
        return enter(workdir, home, name, trust_flag).map(Some);
    }
    if let Some(key) = resume
        && let Some(ran_in) = session_workdir(home, key).await
        && ran_in != workdir
        && let Some(name) = of_session(workdir, &ran_in)
    {
        return enter(workdir, home, &name, trust_flag).map(Some);
    }
    // Already in one: the session shows its name. A plain folder costs no git call.
    if worktree::main_of_linked(workdir).is_some()
        && let Some(name) = of_session(workdir, workdir)
    {
        return Ok(Some(Entered {
            name,
            path: workdir.to_path_buf(),
            notices: Vec::new(),
        }));
    }
    Ok(None)
}

/// The folder stored session `key` ran in.
async fn session_workdir(home: &Path, key: &str) -> Option<PathBuf> {
    let catalogue = Catalogue::open(home).ok()?;
    let session = catalogue.resolve(key).await.ok()?;
    Some(PathBuf::from(session.workdir))
}
