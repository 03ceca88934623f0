//! Protected names below the top of the workdir (issue 29 point 13): a nested repository's
//! `.git` (its hooks and config run when the user runs git there, or when `git status` in the
//! workdir enters it as a submodule), a subfolder's `.env*`, `.harness9/` or `.mcp.json`.
//! Landlock cannot refuse single names and a mount needs a path that exists, so a bounded
//! walk finds the existing ones before a command (they are mounted read-only like the top's)
//! and the new ones after it (they are undone); a directory unchanged since the last walk is
//! not listed again (`ListingCache`). Invariant: a walk that stopped at its bound
//! says so (`complete` is false); it never passes for a full one.

use std::collections::{BTreeSet, HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::files::protected::is_protected_name;

/// At most this many directories are visited per walk. A tree larger than that is reported as
/// not fully checked.
const MAX_DIRS: usize = 20_000;

/// A listing taken while the directory's change time lay this close to the walk's start is
/// never reused: file times advance by the kernel's tick, so a change made right after the
/// listing may carry the very change time the listing was keyed by.
const TICK_MARGIN: Duration = Duration::from_millis(50);

/// What one walk found below the workdir's top.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Nested {
    /// Every protected entry in a subdirectory of the workdir (not those directly in it,
    /// which the guard names itself), links included; never entered.
    pub entries: BTreeSet<PathBuf>,
    /// The subdirectories holding them.
    pub dirs: BTreeSet<PathBuf>,
    /// Whether every directory was visited.
    pub complete: bool,
    /// Directories that could not be listed (a command may close one to hide what it put
    /// there: one that was readable before and is not after is reported).
    pub unreadable: BTreeSet<PathBuf>,
}

/// One directory as last listed: its identity and change time, and what it held.
#[derive(Debug, Clone)]
struct Listing {
    identity: (u64, u64),
    changed: (i64, i64),
    protected: Vec<PathBuf>,
    subdirs: Vec<PathBuf>,
    readable: bool,
    /// Whether the change time was settled when it was listed (older than the walk's start by
    /// more than `TICK_MARGIN`): only then does an unchanged change time prove the directory
    /// unchanged since, so only then is the listing reused.
    reusable: bool,
}

/// The listings of the last walk. Adding, removing or renaming an entry changes the
/// directory's change time (`ctime`), which no command can set back (the clock is out of its
/// reach), so a directory whose identity and change time are unchanged is not listed again:
/// a walk costs one `lstat` per directory instead of a listing.
#[derive(Debug, Default)]
pub struct ListingCache {
    listings: HashMap<PathBuf, Listing>,
}

/// The listing of `dir`, from the cache when it still holds; `None` when `dir` is no
/// directory (or a link).
fn listing(dir: &Path, cache: &mut ListingCache, started: SystemTime) -> Option<Listing> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::symlink_metadata(dir).ok()?;
    if !meta.is_dir() {
        return None;
    }
    let identity = (meta.dev(), meta.ino());
    let changed = (meta.ctime(), meta.ctime_nsec());
    let change_time = UNIX_EPOCH
        + Duration::from_secs(u64::try_from(changed.0).unwrap_or(0))
        + Duration::from_nanos(u64::try_from(changed.1).unwrap_or(0));
    // Taken out of the last walk's listings (this walk keeps its own), never copied.
    if let Some(known) = cache.listings.remove(dir)
        && known.reusable
        && known.identity == identity
        && known.changed == changed
    {
        return Some(known);
    }
    let mut fresh = Listing {
        identity,
        changed,
        protected: Vec::new(),
        subdirs: Vec::new(),
        readable: false,
        reusable: change_time + TICK_MARGIN < started,
    };
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Some(fresh);
    };
    fresh.readable = true;
    for entry in entries.flatten() {
        if is_protected_name(&entry.file_name()) {
            fresh.protected.push(entry.path());
        } else if entry.file_type().is_ok_and(|t| t.is_dir()) {
            // `DirEntry::file_type` does not follow links.
            fresh.subdirs.push(entry.path());
        }
    }
    Some(fresh)
}

