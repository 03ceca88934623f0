//! Protected names below the top of the workdir (issue 29 point 13): a nested repository's
//! `.git` (its hooks and config run when the user runs git there, or when `git status` in the
//! workdir enters it as a submodule), a subfolder's `.env*`, `.harness9/` or `.mcp.json`.
//! Landlock cannot refuse single names and a mount needs a path that exists, so a walk finds
//! the existing ones before a command (they are mounted read-only like the top's) and the new
//! ones after it (they are undone). The walk goes by directory handles, one name at a time
//! without following links, so a renamed or swapped folder never leads it outside the workdir;
//! a directory unchanged since the last walk is not listed again (`ListingCache`), and one
//! without subdirectories is not even opened (one `fstatat` in its parent's handle). A folder a
//! command closed to its owner is given its owner's rights for the time of the walk. Invariant:
//! a walk that could not visit every directory (past its bounds, a folder it could not search)
//! says so (`complete` is false, or the folder is in `unreadable`); it never passes for a full
//! one.

use std::collections::hash_map::Entry;
use std::collections::{BTreeSet, HashMap, HashSet};
use std::ffi::{CStr, CString, OsStr};
use std::hash::{BuildHasherDefault, Hasher};
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rustix::fs::{AtFlags, FileType, Mode, OFlags, RawDir, Stat};
use rustix::io::Errno;

use super::undo::{Loosened, loosen};
use crate::files::protected::is_protected_name;

/// At most this many directories are visited per walk (about 150 MB of listings, seconds of
/// walking): a tree larger than that is reported as not fully checked. An ordinary
/// `node_modules` has tens of thousands.
pub const MAX_DIRS: usize = 1_000_000;

/// Directories nested deeper than this are not entered, and the walk says so: the walk holds
/// one handle per level, and a command can nest folders without end (`mkdir` one level at a
/// time), which would otherwise exhaust harness9's file descriptors.
pub const MAX_DEPTH: usize = 256;

/// A listing taken while the directory's change time lay this close to the walk's start is
/// never reused: file times advance by the kernel's tick, so a change made right after the
/// listing may carry the very change time the listing was keyed by.
const TICK_MARGIN: Duration = Duration::from_millis(50);

/// The bytes of entries read per `getdents` call (a few hundred entries).
const LISTING_BUFFER: usize = 32 * 1024;

/// A directory's device and inode.
type Identity = (u64, u64);

/// Hashes an identity with one multiply per word. The walk hashes every folder twice and
/// SipHash's resistance to chosen keys buys nothing here: inode numbers are the file system's
/// to choose, not a command's.
#[derive(Default)]
struct IdentityHasher(u64);

impl Hasher for IdentityHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for byte in bytes {
            self.write_u64(u64::from(*byte));
        }
    }

    fn write_u64(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

type ByIdentity<V> = HashMap<Identity, V, BuildHasherDefault<IdentityHasher>>;

/// What one walk found below the workdir's top.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Nested {
    /// Every protected entry in a subdirectory of the workdir (not those directly in it,
    /// which the guard names itself), links included; never entered.
    pub entries: BTreeSet<PathBuf>,
    /// The subdirectories holding them.
    pub dirs: BTreeSet<PathBuf>,
    /// Whether every directory was visited (none past `MAX_DIRS` or `MAX_DEPTH`, no handle
    /// refused for want of descriptors).
    pub complete: bool,
    /// Directories that could not be listed or searched (a command may close one to hide what
    /// it put there: one that was readable before and is not after is reported).
    pub unreadable: BTreeSet<PathBuf>,
}

/// One directory as last listed (keyed by its identity): its change time, and what it held.
#[derive(Debug, Clone)]
struct Listing {
    changed: (i64, i64),
    /// The names of its protected entries.
    protected: Vec<CString>,
    /// The names of its subdirectories (not links, not protected ones), as the system calls
    /// take them.
    subdirs: Vec<CString>,
    readable: bool,
    /// Whether the change time was settled when it was listed (older than the walk's start by
    /// more than `TICK_MARGIN`): only then does an unchanged change time prove the directory
    /// unchanged since, so only then is the listing reused.
    reusable: bool,
}

