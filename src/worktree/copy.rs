//! The untracked files the user lists in `worktree.copy` (`.env`, a local config) copied from
//! the repository into a new worktree. Every folder on the way is opened without following a
//! link, on both sides, so an entry can neither read from nor write to outside the two trees; a
//! file that exists in the worktree already is kept, never overwritten.

use std::ffi::OsStr;
use std::fs::File;
use std::os::fd::OwnedFd;
use std::path::{Component, Path};

use rustix::fs::{Mode, OFlags};
use rustix::io::Errno;

/// Copies each entry of `list` (relative paths) from `from` to `to`; returns one line for each
/// entry that was not copied, saying why.
pub fn copy_listed(from: &Path, to: &Path, list: &[String]) -> Vec<String> {
    let mut skipped = Vec::new();
    for entry in list {
        if let Err(reason) = copy_one(from, to, entry) {
            skipped.push(format!("worktree.copy: {entry} was not copied: {reason}"));
        }
    }
    skipped
}

fn copy_one(from: &Path, to: &Path, entry: &str) -> Result<(), String> {
    let mut names = Vec::new();
    for component in Path::new(entry).components() {
        match component {
            Component::Normal(name) => names.push(name),
            Component::CurDir => {}
            _ => return Err("only a path relative to the repository, without '..'".into()),
        }
    }
    let Some((file, folders)) = names.split_last() else {
        return Err("it names no file".into());
    };
    let io = |e: Errno| match e {
        Errno::NOENT => "it does not exist".to_owned(),
        Errno::LOOP | Errno::NOTDIR | Errno::MLINK => {
            "a link or not a folder on the way".to_owned()
        }
        other => std::io::Error::from(other).to_string(),
    };
    let source_dir = open_folders(from, folders, false).map_err(io)?;
    let source = rustix::fs::openat(
        &source_dir,
        *file,
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(io)?;
    let stat = rustix::fs::fstat(&source).map_err(io)?;
    if !rustix::fs::FileType::from_raw_mode(stat.st_mode).is_file() {
        return Err("not a regular file".into());
    }
    let target_dir = open_folders(to, folders, true).map_err(io)?;
    let target = match rustix::fs::openat(
        &target_dir,
        *file,
        OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::from_raw_mode(stat.st_mode & 0o777),
    ) {
        Ok(fd) => fd,
        // The worktree has its own already (reused, or tracked there): kept as it is.
        Err(Errno::EXIST) => return Ok(()),
        Err(e) => return Err(io(e)),
    };
    std::io::copy(&mut File::from(source), &mut File::from(target))
        .map(|_| ())
        .map_err(|e| e.to_string())
}

/// `root/folders...` opened one name at a time, never through a link; made when `create`.
fn open_folders(root: &Path, folders: &[&OsStr], create: bool) -> Result<OwnedFd, Errno> {
    let flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC;
    let mut dir = rustix::fs::open(root, flags, Mode::empty())?;
    for name in folders {
        if create {
            match rustix::fs::mkdirat(&dir, *name, Mode::from_raw_mode(0o755)) {
                Ok(()) | Err(Errno::EXIST) => {}
                Err(e) => return Err(e),
            }
        }
        dir = rustix::fs::openat(&dir, *name, flags | OFlags::NOFOLLOW, Mode::empty())?;
    }
    Ok(dir)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    #[test]
    fn listed_files_are_copied_and_links_are_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let (from, to, outside) = (
            dir.path().join("from"),
            dir.path().join("to"),
            dir.path().join("outside"),
        );
        for folder in [&from, &to, &outside] {
            std::fs::create_dir_all(folder).unwrap();
        }
        std::fs::write(from.join(".env"), "KEY=1\n").unwrap();
        std::fs::create_dir(from.join("conf")).unwrap();
        std::fs::write(from.join("conf/local.toml"), "a = 1\n").unwrap();
        std::fs::write(outside.join("secret"), "no\n").unwrap();
        symlink(outside.join("secret"), from.join("linked")).unwrap();
        symlink(&outside, from.join("through")).unwrap();
        // The worktree has a link where a listed folder would go: never written through.
        symlink(&outside, to.join("conf2")).unwrap();
        std::fs::create_dir(from.join("conf2")).unwrap();
        std::fs::write(from.join("conf2/x"), "x\n").unwrap();
        // Kept: the worktree's own.
        std::fs::write(to.join("kept"), "mine\n").unwrap();
        std::fs::write(from.join("kept"), "theirs\n").unwrap();

        let list: Vec<String> = [
            ".env",
            "conf/local.toml",
            "linked",
            "through/secret",
            "conf2/x",
            "kept",
            "../outside/secret",
            "/etc/passwd",
            "missing",
        ]
        .map(String::from)
        .into();
        let skipped = copy_listed(&from, &to, &list);
        assert_eq!(std::fs::read_to_string(to.join(".env")).unwrap(), "KEY=1\n");
        assert_eq!(
            std::fs::read_to_string(to.join("conf/local.toml")).unwrap(),
            "a = 1\n"
        );
        assert_eq!(std::fs::read_to_string(to.join("kept")).unwrap(), "mine\n");
        assert!(!to.join("linked").exists() && !to.join("through").exists());
        assert!(!outside.join("x").exists(), "written through a link");
        let joined = skipped.join("\n");
        for entry in [
            "linked",
            "through/secret",
            "conf2/x",
            "../outside",
            "/etc/passwd",
            "missing",
        ] {
            assert!(joined.contains(entry), "{entry} not reported: {joined}");
        }
        assert_eq!(skipped.len(), 6, "{joined}");
    }
}
