//! `harness9 worktree list|merge|remove`: what each of harness9's worktrees holds, its branch
//! merged back into the branch it started from (a clean merge only: a conflict is aborted, so
//! nothing is lost), and its removal (refused while it holds work not merged, unless forced).

use std::path::{Path, PathBuf};

use super::name::{BRANCH_PREFIX, Name};
use super::{Repository, WorktreeError, git, recorded_base};

/// One worktree as `list` shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listed {
    pub name: String,
    pub branch: String,
    pub path: PathBuf,
    /// The folder was deleted by hand: only git's record is left.
    pub missing: bool,
    /// Changes in the folder not yet committed.
    pub uncommitted: bool,
    /// Commits on the branch not in the branch it started from.
    pub unmerged: u64,
    /// The branch it started from (merged back into).
    pub base: Option<String>,
}

impl Listed {
    /// Whether removing it would lose work.
    pub fn holds_work(&self) -> bool {
        self.uncommitted || self.unmerged > 0
    }
}

/// What `remove` did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Removed {
    pub path: PathBuf,
    pub branch_deleted: bool,
    /// Worth saying (a branch kept).
    pub notes: Vec<String>,
}

/// The repository's common git folder (where `worktrees/` is).
fn common_dir(repository: &Repository) -> Result<PathBuf, WorktreeError> {
    let out = git::run(
        &repository.main,
        &["rev-parse", "--path-format=absolute", "--git-common-dir"],
    )?;
    Ok(PathBuf::from(out.trim_end_matches('\n')))
}

/// harness9's worktrees of `repository` (branches `harness9/*`), in git's order.
pub fn list(repository: &Repository) -> Result<Vec<Listed>, WorktreeError> {
    let common = common_dir(repository)?;
    let entries = git::worktrees(&repository.main)?;
    let fallback = entries.first().and_then(|main| main.branch.clone());
    let mut listed = Vec::new();
    for entry in entries.iter().skip(1) {
        let Some(branch) = &entry.branch else {
            continue;
        };
        let Some(name) = branch.strip_prefix(BRANCH_PREFIX) else {
            continue;
        };
        let missing = entry.prunable || !entry.path.is_dir();
        let uncommitted = !missing
            && !git::run(&entry.path, &["status", "--porcelain"])?
                .trim()
                .is_empty();
        let base = recorded_base(&common, &entry.path).or(fallback.clone());
        let unmerged = match &base {
            Some(base) => count_unmerged(&repository.main, base, branch),
            None => 0,
        };
        listed.push(Listed {
            name: name.to_owned(),
            branch: branch.clone(),
            path: entry.path.clone(),
            missing,
            uncommitted,
            unmerged,
            base,
        });
    }
    Ok(listed)
}

/// Commits on `branch` that `base` lacks (0 when either cannot be read).
fn count_unmerged(dir: &Path, base: &str, branch: &str) -> u64 {
    git::run(dir, &["rev-list", "--count", &format!("{base}..{branch}")])
        .ok()
        .and_then(|out| out.trim().parse().ok())
        .unwrap_or(0)
}

fn find(repository: &Repository, name: &Name) -> Result<Listed, WorktreeError> {
    list(repository)?
        .into_iter()
        .find(|listed| listed.name == name.as_str())
        .ok_or_else(|| WorktreeError::NotFound(name.to_string()))
}

/// Merges worktree `name`'s branch into the branch it started from, in the working tree that
/// has that branch checked out. A conflict aborts the merge and names the files.
pub fn merge(repository: &Repository, name: &Name) -> Result<String, WorktreeError> {
    let listed = find(repository, name)?;
    if listed.uncommitted {
        return Err(WorktreeError::Refused(format!(
            "worktree {name} holds uncommitted changes in {}: commit them there first; \
             nothing was merged",
            listed.path.display()
        )));
    }
    let Some(base) = listed.base.clone() else {
        return Err(WorktreeError::Refused(format!(
            "the branch worktree {name} started from is unknown; merge {} by hand",
            listed.branch
        )));
    };
    let target = git::worktrees(&repository.main)?
        .into_iter()
        .find(|entry| entry.branch.as_deref() == Some(base.as_str()) && !entry.prunable)
        .ok_or_else(|| {
            WorktreeError::Refused(format!(
                "{base} is not checked out in any working tree: check it out, then merge again"
            ))
        })?;
    match git::run(&target.path, &["merge", "--no-edit", &listed.branch]) {
        Ok(_) => Ok(format!(
            "merged {} into {base} in {}",
            listed.branch,
            target.path.display()
        )),
        Err(error) => {
            let conflicted = git::run(
                &target.path,
                &["diff", "--name-only", "--diff-filter=U", "-z"],
            )
            .unwrap_or_default();
            let files: Vec<String> = conflicted
                .split('\0')
                .filter(|f| !f.is_empty())
                .map(str::to_owned)
                .collect();
            if files.is_empty() {
                return Err(error);
            }
            git::run(&target.path, &["merge", "--abort"])?;
            Err(WorktreeError::Conflict {
                branch: listed.branch,
                base,
                files,
            })
        }
    }
}

/// Removes worktree `name` and its branch; refused while it holds uncommitted changes or
/// commits not merged, unless `force`. A worktree whose folder is gone loses git's record, and
/// its branch too when that holds nothing unmerged (or with `force`).
pub fn remove(repository: &Repository, name: &Name, force: bool) -> Result<Removed, WorktreeError> {
    let listed = find(repository, name)?;
    let mut notes = Vec::new();
    if !listed.missing && listed.holds_work() && !force {
        return Err(WorktreeError::Refused(format!(
            "worktree {name} holds {}: merge it first (harness9 worktree merge {name}), or \
             remove it with --force to discard that",
            work_described(&listed)
        )));
    }
    let path = listed.path.as_os_str();
    let mut args = vec!["worktree".as_ref(), "remove".as_ref()];
    if force || listed.missing {
        args.push("--force".as_ref());
    }
    args.push(path);
    git::run(&repository.main, &args)?;
    let delete_branch = force || listed.unmerged == 0;
    if delete_branch {
        git::run(&repository.main, &["branch", "-D", &listed.branch])?;
    } else {
        notes.push(format!(
            "branch {} kept: it holds {} commit(s) not merged into {}; --force deletes it",
            listed.branch,
            listed.unmerged,
            listed.base.as_deref().unwrap_or("its base")
        ));
    }
    Ok(Removed {
        path: listed.path,
        branch_deleted: delete_branch,
        notes,
    })
}

/// "uncommitted changes and 2 unmerged commit(s)".
pub fn work_described(listed: &Listed) -> String {
    let mut parts = Vec::new();
    if listed.uncommitted {
        parts.push("uncommitted changes".to_owned());
    }
    if listed.unmerged > 0 {
        parts.push(format!("{} unmerged commit(s)", listed.unmerged));
    }
    parts.join(" and ")
}