impl Listing {
    /// Whether this listing still describes the directory `stat` describes (same identity
    /// assumed: it is the key).
    fn holds_for(&self, stat: &Stat) -> bool {
        self.reusable && self.changed == change_time(stat)
    }
}

/// The listings of the last walk, by directory identity. Adding, removing or renaming an
/// entry changes the directory's change time (`ctime`), which no command can set back (the
/// clock is out of its reach), so a directory whose identity and change time are unchanged is
/// not listed again: a walk costs one `fstatat` per directory instead of a listing. Keyed by
/// identity, not path: a listing describes the directory's own entries wherever it now lies.
#[derive(Debug, Default)]
pub struct ListingCache {
    listings: ByIdentity<Listing>,
}

// The fields' types differ between platforms; on some the casts change nothing.
#[allow(clippy::unnecessary_cast)]
fn identity(stat: &Stat) -> Identity {
    (stat.st_dev as u64, stat.st_ino as u64)
}

#[allow(clippy::unnecessary_cast)]
fn change_time(stat: &Stat) -> (i64, i64) {
    (stat.st_ctime as i64, stat.st_ctime_nsec as i64)
}

fn is_dir(stat: &Stat) -> bool {
    FileType::from_raw_mode(stat.st_mode) == FileType::Directory
}

fn os(name: &CStr) -> &OsStr {
    OsStr::from_bytes(name.to_bytes())
}

/// A directory being walked: its handle, its path (for what is reported), its listing and
/// the next subdirectory to visit.
struct Frame {
    fd: OwnedFd,
    path: PathBuf,
    identity: Identity,
    listing: Listing,
    next: usize,
    /// The rights it was given for the walk, given back when the walk leaves it.
    _loosened: Option<Loosened>,
}

/// One walk's state.
struct Walk {
    /// The last walk's listings, taken out as they are reused (never copied).
    known: ByIdentity<Listing>,
    /// This walk's listings, the next walk's `known`.
    fresh: ByIdentity<Listing>,
    /// Every directory entered (a bind mount may show one twice, even inside itself: it is
    /// walked once). Those settled without being entered have no subdirectories to loop.
    entered: HashSet<Identity, BuildHasherDefault<IdentityHasher>>,
    /// Directories visited, entered or not (the bound is `MAX_DIRS`).
    count: usize,
    skip: Option<Identity>,
    started: SystemTime,
    found: Nested,
    /// The user harness9 runs as.
    user: u32,
    /// Where the kernel writes the entries of the directory being listed.
    buffer: Vec<u8>,
}

impl Walk {
    /// `known`'s listing of the directory `stat` describes, taken out, when it still holds
    /// (and, with `leaf_only`, when it had no subdirectories).
    fn reuse(&mut self, stat: &Stat, leaf_only: bool) -> Option<Listing> {
        match self.known.entry(identity(stat)) {
            Entry::Occupied(known)
                if known.get().holds_for(stat)
                    && (!leaf_only || known.get().subdirs.is_empty()) =>
            {
                Some(known.remove())
            }
            _ => None,
        }
    }

    /// The listing of the open directory `fd`, read now.
    fn list(&mut self, fd: &OwnedFd, stat: &Stat) -> Listing {
        let changed = change_time(stat);
        let since_epoch = Duration::from_secs(u64::try_from(changed.0).unwrap_or(0))
            + Duration::from_nanos(u64::try_from(changed.1).unwrap_or(0));
        let mut listing = Listing {
            changed,
            protected: Vec::new(),
            subdirs: Vec::new(),
            readable: false,
            reusable: UNIX_EPOCH + since_epoch + TICK_MARGIN < self.started,
        };
        // One buffer for every listing of the walk, never cleared: the kernel fills it.
        let mut entries = RawDir::new(fd, self.buffer.spare_capacity_mut());
        while let Some(entry) = entries.next() {
            let Ok(entry) = entry else {
                // A listing cut short is no listing: the directory counts as unreadable.
                listing.protected.clear();
                listing.subdirs.clear();
                return listing;
            };
            let name = entry.file_name();
            if matches!(name.to_bytes(), b"." | b"..") {
                continue;
            }
            if is_protected_name(os(name)) {
                listing.protected.push(name.to_owned());
                continue;
            }
            let subdir = match entry.file_type() {
                FileType::Directory => true,
                // Some file systems do not say in the listing: ask, without following a link.
                FileType::Unknown => rustix::fs::statat(fd, name, AtFlags::SYMLINK_NOFOLLOW)
                    .is_ok_and(|stat| is_dir(&stat)),
                _ => false,
            };
            if subdir {
                listing.subdirs.push(name.to_owned());
            }
        }
        listing.readable = true;
        listing
    }

