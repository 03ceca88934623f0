//! The protected paths of a workdir (`.harness9/`, `.mcp.json`, `.env*`, and the git metadata
//! of `git_metadata`: `.git` itself, its hooks, config and the files that redirect them) and
//! the guard for the ones a mount cannot cover: a path that does not exist yet, or a symbolic
//! link (a mount protects its target, not the link). Invariant: after a sandboxed command, each
//! of them is as it was before, and the result names what was undone.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use super::git_metadata;

/// Names directly in the workdir that are protected.
const PROTECTED_NAMES: &[&str] = &[".harness9", ".mcp.json"];

/// Whether a file name in the workdir is an environment file (`.env`, `.env.local`, ...).
fn is_env_file(name: &std::ffi::OsStr) -> bool {
    name.to_str().is_some_and(|n| n.starts_with(".env"))
}

/// Every protected path of `workdir`, whether it exists or not (for `.env*`, the ones that
/// exist; a new one is caught by comparing listings).
fn candidates(workdir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = PROTECTED_NAMES.iter().map(|n| workdir.join(n)).collect();
    out.extend(git_metadata::protected_candidates(workdir));
    out.extend(env_files(workdir));
    out
}

fn env_files(workdir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(workdir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|entry| is_env_file(&entry.file_name()))
        .map(|entry| entry.path())
        .collect()
}

/// How the mounts must treat the protected paths of one call.
#[derive(Debug, Default)]
pub(super) struct Protected {
    /// Existing files and directories (not links): bound read-only.
    pub read_only: Vec<PathBuf>,
    /// Directories that must stay where they are (not be renamed away and replaced) for the
    /// rest to hold: the workdir's `.git` directory, which stays writable because commits
    /// write it, and the parents of the guarded paths, which the guard finds by name.
    pub stay_put: Vec<PathBuf>,
}

/// Sorts the protected paths of `workdir` for the mounts (see `Protected`).
pub(super) fn protected_paths(workdir: &Path) -> Protected {
    let dot_git = workdir.join(".git");
    let mut out = Protected::default();
    for path in candidates(workdir) {
        match std::fs::symlink_metadata(&path) {
            // `.git` as a directory is the repository commits write; as a file (a linked
            // worktree) it names where git reads config, and is read-only like the rest.
            Ok(meta) if meta.is_dir() && path == dot_git => out.stay_put.push(path),
            Ok(meta) if !meta.file_type().is_symlink() => out.read_only.push(path),
            // Missing or a link: guarded by name after the command, so its parent stays put.
            _ => out.stay_put.extend(path.parent().map(Path::to_path_buf)),
        }
    }
    out
}

/// How a protected path looked before the command, for those a mount does not protect.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Before {
    Missing,
    Link(PathBuf),
}

/// The guarded protected paths of one call.
#[derive(Debug, Clone)]
pub struct ProtectedSnapshot {
    workdir: PathBuf,
    guarded: BTreeMap<PathBuf, Before>,
    /// The `.env*` files that existed: any other one after the command is new.
    env_before: BTreeSet<PathBuf>,
}

impl ProtectedSnapshot {
    pub fn take(workdir: &Path) -> ProtectedSnapshot {
        let mut guarded = BTreeMap::new();
        for path in candidates(workdir) {
            match std::fs::symlink_metadata(&path) {
                Err(_) => {
                    guarded.insert(path, Before::Missing);
                }
                Ok(meta) if meta.file_type().is_symlink() => {
                    if let Ok(target) = std::fs::read_link(&path) {
                        guarded.insert(path, Before::Link(target));
                    }
                }
                Ok(_) => {}
            }
        }
        ProtectedSnapshot {
            workdir: workdir.to_owned(),
            guarded,
            env_before: env_files(workdir).into_iter().collect(),
        }
    }

    /// Puts every guarded path back as it was; returns the ones that had changed. Call it only
    /// once every process of the command is gone.
    pub fn restore(&self) -> Vec<PathBuf> {
        let mut paths = self.guarded.clone();
        for path in env_files(&self.workdir) {
            if !self.env_before.contains(&path) {
                paths.insert(path, Before::Missing);
            }
        }
        let mut undone = Vec::new();
        for (path, before) in paths {
            let now = std::fs::symlink_metadata(&path);
            let changed = match (&before, &now) {
                (Before::Missing, Ok(_)) => true,
                (Before::Missing, Err(_)) => false,
                (Before::Link(target), Ok(meta)) => {
                    !meta.file_type().is_symlink()
                        || std::fs::read_link(&path).ok().as_ref() != Some(target)
                }
                (Before::Link(_), Err(_)) => true,
            };
            if !changed {
                continue;
            }
            if let Ok(meta) = now {
                // `symlink_metadata`: a link is removed as a link, never followed.
                let _ = if meta.is_dir() {
                    std::fs::remove_dir_all(&path)
                } else {
                    std::fs::remove_file(&path)
                };
            }
            if let Before::Link(target) = before {
                let _ = std::os::unix::fs::symlink(target, &path);
            }
            undone.push(path);
        }
        undone
    }
}
