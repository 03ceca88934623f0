//! Paths the model names opened as they were judged (issue 29 point 2). The decision judges a
//! path by its name; a folder swapped for a link between the decision and the open would lead
//! the open outside the working directory or into a protected folder. So a path named inside
//! the working directory is opened through a held handle of it with
//! `openat2(RESOLVE_BENEATH)`: links that stay inside are followed, a link leading out is
//! refused by the kernel in the same step (where the kernel lacks `openat2`, one name at a time
//! with `O_NOFOLLOW`). A path named outside it (which always asks, and which the decision pins
//! to what it resolved to when judged) is opened exactly as named, following no link at all,
//! and must sit there. Then what was opened is
//! judged, not the name: its real path (`/proc/self/fd`) may not be sensitive (protected for a
//! write, secret or denied for a read) when the name was not.

use std::collections::HashMap;
use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::{self, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use rustix::fs::{AtFlags, Mode, OFlags, ResolveFlags};
use rustix::io::Errno;

use super::paths;

/// What was found at a path is not what was judged: a link or another folder was swapped in,
/// or a link leads out of the working directory or into a sensitive path. Nothing was read or
/// written there.
#[derive(Debug, thiserror::Error)]
#[error(
    "{} changed while it was being opened, or leads through a link out of the working \
     directory or into a protected path; refused",
    .path.display()
)]
pub struct Swapped {
    pub path: PathBuf,
}

fn swapped(path: &Path) -> io::Error {
    io::Error::other(Swapped {
        path: path.to_owned(),
    })
}

/// Whether `error` says a path changed under an open (`Swapped`).
pub fn is_swapped(error: &io::Error) -> bool {
    error.get_ref().is_some_and(|inner| inner.is::<Swapped>())
}

/// The file `raw` names (relative to `workdir` or absolute), opened for reading without
/// blocking on a FIFO (the caller decides on the opened file's kind), judged as `open_named`
/// says; `sensitive` is the read judgement (secret files, deny rules).
pub fn open_read(
    workdir: &Path,
    raw: &Path,
    sensitive: &dyn Fn(&Path) -> bool,
) -> io::Result<File> {
    let flags = OFlags::RDONLY | OFlags::NONBLOCK | OFlags::CLOEXEC;
    open_named(workdir, raw, flags, false, sensitive).map(|(fd, _)| File::from(fd))
}

/// The folder `raw` names (relative to `workdir` or absolute), opened for listing its
/// entries, judged as `open_named` says: a link out of the working directory on the way is
/// refused, so a listing through this handle (`listing::walk`) names nothing outside.
pub fn open_folder_read(workdir: &Path, raw: &Path) -> io::Result<OwnedFd> {
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
    open_named(workdir, raw, flags, false, &|_| false).map(|(fd, _)| fd)
}

/// The folder of the file `raw` names, opened (with `create`, made) as `open_named` says, and
/// the file's name in it. A write there is refused when the file it would write is protected
/// (`protected::is_protected_write`) while the name was not.
pub fn open_folder_of(workdir: &Path, raw: &Path, create: bool) -> io::Result<(Dir, OsString)> {
    let named = paths::fold(&workdir.join(raw));
    let (folder, name) = split(&named)?;
    let name = name.to_owned();
    let protected = |path: &Path| super::protected::is_protected_write(&path.join(&name));
    let (fd, real) = open_named(workdir, folder, dir_flags(), create, &protected)?;
    let dir = Dir {
        fd,
        path: real,
        judged: true,
    };
    Ok((dir, name))
}

/// Writes `bytes` to the file `raw` names, as `open_folder_of` and `Dir::write_atomic` say.
pub fn write_atomic_named(workdir: &Path, raw: &Path, bytes: &[u8]) -> io::Result<()> {
    let (dir, name) = open_folder_of(workdir, raw, true)?;
    dir.write_atomic(&name, bytes)
}

/// `path`'s folder and last name.
pub fn split(path: &Path) -> io::Result<(&Path, &OsStr)> {
    match (path.parent(), path.file_name()) {
        (Some(parent), Some(name)) => Ok((parent, name)),
        _ => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} names no file in a folder", path.display()),
        )),
    }
}

