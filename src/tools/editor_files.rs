//! The editor's side of file I/O: a front end whose editor holds the files (ACP's
//! `fs/read_text_file` and `fs/write_text_file`) hands the file tools an `EditorFiles`, and they
//! read and write through it, so unsaved buffers are what the model sees and the editor shows the
//! change. The path is judged exactly as for the tools' own I/O first (permission rules,
//! protected paths and the checkpoint before the call; the opening beneath the working directory
//! in the tool): only the bytes go through the editor.

use std::path::Path;

use async_trait::async_trait;

/// Why the editor did not read or write a file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EditorFileError {
    /// The editor does not offer this (it declared only reading, or only writing): the tool
    /// does its own I/O.
    #[error("the editor does not offer this")]
    NotOffered,
    /// The editor answered with an error.
    #[error("the editor could not do it: {0}")]
    Failed(String),
}

/// File I/O through the editor, by absolute path.
#[async_trait]
pub trait EditorFiles: Send + Sync {
    /// The file's text as the editor has it (an unsaved buffer included).
    async fn read_text(&self, path: &Path) -> Result<String, EditorFileError>;
    /// Replaces the file's text in the editor (which shows, and saves, the change).
    async fn write_text(&self, path: &Path, content: &str) -> Result<(), EditorFileError>;
}

/// The file's text through `editor`, from a blocking task (the tools' file work runs in one);
/// `None` when the editor does not offer reading or failed to read (the tool keeps what it read
/// itself).
pub(super) fn read_blocking(editor: Option<&dyn EditorFiles>, path: &Path) -> Option<String> {
    let editor = editor?;
    let handle = tokio::runtime::Handle::try_current().ok()?;
    match handle.block_on(editor.read_text(path)) {
        Ok(text) => Some(text),
        Err(EditorFileError::NotOffered) => None,
        Err(error) => {
            tracing::warn!(path = %path.display(), "{error}; the file on disk is used");
            None
        }
    }
}

/// Writes through `editor` from a blocking task; `Ok(false)` when the editor does not offer
/// writing (the tool writes itself).
pub(super) fn write_blocking(
    editor: Option<&dyn EditorFiles>,
    path: &Path,
    content: &str,
) -> Result<bool, EditorFileError> {
    let Some(editor) = editor else {
        return Ok(false);
    };
    let Ok(handle) = tokio::runtime::Handle::try_current() else {
        return Ok(false);
    };
    match handle.block_on(editor.write_text(path, content)) {
        Ok(()) => Ok(true),
        Err(EditorFileError::NotOffered) => Ok(false),
        Err(error) => Err(error),
    }
}
