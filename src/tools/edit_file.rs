//! `edit_file`: replaces an exact string in a file. The string must occur once (or
//! `replace_all` is set); otherwise the error says how many times and on which lines. The
//! result is a unified diff of the change.

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::{Value, json};

use super::read_file::{MAX_READ_BYTES, NotReadable, Prefix, prefix_of};
use super::{EditorFiles, Tool, ToolContext, ToolError, diff, path_locks};
use crate::files::{open, paths};
use crate::schema::ToolKind;

/// Lines listed when `old_string` matches several times.
const MAX_LISTED_MATCHES: usize = 10;

pub struct EditFile;

#[derive(Deserialize)]
struct Args {
    path: String,
    old_string: String,
    new_string: String,
    #[serde(default)]
    replace_all: Option<bool>,
}

#[async_trait]
impl Tool for EditFile {
    fn name(&self) -> &'static str {
        "edit_file"
    }

    fn description(&self) -> &'static str {
        "Replace exact text in an existing file. `old_string` must match the file exactly, \
         including whitespace and indentation (copy it from read_file output without the line \
         numbers), and must occur exactly once: include enough surrounding lines to make it \
         unique, or set `replace_all` to change every occurrence. Returns a unified diff of the \
         change. To create a file, use write_file."
    }

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "File path, relative to the working directory or absolute."},
                "old_string": {"type": "string", "description": "The exact text to replace."},
                "new_string": {"type": "string", "description": "The text to put in its place."},
                "replace_all": {"type": "boolean", "description": "Replace every occurrence (default false)."},
            },
            "required": ["path", "old_string", "new_string"],
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
        // Held until the work is done, even if this call is given up on: two edits of one file
        // must not both read the old text.
        let guard = path_locks::write(&path).await;
        let workdir = ctx.workdir.clone();
        let editor = ctx.editor_files.clone();
        super::blocking(move || {
            let _guard = guard;
            edit(
                &workdir,
                &shown,
                &args,
                editor.as_deref().map(|e| (e, path.as_path())),
            )
        })
        .await?
    }
}

/// `editor`: the editor's file I/O and the file's absolute path, when it offers it.
fn edit(
    workdir: &std::path::Path,
    shown: &str,
    args: &Args,
    editor: Option<(&dyn EditorFiles, &std::path::Path)>,
) -> Result<String, ToolError> {
    if args.old_string.is_empty() {
        return Err(ToolError::new(
            "`old_string` is empty. Give the exact text to replace; to create a file use write_file.",
        ));
    }
    if args.old_string == args.new_string {
        return Err(ToolError::new(
            "`old_string` and `new_string` are the same, so there is nothing to change.",
        ));
    }
    // The file is read and replaced through one handle of its folder, opened as judged.
    let raw = std::path::Path::new(&args.path);
    let (folder, name) = open::open_folder_of(workdir, raw, false)
        .map_err(|e| ToolError::new(not_openable(shown, &e)))?;
    let file = folder.open_read(&name).map_err(NotReadable::Io);
    let on_disk = file.and_then(|file| prefix_of(file, MAX_READ_BYTES));
    // Opened as judged: the editor's buffer (unsaved changes included) is the text edited, and
    // so is a file only the editor holds (never saved), its path judged as the disk's would be.
    let held =
        editor.and_then(|(files, path)| super::editor_files::read_blocking(Some(files), path));
    let on_disk = match (on_disk, held) {
        (Err(NotReadable::Io(e)), Some(text)) if e.kind() == std::io::ErrorKind::NotFound => {
            Ok(Prefix {
                size: text.len() as u64,
                cut: text.len() > MAX_READ_BYTES,
                bytes: text.into_bytes(),
            })
        }
        (Ok(prefix), Some(text)) if !prefix.cut => Ok(Prefix {
            bytes: text.into_bytes(),
            ..prefix
        }),
        (on_disk, _) => on_disk,
    };
    let prefix = on_disk.map_err(|problem| match problem {
        NotReadable::Io(e) if e.kind() == std::io::ErrorKind::NotFound => ToolError::new(format!(
            "{shown} does not exist. Check the path with glob, or create the file with write_file."
        )),
        NotReadable::Io(e) => ToolError::new(format!("cannot read {shown}: {e}")),
        NotReadable::Directory => ToolError::new(format!("{shown} is a directory, not a file.")),
        NotReadable::NotRegular => ToolError::new(format!(
            "{shown} is not a regular file (a device, FIFO or socket); edit_file edits only \
             regular files."
        )),
    })?;
    if prefix.cut {
        return Err(ToolError::new(format!(
            "{shown} is {} bytes; edit_file edits files of up to {} MB.",
            prefix.size,
            MAX_READ_BYTES / (1024 * 1024)
        )));
    }
    let old = String::from_utf8(prefix.bytes).map_err(|_| {
        ToolError::new(format!(
            "{shown} is not UTF-8 text; edit_file only edits text files."
        ))
    })?;
    let starts: Vec<usize> = old
        .match_indices(&args.old_string)
        .map(|(i, _)| i)
        .collect();
    let replace_all = args.replace_all.unwrap_or(false);
    match starts.len() {
        0 => return Err(not_found(shown, &old, &args.old_string)),
        1 => {}
        n if !replace_all => {
            let lines: Vec<String> = starts
                .iter()
                .take(MAX_LISTED_MATCHES)
                .map(|&i| (old[..i].matches('\n').count() + 1).to_string())
                .collect();
            return Err(ToolError::new(format!(
                "`old_string` occurs {n} times in {shown} (at lines {}{}). Include more \
                 surrounding lines so it matches once, or set replace_all to change all {n}.",
                lines.join(", "),
                if n > MAX_LISTED_MATCHES { ", …" } else { "" }
            )));
        }
        _ => {}
    }
    let new = old.replace(&args.old_string, &args.new_string);
    let written = match editor {
        Some((files, path)) => super::editor_files::write_blocking(Some(files), path, &new)
            .map_err(|e| ToolError::new(format!("cannot write {shown}: {e}")))?,
        None => false,
    };
    if !written {
        folder
            .write_atomic(&name, new.as_bytes())
            .map_err(|e| ToolError::new(format!("cannot write {shown}: {e}")))?;
    }
    let count = starts.len();
    Ok(format!(
        "Edited {shown}: {count} replacement{}.\n{}",
        if count == 1 { "" } else { "s" },
        diff::unified(shown, &old, &new)
    ))
}

