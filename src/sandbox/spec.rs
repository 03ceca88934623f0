//! `Spec`: exactly what one sandboxed command may touch, as absolute canonical paths, computed
//! in harness9 and handed to the platform (the Linux helper reads it as JSON). Invariant: every
//! path in it exists and is canonical, so the helper never resolves a name the command could
//! have swapped.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::SandboxMode;
use super::git_metadata::linked_worktree;
use super::guard::{Survey, protected_paths};

/// Devices commands write to as a matter of course (`> /dev/null`). Not `/dev/tty`: a command
/// has no terminal of its own (`detach`), and harness9's is not for it to write to.
const WRITABLE_DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
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
    /// Directories inside `writable` bound onto themselves, still writable, so that they cannot
    /// be renamed or removed (EBUSY): the workdir, `.git`, and every ancestor of a protected or
    /// hidden path, as far as they lie inside a writable root. Sorted, so outermost first.
    pub pinned: Vec<PathBuf>,
    /// Existing files and directories inside `writable` that must stay read-only.
    pub read_only: Vec<PathBuf>,
    /// Directories the command must not even read (`$HARNESS9_HOME`).
    pub hidden: Vec<PathBuf>,
}

impl Spec {
    /// The spec of one call in `mode` (not `off`), with the protected paths of `survey`.
    pub fn build(
        mode: SandboxMode,
        network: bool,
        writable_roots: &[PathBuf],
        survey: &Survey,
    ) -> Spec {
        let (workdir, home) = (survey.workdir(), survey.home());
        let mut writable = Vec::new();
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
                for dir in [worktree.gitdir, worktree.commondir] {
                    if !writable.contains(&dir) {
                        writable.push(dir);
                    }
                }
            }
        }
        let devices = WRITABLE_DEVICES
            .iter()
            .map(PathBuf::from)
            .filter(|p| p.exists())
            .collect();
        // Hiding a directory that holds the workdir would hide the workdir too.
        let hidden: Vec<PathBuf> = home
            .canonicalize()
            .ok()
            .filter(|home| home.is_dir() && !workdir.starts_with(home))
            .into_iter()
            .collect();
        let (pinned, read_only) = if writable.is_empty() {
            (Vec::new(), Vec::new())
        } else {
            held_in_place(survey, &writable, &hidden)
        };
        Spec {
            network: network && mode == SandboxMode::WorkspaceWrite,
            writable,
            devices,
            pinned,
            read_only,
            hidden,
        }
    }
}

/// The directories to pin and the paths to bind read-only, for the protected paths of
/// `workdir` that lie inside `writable`. A read-only bind keeps a path from being written, not
/// its parent from being renamed away and replaced by a directory holding a planted copy (the
/// user's next `git` would read that one), so every directory between a writable root and a
/// protected or hidden path is pinned too; never one inside a read-only path, which must stay
/// read-only all the way down.
fn held_in_place(
    survey: &Survey,
    writable: &[PathBuf],
    hidden: &[PathBuf],
) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let workdir = survey.workdir();
    let inside = |p: &Path| writable.iter().any(|root| p.starts_with(root));
    let strictly_inside = |p: &Path| writable.iter().any(|root| p != root && p.starts_with(root));
    let protected = protected_paths(survey);
    let read_only: BTreeSet<PathBuf> = protected
        .read_only
        .iter()
        .filter_map(|p| p.canonicalize().ok())
        .filter(|p| inside(p))
        .collect();
    let anchors = read_only
        .iter()
        .chain(hidden)
        .filter_map(|p| p.parent().map(Path::to_path_buf))
        .chain(
            protected
                .stay_put
                .iter()
                .filter_map(|p| p.canonicalize().ok()),
        )
        .chain(workdir.canonicalize().ok());
    let mut pinned = BTreeSet::new();
    for anchor in anchors {
        for dir in anchor.ancestors() {
            if strictly_inside(dir) && !read_only.iter().any(|ro| dir.starts_with(ro)) {
                pinned.insert(dir.to_path_buf());
            }
        }
    }
    // A `BTreeSet` of paths orders every directory before what lies beneath it.
    (
        pinned.into_iter().collect(),
        read_only.into_iter().collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A workdir inside a writable root (as one under /tmp is), with `.git/config`.
    fn tree() -> (tempfile::TempDir, PathBuf, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let workdir = root.join("a/repo");
        std::fs::create_dir_all(workdir.join(".git")).unwrap();
        std::fs::write(workdir.join(".git/config"), "").unwrap();
        (dir, root, workdir)
    }

    #[test]
    fn every_directory_between_a_writable_root_and_a_protected_path_is_pinned_outermost_first() {
        let (_dir, root, workdir) = tree();
        let home = root.join("state/h9");
        std::fs::create_dir_all(&home).unwrap();
        let (pinned, read_only) = held_in_place(
            &Survey::take(&workdir, &home, &Default::default()),
            std::slice::from_ref(&root),
            std::slice::from_ref(&home),
        );
        assert_eq!(
            pinned,
            [
                root.join("a"),
                workdir.clone(),
                workdir.join(".git"),
                root.join("state"),
            ]
        );
        assert_eq!(read_only, [workdir.join(".git/config")]);
        // Nothing is pinned inside a read-only path, and no root is pinned.
        std::fs::create_dir_all(workdir.join(".harness9/sub")).unwrap();
        let (pinned, _) = held_in_place(
            &Survey::take(&workdir, &home, &Default::default()),
            std::slice::from_ref(&workdir),
            &[],
        );
        assert_eq!(pinned, [workdir.join(".git")]);
        // A home that does not exist (so is not hidden) is guarded by name: its parent stays.
        std::fs::remove_dir(&home).unwrap();
        let (pinned, _) = held_in_place(
            &Survey::take(&workdir, &home, &Default::default()),
            std::slice::from_ref(&root),
            &[],
        );
        assert!(pinned.contains(&root.join("state")), "{pinned:?}");
    }
}
