//! The helper's namespaces and mounts: a user namespace (so an unprivileged user may mount, and
//! root keeps no power outside it), a private mount namespace where every mount outside the
//! writable roots is read-only, the directories that must stay where they are pinned (bound
//! onto themselves), the protected paths bound read-only and `$HARNESS9_HOME` covered by an
//! empty read-only tmpfs, and a PID namespace for the children. Invariant: nothing here is
//! visible outside the helper's namespaces.

use std::ffi::CString;
use std::os::fd::{AsRawFd, FromRawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use super::super::Spec;
use super::SetupError;

fn last_error(what: &str) -> SetupError {
    SetupError::last(what)
}

fn io_error(step: &str) -> impl FnOnce(std::io::Error) -> SetupError + '_ {
    move |source| SetupError::System {
        step: step.to_owned(),
        source,
    }
}

fn c_path(path: &Path) -> Result<CString, SetupError> {
    CString::new(path.as_os_str().as_bytes()).map_err(|_| SetupError::NulPath(path.to_owned()))
}

/// Enters new user, mount and PID namespaces, mapping our user and group to themselves.
pub fn enter_namespaces() -> Result<(), SetupError> {
    // SAFETY: getuid/getgid cannot fail.
    let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
    // SAFETY: unshare on this single-threaded process.
    if unsafe { libc::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWNS | libc::CLONE_NEWPID) } != 0 {
        return Err(last_error(
            "cannot create a user namespace (unprivileged user namespaces may be disabled)",
        ));
    }
    std::fs::write("/proc/self/setgroups", "deny").map_err(io_error("/proc/self/setgroups"))?;
    std::fs::write("/proc/self/uid_map", format!("{uid} {uid} 1\n"))
        .map_err(io_error("/proc/self/uid_map"))?;
    std::fs::write("/proc/self/gid_map", format!("{gid} {gid} 1\n"))
        .map_err(io_error("/proc/self/gid_map"))?;
    // Our mounts must not propagate back to the real system.
    let root = c_path(Path::new("/"))?;
    // SAFETY: mount with valid C strings or nulls.
    if unsafe {
        libc::mount(
            std::ptr::null(),
            root.as_ptr(),
            std::ptr::null(),
            libc::MS_REC | libc::MS_PRIVATE,
            std::ptr::null(),
        )
    } != 0
    {
        return Err(last_error("cannot make the mounts private"));
    }
    Ok(())
}

/// The flags a remount in a user namespace must keep (the kernel locks them).
fn locked_flags(path: &CString) -> libc::c_ulong {
    // SAFETY: statvfs fills our zeroed struct.
    let mut stat: libc::statvfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statvfs(path.as_ptr(), &mut stat) } != 0 {
        return 0;
    }
    let pairs = [
        (libc::ST_NOSUID, libc::MS_NOSUID),
        (libc::ST_NODEV, libc::MS_NODEV),
        (libc::ST_NOEXEC, libc::MS_NOEXEC),
        (libc::ST_NOATIME, libc::MS_NOATIME),
        (libc::ST_NODIRATIME, libc::MS_NODIRATIME),
        (libc::ST_RELATIME, libc::MS_RELATIME),
    ];
    pairs
        .iter()
        .filter(|(st, _)| stat.f_flag & *st != 0)
        .fold(0, |acc, (_, ms)| acc | ms)
}

/// Binds `path` onto itself (with what is mounted beneath it): the kernel refuses to rename or
/// remove a mount point (EBUSY).
fn bind_onto_itself(path: &Path, target: &CString) -> Result<(), SetupError> {
    // SAFETY: mount with valid C strings or nulls.
    let bound = unsafe {
        libc::mount(
            target.as_ptr(),
            target.as_ptr(),
            std::ptr::null(),
            libc::MS_BIND | libc::MS_REC,
            std::ptr::null(),
        )
    };
    if bound != 0 {
        return Err(last_error(&format!("cannot bind {}", path.display())));
    }
    Ok(())
}

// From <linux/mount.h>: the new mount API (Linux 5.2, `mount_setattr` 5.12; Landlock, which the
// sandbox needs anyway, came in 5.13).
const OPEN_TREE_CLONE: libc::c_uint = 1;
const MOVE_MOUNT_F_EMPTY_PATH: libc::c_uint = 4;
const MOUNT_ATTR_RDONLY: u64 = 1;

/// `struct mount_attr`.
#[repr(C)]
struct MountAttr {
    attr_set: u64,
    attr_clr: u64,
    propagation: u64,
    userns_fd: u64,
}