/// A folder opened as `O_PATH`, and the path it was judged by: files are opened and renamed
/// relative to it, never by name again.
pub struct Dir {
    fd: OwnedFd,
    path: PathBuf,
    /// Whether the folder must stay at `path` (a judged path, not a trusted one).
    judged: bool,
}

impl Dir {
    /// The folder `path` opened by name, links followed: for harness9's own files (its home,
    /// settings it writes), whose paths no repository chooses.
    pub fn open_trusted(path: &Path) -> io::Result<Dir> {
        let fd = rustix::fs::open(path, dir_flags(), Mode::empty())?;
        Ok(Dir {
            fd,
            path: path.to_owned(),
            judged: false,
        })
    }

    /// The path this folder was judged by.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The entry `name` of this folder opened for reading, not following a link in it, and
    /// without blocking on a FIFO (the caller decides on the opened file's kind).
    pub fn open_read(&self, name: &OsStr) -> io::Result<File> {
        let fd = rustix::fs::openat(
            &self.fd,
            name,
            OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| self.link_refused(e))?;
        Ok(File::from(fd))
    }

    /// Removes the entry `name` of this folder (a link there is removed, not followed); gone
    /// already counts as removed.
    pub fn remove(&self, name: &OsStr) -> io::Result<()> {
        self.check_in_place()?;
        match rustix::fs::unlinkat(&self.fd, name, AtFlags::empty()) {
            Ok(()) | Err(Errno::NOENT) => Ok(()),
            Err(e) => Err(e.into()),
        }
    }

    /// A new file `name` in this folder, made 0600: never over an existing file, nor through
    /// a link (a link there, even a dangling one, counts as an existing file).
    pub fn create_new(&self, name: &OsStr) -> io::Result<File> {
        let fd = rustix::fs::openat(
            &self.fd,
            name,
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::from_raw_mode(0o600),
        )?;
        self.check_in_place()?;
        Ok(File::from(fd))
    }

    /// Writes `bytes` as the entry `name` through a temporary file in this folder renamed over
    /// it (`renameat` on this handle): a reader sees the old file or the new one, never half of
    /// it, and a link at `name` is replaced, not followed. An existing file's permissions are
    /// kept; a new file is 0600.
    pub fn write_atomic(&self, name: &OsStr, bytes: &[u8]) -> io::Result<()> {
        self.write_atomic_with_mode(name, bytes, None)
    }

    /// `write_atomic`, the new file given the permission bits `mode` when there is one (set on
    /// the temporary file before the rename, so never through a link swapped in at `name`).
    pub fn write_atomic_with_mode(
        &self,
        name: &OsStr,
        bytes: &[u8],
        mode: Option<u32>,
    ) -> io::Result<()> {
        let kept_mode = match (
            mode,
            rustix::fs::statat(&self.fd, name, AtFlags::SYMLINK_NOFOLLOW),
        ) {
            (Some(mode), _) => Some(Mode::from_raw_mode(mode & 0o7777)),
            (None, Ok(stat)) if rustix::fs::FileType::from_raw_mode(stat.st_mode).is_file() => {
                Some(Mode::from_raw_mode(stat.st_mode & 0o7777))
            }
            _ => None,
        };
        let (temp_name, temp) = self.create_temp(name)?;
        let written = (|| -> io::Result<()> {
            let mut file = File::from(temp);
            file.write_all(bytes)?;
            if let Some(mode) = kept_mode {
                rustix::fs::fchmod(&file, mode)?;
            }
            file.sync_all()?;
            self.check_in_place()?;
            rustix::fs::renameat(&self.fd, &temp_name, &self.fd, name)?;
            Ok(())
        })();
        if written.is_err() {
            let _ = rustix::fs::unlinkat(&self.fd, &temp_name, AtFlags::empty());
        }
        written?;
        // A folder renamed while the file was written: say so rather than report success.
        self.check_in_place()
    }

