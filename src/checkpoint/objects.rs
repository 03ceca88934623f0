//! The kept contents: one file per content, named by its SHA-256, in
//! `$HARNESS9_HOME/checkpoints/`. The same content is kept once, whatever session or prompt
//! keeps it, and a crash never leaves half a file under a hash (written beside, then renamed).

use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use super::{Before, MAX_KEPT, hash_of};

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
        if !path.exists() {
            std::fs::create_dir_all(&self.dir)?;
            let mut partial = tempfile::NamedTempFile::new_in(&self.dir)?;
            std::io::Write::write_all(&mut partial, bytes)?;
            partial.persist(&path).map_err(|e| e.error)?;
        }
        Ok(hash)
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

/// The hash of `path`'s content now; `None` when it does not exist (or is not a file).
pub fn current(path: &Path) -> std::io::Result<Option<String>> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.is_file() => Ok(Some(hash_of(&std::fs::read(path)?))),
        Ok(_) => Ok(None),
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// The permission bits a restored file gets back.
#[cfg(unix)]
pub fn set_mode(path: &Path, mode: u32) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
}

#[cfg(not(unix))]
pub fn set_mode(_path: &Path, _mode: u32) -> std::io::Result<()> {
    Ok(())
}