/// Walks `workdir` breadth first, without following links, entering neither protected
/// entries nor `skip` (`$HARNESS9_HOME`, when it lies inside); keeps the listings in `cache`.
pub fn walk(workdir: &Path, skip: &Path, cache: &mut ListingCache) -> Nested {
    walk_at(workdir, skip, cache, SystemTime::now())
}

/// `walk`, `started` taken for the walk's start (tests move it on to make listings reusable).
fn walk_at(workdir: &Path, skip: &Path, cache: &mut ListingCache, started: SystemTime) -> Nested {
    let mut found = Nested {
        complete: true,
        ..Nested::default()
    };
    let mut seen = HashMap::new();
    let mut queue = VecDeque::from([workdir.to_path_buf()]);
    while let Some(dir) = queue.pop_front() {
        if seen.len() == MAX_DIRS {
            found.complete = false;
            break;
        }
        let Some(listed) = listing(&dir, cache, started) else {
            continue;
        };
        if !listed.readable {
            found.unreadable.insert(dir.clone());
        }
        if dir != workdir && !listed.protected.is_empty() {
            found.entries.extend(listed.protected.iter().cloned());
            found.dirs.insert(dir.clone());
        }
        queue.extend(listed.subdirs.iter().filter(|d| *d != skip).cloned());
        seen.insert(dir, listed);
    }
    cache.listings = seen;
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn protected_names_are_found_at_any_depth_and_not_entered() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for sub in [
            "pkg/.git/hooks",
            "a/b/c/.harness9",
            "top/.git/modules/x/.git",
        ] {
            std::fs::create_dir_all(root.join(sub)).unwrap();
        }
        std::fs::write(root.join("a/b/.env.local"), "").unwrap();
        std::fs::write(root.join("a/.mcp.json"), "").unwrap();
        std::fs::write(root.join(".env"), "").unwrap();
        std::os::unix::fs::symlink("/etc", root.join("pkg/.ENV")).unwrap();
        let mut cache = ListingCache::default();
        let found = walk(root, Path::new(""), &mut cache);
        let expected: BTreeSet<PathBuf> = [
            "pkg/.git",
            "pkg/.ENV",
            "a/b/c/.harness9",
            "a/b/.env.local",
            "a/.mcp.json",
            "top/.git",
        ]
        .iter()
        .map(|p| root.join(p))
        .collect();
        assert_eq!(found.entries, expected);
        assert!(found.complete);
        assert!(found.dirs.contains(&root.join("a/b/c")));
        // A walk from the cache finds the same, and what was added since.
        assert_eq!(walk(root, Path::new(""), &mut cache), found);
        std::fs::write(root.join("a/b/c/.env"), "").unwrap();
        let again = walk(root, Path::new(""), &mut cache);
        assert!(again.entries.contains(&root.join("a/b/c/.env")));
    }

    /// A command may date a folder back (`touch -d`) after planting a name in it: the cache is
    /// keyed by the change time, which no command can set, so the folder is listed again.
    #[test]
    fn a_folder_changed_then_dated_back_is_listed_again() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let c = root.join("a/b/c");
        std::fs::create_dir_all(&c).unwrap();
        // Walks "later" than now, so their listings count as settled and are reused.
        let later = SystemTime::now() + Duration::from_secs(5);
        let mut cache = ListingCache::default();
        assert!(
            walk_at(&root, Path::new(""), &mut cache, later)
                .entries
                .is_empty()
        );
        assert!(cache.listings.values().all(|l| l.reusable));
        let modified = std::fs::metadata(&c).unwrap().modified().unwrap();
        std::fs::write(c.join(".env"), "").unwrap();
        std::fs::File::open(&c)
            .unwrap()
            .set_modified(modified)
            .unwrap();
        assert_eq!(std::fs::metadata(&c).unwrap().modified().unwrap(), modified);
        let again = walk_at(
            &root,
            Path::new(""),
            &mut cache,
            later + Duration::from_secs(1),
        );
        assert!(again.entries.contains(&c.join(".env")), "{again:?}");
    }
}
