//! General file helpers every layer may use, importing nothing of ours: paths resolved against
//! the working directory, the one way to walk a tree, the protected-path and secret-file lists
//! that walks, mentions and the permission check honour, atomic writes and content hashes.

use std::io::Write;
use std::path::Path;

pub mod paths;
pub mod protected;
pub mod walk;

/// Writes `bytes` to `path` through a temporary file in the same directory, then renames it into
/// place: a reader sees the old file or the new one, never half of it.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path
        .parent()
        .ok_or_else(|| std::io::Error::other("the path has no parent directory"))?;
    std::fs::create_dir_all(dir)?;
    let permissions = std::fs::metadata(path).ok().map(|m| m.permissions());
    let mut temp = tempfile::NamedTempFile::new_in(dir)?;
    temp.write_all(bytes)?;
    temp.as_file().sync_all()?;
    if let Some(permissions) = permissions {
        temp.as_file().set_permissions(permissions)?;
    }
    temp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// The hex SHA-256 of `bytes`: the name a checkpoint object or a stored image is kept under.
pub fn hash_of(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}