    /// Notes what `listing` holds of interest, for the directory at `path` (`top`: the
    /// workdir itself, whose protected names the guard names itself).
    fn note(&mut self, path: &Path, listing: &Listing, top: bool) {
        if !listing.readable {
            self.found.unreadable.insert(path.to_owned());
        }
        if !top && !listing.protected.is_empty() {
            self.found
                .entries
                .extend(listing.protected.iter().map(|name| path.join(os(name))));
            self.found.dirs.insert(path.to_owned());
        }
    }

    /// Whether the directory `stat` describes is closed to its owner, harness9's user (not
    /// root, whom nothing is closed to): a command may close one to hide what it planted.
    fn closed_to_us(&self, stat: &Stat) -> bool {
        self.user != 0 && stat.st_uid == self.user && stat.st_mode & 0o500 != 0o500
    }

    /// Opens the workdir and reads (or reuses) its listing.
    fn top(&mut self, workdir: &Path) -> Option<Frame> {
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
        let loosened = rustix::fs::stat(workdir)
            .ok()
            .filter(|stat| self.closed_to_us(stat))
            .and_then(|_| loosen(None, workdir.as_os_str()));
        let Ok(fd) = rustix::fs::open(workdir, flags, Mode::empty()) else {
            self.found.unreadable.insert(workdir.to_owned());
            return None;
        };
        let Ok(stat) = rustix::fs::fstat(&fd) else {
            self.found.unreadable.insert(workdir.to_owned());
            return None;
        };
        self.entered.insert(identity(&stat));
        self.count += 1;
        let listing = match self.reuse(&stat, false) {
            Some(listing) => listing,
            None => self.list(&fd, &stat),
        };
        self.note(workdir, &listing, true);
        Some(Frame {
            fd,
            path: workdir.to_owned(),
            identity: identity(&stat),
            listing,
            next: 0,
            _loosened: loosened,
        })
    }

    /// Visits the subdirectory `name` of `parent` (at `depth`): a directory whose listing
    /// holds and that had no subdirectories is settled with one `fstatat`; any other one is
    /// opened (never through a link) and returned to be walked.
    fn visit(&mut self, parent: &Frame, name: &CStr, depth: usize) -> Option<Frame> {
        let stat = match rustix::fs::statat(&parent.fd, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(stat) => stat,
            // Gone since the listing: nothing of it is left to check.
            Err(Errno::NOENT) => return None,
            Err(_) => {
                self.found.unreadable.insert(parent.path.join(os(name)));
                return None;
            }
        };
        let id = identity(&stat);
        if !is_dir(&stat) || Some(id) == self.skip || self.entered.contains(&id) {
            return None;
        }
        self.count += 1;
        if let Some(listing) = self.reuse(&stat, true) {
            if !listing.readable || !listing.protected.is_empty() {
                self.note(&parent.path.join(os(name)), &listing, false);
            }
            self.fresh.insert(id, listing);
            return None;
        }
        if depth >= MAX_DEPTH {
            self.found.complete = false;
            return None;
        }
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let path = parent.path.join(os(name));
        let loosened = if self.closed_to_us(&stat) {
            loosen(Some(&parent.fd), os(name))
        } else {
            None
        };
        let fd = match rustix::fs::openat(&parent.fd, name, flags, Mode::empty()) {
            Ok(fd) => fd,
            // Replaced by a file or a link, or gone, since the `fstatat`.
            Err(Errno::NOENT | Errno::NOTDIR | Errno::LOOP) => return None,
            // Closed to us: its entries cannot be known.
            Err(Errno::ACCESS) => {
                self.found.unreadable.insert(path);
                return None;
            }
            // Out of descriptors, or anything else: this walk cannot vouch for the tree.
            Err(_) => {
                self.found.complete = false;
                return None;
            }
        };
        // The handle is the truth: the name may have been swapped since the `fstatat`.
        let Ok(stat) = rustix::fs::fstat(&fd) else {
            self.found.unreadable.insert(path);
            return None;
        };
        let id = identity(&stat);
        if Some(id) == self.skip || !self.entered.insert(id) {
            return None;
        }
        let listing = match self.reuse(&stat, false) {
            Some(listing) => listing,
            None => self.list(&fd, &stat),
        };
        self.note(&path, &listing, false);
        Some(Frame {
            fd,
            path,
            identity: id,
            listing,
            next: 0,
            _loosened: loosened,
        })
    }
}