    fn create_temp(&self, name: &OsStr) -> io::Result<(OsString, OwnedFd)> {
        use std::sync::atomic::{AtomicU64, Ordering};
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let stem: String = name.to_string_lossy().chars().take(64).collect();
        loop {
            let count = NEXT.fetch_add(1, Ordering::Relaxed);
            let nanos = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.subsec_nanos());
            let temp_name = OsString::from(format!(
                ".{stem}.{}.{count}.{nanos:x}.tmp",
                std::process::id()
            ));
            match rustix::fs::openat(
                &self.fd,
                &temp_name,
                OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                Mode::from_raw_mode(0o600),
            ) {
                Ok(fd) => return Ok((temp_name, fd)),
                Err(Errno::EXIST) => continue,
                Err(e) => return Err(e.into()),
            }
        }
    }

    /// Refuses when this folder no longer sits at the path it was judged by.
    fn check_in_place(&self) -> io::Result<()> {
        if !self.judged {
            return Ok(());
        }
        check_names(&self.fd, &self.path)
    }

    fn link_refused(&self, error: Errno) -> io::Error {
        if error == Errno::LOOP {
            swapped(&self.path)
        } else {
            error.into()
        }
    }
}

/// Where a named path is opened from, worked out before the open.
struct Located {
    base: OwnedFd,
    /// Relative to `base`; `.` for the base itself.
    relative: PathBuf,
    resolve: ResolveFlags,
    /// The path as named, `.` and `..` folded: what the decision judged by name.
    named: PathBuf,
    /// Set when the path must be found exactly here (named outside: no link may be followed).
    exact: Option<PathBuf>,
}

fn locate(workdir: &Path, raw: &Path) -> io::Result<Located> {
    let held = held_workdir(workdir)?;
    let joined = match &held {
        _ if raw.is_absolute() => raw.to_owned(),
        Some((_, canonical)) => canonical.join(raw),
        None => workdir.join(raw),
    };
    let named = paths::fold(&joined);
    if let Some((fd, canonical)) = held
        && let Ok(relative) = named.strip_prefix(&canonical)
    {
        return Ok(Located {
            base: fd,
            relative: dot_if_empty(relative),
            resolve: ResolveFlags::BENEATH | ResolveFlags::NO_MAGICLINKS,
            exact: None,
            named,
        });
    }
    // Named outside: opened exactly where it is named, following no link at all, and checked
    // to sit there. The permission decision pins such a path to what it resolved to when it
    // was judged (`permission::pin_outside_path`), so a link found on the way now was swapped in
    // after the approval: the open is refused rather than led elsewhere.
    let relative = named.strip_prefix("/").map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} is not an absolute path", named.display()),
        )
    })?;
    Ok(Located {
        base: root()?,
        relative: dot_if_empty(relative),
        resolve: ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS,
        exact: Some(named.clone()),
        named,
    })
}

fn dot_if_empty(relative: &Path) -> PathBuf {
    if relative.as_os_str().is_empty() {
        PathBuf::from(".")
    } else {
        relative.to_owned()
    }
}

/// Opens `raw` with `flags`, then judges what was opened: refused when it is `sensitive` and
/// the name was not, or (named outside) when it is not where the name resolved. Returns the
/// file and its real path.
fn open_named(
    workdir: &Path,
    raw: &Path,
    flags: OFlags,
    create: bool,
    sensitive: &dyn Fn(&Path) -> bool,
) -> io::Result<(OwnedFd, PathBuf)> {
    let located = locate(workdir, raw)?;
    let fd = open_beneath(&located, flags, create)?;
    let real = real_path(&fd).unwrap_or_else(|| located.named.clone());
    if located.exact.as_ref().is_some_and(|exact| *exact != real)
        || (sensitive(&real) && !sensitive(&located.named))
    {
        return Err(swapped(&located.named));
    }
    Ok((fd, real))
}

fn dir_flags() -> OFlags {
    OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC
}

/// `located` opened with `flags`. Without `openat2` (ENOSYS), one name at a time with
/// `O_NOFOLLOW`; with `create`, missing folders made one at a time in their parent's handle.
fn open_beneath(located: &Located, flags: OFlags, create: bool) -> io::Result<OwnedFd> {
    let named = &located.named;
    let refused = |e: Errno| match e {
        // A link met where none may be (ELOOP), a way out of the base (EXDEV), or a rename
        // racing the lookup (openat2 gives up with EAGAIN).
        Errno::LOOP | Errno::XDEV | Errno::AGAIN => swapped(named),
        other => other.into(),
    };
    let opened = rustix::fs::openat2(
        &located.base,
        &located.relative,
        flags,
        Mode::empty(),
        located.resolve,
    );
    match opened {
        Ok(fd) => Ok(fd),
        Err(Errno::NOSYS) => walk(&located.base, &located.relative, flags, create).map_err(refused),
        Err(Errno::NOENT) if create && located.relative != Path::new(".") => {
            let (folder, name) = split(&located.relative)?;
            let parent = Located {
                base: located.base.try_clone()?,
                relative: dot_if_empty(folder),
                resolve: located.resolve,
                named: named.clone(),
                exact: None,
            };
            let parent = open_beneath(&parent, dir_flags(), true)?;
            open_step(&parent, name, flags, true).map_err(refused)
        }
        Err(e) => Err(refused(e)),
    }
}

