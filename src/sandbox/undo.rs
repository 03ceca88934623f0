//! Putting back one protected path a sandboxed command planted (issue 29 point 3). A command
//! may have made the directories on the way unusable to their owner (`chmod 111 .harness9;
//! chmod 555 .`): then a plain `remove_file` fails for anyone but root and the planted file
//! stays. So every directory from the workdir down to the path's parent is opened without
//! following links (`O_PATH | O_NOFOLLOW`), given its owner's rights for the time of the undo
//! and put back as it was after; the removal goes through those handles. Invariant: `put_back`
//! says true only when the result was checked afterwards, through the handle and by name.

use std::ffi::{CString, OsStr, OsString};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

/// The directories opened on the way, and the modes to give back to those that were loosened.
#[derive(Default)]
struct Chain {
    handles: Vec<OwnedFd>,
    loosened: Vec<(usize, libc::mode_t)>,
}

impl Chain {
    /// Keeps `fd` and gives its owner every right on it, when it lacked one.
    fn push(&mut self, fd: OwnedFd) -> Option<()> {
        let mode = mode_of(&fd)?;
        if mode & 0o700 != 0o700 {
            chmod_handle(&fd, mode | 0o700)?;
            self.loosened.push((self.handles.len(), mode));
        }
        self.handles.push(fd);
        Some(())
    }

    fn last(&self) -> Option<&OwnedFd> {
        self.handles.last()
    }
}

impl Drop for Chain {
    fn drop(&mut self) {
        for (index, mode) in self.loosened.iter().rev() {
            if let Some(fd) = self.handles.get(*index) {
                let _ = chmod_handle(fd, *mode);
            }
        }
    }
}

fn c_string(bytes: &[u8]) -> Option<CString> {
    CString::new(bytes).ok()
}

/// `/proc/self/fd/N`: the directory behind a handle, by a name no command can swap.
fn handle_path(fd: &OwnedFd) -> PathBuf {
    PathBuf::from(format!("/proc/self/fd/{}", fd.as_raw_fd()))
}

fn mode_of(fd: &OwnedFd) -> Option<libc::mode_t> {
    // SAFETY: fstat fills our zeroed struct.
    let mut stat: libc::stat = unsafe { std::mem::zeroed() };
    (unsafe { libc::fstat(fd.as_raw_fd(), &mut stat) } == 0).then_some(stat.st_mode & 0o7777)
}

/// `fchmod` refuses `O_PATH` handles; `chmod` of the handle's `/proc` name changes the very
/// directory it holds.
fn chmod_handle(fd: &OwnedFd, mode: libc::mode_t) -> Option<()> {
    let path = c_string(handle_path(fd).as_os_str().as_bytes())?;
    // SAFETY: chmod with a valid C string.
    (unsafe { libc::chmod(path.as_ptr(), mode) } == 0).then_some(())
}

/// Opens the directory `name` beneath `dir` (or `name` itself without `dir`), not following
/// a link in its last component.
fn open_dir(dir: Option<&OwnedFd>, name: &OsStr, follow: bool) -> Option<OwnedFd> {
    let name = c_string(name.as_bytes())?;
    let mut flags = libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC;
    if !follow {
        flags |= libc::O_NOFOLLOW;
    }
    let base = dir.map_or(libc::AT_FDCWD, |fd| fd.as_raw_fd());
    // SAFETY: openat with a valid C string; the descriptor is owned below.
    let fd = unsafe { libc::openat(base, name.as_ptr(), flags) };
    // SAFETY: a descriptor the kernel just returned, owned by nothing else.
    (fd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(fd) })
}

/// A directory given its owner every right until dropped (see `Chain`): the walk of `nested`
/// lists and searches the folders a command closed to their owner (`chmod 111`), or it could
/// not see what was planted in them.
pub(super) struct Loosened {
    _chain: Chain,
}

/// The directory `name` in `dir` (or `name` itself without `dir`), opened without following a
/// link in its last component and loosened; `None` when either cannot be done.
pub(super) fn loosen(dir: Option<&OwnedFd>, name: &OsStr) -> Option<Loosened> {
    let mut chain = Chain::default();
    chain.push(open_dir(dir, name, false)?)?;
    Some(Loosened { _chain: chain })
}

/// Opens every directory from `workdir` down to `parent` (only `parent` when it lies
/// elsewhere, as `$HARNESS9_HOME`'s parent may), loosening each.
fn open_chain(workdir: &Path, parent: &Path) -> Option<Chain> {
    let mut chain = Chain::default();
    let (start, rest) = match parent.strip_prefix(workdir) {
        Ok(rest) => (workdir, rest),
        Err(_) => (parent, Path::new("")),
    };
    chain.push(open_dir(None, start.as_os_str(), true)?)?;
    for component in rest.components() {
        let Component::Normal(name) = component else {
            return None;
        };
        let next = open_dir(chain.last(), name, false)?;
        chain.push(next)?;
    }
    Some(chain)
}

