//! The protected paths of a workdir (`.harness9/`, `.mcp.json`, `.env*`, and the git metadata
//! of `git_metadata`: `.git` itself, its hooks, config and the files that redirect them) and of
//! `$HARNESS9_HOME` itself, and the guard for the ones a mount cannot cover: a path that does
//! not exist yet, or a symbolic link (a mount protects its target, not the link). Invariant:
//! after a sandboxed command, each of them is as it was before, and the result names what was
//! undone.

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
/// exist; a new one is caught by comparing listings), and `home` (`$HARNESS9_HOME`: where it
/// does not exist or is a link, a command could put a directory of its own there).
fn candidates(workdir: &Path, home: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = PROTECTED_NAMES.iter().map(|n| workdir.join(n)).collect();
    out.extend(git_metadata::protected_candidates(workdir));
    out.extend(env_files(workdir));
    if !home.as_os_str().is_empty() {
        out.push(home.to_owned());
    }
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

/// Sorts the protected paths of `workdir` and `home` for the mounts (see `Protected`).
pub(super) fn protected_paths(workdir: &Path, home: &Path) -> Protected {
    let dot_git = workdir.join(".git");
    let mut out = Protected::default();
    for path in candidates(workdir, home) {
        match std::fs::symlink_metadata(&path) {
            // Hidden by the spec's tmpfs instead (its parents are pinned there).
            Ok(meta) if path == home && !meta.file_type().is_symlink() => {}
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
    /// The guarded paths of `workdir` and `home` as they are now.
    pub fn take(workdir: &Path, home: &Path) -> ProtectedSnapshot {
        let mut guarded = BTreeMap::new();
        for path in candidates(workdir, home) {
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
                remove_planted(&path, &meta);
            }
            if let Before::Link(target) = before {
                let _ = std::os::unix::fs::symlink(target, &path);
            }
            undone.push(path);
        }
        undone
    }
}

/// Removes what a command planted at `path` (`meta`: its `symlink_metadata`, so a link is
/// removed as a link, never followed). A directory the command made unwritable (`chmod 555`)
/// would keep its entries from an owner who is not root, and the planted file would stay while
/// the result said it was undone; so every directory beneath is made the owner's to write first.
fn remove_planted(path: &Path, meta: &std::fs::Metadata) {
    if meta.is_dir() {
        make_writable(path);
        let _ = std::fs::remove_dir_all(path);
    } else {
        let _ = std::fs::remove_file(path);
    }
}

/// Gives the owner every right on `dir` and the directories beneath it. Each is opened with
/// `O_NOFOLLOW | O_DIRECTORY` and changed through that descriptor: the command is gone, and a
/// link put in place of a directory by another command running meanwhile is not followed.
fn make_writable(dir: &Path) {
    use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
    let opened = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_DIRECTORY)
        .open(dir);
    let Ok(handle) = opened else { return };
    let _ = handle.set_permissions(std::fs::Permissions::from_mode(0o700));
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        // `DirEntry::file_type` does not follow links.
        if entry.file_type().is_ok_and(|t| t.is_dir()) {
            make_writable(&entry.path());
        }
    }
}
