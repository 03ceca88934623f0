//! General file helpers every layer may use, importing nothing of ours: paths resolved against
//! the working directory, the one way to walk a tree, the protected-path and secret-file lists
//! that walks, mentions and the permission check honour, atomic writes and content hashes.

use std::path::Path;

pub mod listing;
pub mod open;
pub mod paths;
pub mod protected;
pub mod walk;

/// Writes `bytes` to `path` through a temporary file in the same directory, then renames it into
/// place (`renameat` on the folder's handle): a reader sees the old file or the new one, never
/// half of it. For harness9's own files; a path a model or repository names goes through
/// `open::write_atomic_judged`, which follows no link.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let (dir, name) = open::split(path)?;
    std::fs::create_dir_all(dir)?;
    open::Dir::open_trusted(dir)?.write_atomic(name, bytes)
}

/// The hex SHA-256 of `bytes`: the name a checkpoint object or a stored image is kept under.
pub fn hash_of(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}
