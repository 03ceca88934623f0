//! Folders listed through directory handles (issue 29 point 2): the root opened as judged
//! (`open::open_folder_read`), every subfolder opened from its parent's handle with
//! `O_NOFOLLOW|O_DIRECTORY`, so a folder swapped for a link mid-walk (`renameat2`
//! `RENAME_EXCHANGE` by a background job) is refused, never followed: no name from outside
//! the folder named is ever listed. `.gitignore` decisions come from the `ignore` walker, which
//! reads by name; what it says only filters what the handles list, so a race can at worst show
//! or hide an ignored name inside, never name one outside.

use std::ffi::OsStr;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use rustix::fs::{AtFlags, FileType, Mode, OFlags, RawDir};

/// One entry a handle walk found, relative to the walk's root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    pub relative: PathBuf,
    pub is_dir: bool,
    pub is_file: bool,
}

/// The deepest a handle walk goes (the `ignore` walker's own trees are no deeper in practice);
/// it also bounds the handles held at once.
const MAX_DEPTH: usize = 256;

/// Bytes of entries read per `getdents` call.
const BUFFER: usize = 32 * 1024;

/// Walks the folder `root` (an open directory handle) to `max_depth` levels (1: its entries
/// only), entering a subfolder only when `enter` says so for its path relative to `root`, and
/// returning every entry `keep` accepts. A subfolder that is no longer a folder when opened
/// (swapped for a link) is skipped.
pub fn walk(
    root: OwnedFd,
    max_depth: usize,
    enter: &dyn Fn(&Path) -> bool,
    keep: &dyn Fn(&Found) -> bool,
) -> std::io::Result<Vec<Found>> {
    let max_depth = max_depth.min(MAX_DEPTH);
    let mut buffer: Vec<u8> = Vec::with_capacity(BUFFER);
    let mut found = Vec::new();
    // Pending folders: the parent's handle (shared, so only ancestors stay open), the name in
    // it, the path relative to the root and the depth of its entries.
    let mut pending: Vec<(Rc<OwnedFd>, PathBuf, usize)> = Vec::new();
    let root = Rc::new(root);
    list(&root, Path::new(""), 1, &mut buffer, &mut |entry, depth| {
        visit(
            entry,
            depth,
            &root,
            max_depth,
            enter,
            keep,
            &mut found,
            &mut pending,
        )
    })?;
    while let Some((parent, relative, depth)) = pending.pop() {
        let Some(name) = relative.file_name() else {
            continue;
        };
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        // A link or a file swapped in since the parent was listed: refused, not followed.
        let Ok(fd) = rustix::fs::openat(parent.as_ref(), name, flags, Mode::empty()) else {
            continue;
        };
        let fd = Rc::new(fd);
        let _ = list(&fd, &relative, depth, &mut buffer, &mut |entry, depth| {
            visit(
                entry,
                depth,
                &fd,
                max_depth,
                enter,
                keep,
                &mut found,
                &mut pending,
            )
        });
    }
    Ok(found)
}

#[allow(clippy::too_many_arguments)]
fn visit(
    entry: Found,
    depth: usize,
    dir: &Rc<OwnedFd>,
    max_depth: usize,
    enter: &dyn Fn(&Path) -> bool,
    keep: &dyn Fn(&Found) -> bool,
    found: &mut Vec<Found>,
    pending: &mut Vec<(Rc<OwnedFd>, PathBuf, usize)>,
) {
    if entry.is_dir && depth < max_depth && enter(&entry.relative) {
        pending.push((Rc::clone(dir), entry.relative.clone(), depth + 1));
    }
    if keep(&entry) {
        found.push(entry);
    }
}

/// The entries of the open folder `fd` (at `relative` from the root), each given to `each`
/// with `depth`.
fn list(
    fd: &OwnedFd,
    relative: &Path,
    depth: usize,
    buffer: &mut Vec<u8>,
    each: &mut dyn FnMut(Found, usize),
) -> std::io::Result<()> {
    let mut entries = RawDir::new(fd, buffer.spare_capacity_mut());
    while let Some(entry) = entries.next() {
        let entry = entry?;
        let name = entry.file_name();
        if matches!(name.to_bytes(), b"." | b"..") {
            continue;
        }
        let file_type = match entry.file_type() {
            // Some file systems do not say in the listing: ask, without following a link.
            FileType::Unknown => rustix::fs::statat(fd, name, AtFlags::SYMLINK_NOFOLLOW)
                .map_or(FileType::Unknown, |stat| {
                    FileType::from_raw_mode(stat.st_mode)
                }),
            known => known,
        };
        each(
            Found {
                relative: relative.join(OsStr::from_bytes(name.to_bytes())),
                is_dir: file_type == FileType::Directory,
                is_file: file_type == FileType::RegularFile,
            },
            depth,
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn open(path: &Path) -> OwnedFd {
        rustix::fs::open(path, OFlags::RDONLY | OFlags::DIRECTORY, Mode::empty()).unwrap()
    }

    #[test]
    fn walks_through_handles_follows_no_link_and_honours_enter_and_depth() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("a/b/c")).unwrap();
        std::fs::create_dir_all(root.join("skipped")).unwrap();
        std::fs::write(root.join("a/b/c/deep"), "").unwrap();
        std::fs::write(root.join("skipped/hidden"), "").unwrap();
        std::os::unix::fs::symlink(root.join("a"), root.join("link")).unwrap();
        let all = |_: &Found| true;
        let enter = |path: &Path| path != Path::new("skipped");
        let mut names: Vec<PathBuf> = walk(open(root), usize::MAX, &enter, &all)
            .unwrap()
            .into_iter()
            .map(|found| found.relative)
            .collect();
        names.sort();
        let expected: Vec<PathBuf> = ["a", "a/b", "a/b/c", "a/b/c/deep", "link", "skipped"]
            .iter()
            .map(PathBuf::from)
            .collect();
        assert_eq!(names, expected);
        let top = walk(open(root), 1, &|_: &Path| true, &all).unwrap();
        assert_eq!(top.len(), 3);
        let link = top
            .iter()
            .find(|f| f.relative == Path::new("link"))
            .unwrap();
        assert!(!link.is_dir && !link.is_file, "a link is neither: {link:?}");
    }
}