/// `relative` opened one name at a time from `base` with `O_NOFOLLOW`, folders made when
/// `create`.
fn walk(base: &OwnedFd, relative: &Path, flags: OFlags, create: bool) -> Result<OwnedFd, Errno> {
    let names: Vec<&OsStr> = relative
        .components()
        .filter_map(|component| match component {
            Component::Normal(name) => Some(name),
            _ => None,
        })
        .collect();
    let Some((last, folders)) = names.split_last() else {
        return rustix::fs::openat(base, ".", flags, Mode::empty());
    };
    let mut current = rustix::io::dup(base)?;
    for name in folders {
        current = open_step(&current, name, dir_flags(), create)?;
    }
    open_step(&current, last, flags, create)
}

/// The entry `name` of `dir` opened without following a link; when it is missing and `create`
/// and a folder is asked for, it is made first.
fn open_step(dir: &OwnedFd, name: &OsStr, flags: OFlags, create: bool) -> Result<OwnedFd, Errno> {
    let flags = flags | OFlags::NOFOLLOW;
    match rustix::fs::openat(dir, name, flags, Mode::empty()) {
        Err(Errno::NOENT) if create && flags.contains(OFlags::DIRECTORY) => {
            match rustix::fs::mkdirat(dir, name, Mode::from_raw_mode(0o777)) {
                Ok(()) | Err(Errno::EXIST) => {}
                Err(e) => return Err(e),
            }
            rustix::fs::openat(dir, name, flags, Mode::empty())
        }
        other => other,
    }
}

/// The path the kernel gives `fd` (`/proc/self/fd`), if `/proc` is there.
fn real_path(fd: &impl AsFd) -> Option<PathBuf> {
    use std::os::fd::AsRawFd;
    std::fs::read_link(format!("/proc/self/fd/{}", fd.as_fd().as_raw_fd())).ok()
}

/// Refuses `fd` unless the kernel names it `path`: a folder renamed since it was opened.
/// Without `/proc` the open's own refusal of links is what holds.
fn check_names(fd: &impl AsFd, path: &Path) -> io::Result<()> {
    match real_path(fd) {
        Some(real) if real != path => Err(swapped(path)),
        _ => Ok(()),
    }
}

/// The most working directories whose handles are held at once (tests make many).
const MAX_HELD: usize = 64;

type Held = (Arc<OwnedFd>, PathBuf);

/// The handle of `workdir` opened the first time it is asked for and held from then on, with
/// its canonical path; `None` when it cannot be opened (every path is then judged from `/`).
fn held_workdir(workdir: &Path) -> io::Result<Option<(OwnedFd, PathBuf)>> {
    static HELD: OnceLock<Mutex<HashMap<PathBuf, Held>>> = OnceLock::new();
    let mut held = HELD
        .get_or_init(Mutex::default)
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some((fd, canonical)) = held.get(workdir) {
        // The working directory itself moved away: nothing under its name is what was judged.
        check_names(fd.as_ref(), canonical)?;
        return Ok(Some((fd.try_clone()?, canonical.clone())));
    }
    let Ok(canonical) = workdir.canonicalize() else {
        return Ok(None);
    };
    let fd = match rustix::fs::open(&canonical, dir_flags() | OFlags::NOFOLLOW, Mode::empty()) {
        Ok(fd) => fd,
        Err(_) => return Ok(None),
    };
    if held.len() >= MAX_HELD {
        held.clear();
    }
    let copy = fd.try_clone()?;
    held.insert(workdir.to_owned(), (Arc::new(fd), canonical.clone()));
    Ok(Some((copy, canonical)))
}

