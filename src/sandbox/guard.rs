//! The protected paths inside the workdir (`.git/hooks/`, `.git/config`, `.harness9/`,
//! `.mcp.json`, `.env*`) and the guard for the ones a mount cannot cover: a path that does not
//! exist yet, or a symbolic link (a mount protects its target, not the link). Invariant: after
//! a sandboxed command, each of them is as it was before, and the result names what was undone.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Names directly in the workdir that are protected.
const PROTECTED_NAMES: &[&str] = &[".harness9", ".mcp.json"];
/// Names inside `.git/` that are protected (hooks run, and config can name programs, outside
/// the sandbox later).
const PROTECTED_GIT: &[&str] = &["hooks", "config"];

/// Whether a file name in the workdir is an environment file (`.env`, `.env.local`, ...).
fn is_env_file(name: &std::ffi::OsStr) -> bool {
    name.to_str().is_some_and(|n| n.starts_with(".env"))
}

/// Every protected path of `workdir`, whether it exists or not (for `.env*`, the ones that
/// exist; a new one is caught by comparing listings).
fn candidates(workdir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = PROTECTED_NAMES.iter().map(|n| workdir.join(n)).collect();
    out.extend(PROTECTED_GIT.iter().map(|n| workdir.join(".git").join(n)));
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

/// The protected paths that exist as real files or directories (not links): these are
/// mounted read-only.
pub(super) fn protected_paths(workdir: &Path) -> Vec<PathBuf> {
    candidates(workdir)
        .into_iter()
        .filter(|p| std::fs::symlink_metadata(p).is_ok_and(|m| !m.file_type().is_symlink()))
        .collect()
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
