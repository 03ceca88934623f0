//! The kept contents: one file per content, named by its SHA-256, in
//! `$HARNESS9_HOME/checkpoints/`. The same content is kept once, whatever session or prompt
//! keeps it, and a crash never leaves half a file under a hash (written beside, then renamed).
//! An object's modification time is when it was last kept or relied on: the cleanup
//! (`cleanup`) only removes objects no checkpoint refers to that nobody used for a while.

use std::collections::HashSet;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use super::{Before, MAX_KEPT};
use crate::files::hash_of;

#[derive(Debug, Clone)]
pub struct Objects {
    dir: PathBuf,
}

/// Whether `hash` looks like a name this store gives (64 lowercase hex digits): a stored
/// checkpoint's hash becomes a file name, so nothing else is ever joined to the directory.
fn valid(hash: &str) -> bool {
    hash.len() == 64 && hash.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

#[cfg(unix)]
fn mode_of(meta: &std::fs::Metadata) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    meta.permissions().mode() & 0o7777
}

#[cfg(not(unix))]
fn mode_of(_meta: &std::fs::Metadata) -> u32 {
    0o644
}

impl Objects {
    /// The store under `home` (`$HARNESS9_HOME`).
    pub fn new(home: &Path) -> Self {
        Objects {
            dir: home.join("checkpoints"),
        }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Keeps `path` as it is now: its content and permission bits, or that it is absent. A
    /// file that cannot be kept (too large, not a regular file) says why.
    pub fn keep(&self, path: &Path) -> std::io::Result<Before> {
        let meta = match std::fs::symlink_metadata(path) {
            Ok(meta) => meta,
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(Before::Absent),
            Err(e) => return Err(e),
        };
        if !meta.is_file() {
            return Ok(Before::NotKept {
                reason: "it is not a regular file".into(),
            });
        }
        if meta.len() > MAX_KEPT {
            return Ok(Before::NotKept {
                reason: format!("it is larger than {} MB", MAX_KEPT / (1024 * 1024)),
            });
        }
        let bytes = std::fs::read(path)?;
        let hash = self.put(&bytes)?;
        Ok(Before::Kept {
            hash,
            mode: mode_of(&meta),
        })
    }

    /// Stores `bytes` (once) and returns their hash.
    pub fn put(&self, bytes: &[u8]) -> std::io::Result<String> {
        let hash = hash_of(bytes);
        let path = self.dir.join(&hash);
        // An object kept already is marked as in use again, so a cleanup's grace covers it.
        if !touch(&path) {
            std::fs::create_dir_all(&self.dir)?;
            let mut partial = tempfile::NamedTempFile::new_in(&self.dir)?;
            std::io::Write::write_all(&mut partial, bytes)?;
            partial.persist(&path).map_err(|e| e.error)?;
        }
        Ok(hash)
    }

    /// Marks the object `hash` as in use now (so a cleanup leaves it for its grace period);
    /// false when it is not kept (any more).
    pub fn retain(&self, hash: &str) -> bool {
        valid(hash) && touch(&self.dir.join(hash))
    }

    /// Removes every object not in `referenced` that was last used before `unused_since`, and
    /// temporary files a crashed write left that old; anything else in the directory is left
    /// alone. Returns the objects removed and their bytes.
    pub fn sweep(
        &self,
        referenced: &HashSet<String>,
        unused_since: SystemTime,
    ) -> std::io::Result<(usize, u64)> {
        let entries = match std::fs::read_dir(&self.dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok((0, 0)),
            Err(e) => return Err(e),
        };
        let (mut removed, mut bytes) = (0, 0);
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            // `tempfile`'s names start with `.tmp`.
            let ours = (valid(&name) && !referenced.contains(&name)) || name.starts_with(".tmp");
            if !ours {
                continue;
            }
            // Looked at again right before removing: a session that used it since keeps it.
            let Ok(meta) = std::fs::symlink_metadata(entry.path()) else {
                continue;
            };
            let last_used = meta.modified().unwrap_or(SystemTime::UNIX_EPOCH);
            if meta.is_file()
                && last_used < unused_since
                && std::fs::remove_file(entry.path()).is_ok()
            {
                removed += 1;
                bytes += meta.len();
            }
        }
        Ok((removed, bytes))
    }

    /// The content kept as `hash`, checked against it.
    pub fn get(&self, hash: &str) -> std::io::Result<Vec<u8>> {
        if !valid(hash) {
            return Err(std::io::Error::new(
                ErrorKind::InvalidData,
                "not a checkpoint object name",
            ));
        }
        let bytes = std::fs::read(self.dir.join(hash))?;
        if hash_of(&bytes) != hash {
            return Err(std::io::Error::new(
                ErrorKind::InvalidData,
                "the kept copy was changed on disk",
            ));
        }
        Ok(bytes)
    }
}

/// Sets `path`'s modification time to now; false when it does not exist.
fn touch(path: &Path) -> bool {
    std::fs::OpenOptions::new()
        .append(true)
        .open(path)
        .and_then(|file| file.set_modified(SystemTime::now()))
        .is_ok()
}

/// The hash of `path`'s content now; `None` when it does not exist (or is not a file).
pub fn current(path: &Path) -> std::io::Result<Option<String>> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.is_file() => Ok(Some(hash_of(&std::fs::read(path)?))),
        Ok(_) => Ok(None),
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}
