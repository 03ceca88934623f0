//! `$HARNESS9_HOME` belongs to its owner alone: the folder is 0700 and what harness9 creates in
//! it 0600 (transcripts, keys' tokens, logs), executables kept aside keep the x bit for the
//! owner only. Found looser at start (an older harness9, a copy, a umask), it is tightened, and
//! the caller says so once: the next start finds nothing to tighten.

use std::fs::{DirBuilder, OpenOptions, Permissions};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// The bits other users have: none may be set in the home.
const OTHERS: u32 = 0o077;

#[derive(Debug, thiserror::Error)]
#[error("cannot make {} private: {source}", path.display())]
pub struct PrivateHomeError {
    pub path: PathBuf,
    #[source]
    pub source: std::io::Error,
}

fn failed(path: &Path) -> impl FnOnce(std::io::Error) -> PrivateHomeError + '_ {
    move |source| PrivateHomeError {
        path: path.to_owned(),
        source,
    }
}

/// Creates `dir` and its missing parents, each 0700.
pub fn create_dir(dir: &Path) -> Result<(), PrivateHomeError> {
    DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(failed(dir))
}

/// Creates `path` empty and 0600 when it is missing. For SQLite's database, whose `-wal` and
/// `-shm` files take the database's mode when SQLite makes them.
pub fn create_file(path: &Path) -> Result<(), PrivateHomeError> {
    OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .open(path)
        .map(drop)
        .map_err(failed(path))
}

/// Creates `home` 0700 when missing; else takes the other users' bits off it, off what lies
/// directly in it and in `logs/`, and, when the home itself was open, off everything beneath
/// it (symbolic links are left alone: their target is not ours to change). Returns the notice
/// to show when the home itself was open: inside a 0700 home a looser file was never exposed
/// (others cannot enter the folder), so tightening it says nothing.
pub fn secure(home: &Path) -> Result<Option<String>, PrivateHomeError> {
    let metadata = match std::fs::symlink_metadata(home) {
        Ok(metadata) => metadata,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            create_dir(home)?;
            return Ok(None);
        }
        Err(e) => return Err(failed(home)(e)),
    };
    // A home that is a link to a folder: its target is what holds the files.
    let metadata = if metadata.file_type().is_symlink() {
        std::fs::metadata(home).map_err(failed(home))?
    } else {
        metadata
    };
    let was_open = metadata.permissions().mode() & OTHERS != 0;
    let mut tightened = 0;
    if tighten(home, metadata.permissions().mode())? {
        tightened += 1;
    }
    let depth = if was_open { usize::MAX } else { 1 };
    tightened += tighten_beneath(home, depth)?;
    if !was_open {
        // Logs are written by a library that makes its files with the process's umask.
        let logs = home.join("logs");
        if logs.is_dir() {
            tightened += tighten_beneath(&logs, 1)?;
        }
    }
    Ok(was_open.then(|| {
        format!(
            "{} was readable by other users: made it private (0700, its files 0600; {tightened} \
             changed)",
            home.display()
        )
    }))
}

/// Takes the other users' bits off `path` (of `mode`); whether it changed anything.
fn tighten(path: &Path, mode: u32) -> Result<bool, PrivateHomeError> {
    if mode & OTHERS == 0 {
        return Ok(false);
    }
    std::fs::set_permissions(path, Permissions::from_mode(mode & 0o7700)).map_err(failed(path))?;
    Ok(true)
}

/// `tighten` on every entry in `dir`, `depth` levels down; how many changed.
fn tighten_beneath(dir: &Path, depth: usize) -> Result<usize, PrivateHomeError> {
    let mut changed = 0;
    for entry in std::fs::read_dir(dir).map_err(failed(dir))? {
        let entry = entry.map_err(failed(dir))?;
        let path = entry.path();
        let metadata = match std::fs::symlink_metadata(&path) {
            Ok(metadata) => metadata,
            // Gone since the listing (a log rotated, a WAL checkpointed): nothing to tighten.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(failed(&path)(e)),
        };
        if metadata.file_type().is_symlink() {
            continue;
        }
        if tighten(&path, metadata.permissions().mode())? {
            changed += 1;
        }
        if metadata.is_dir() && depth > 1 {
            changed += tighten_beneath(&path, depth - 1)?;
        }
    }
    Ok(changed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mode(path: &Path) -> u32 {
        std::fs::metadata(path).unwrap().permissions().mode() & 0o7777
    }

    #[test]
    fn a_missing_home_is_made_0700_and_nothing_is_said() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("a/home");
        assert_eq!(secure(&home).unwrap(), None);
        assert_eq!(mode(&home), 0o700);
    }

    #[test]
    fn an_open_home_is_tightened_deeply_keeping_the_owners_x_bit_and_said_once() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path();
        std::fs::create_dir_all(home.join("checkpoints/objects")).unwrap();
        std::fs::write(home.join("sessions.db"), "").unwrap();
        std::fs::write(home.join("checkpoints/objects/tool"), "").unwrap();
        std::fs::set_permissions(home.join("sessions.db"), Permissions::from_mode(0o644)).unwrap();
        std::fs::set_permissions(
            home.join("checkpoints/objects/tool"),
            Permissions::from_mode(0o755),
        )
        .unwrap();
        std::fs::set_permissions(home, Permissions::from_mode(0o755)).unwrap();

        let notice = secure(home).unwrap();
        assert!(notice.is_some_and(|n| n.contains("readable by other users")));
        assert_eq!(mode(home), 0o700);
        assert_eq!(mode(&home.join("sessions.db")), 0o600);
        assert_eq!(mode(&home.join("checkpoints/objects/tool")), 0o700);
        assert_eq!(mode(&home.join("checkpoints/objects")), 0o700);
        assert_eq!(secure(home).unwrap(), None);
    }

    #[test]
    fn a_new_file_is_0600_whatever_the_umask() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sessions.db");
        create_file(&path).unwrap();
        assert_eq!(mode(&path), 0o600);
    }
}