/// Makes every mount read-only but the writable roots, which keep the flags they had (a
/// read-only mount beneath one stays read-only). Landlock's rights cover writing files, not
/// their metadata, so without this `chmod`, `chown` and `touch -d` worked on every file the
/// user owns; on a read-only mount they fail with EROFS. Each writable root is first cloned,
/// with what is mounted beneath it, as a detached tree; then the whole tree from `/` is made
/// read-only in one call; then each clone is moved back onto its root.
pub fn read_only_outside(writable: &[std::path::PathBuf]) -> Result<(), SetupError> {
    if writable.iter().any(|dir| dir == Path::new("/")) {
        return Ok(());
    }
    // A root beneath another comes back with it.
    let outermost: Vec<&std::path::PathBuf> = writable
        .iter()
        .filter(|dir| !writable.iter().any(|o| o != *dir && dir.starts_with(o)))
        .collect();
    let mut clones = Vec::new();
    for dir in outermost {
        let target = c_path(dir)?;
        // SAFETY: open_tree with a valid C string; the descriptor is owned below.
        let fd = unsafe {
            libc::syscall(
                libc::SYS_open_tree,
                libc::AT_FDCWD,
                target.as_ptr(),
                OPEN_TREE_CLONE
                    | libc::O_CLOEXEC as libc::c_uint
                    | libc::AT_RECURSIVE as libc::c_uint,
            )
        };
        // A root that vanished since the spec was built is simply not writable.
        if fd < 0 {
            continue;
        }
        // SAFETY: a descriptor the kernel just returned, owned by nothing else.
        let fd = unsafe { std::os::fd::OwnedFd::from_raw_fd(fd as libc::c_int) };
        clones.push((target, fd));
    }
    let attr = MountAttr {
        attr_set: MOUNT_ATTR_RDONLY,
        attr_clr: 0,
        propagation: 0,
        userns_fd: 0,
    };
    let root = c_path(Path::new("/"))?;
    // SAFETY: mount_setattr reads our attribute struct of the size given.
    let set = unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            libc::AT_FDCWD,
            root.as_ptr(),
            libc::AT_RECURSIVE as libc::c_uint,
            &attr as *const MountAttr,
            std::mem::size_of::<MountAttr>(),
        )
    };
    if set != 0 {
        return Err(last_error("cannot make the file system read-only"));
    }
    let empty = CString::default();
    for (target, fd) in &clones {
        // SAFETY: move_mount with a descriptor we own and valid C strings.
        let moved = unsafe {
            libc::syscall(
                libc::SYS_move_mount,
                fd.as_raw_fd(),
                empty.as_ptr(),
                libc::AT_FDCWD,
                target.as_ptr(),
                MOVE_MOUNT_F_EMPTY_PATH,
            )
        };
        if moved != 0 {
            return Err(last_error(&format!(
                "cannot make {} writable again",
                target.to_string_lossy()
            )));
        }
    }
    Ok(())
}

/// Pins the directories that must stay where they are (outermost first, so each bind lands on
/// top of the one before), binds each protected path read-only onto itself, hides the hidden
/// directories, and then enters the working directory again: the current directory still
/// points into the mount it had before, beneath the new ones, where none of them would apply.
pub fn protect(spec: &Spec) -> Result<(), SetupError> {
    for path in &spec.pinned {
        bind_onto_itself(path, &c_path(path)?)?;
    }
    for path in &spec.read_only {
        let target = c_path(path)?;
        bind_onto_itself(path, &target)?;
        let flags = libc::MS_BIND | libc::MS_REMOUNT | libc::MS_RDONLY | locked_flags(&target);
        // SAFETY: as above.
        let remounted = unsafe {
            libc::mount(
                std::ptr::null(),
                target.as_ptr(),
                std::ptr::null(),
                flags,
                std::ptr::null(),
            )
        };
        if remounted != 0 {
            return Err(last_error(&format!(
                "cannot make {} read-only",
                path.display()
            )));
        }
    }
    let tmpfs = CString::new("tmpfs").unwrap_or_default();
    let options = CString::new("size=4k,mode=0500").unwrap_or_default();
    for path in &spec.hidden {
        let target = c_path(path)?;
        // SAFETY: as above.
        let mounted = unsafe {
            libc::mount(
                tmpfs.as_ptr(),
                target.as_ptr(),
                tmpfs.as_ptr(),
                libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
                options.as_ptr().cast(),
            )
        };
        if mounted != 0 {
            return Err(last_error(&format!("cannot hide {}", path.display())));
        }
    }
    let cwd =
        std::env::current_dir().map_err(io_error("cannot find the working directory again"))?;
    std::env::set_current_dir(&cwd)
        .map_err(io_error(&format!("cannot enter {} again", cwd.display())))
}