/// Walks `workdir` depth first, without following links, entering neither protected entries
/// nor `skip` (`$HARNESS9_HOME`, when it lies inside); keeps the listings in `cache`.
pub fn walk(workdir: &Path, skip: &Path, cache: &mut ListingCache) -> Nested {
    walk_at(workdir, skip, cache, SystemTime::now())
}

/// `walk`, `started` taken for the walk's start (tests move it on to make listings reusable).
fn walk_at(workdir: &Path, skip: &Path, cache: &mut ListingCache, started: SystemTime) -> Nested {
    let skip = std::fs::symlink_metadata(skip)
        .ok()
        .filter(std::fs::Metadata::is_dir)
        .map(|meta| {
            use std::os::unix::fs::MetadataExt;
            (meta.dev(), meta.ino())
        });
    let mut walk = Walk {
        known: std::mem::take(&mut cache.listings),
        fresh: ByIdentity::default(),
        entered: HashSet::default(),
        count: 0,
        // SAFETY: geteuid cannot fail.
        user: unsafe { libc::geteuid() },
        skip,
        buffer: Vec::with_capacity(LISTING_BUFFER),
        started,
        found: Nested {
            complete: true,
            ..Nested::default()
        },
    };
    let mut stack: Vec<Frame> = walk.top(workdir).into_iter().collect();
    while walk.count < MAX_DIRS {
        let depth = stack.len();
        let Some(frame) = stack.last_mut() else { break };
        let index = frame.next;
        if index == frame.listing.subdirs.len() {
            if let Some(done) = stack.pop() {
                walk.fresh.insert(done.identity, done.listing);
            }
            continue;
        }
        frame.next += 1;
        let Some(frame) = stack.last() else { break };
        if let Some(child) = walk.visit(frame, &frame.listing.subdirs[index], depth) {
            stack.push(child);
        }
    }
    if !stack.is_empty() {
        walk.found.complete = false;
    }
    cache.listings = walk.fresh;
    walk.found
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
        // A link to a folder is not entered (its target is walked where it lies).
        std::os::unix::fs::symlink(root.join("a"), root.join("pkg/link")).unwrap();
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

    /// A command can nest folders without end; the walk holds a handle per level, so past
    /// `MAX_DEPTH` it stops and says so instead of running out of descriptors or passing the
    /// tree as checked.
    #[test]
    fn folders_nested_past_the_depth_bound_are_reported_not_passed_off() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let mut deep = root.to_path_buf();
        for _ in 0..MAX_DEPTH + 4 {
            deep.push("a");
        }
        std::fs::create_dir_all(&deep).unwrap();
        std::fs::write(deep.join(".env"), "").unwrap();
        let found = walk(root, Path::new(""), &mut ListingCache::default());
        assert!(!found.complete);
        // Within the bound, the same depth of nesting is walked through.
        let shallow = root.join("b/b/b/b/b/b/b/b/b/b/b/b");
        std::fs::create_dir_all(&shallow).unwrap();
        std::fs::write(shallow.join(".env"), "").unwrap();
        let found = walk(&root.join("b"), Path::new(""), &mut ListingCache::default());
        assert!(found.complete);
        assert_eq!(found.entries, BTreeSet::from([shallow.join(".env")]));
    }
}
