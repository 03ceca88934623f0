//! `harness9 worktree list|merge NAME|remove NAME [--force]` (issue 35), and the worktree a
//! run enters: `--worktree NAME`, or the one a resumed session ran in. Sessions are found
//! through the session core's `Catalogue`; the git work is `crate::worktree`'s.

use std::path::{Path, PathBuf};

use crate::config::worktree::{Entered, enter, of_session};
use crate::config::{WorktreeAction, WorktreeArgs};
use crate::session::Catalogue;
use crate::terminal_text::sanitize;
use crate::worktree::{self, Listed, Name, Repository, WorktreeError};

/// The exit status of a worktree error: 2 for a usage error (not a repository, a bad NAME).
pub fn exit_code(error: &WorktreeError) -> u8 {
    if error.is_usage() { 2 } else { 1 }
}

/// Runs a `harness9 worktree` command; returns the exit status.
pub async fn run(home: &Path, workdir: &Path, args: WorktreeArgs) -> u8 {
    match act(home, workdir, args.action).await {
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

async fn act(
    home: &Path,
    workdir: &Path,
    action: WorktreeAction,
) -> Result<Vec<String>, WorktreeError> {
    let repository = Repository::discover(workdir)?;
    match action {
        WorktreeAction::List => {
            let listed = worktree::list(&repository)?;
            if listed.is_empty() {
                return Ok(vec![
                    "no worktrees (harness9 --worktree NAME makes one)".into(),
                ]);
            }
            let catalogue = Catalogue::open(home).ok();
            let mut lines = Vec::new();
            for entry in &listed {
                let session = match &catalogue {
                    Some(catalogue) => latest_session(catalogue, &entry.path).await,
                    None => None,
                };
                lines.push(line(entry, session.as_deref()));
            }
            Ok(lines)
        }
        WorktreeAction::Merge { name } => {
            Ok(vec![worktree::merge(&repository, &Name::parse(&name)?)?])
        }
        WorktreeAction::Remove { name, force } => {
            let removed = worktree::remove(&repository, &Name::parse(&name)?, force)?;
            let mut lines = vec![format!(
                "removed worktree {name} ({}){}",
                removed.path.display(),
                if removed.branch_deleted {
                    " and its branch"
                } else {
                    ""
                }
            )];
            lines.extend(removed.notes);
            Ok(lines)
        }
    }
}

/// The newest session that ran in `path`.
async fn latest_session(catalogue: &Catalogue, path: &Path) -> Option<String> {
    let dir = path.display().to_string();
    let hits = catalogue.find_sessions("", Some(&dir), 1).await.ok()?;
    hits.into_iter().next().map(|hit| hit.session.id)
}

/// `fix  harness9/fix  /src/app.worktrees/fix  2 unmerged commit(s)  session 0193…`.
fn line(entry: &Listed, session: Option<&str>) -> String {
    let state = if entry.missing {
        "missing (its folder was deleted; `remove` cleans up)".to_owned()
    } else if entry.holds_work() {
        worktree::work_described(entry)
    } else {
        "clean".to_owned()
    };
    let session = session
        .map(|id| format!("  session {id}"))
        .unwrap_or_default();
    sanitize(&format!(
        "{}  {}  {}  {state}{session}",
        entry.name,
        entry.branch,
        entry.path.display()
    ))
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
