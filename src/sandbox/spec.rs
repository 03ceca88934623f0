//! `Spec`: exactly what one sandboxed command may touch, as absolute canonical paths, computed
//! in harness9 and handed to the platform (the Linux helper reads it as JSON). Invariant: every
//! path in it exists and is canonical, so the helper never resolves a name the command could
//! have swapped.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::SandboxMode;
use super::guard::protected_paths;

/// Devices commands write to as a matter of course (`> /dev/null`).
const WRITABLE_DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
    "/dev/tty",
];

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Spec {
    /// Whether the command may create sockets at all (network and Unix ones alike).
    pub network: bool,
    /// Directories writable with everything beneath them, the workdir first; empty in
    /// read-only mode.
    pub writable: Vec<PathBuf>,
    /// Device files that stay writable in every mode.
    pub devices: Vec<PathBuf>,
    /// Existing files and directories inside `writable` that must stay read-only.
    pub read_only: Vec<PathBuf>,
    /// Directories the command must not even read (`$HARNESS9_HOME`).
    pub hidden: Vec<PathBuf>,
}

impl Spec {
    /// The spec of one call in `mode` (not `off`).
    pub fn build(
        mode: SandboxMode,
        network: bool,
        workdir: &Path,
        writable_roots: &[PathBuf],
        home: &Path,
    ) -> Spec {
        let mut writable = Vec::new();
        let mut git_protected = Vec::new();
        if mode == SandboxMode::WorkspaceWrite {
            let temp = [PathBuf::from("/tmp"), std::env::temp_dir()];
            for path in std::iter::once(workdir)
                .chain(temp.iter().map(PathBuf::as_path))
                .chain(writable_roots.iter().map(PathBuf::as_path))
            {
                if let Ok(path) = path.canonicalize()
                    && path.is_dir()
                    && !writable.contains(&path)
                {
                    writable.push(path);
                }
            }
            // A linked worktree keeps its git metadata outside the workdir; commits need it.
            if let Some(worktree) = linked_worktree(workdir) {
                for dir in [&worktree.gitdir, &worktree.commondir] {
                    if !writable.contains(dir) {
                        writable.push(dir.clone());
                    }
                }
                git_protected = ["hooks", "config", "config.worktree"]
                    .iter()
                    .flat_map(|name| [worktree.gitdir.join(name), worktree.commondir.join(name)])
                    .filter(|p| {
                        std::fs::symlink_metadata(p).is_ok_and(|m| !m.file_type().is_symlink())
                    })
                    .collect();
            }
        }
        let mut read_only = if writable.is_empty() {
            Vec::new()
        } else {
            protected_paths(workdir)
                .into_iter()
                .chain(git_protected)
                .filter_map(|p| p.canonicalize().ok())
                .filter(|p| writable.iter().any(|root| p.starts_with(root)))
                .collect()
        };
        read_only.sort();
        read_only.dedup();
        let devices = WRITABLE_DEVICES
            .iter()
            .map(PathBuf::from)
            .filter(|p| p.exists())
            .collect();
        // Hiding a directory that holds the workdir would hide the workdir too.
        let hidden = home
            .canonicalize()
            .ok()
            .filter(|home| home.is_dir() && !workdir.starts_with(home))
            .into_iter()
            .collect();
        Spec {
            network: network && mode == SandboxMode::WorkspaceWrite,
            writable,
            devices,
            read_only,
            hidden,
        }
    }
}

/// The git directories of a linked worktree (`git worktree add`): `.git` is a file naming its
/// own git dir, which names the repository's common dir.
#[derive(Debug, PartialEq, Eq)]
struct LinkedWorktree {
    gitdir: PathBuf,
    commondir: PathBuf,
}

/// The repository is untrusted, so its `.git` file is believed only when git's own records
/// agree: the named git dir must point back at this `.git` file (a file a command cannot
/// write, being outside the workdir), else any directory could be made writable by naming it.
fn linked_worktree(workdir: &Path) -> Option<LinkedWorktree> {
    let dot_git = workdir.join(".git");
    if !std::fs::symlink_metadata(&dot_git).ok()?.is_file() {
        return None;
    }
    let text = std::fs::read_to_string(&dot_git).ok()?;
    let named = text.lines().next()?.strip_prefix("gitdir:")?.trim();
    let gitdir = workdir.join(named).canonicalize().ok()?;
    let back = std::fs::read_to_string(gitdir.join("gitdir")).ok()?;
    let back = gitdir.join(back.trim()).canonicalize().ok()?;
    if back != dot_git.canonicalize().ok()? {
        return None;
    }
    let common = std::fs::read_to_string(gitdir.join("commondir")).ok()?;
    let commondir = gitdir.join(common.trim()).canonicalize().ok()?;
    (gitdir.is_dir() && commondir.is_dir()).then_some(LinkedWorktree { gitdir, commondir })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_worktree_file_is_believed_only_when_git_points_back() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let (work, common) = (root.join("wt"), root.join("main/.git"));
        let gitdir = common.join("worktrees/wt");
        std::fs::create_dir_all(&work).unwrap();
        std::fs::create_dir_all(&gitdir).unwrap();
        std::fs::write(work.join(".git"), format!("gitdir: {}\n", gitdir.display())).unwrap();
        std::fs::write(gitdir.join("commondir"), "../..\n").unwrap();
        // No back pointer yet: a repository naming a directory does not make it writable.
        assert_eq!(linked_worktree(&work), None);
        std::fs::write(
            gitdir.join("gitdir"),
            format!("{}\n", work.join(".git").display()),
        )
        .unwrap();
        assert_eq!(
            linked_worktree(&work),
            Some(LinkedWorktree {
                gitdir: gitdir.clone(),
                commondir: common.clone()
            })
        );
        // Pointing at another directory that has no back pointer to us is refused.
        std::fs::write(work.join(".git"), format!("gitdir: {}\n", root.display())).unwrap();
        assert_eq!(linked_worktree(&work), None);
    }
}