/// The handle of `/`, opened once.
fn root() -> io::Result<OwnedFd> {
    static ROOT: OnceLock<OwnedFd> = OnceLock::new();
    if let Some(fd) = ROOT.get() {
        return fd.try_clone();
    }
    let fd = rustix::fs::open("/", dir_flags(), Mode::empty())?;
    ROOT.get_or_init(|| fd).try_clone()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    fn setup() -> (tempfile::TempDir, PathBuf, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        let work = base.join("work");
        let outside = base.join("outside");
        std::fs::create_dir_all(work.join("sub")).unwrap();
        std::fs::create_dir_all(work.join(".git/hooks")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(outside.join("secret"), "outside").unwrap();
        (dir, work, outside)
    }

    fn read(work: &Path, raw: &str) -> io::Result<String> {
        let mut text = String::new();
        open_read(work, Path::new(raw), &|_| false)?.read_to_string(&mut text)?;
        Ok(text)
    }

    #[test]
    fn links_inside_are_followed_links_out_and_into_protected_paths_refused() {
        let (_dir, work, outside) = setup();
        write_atomic_named(&work, Path::new("sub/new/a.txt"), b"one").unwrap();
        assert_eq!(read(&work, "sub/new/a.txt").unwrap(), "one");
        std::os::unix::fs::symlink("sub/new", work.join("inner")).unwrap();
        assert_eq!(read(&work, "inner/a.txt").unwrap(), "one");

        std::os::unix::fs::symlink(&outside, work.join("link")).unwrap();
        let error = read(&work, "link/secret").unwrap_err();
        assert!(is_swapped(&error), "{error}");
        let error = write_atomic_named(&work, Path::new("link/planted"), b"x").unwrap_err();
        assert!(is_swapped(&error), "{error}");
        assert!(!outside.join("planted").exists());

        std::os::unix::fs::symlink(".git/hooks", work.join("hooks")).unwrap();
        let error = write_atomic_named(&work, Path::new("hooks/pre-commit"), b"x").unwrap_err();
        assert!(is_swapped(&error), "{error}");
        assert!(!work.join(".git/hooks/pre-commit").exists());
        // Named as the protected path it is, the write goes through (the decision asked).
        write_atomic_named(&work, Path::new(".git/hooks/pre-commit"), b"x").unwrap();

        // A link as the last name is replaced by a write, never followed.
        std::os::unix::fs::symlink(outside.join("secret"), work.join("last")).unwrap();
        write_atomic_named(&work, Path::new("last"), b"mine").unwrap();
        assert_eq!(
            std::fs::read_to_string(outside.join("secret")).unwrap(),
            "outside"
        );
    }

    #[test]
    fn a_path_named_outside_follows_no_link_and_keeps_permissions() {
        let (_dir, work, outside) = setup();
        let target = outside.join("secret");
        assert_eq!(read(&work, target.to_str().unwrap()).unwrap(), "outside");
        std::fs::set_permissions(&target, std::os::unix::fs::PermissionsExt::from_mode(0o640))
            .unwrap();
        write_atomic_named(&work, &target, b"new").unwrap();
        let mode = std::os::unix::fs::PermissionsExt::mode(
            &std::fs::metadata(&target).unwrap().permissions(),
        );
        assert_eq!(mode & 0o777, 0o640);
        assert_eq!(read(&work, "../outside/secret").unwrap(), "new");
        // A link on the way of a path named outside is refused, not followed: the decision
        // pinned the path it judged, so a link there now was swapped in after the approval
        // (a folder exchanged for a link to elsewhere, or a link retargeted).
        let alias = outside.with_file_name("alias");
        std::os::unix::fs::symlink(&outside, &alias).unwrap();
        let error = read(&work, alias.join("secret").to_str().unwrap()).unwrap_err();
        assert!(is_swapped(&error), "{error}");
        let error = write_atomic_named(&work, &alias.join("planted"), b"x").unwrap_err();
        assert!(is_swapped(&error), "{error}");
        assert!(!outside.join("planted").exists());
    }

    #[test]
    fn the_walk_without_openat2_refuses_links_and_makes_folders() {
        let (_dir, work, outside) = setup();
        std::os::unix::fs::symlink(&outside, work.join("link")).unwrap();
        let base = rustix::fs::open(&work, dir_flags(), Mode::empty()).unwrap();
        assert!(walk(&base, Path::new("link/secret"), OFlags::RDONLY, false).is_err());
        assert!(walk(&base, Path::new("a/b"), dir_flags(), true).is_ok());
        assert!(work.join("a/b").is_dir());
    }
}
