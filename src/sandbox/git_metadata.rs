//! The git metadata a sandboxed command must not plant or change: whatever git obeys later,
//! outside the sandbox, when the user runs it. Git runs hooks and programs named in config,
//! and some files only say where to read config and hooks from (`commondir`, a `.git` file),
//! so those count as much as the config itself. Invariant: every path returned here is one
//! that, were a command to create or change it, could make the user's next `git` run code.

use std::path::{Path, PathBuf};

/// Names inside a git directory that git obeys: `hooks/` and `config` run programs;
/// `config.worktree` is more config; `commondir` moves where config and hooks are read from;
/// `modules/` holds submodules' git directories (with their own config and hooks), which
/// `git status` enters; `worktrees/` holds linked worktrees' git directories (each with its
/// own `commondir`).
const OBEYED: &[&str] = &[
    "hooks",
    "config",
    "config.worktree",
    "commondir",
    "modules",
    "worktrees",
];

/// The protected git paths of `workdir`, whether they exist or not: `.git` itself (a file
/// there redirects git anywhere), the obeyed names inside it, and, for a linked worktree, the
/// obeyed names of its git directories outside the workdir.
pub(super) fn protected_candidates(workdir: &Path) -> Vec<PathBuf> {
    let dot_git = workdir.join(".git");
    let mut out = vec![dot_git.clone()];
    out.extend(OBEYED.iter().map(|name| dot_git.join(name)));
    if let Some(worktree) = linked_worktree(workdir) {
        out.extend(worktree.protected_candidates());
    }
    out
}

/// The git directories of a linked worktree (`git worktree add`): `.git` is a file naming its
/// own git dir, which names the repository's common dir.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct LinkedWorktree {
    pub gitdir: PathBuf,
    pub commondir: PathBuf,
}

impl LinkedWorktree {
    /// The common dir's obeyed names, and those of every worktree's git dir beneath it (ours
    /// included). The common dir's `worktrees/` itself stays writable: our own git dir, which
    /// commits write, lies in it.
    fn protected_candidates(&self) -> Vec<PathBuf> {
        let per_worktree = |dir: &Path| -> Vec<PathBuf> {
            OBEYED
                .iter()
                .filter(|name| **name != "worktrees")
                .map(|name| dir.join(name))
                .collect()
        };
        let mut out = per_worktree(&self.commondir);
        let worktrees = std::fs::read_dir(self.commondir.join("worktrees"))
            .into_iter()
            .flatten()
            .flatten()
            .filter(|entry| entry.file_type().is_ok_and(|t| t.is_dir()))
            .map(|entry| entry.path());
        for dir in worktrees.chain(std::iter::once(self.gitdir.clone())) {
            out.extend(per_worktree(&dir));
        }
        out.sort();
        out.dedup();
        out
    }
}

/// The repository is untrusted, so its `.git` file is believed only when git's own records
/// agree: the named git dir must point back at this `.git` file (a file a command cannot
/// write, being outside the workdir), else any directory could be made writable by naming it.
pub(super) fn linked_worktree(workdir: &Path) -> Option<LinkedWorktree> {
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

    #[test]
    fn a_linked_worktree_protects_every_worktrees_redirections_but_not_worktrees_itself() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let common = root.join("main/.git");
        let (ours, other) = (common.join("worktrees/wt"), common.join("worktrees/other"));
        std::fs::create_dir_all(&ours).unwrap();
        std::fs::create_dir_all(&other).unwrap();
        let worktree = LinkedWorktree {
            gitdir: ours.clone(),
            commondir: common.clone(),
        };
        let paths = worktree.protected_candidates();
        for expected in [
            common.join("config"),
            common.join("hooks"),
            common.join("commondir"),
            common.join("modules"),
            ours.join("commondir"),
            ours.join("config.worktree"),
            other.join("commondir"),
        ] {
            assert!(paths.contains(&expected), "{expected:?} in {paths:?}");
        }
        assert!(!paths.contains(&common.join("worktrees")));
    }
}
