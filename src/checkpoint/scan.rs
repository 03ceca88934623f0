//! Walks of the working directory around a tool that runs commands: before it, every file's
//! stamp (size, times, inode) and a kept copy of its content, reusing the copy of a file whose
//! stamp has not changed since the last walk; after it, the stamps again, and what differs is
//! what the command changed. The walk is the search tools' (`files::walk`): `.gitignore`d
//! files and `.git` itself are not tracked.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::Before;
use super::objects::Objects;

/// What tells one version of a file from another without reading it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp {
    len: u64,
    modified_ns: i128,
    changed_ns: i128,
    inode: u64,
}

#[cfg(unix)]
fn stamp_of(meta: &std::fs::Metadata) -> Stamp {
    use std::os::unix::fs::MetadataExt;
    Stamp {
        len: meta.len(),
        modified_ns: meta.mtime() as i128 * 1_000_000_000 + meta.mtime_nsec() as i128,
        changed_ns: meta.ctime() as i128 * 1_000_000_000 + meta.ctime_nsec() as i128,
        inode: meta.ino(),
    }
}

#[cfg(not(unix))]
fn stamp_of(meta: &std::fs::Metadata) -> Stamp {
    let modified_ns = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map(|d| d.as_nanos() as i128)
        .unwrap_or(0);
    Stamp {
        len: meta.len(),
        modified_ns,
        changed_ns: 0,
        inode: 0,
    }
}

/// A file as the walk before a command saw it.
#[derive(Debug, Clone)]
pub struct Seen {
    stamp: Stamp,
    pub before: Before,
}

/// The regular files under `workdir` and their stamps.
pub fn stamps(workdir: &Path) -> HashMap<PathBuf, Stamp> {
    let mut out = HashMap::new();
    for entry in crate::files::walk::walker(workdir).build().flatten() {
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        if let Ok(meta) = entry.metadata() {
            out.insert(entry.into_path(), stamp_of(&meta));
        }
    }
    out
}

/// The walk before a command: `cache` (the last walk) updated to every file as it is now, its
/// content kept; files whose stamp did not change are not read again. At most `budget` bytes of
/// new or changed files are copied in one walk (a huge working directory is not copied whole
/// into `$HARNESS9_HOME`): past it, a file is known by its stamp only, and a command's change to
/// it is reported as not restorable.
pub fn keep_all(
    objects: &Objects,
    workdir: &Path,
    cache: &mut HashMap<PathBuf, Seen>,
    budget: u64,
) {
    let now = stamps(workdir);
    cache.retain(|path, _| now.contains_key(path));
    let mut copied = 0u64;
    for (path, stamp) in now {
        if cache.get(&path).is_some_and(|seen| seen.stamp == stamp) {
            continue;
        }
        let before = if copied.saturating_add(stamp.len) > budget {
            Before::NotKept {
                reason: format!(
                    "harness9 copies at most {} MB of the working directory before a command",
                    budget / (1024 * 1024)
                ),
            }
        } else {
            copied += stamp.len;
            objects.keep(&path).unwrap_or_else(|e| Before::NotKept {
                reason: format!("it could not be read: {e}"),
            })
        };
        cache.insert(path, Seen { stamp, before });
    }
}

/// The files that differ between the walk before (`seen`) and now: changed, created, deleted.
pub fn changed_since(workdir: &Path, seen: &HashMap<PathBuf, Seen>) -> Vec<PathBuf> {
    let now = stamps(workdir);
    let mut changed: Vec<PathBuf> = now
        .iter()
        .filter(|(path, stamp)| seen.get(*path).is_none_or(|s| s.stamp != **stamp))
        .map(|(path, _)| path.clone())
        .collect();
    changed.extend(seen.keys().filter(|p| !now.contains_key(*p)).cloned());
    changed.sort();
    changed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn past_the_budget_a_file_is_known_by_its_stamp_only() {
        let home = tempfile::tempdir().unwrap();
        let work = tempfile::tempdir().unwrap();
        for name in ["a.txt", "b.txt", "c.txt"] {
            std::fs::write(work.path().join(name), "0123456789").unwrap();
        }
        let objects = Objects::new(home.path());
        let mut cache = HashMap::new();
        keep_all(&objects, work.path(), &mut cache, 25);
        let kept = cache
            .values()
            .filter(|seen| matches!(seen.before, Before::Kept { .. }))
            .count();
        assert_eq!((cache.len(), kept), (3, 2), "two fit in 25 bytes");
        let skipped = cache
            .values()
            .find_map(|seen| match &seen.before {
                Before::NotKept { reason } => Some(reason.clone()),
                _ => None,
            })
            .unwrap();
        assert!(skipped.contains("copies at most"), "{skipped}");
        // The next walk copies nothing again: unchanged files keep what they had.
        keep_all(&objects, work.path(), &mut cache, 0);
        let kept_again = cache
            .values()
            .filter(|seen| matches!(seen.before, Before::Kept { .. }))
            .count();
        assert_eq!(kept_again, 2);
    }
}
