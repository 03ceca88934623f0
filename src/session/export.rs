//! `/export` carried out for a front end: the transcript's Markdown it made is written to a new
//! file beside the session's files, off the async threads, and never over an existing file.
//! The front end only asks (`Request::Export`) and shows the answer (`Update::Exported`).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::hub::Hub;
use super::protocol::Update;

/// Why an export wrote nothing.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExportError {
    /// A file of that name is there already: it is left as it is.
    #[error("the file exists")]
    Exists,
    /// The file could not be made or written.
    #[error("{0}")]
    Write(String),
}

/// Writes `markdown` to `file` in `workdir` (the current directory when `workdir` is not one
/// here, as an attached server's may not be) off the async threads, and publishes what came
/// of it.
pub(super) fn start(hub: Arc<Hub>, workdir: PathBuf, file: String, markdown: String) {
    tokio::spawn(async move {
        let target = file.clone();
        let written = tokio::task::spawn_blocking(move || write(&workdir, &target, &markdown))
            .await
            .unwrap_or_else(|e| Err(ExportError::Write(e.to_string())));
        hub.publish(Update::Exported {
            file,
            result: written,
        });
    });
}

/// Writes a new file only (an existing one is never overwritten); the path it was written to.
fn write(workdir: &Path, file: &str, markdown: &str) -> Result<PathBuf, ExportError> {
    use std::io::Write;
    let dir = if workdir.is_dir() {
        workdir.to_path_buf()
    } else {
        std::env::current_dir().unwrap_or_default()
    };
    let path = dir.join(file);
    let failed = |error: std::io::Error| match error.kind() {
        std::io::ErrorKind::AlreadyExists => ExportError::Exists,
        _ => ExportError::Write(error.to_string()),
    };
    let mut out = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&path)
        .map_err(failed)?;
    out.write_all(markdown.as_bytes()).map_err(failed)?;
    Ok(path)
}
