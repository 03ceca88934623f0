//! The protected paths of a workdir (`.harness9/`, `.mcp.json`, `.env*`, and the git metadata
//! of `git_metadata`: `.git` itself, its hooks, config and the files that redirect them) and of
//! `$HARNESS9_HOME` itself, and the guard for the ones a mount cannot cover: a path that does
//! not exist yet, or a symbolic link (a mount protects its target, not the link). The same
//! names are protected in every subdirectory (`nested`). Invariant: after a sandboxed command,
//! each of them is as it was before, and the result names what was undone and, never passed
//! off as undone, what could not be.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use super::git_metadata;
use std::sync::{Arc, Mutex};

use super::nested::{self, ListingCache, Nested};
use super::undo;

/// Names directly in the workdir (and in every subdirectory holding a protected name) that
/// are protected.
const PROTECTED_NAMES: &[&str] = &[".harness9", ".mcp.json"];

/// Whether a file name in the workdir is an environment file (`.env`, `.env.local`, ...).
fn is_env_file(name: &std::ffi::OsStr) -> bool {
    name.to_str().is_some_and(|n| n.starts_with(".env"))
}

/// The protected paths of one project directory (the workdir, or a subdirectory where the
/// walk found a protected name), whether they exist or not (for `.env*`, the ones that exist;
/// a new one is caught by comparing listings).
fn project_candidates(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = PROTECTED_NAMES.iter().map(|n| dir.join(n)).collect();
    out.extend(git_metadata::protected_candidates(dir));
    out.extend(env_files(dir));
    out
}

