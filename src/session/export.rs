//! `/export` carried out for a front end: the transcript's Markdown it made is written to a
//! file in the working directory, off the async threads (issue 29 point 14). The name comes
//! from the user, but the working directory may be a hostile repository: the file must lie
//! inside it as named, never be a protected path (`files::protected`), never be reached through
//! a link, and never replace an existing file unless the front end asked the user and says so
//! (`overwrite`). The front end only asks (`Request::Export`) and shows the answer
//! (`Update::Exported`).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::hub::Hub;
use super::protocol::Update;
use crate::files::{open, paths, protected};

/// Why an export wrote nothing.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExportError {
    /// A file of that name is there already: it is left as it is.
    #[error("the file exists")]
    Exists,
    /// The name leads out of the working directory (`..`, an absolute path elsewhere).
    #[error("an export is written inside the working directory only")]
    Outside,
    /// The name is a protected path (`.git/`, `.harness9/`, `.env*`, `.mcp.json`).
    #[error("an export never writes a protected path (.git, .harness9, .env*, .mcp.json)")]
    Protected,
    /// A folder on the way is a link (or was swapped for one).
    #[error("an export is never written through a link")]
    Link,
    /// The file could not be made or written.
    #[error("{0}")]
    Write(String),
}

/// Writes `markdown` to `file` in `workdir` (the current directory when `workdir` is not one
/// here, as an attached server's may not be) off the async threads, and publishes what came
/// of it. `overwrite`: the user was asked and agreed to replace an existing file.
pub(super) fn start(
    hub: Arc<Hub>,
    workdir: PathBuf,
    file: String,
    markdown: String,
    overwrite: bool,
) {
    tokio::spawn(async move {
        let target = file.clone();
        let written =
            tokio::task::spawn_blocking(move || write(&workdir, &target, &markdown, overwrite))
                .await
                .unwrap_or_else(|e| Err(ExportError::Write(e.to_string())));
        hub.publish(Update::Exported {
            file,
            result: written,
        });
    });
}

/// Writes the file as the module says; the path it was written to.
fn write(
    workdir: &Path,
    file: &str,
    markdown: &str,
    overwrite: bool,
) -> Result<PathBuf, ExportError> {
    let dir = if workdir.is_dir() {
        workdir.to_path_buf()
    } else {
        std::env::current_dir().unwrap_or_default()
    };
    let dir = dir
        .canonicalize()
        .map_err(|e| ExportError::Write(e.to_string()))?;
    let named = paths::fold(&dir.join(file));
    if !named.starts_with(&dir) || named == dir {
        return Err(ExportError::Outside);
    }
    if protected::is_protected_write(&named) {
        return Err(ExportError::Protected);
    }
    let failed = |error: std::io::Error| {
        if open::is_swapped(&error) {
            ExportError::Link
        } else if error.kind() == std::io::ErrorKind::AlreadyExists {
            ExportError::Exists
        } else {
            ExportError::Write(error.to_string())
        }
    };
    let (folder, name) = open::open_folder_of(&dir, &named, false).map_err(failed)?;
    // Links that stay inside are what `open_folder_of` lets through; an export takes none.
    if Some(folder.path()) != named.parent() {
        return Err(ExportError::Link);
    }
    let path = folder.path().join(&name);
    if overwrite {
        folder
            .write_atomic(&name, markdown.as_bytes())
            .map_err(failed)?;
    } else {
        let mut out = folder.create_new(&name).map_err(failed)?;
        out.write_all(markdown.as_bytes()).map_err(failed)?;
    }
    Ok(path)
}
