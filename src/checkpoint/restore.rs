//! Putting files back as checkpoints found them. For every file the chosen prompts changed, the
//! state before the oldest of them is restored, but only where the file still holds what the
//! newest of them left: a file changed since (by the user, an editor, another program) is
//! named, and nothing is written until the caller says what to do with it (`Conflicts`).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use super::objects::{self, Objects};
use super::{Before, Changes};
use crate::files::open;

/// What to do with files changed since the checkpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Conflicts {
    /// Write nothing while there is any; name them (the user is asked).
    Ask,
    /// Restore them too: the user said so.
    Overwrite,
    /// Restore the others and leave these as they are.
    Keep,
}

/// Why one file could not be put back.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RestoreFailure {
    #[error("it cannot be read now: {0}")]
    ReadNow(IoCause),
    #[error("it cannot be deleted: {0}")]
    Delete(IoCause),
    #[error("its kept copy cannot be read: {0}")]
    ReadCopy(IoCause),
    #[error("it cannot be written: {0}")]
    Write(IoCause),
    /// The checkpoint recorded why it kept no copy (too large, unreadable...).
    #[error("no copy was kept ({reason})")]
    NotKept { reason: String },
    /// It lies outside the working directory: undo writes only inside it.
    #[error("it lies outside the working directory; undo writes only inside it")]
    Outside,
    /// A protected path (`files::protected`): undo never writes one.
    #[error("it is a protected path (.git, .harness9, .env*, .mcp.json); undo never writes one")]
    Protected,
    /// A folder on its way is a link now (swapped in since the checkpoint, or swapped during
    /// the restore): undo writes through no link.
    #[error("a folder on its way is a link now; undo writes through no link")]
    Link,
    /// The restore task itself ended abnormally.
    #[error("the restore crashed")]
    Crashed,
}

/// An io failure kept as data a report can be compared and cloned with: its kind and the
/// system's words.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct IoCause {
    pub kind: std::io::ErrorKind,
    pub message: String,
}

impl From<std::io::Error> for IoCause {
    fn from(error: std::io::Error) -> Self {
        IoCause {
            kind: error.kind(),
            message: error.to_string(),
        }
    }
}

/// What a restore did, or (`asking`) would have to ask first.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RestoreReport {
    /// Files put back as they were before.
    pub restored: Vec<PathBuf>,
    /// Files the prompt created, removed again.
    pub removed: Vec<PathBuf>,
    /// Files changed since the prompt left them.
    pub changed_since: Vec<PathBuf>,
    /// Nothing was written: `changed_since` waits for the user's answer.
    pub asking: bool,
    /// Files that could not be put back, and why.
    pub failed: Vec<(PathBuf, RestoreFailure)>,
    /// What the checkpoints could not cover.
    pub notes: Vec<String>,
}