/// The entry `name` in `dir` as `lstat` sees it; `None` when it does not exist.
fn stat_at(dir: &OwnedFd, name: &CString) -> Option<libc::stat> {
    // SAFETY: fstatat fills our zeroed struct.
    let mut stat: libc::stat = unsafe { std::mem::zeroed() };
    let found = unsafe {
        libc::fstatat(
            dir.as_raw_fd(),
            name.as_ptr(),
            &mut stat,
            libc::AT_SYMLINK_NOFOLLOW,
        )
    };
    (found == 0).then_some(stat)
}

/// Gives the owner every right on `dir` and the directories beneath it (each opened without
/// following a link), so that everything in them can be removed.
fn make_writable(dir: &Path) {
    let Some(fd) = open_dir(None, dir.as_os_str(), false) else {
        return;
    };
    let _ = chmod_handle(&fd, 0o700);
    let inside = handle_path(&fd);
    for entry in std::fs::read_dir(&inside).into_iter().flatten().flatten() {
        if entry.file_type().is_ok_and(|t| t.is_dir()) {
            make_writable(&inside.join(entry.file_name()));
        }
    }
}

/// Removes what a command planted at `path` and, when `link` is given, puts that link back.
/// True only when `path` is now as it was before, checked through the handle and by name.
pub fn put_back(workdir: &Path, path: &Path, link: Option<&Path>) -> bool {
    let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
        return false;
    };
    let Some(c_name) = c_string(name.as_bytes()) else {
        return false;
    };
    let Some(chain) = open_chain(workdir, parent) else {
        return false;
    };
    let Some(dir) = chain.last() else {
        return false;
    };
    if let Some(stat) = stat_at(dir, &c_name) {
        if stat.st_mode & libc::S_IFMT == libc::S_IFDIR {
            let mut inside = OsString::from(handle_path(dir));
            inside.push("/");
            inside.push(name);
            let inside = PathBuf::from(inside);
            make_writable(&inside);
            let _ = std::fs::remove_dir_all(&inside);
        } else {
            // SAFETY: unlinkat with a valid C string beneath our handle.
            unsafe { libc::unlinkat(dir.as_raw_fd(), c_name.as_ptr(), 0) };
        }
    }
    if let Some(target) = link
        && let Some(c_target) = c_string(target.as_os_str().as_bytes())
    {
        // SAFETY: symlinkat with valid C strings beneath our handle.
        unsafe { libc::symlinkat(c_target.as_ptr(), dir.as_raw_fd(), c_name.as_ptr()) };
    }
    let through_handle = match (stat_at(dir, &c_name), link) {
        (None, None) => true,
        (Some(stat), Some(target)) => {
            stat.st_mode & libc::S_IFMT == libc::S_IFLNK
                && std::fs::read_link(handle_path(dir).join(name))
                    .ok()
                    .as_deref()
                    == Some(target)
        }
        _ => false,
    };
    // By name while the folders on the way are still open to their owner: a folder the
    // command closed (`chmod 000`) would refuse the lookup once its mode is given back.
    let by_name = match link {
        None => {
            std::fs::symlink_metadata(path).is_err_and(|e| e.kind() == std::io::ErrorKind::NotFound)
        }
        Some(target) => std::fs::read_link(path).ok().as_deref() == Some(target),
    };
    drop(chain);
    through_handle && by_name
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_planted_file_behind_a_link_is_not_reached_and_not_called_undone() {
        let dir = tempfile::tempdir().unwrap();
        let (workdir, elsewhere) = (dir.path().join("w"), dir.path().join("elsewhere"));
        std::fs::create_dir_all(&workdir).unwrap();
        std::fs::create_dir_all(&elsewhere).unwrap();
        std::fs::write(elsewhere.join(".env"), "user's").unwrap();
        // A folder of the workdir swapped for a link by another command meanwhile.
        std::os::unix::fs::symlink(&elsewhere, workdir.join("pkg")).unwrap();
        assert!(!put_back(&workdir, &workdir.join("pkg/.env"), None));
        assert!(elsewhere.join(".env").exists());

        // A locked folder is opened, the planted file removed and the folder's mode kept.
        use std::os::unix::fs::PermissionsExt;
        std::fs::create_dir_all(workdir.join("sub/.harness9")).unwrap();
        std::fs::write(workdir.join("sub/.harness9/settings.json"), "{}").unwrap();
        for (path, mode) in [("sub/.harness9", 0o111), ("sub", 0o555)] {
            std::fs::set_permissions(workdir.join(path), std::fs::Permissions::from_mode(mode))
                .unwrap();
        }
        assert!(put_back(&workdir, &workdir.join("sub/.harness9"), None));
        assert!(!workdir.join("sub/.harness9").exists());
        let mode = std::fs::metadata(workdir.join("sub"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o555);
    }
}