/// No exact match: say so, and point at a near match that differs only in whitespace.
/// Why the folder of a file to edit could not be opened.
fn not_openable(shown: &str, error: &std::io::Error) -> String {
    if error.kind() == std::io::ErrorKind::NotFound {
        format!(
            "{shown} does not exist. Check the path with glob, or create the file with write_file."
        )
    } else {
        format!("cannot read {shown}: {error}")
    }
}

fn not_found(shown: &str, text: &str, needle: &str) -> ToolError {
    let squash = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    let wanted = squash(needle);
    let first_line = needle
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim();
    let hint = if !first_line.is_empty() && squash(text).contains(&wanted) {
        let line = text
            .lines()
            .position(|l| l.trim() == first_line)
            .map(|i| format!(" near line {}", i + 1))
            .unwrap_or_default();
        format!(
            " A match that differs only in whitespace exists{line}: copy the text exactly from read_file."
        )
    } else {
        " Read the file again and copy the text exactly, including indentation.".to_owned()
    };
    ToolError::new(format!("`old_string` was not found in {shown}.{hint}"))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use serde_json::json;
    use tokio_util::sync::CancellationToken;

    use crate::planning::Mode;
    use crate::schema::ToolCall;
    use crate::tools::{ToolContext, builtin_registry};

    /// Edit tools pointed at a FIFO or a device: refused at once, nothing read or replaced.
    #[tokio::test]
    async fn edit_tools_refuse_fifos_and_devices_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let workdir = dir.path().canonicalize().unwrap();
        let fifo = workdir.join("pipe");
        let c_path = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path; mkfifo only creates a file system node.
        assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0);
        let ctx = ToolContext {
            workdir,
            cancel: CancellationToken::new(),
            mode: Mode::Default,
            todos: Arc::default(),
            read_guard: Default::default(),
            outputs: None,
            editor_files: None,
            editor_terminal: None,
        };
        let registry = builtin_registry();
        for (name, arguments) in [
            (
                "edit_file",
                json!({"path": "pipe", "old_string": "a", "new_string": "b"}),
            ),
            ("write_file", json!({"path": "pipe", "content": "b"})),
            (
                "edit_file",
                json!({"path": "/dev/zero", "old_string": "a", "new_string": "b"}),
            ),
        ] {
            let call = ToolCall {
                id: "c".into(),
                name: name.into(),
                arguments: arguments.to_string(),
            };
            let result = tokio::time::timeout(
                std::time::Duration::from_secs(20),
                registry.execute(&call, &ctx),
            )
            .await
            .expect("the call returns");
            assert!(result.is_error, "{name} {arguments}: {}", result.output);
            assert!(
                result.output.contains("not a regular file"),
                "{name}: {}",
                result.output
            );
        }
        let kind = std::fs::symlink_metadata(&fifo).unwrap().file_type();
        assert!(
            std::os::unix::fs::FileTypeExt::is_fifo(&kind),
            "the FIFO is still there"
        );
    }

    /// Many edits of one file in one turn, run at once as the engine runs a turn's calls: each
    /// edits its own line, and every one of them must be in the file afterwards.
    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn concurrent_edits_of_one_file_all_land() {
        let dir = tempfile::tempdir().unwrap();
        let workdir = dir.path().canonicalize().unwrap();
        let ctx = ToolContext {
            workdir: workdir.clone(),
            cancel: CancellationToken::new(),
            mode: Mode::Default,
            todos: Arc::default(),
            read_guard: Default::default(),
            outputs: None,
            editor_files: None,
            editor_terminal: None,
        };
        let registry = builtin_registry();
        const EDITS: usize = 24;
        for round in 0..5 {
            let original: String = (0..EDITS).map(|i| format!("item <{i}> old\n")).collect();
            std::fs::write(workdir.join("shared.txt"), &original).unwrap();
            let calls: Vec<ToolCall> = (0..EDITS)
                .map(|i| ToolCall {
                    id: format!("e{i}"),
                    name: "edit_file".into(),
                    arguments: json!({
                        "path": "shared.txt",
                        "old_string": format!("<{i}> old"),
                        "new_string": format!("<{i}> new"),
                    })
                    .to_string(),
                })
                .collect();
            let results = futures_util::future::join_all(
                calls.iter().map(|call| registry.execute(call, &ctx)),
            )
            .await;
            for result in &results {
                assert!(!result.is_error, "round {round}: {}", result.output);
            }
            let text = std::fs::read_to_string(workdir.join("shared.txt")).unwrap();
            let expected: String = (0..EDITS).map(|i| format!("item <{i}> new\n")).collect();
            assert_eq!(text, expected, "round {round}: an edit was lost");
        }
    }
}