/// Every protected path of the survey, and `home` (`$HARNESS9_HOME`: where it does not exist
/// or is a link, a command could put a directory of its own there).
fn candidates(survey: &Survey) -> Vec<PathBuf> {
    let mut out = project_candidates(&survey.workdir);
    for dir in &survey.nested.dirs {
        out.extend(project_candidates(dir));
    }
    if !survey.home.as_os_str().is_empty() {
        out.push(survey.home.clone());
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

/// The protected paths of a workdir at one moment: the top's by name, the deeper ones found by
/// the bounded walk of `nested`. Taken once per call, before the command, for both the mounts
/// and the snapshot.
#[derive(Debug, Clone)]
pub struct Survey {
    workdir: PathBuf,
    home: PathBuf,
    nested: Nested,
    cache: Arc<Mutex<ListingCache>>,
}

/// A walk with the session's listings (a poisoned lock only costs a full listing).
fn walk_cached(workdir: &Path, home: &Path, cache: &Mutex<ListingCache>) -> Nested {
    match cache.lock() {
        Ok(mut cache) => nested::walk(workdir, home, &mut cache),
        Err(_) => nested::walk(workdir, home, &mut ListingCache::default()),
    }
}

impl Survey {
    pub fn take(workdir: &Path, home: &Path, cache: &Arc<Mutex<ListingCache>>) -> Survey {
        Survey {
            workdir: workdir.to_owned(),
            home: home.to_owned(),
            nested: walk_cached(workdir, home, cache),
            cache: Arc::clone(cache),
        }
    }

    pub fn workdir(&self) -> &Path {
        &self.workdir
    }

    pub fn home(&self) -> &Path {
        &self.home
    }

    /// The top's names only (the probe, in the temp dir, has no use for a walk).
    pub fn top_only(workdir: &Path, home: &Path) -> Survey {
        Survey {
            workdir: workdir.to_owned(),
            home: home.to_owned(),
            nested: Nested::default(),
            cache: Arc::default(),
        }
    }
}

/// How the mounts must treat the protected paths of one call.
#[derive(Debug, Default)]
pub(super) struct Protected {
    /// Existing files and directories (not links): bound read-only.
    pub read_only: Vec<PathBuf>,
    /// Directories that must stay where they are (not be renamed away and replaced) for the
    /// rest to hold: every `.git` directory, which stays writable because commits write it,
    /// and the parents of the guarded paths, which the guard finds by name.
    pub stay_put: Vec<PathBuf>,
}

/// Sorts the protected paths of the survey for the mounts (see `Protected`).
pub(super) fn protected_paths(survey: &Survey) -> Protected {
    let home = &survey.home;
    let mut out = Protected::default();
    for path in candidates(survey) {
        match std::fs::symlink_metadata(&path) {
            // Hidden by the spec's tmpfs instead (its parents are pinned there).
            Ok(meta) if &path == home && !meta.file_type().is_symlink() => {}
            // `.git` as a directory is the repository commits write; as a file (a linked
            // worktree) it names where git reads config, and is read-only like the rest.
            Ok(meta) if meta.is_dir() && path.file_name() == Some(".git".as_ref()) => {
                out.stay_put.push(path)
            }
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

/// What the guard did after a command.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Restored {
    /// Protected paths the command changed, now as they were (checked).
    pub undone: Vec<PathBuf>,
    /// Protected paths the command changed that could not be put back: they may take effect.
    pub failed: Vec<PathBuf>,
    /// The walk for new protected names below the top stopped at one of its bounds
    /// (`nested::MAX_DIRS`, `nested::MAX_DEPTH`), or found a folder closed that it could read
    /// before: those folders were not checked.
    pub incomplete: bool,
}

impl Restored {
    /// Whether the command left the protected paths alone (nothing to report).
    pub fn is_clean(&self) -> bool {
        self.undone.is_empty() && self.failed.is_empty() && !self.incomplete
    }

    /// The lines that say what happened, for a result or a terminal.
    pub fn report(&self) -> Vec<String> {
        let names = |paths: &[PathBuf]| {
            paths
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        };
        let mut out = Vec::new();
        if !self.undone.is_empty() {
            out.push(format!(
                "the sandbox undid this command's changes to protected paths: {}",
                names(&self.undone)
            ));
        }
        if !self.failed.is_empty() {
            out.push(format!(
                "the sandbox could NOT undo this command's changes to protected paths: {}; \
                 they are still there and may take effect: check them",
                names(&self.failed)
            ));
        }
        if self.incomplete {
            out.push(format!(
                "the sandbox could not check every folder of the working directory for planted \
                 protected files (.git, .env*, .harness9, .mcp.json): more than {} folders, \
                 folders nested more than {} deep, or a folder the command made unreadable; \
                 what was planted there was not undone. Give such folders their permissions \
                 back or remove what the command made, and look for those names before running \
                 git or harness9 there",
                nested::MAX_DIRS,
                nested::MAX_DEPTH
            ));
        }
        out
    }
}

/// The guarded protected paths of one call.
#[derive(Debug, Clone)]
pub struct ProtectedSnapshot {
    workdir: PathBuf,
    home: PathBuf,
    guarded: BTreeMap<PathBuf, Before>,
    cache: Arc<Mutex<ListingCache>>,
    /// The `.env*` files of the top and the protected entries below it that existed: any
    /// other one after the command is new.
    present_before: BTreeSet<PathBuf>,
    /// The directories the walk could not list before the command.
    unreadable_before: BTreeSet<PathBuf>,
}

impl ProtectedSnapshot {
    /// The guarded paths of the survey as they are now.
    pub fn take(survey: &Survey) -> ProtectedSnapshot {
        let mut guarded = BTreeMap::new();
        for path in candidates(survey) {
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
        let mut present_before: BTreeSet<PathBuf> =
            env_files(&survey.workdir).into_iter().collect();
        present_before.extend(survey.nested.entries.iter().cloned());
        ProtectedSnapshot {
            workdir: survey.workdir.clone(),
            home: survey.home.clone(),
            guarded,
            cache: Arc::clone(&survey.cache),
            present_before,
            unreadable_before: survey.nested.unreadable.clone(),
        }
    }

    /// Puts every guarded path back as it was, and removes the protected names that appeared
    /// at any depth; says which were undone and which could not be. Call it only once every
    /// process of the command is gone.
    pub fn restore(&self) -> Restored {
        let mut paths = self.guarded.clone();
        let after = walk_cached(&self.workdir, &self.home, &self.cache);
        for path in env_files(&self.workdir).into_iter().chain(after.entries) {
            if !self.present_before.contains(&path) {
                paths.entry(path).or_insert(Before::Missing);
            }
        }
        let mut restored = Restored {
            incomplete: !after.complete || !after.unreadable.is_subset(&self.unreadable_before),
            ..Restored::default()
        };
        for (path, before) in paths {
            let now = std::fs::symlink_metadata(&path);
            let changed = match (&before, &now) {
                (Before::Missing, Ok(_)) => true,
                // Only "no such entry" (or a file where a folder would be) proves it absent: a
                // path in a folder the command closed (`chmod 000`) fails with EACCES and may
                // well be there.
                (Before::Missing, Err(e)) => {
                    !matches!(e.raw_os_error(), Some(libc::ENOENT | libc::ENOTDIR))
                }
                (Before::Link(target), Ok(meta)) => {
                    !meta.file_type().is_symlink()
                        || std::fs::read_link(&path).ok().as_ref() != Some(target)
                }
                (Before::Link(_), Err(_)) => true,
            };
            if !changed {
                continue;
            }
            let link = match &before {
                Before::Link(target) => Some(target.as_path()),
                Before::Missing => None,
            };
            if undo::put_back(&self.workdir, &path, link) {
                restored.undone.push(path);
            } else {
                restored.failed.push(path);
            }
        }
        restored
    }
}

/// The sandboxed calls of a session alive at once (issue 29 point 13). While one runs, the walk
/// for planted protected names is not exact: a job can plant a name before another call takes
/// its snapshot (which then counts it as there before), hide it while its own end is checked,
/// and let the other put it back. So calls that overlap share one baseline, the snapshot taken
/// when the first of them started, and each restores to it when it ends: the last to end does
/// so once no sandboxed process of the session is left, and undoes every plant since.
#[derive(Debug, Default)]
pub struct Overlap {
    live: usize,
    baseline: Option<ProtectedSnapshot>,
}

/// One sandboxed call counted in its session's `Overlap` until dropped (once its processes are
/// gone and its restore ran).
#[derive(Debug)]
pub struct LiveCall {
    overlap: Arc<Mutex<Overlap>>,
}

impl Drop for LiveCall {
    fn drop(&mut self) {
        let mut overlap = self
            .overlap
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        overlap.live = overlap.live.saturating_sub(1);
        if overlap.live == 0 {
            overlap.baseline = None;
        }
    }
}

/// The snapshot a new call restores to: the baseline of the calls alive now, or (none alive)
/// the survey's, which becomes the baseline; and the call's place among the live ones.
pub fn join_overlap(
    overlap: &Arc<Mutex<Overlap>>,
    survey: &Survey,
) -> (ProtectedSnapshot, LiveCall) {
    let mut shared = overlap
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let snapshot = match (&shared.baseline, shared.live) {
        (Some(baseline), live) if live > 0 => baseline.clone(),
        _ => {
            let snapshot = ProtectedSnapshot::take(survey);
            shared.baseline = Some(snapshot.clone());
            snapshot
        }
    };
    shared.live += 1;
    let call = LiveCall {
        overlap: Arc::clone(overlap),
    };
    (snapshot, call)
}
