//! The repository's worktrees as every front end shows them (`harness9 worktree list|merge|
//! remove` and the TUI's `/worktree`): listed with branch, newest session and the work each
//! holds, merged back, removed. The git work is `crate::worktree`'s; the sessions come from the
//! store through `Catalogue`.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::Catalogue;
use super::hub::Hub;
use super::protocol::Update;
use crate::terminal_text::sanitize;
use crate::worktree::{self, Listed, Name, Repository, WorktreeError};

/// What to do with the worktrees of the repository a session's folder is in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WorktreeAction {
    /// Each worktree with its branch, session, and the work it holds.
    List,
    /// Merge worktree `name`'s branch into the branch it started from (a clean merge only).
    Merge { name: String },
    /// Remove worktree `name` and its branch (refused while it holds unmerged work, unless
    /// `force`).
    Remove { name: String, force: bool },
}

/// What a `WorktreeAction` came to, as lines to show: the list, what was merged or removed, or
/// (with `failed`) why nothing was.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorktreeReport {
    pub lines: Vec<String>,
    pub failed: bool,
}

/// Carries out `action` for the repository `workdir` is in; `home` holds the session store.
/// The git commands run off the async threads.
pub async fn act(
    home: &Path,
    workdir: &Path,
    action: WorktreeAction,
) -> Result<Vec<String>, WorktreeError> {
    let folder = workdir.to_path_buf();
    let done = tokio::task::spawn_blocking(move || git_part(&folder, action))
        .await
        .map_err(|e| WorktreeError::Spawn(std::io::Error::other(e)))??;
    match done {
        Done::Lines(lines) => Ok(lines),
        Done::Listed(listed) if listed.is_empty() => Ok(vec![
            "no worktrees (harness9 --worktree NAME makes one)".into(),
        ]),
        Done::Listed(listed) => {
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
    }
}

/// Answers `Request::Worktrees` with `Update::Worktrees`, off the session's task.
pub(super) fn start(hub: Arc<Hub>, home: PathBuf, workdir: PathBuf, action: WorktreeAction) {
    tokio::spawn(async move {
        let report = match act(&home, &workdir, action).await {
            Ok(lines) => WorktreeReport {
                lines,
                failed: false,
            },
            Err(error) => WorktreeReport {
                lines: vec![sanitize(&error.to_string())],
                failed: true,
            },
        };
        hub.publish(Update::Worktrees(report));
    });
}

/// The git side of an action: the worktrees listed, or the lines that say what was done.
enum Done {
    Listed(Vec<Listed>),
    Lines(Vec<String>),
}

fn git_part(workdir: &Path, action: WorktreeAction) -> Result<Done, WorktreeError> {
    let repository = Repository::discover(workdir)?;
    match action {
        WorktreeAction::List => worktree::list(&repository).map(Done::Listed),
        WorktreeAction::Merge { name } => {
            let merged = worktree::merge(&repository, &Name::parse(&name)?)?;
            Ok(Done::Lines(vec![sanitize(&merged)]))
        }
        WorktreeAction::Remove { name, force } => {
            let removed = worktree::remove(&repository, &Name::parse(&name)?, force)?;
            let mut lines = vec![sanitize(&format!(
                "removed worktree {name} ({}){}",
                removed.path.display(),
                if removed.branch_deleted {
                    " and its branch"
                } else {
                    ""
                }
            ))];
            lines.extend(removed.notes.iter().map(|note| sanitize(note)));
            Ok(Done::Lines(lines))
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
