//! `write_file`: creates or replaces a whole file, atomically (a temporary file renamed over the
//! target), creating parent directories and keeping an existing file's permissions.

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::{Value, json};

use super::read_file::{MAX_READ_BYTES, NotReadable, prefix_of};
use super::{Tool, ToolContext, ToolError, diff, path_locks};
use crate::files::{open, paths};
use crate::schema::ToolKind;

pub struct WriteFile;

#[derive(Deserialize)]
struct Args {
    path: String,
    content: String,
}

#[async_trait]
impl Tool for WriteFile {
    fn name(&self) -> &'static str {
        "write_file"
    }

    fn description(&self) -> &'static str {
        "Create a file, or replace a file's whole content. Parent directories are created. For \
         a change to part of an existing file use edit_file instead: it is safer and shows the \
         change. Returns what changed (a diff when an existing file is replaced)."
    }

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "File path, relative to the working directory or absolute."},
                "content": {"type": "string", "description": "The file's complete new content."},
            },
            "required": ["path", "content"],
            "additionalProperties": false,
        })
    }

    fn bounds_own_output(&self) -> bool {
        true
    }

    fn kind(&self) -> ToolKind {
        ToolKind::Edit
    }

    async fn execute(&self, arguments: Value, ctx: &ToolContext) -> Result<String, ToolError> {
        let args: Args = super::parse_args(arguments)?;
        let path = paths::resolve(&ctx.workdir, &args.path);
        let shown = paths::display(&ctx.workdir, &path);
        let guard = path_locks::write(&path).await;
        let workdir = ctx.workdir.clone();
        let editor = ctx.editor_files.clone();
        super::blocking(move || {
            let _guard = guard;
            // The file is read and replaced through one handle of its folder, opened (and
            // made) as it was judged: no link out of the working directory on the way.
            let raw = std::path::Path::new(&args.path);
            let (folder, name) = open::open_folder_of(&workdir, raw, true)
                .map_err(|e| ToolError::new(format!("cannot write {shown}: {e}")))?;
            // What is there decides: nothing (create), a regular file (replace, with a diff
            // when it is small enough to read), anything else is refused.
            let opened = folder.open_read(&name).map_err(NotReadable::Io);
            let before = match opened.and_then(|file| prefix_of(file, MAX_READ_BYTES)) {
                Ok(prefix) if prefix.cut => Some(None),
                Ok(prefix) => Some(Some(prefix.bytes)),
                Err(NotReadable::Io(e)) if e.kind() == std::io::ErrorKind::NotFound => None,
                Err(NotReadable::Io(e)) => {
                    return Err(ToolError::new(format!("cannot read {shown}: {e}")));
                }
                Err(NotReadable::Directory) => {
                    return Err(ToolError::new(format!(
                        "{shown} is a directory; give a file path."
                    )));
                }
                Err(NotReadable::NotRegular) => {
                    return Err(ToolError::new(format!(
                        "{shown} is not a regular file (a device, FIFO or socket); write_file \
                         writes only regular files."
                    )));
                }
            };
            // Opened as judged; the editor's buffer is the old text when it holds the file,
            // and the editor writes when it offers to (it shows the change).
            let editor = editor.as_deref();
            let before = match (before, super::editor_files::read_blocking(editor, &path)) {
                (Some(_), Some(text)) => Some(Some(text.into_bytes())),
                (before, _) => before,
            };
            let written = super::editor_files::write_blocking(editor, &path, &args.content)
                .map_err(|e| ToolError::new(format!("cannot write {shown}: {e}")))?;
            if !written {
                folder
                    .write_atomic(&name, args.content.as_bytes())
                    .map_err(|e| ToolError::new(format!("cannot write {shown}: {e}")))?;
            }
            let lines = args.content.lines().count();
            Ok(match before {
                None => format!(
                    "Created {shown} ({lines} lines, {} bytes).",
                    args.content.len()
                ),
                Some(None) => format!(
                    "Replaced {shown} ({lines} lines, {} bytes); the old file was too large to \
                     show a diff.",
                    args.content.len()
                ),
                Some(Some(old)) => {
                    let old = String::from_utf8_lossy(&old);
                    if old == args.content {
                        format!("{shown} already had this content; nothing changed.")
                    } else {
                        format!(
                            "Replaced {shown} ({lines} lines, {} bytes).\n{}",
                            args.content.len(),
                            diff::unified(&shown, &old, &args.content)
                        )
                    }
                }
            })
        })
        .await?
    }
}