impl RestoreReport {
    /// The report in plain words, paths relative to `workdir`.
    pub fn describe(&self, workdir: &Path) -> String {
        let show = |paths: &[PathBuf]| {
            paths
                .iter()
                .map(|p| crate::files::paths::display(workdir, p))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let mut parts = Vec::new();
        if self.asking {
            parts.push(format!(
                "changed since the checkpoint: {}; nothing was restored",
                show(&self.changed_since)
            ));
            return parts.join("; ");
        }
        if self.restored.is_empty()
            && self.removed.is_empty()
            && self.failed.is_empty()
            && self.changed_since.is_empty()
        {
            parts.push("no file to restore".to_owned());
        }
        if !self.restored.is_empty() {
            parts.push(format!("restored {}", show(&self.restored)));
        }
        if !self.removed.is_empty() {
            parts.push(format!("removed {}", show(&self.removed)));
        }
        if !self.changed_since.is_empty() {
            parts.push(format!(
                "left as you changed them: {}",
                show(&self.changed_since)
            ));
        }
        for (path, why) in &self.failed {
            parts.push(format!(
                "could not restore {}: {why}",
                crate::files::paths::display(workdir, path)
            ));
        }
        parts.extend(self.notes.iter().cloned());
        parts.join("; ")
    }
}

/// One file's plan: what to put back, and what it should hold now.
struct Plan {
    before: Before,
    expected: Option<String>,
}

/// Restores the files `newest_first` changed to their state before the oldest of them, only
/// inside `workdir`, never a protected path, and through handles that follow no link
/// (`files::open`): a file that cannot be put back so is reported as not restored.
pub fn restore(
    objects: &Objects,
    newest_first: &[&Changes],
    conflicts: Conflicts,
    workdir: &Path,
) -> RestoreReport {
    let workdir = workdir
        .canonicalize()
        .unwrap_or_else(|_| workdir.to_owned());
    let mut plans: BTreeMap<PathBuf, Plan> = BTreeMap::new();
    let mut notes = BTreeSet::new();
    for changes in newest_first {
        notes.extend(changes.notes.iter().cloned());
        for (path, change) in &changes.files {
            plans
                .entry(path.clone())
                // Seen first in the newest: what it was left with; each older one moves
                // `before` back.
                .and_modify(|plan| plan.before = change.before.clone())
                .or_insert(Plan {
                    before: change.before.clone(),
                    expected: change.after.clone(),
                });
        }
    }
    let mut report = RestoreReport {
        notes: notes.into_iter().collect(),
        ..RestoreReport::default()
    };
    let mut clear = Vec::new();
    for (path, plan) in plans {
        if let Err(why) = allowed(&workdir, &path) {
            report.failed.push((path, why));
            continue;
        }
        match objects::current(&path) {
            Ok(now) if now == plan.expected => clear.push((path, plan)),
            Ok(_) => {
                report.changed_since.push(path.clone());
                if conflicts == Conflicts::Overwrite {
                    clear.push((path, plan));
                }
            }
            Err(e) => report
                .failed
                .push((path, RestoreFailure::ReadNow(e.into()))),
        }
    }
    if conflicts == Conflicts::Ask && !report.changed_since.is_empty() {
        report.asking = true;
        return report;
    }
    if conflicts == Conflicts::Overwrite {
        report.changed_since.clear();
    }
    for (path, plan) in clear {
        match put_back(objects, &workdir, &path, &plan.before) {
            Ok(()) if plan.before == Before::Absent => report.removed.push(path),
            Ok(()) => report.restored.push(path),
            Err(why) => report.failed.push((path, why)),
        }
    }
    report
}

/// Whether undo may write `path` at all: inside `workdir` and not protected, judged by name
/// (the open then judges what it finds).
fn allowed(workdir: &Path, path: &Path) -> Result<(), RestoreFailure> {
    if !path.starts_with(workdir) || path == workdir {
        return Err(RestoreFailure::Outside);
    }
    if crate::files::protected::is_protected_write(path) {
        return Err(RestoreFailure::Protected);
    }
    Ok(())
}

fn put_back(
    objects: &Objects,
    workdir: &Path,
    path: &Path,
    before: &Before,
) -> Result<(), RestoreFailure> {
    if let Before::NotKept { reason } = before {
        return Err(RestoreFailure::NotKept {
            reason: reason.clone(),
        });
    }
    let create = matches!(before, Before::Kept { .. });
    let (folder, name) = match open::open_folder_of(workdir, path, create) {
        Ok(opened) => opened,
        // Nothing there to delete.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && !create => return Ok(()),
        Err(e) if open::is_swapped(&e) => return Err(RestoreFailure::Link),
        Err(e) => return Err(RestoreFailure::Write(e.into())),
    };
    // Links that stay inside are what `open_folder_of` lets through; undo takes none.
    if Some(folder.path()) != path.parent() {
        return Err(RestoreFailure::Link);
    }
    let failed = |e: std::io::Error, as_failure: fn(IoCause) -> RestoreFailure| {
        if open::is_swapped(&e) {
            RestoreFailure::Link
        } else {
            as_failure(e.into())
        }
    };
    match before {
        Before::Kept { hash, mode } => {
            let bytes = objects
                .get(hash)
                .map_err(|e| RestoreFailure::ReadCopy(e.into()))?;
            folder
                .write_atomic_with_mode(&name, &bytes, Some(*mode))
                .map_err(|e| failed(e, RestoreFailure::Write))
        }
        _ => folder
            .remove(&name)
            .map_err(|e| failed(e, RestoreFailure::Delete)),
    }
}
