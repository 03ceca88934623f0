//! `read_file`: a text file as numbered lines, a page at a time. Only regular files are read
//! (decided on the opened file, so a device or FIFO can neither flood memory nor hang the call),
//! and only their first `MAX_READ_BYTES`; long lines are cut, binary files and directories are
//! refused with a pointer to the right tool.

use std::io::Read;

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{Tool, ToolContext, ToolError, path_locks};
use crate::files::{open, paths};
use crate::schema::ToolKind;

/// Lines shown when the model gives no limit.
const DEFAULT_LIMIT: usize = 2000;
/// Characters of one line shown before it is cut.
const MAX_LINE_CHARS: usize = 2000;
/// Bytes inspected for a NUL to call a file binary.
const BINARY_SNIFF: usize = 8192;
/// The most of a file read: lines are paged within this window. Also the largest file the
/// edit tools change.
pub(super) const MAX_READ_BYTES: usize = 16 * 1024 * 1024;

pub struct ReadFile;

#[derive(Deserialize)]
struct Args {
    path: String,
    #[serde(default)]
    offset: Option<usize>,
    #[serde(default)]
    limit: Option<usize>,
}

#[async_trait]
impl Tool for ReadFile {
    fn name(&self) -> &'static str {
        "read_file"
    }

    fn description(&self) -> &'static str {
        "Read a text file. Returns numbered lines (`number<TAB>text`), up to 2000 lines from \
         `offset` (1-based; default 1); `limit` sets how many. Lines longer than 2000 characters \
         are cut. When the file is longer than what is shown, the end says how to read on. Read \
         a file before editing it. Binary files are refused; for a directory use list_dir."
    }

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "File path, relative to the working directory or absolute."},
                "offset": {"type": "integer", "minimum": 1, "description": "First line to show (1-based)."},
                "limit": {"type": "integer", "minimum": 1, "description": "How many lines to show."},
            },
            "required": ["path"],
            "additionalProperties": false,
        })
    }

    fn bounds_own_output(&self) -> bool {
        true
    }

    fn kind(&self) -> ToolKind {
        ToolKind::ReadOnly
    }

    async fn execute(&self, arguments: Value, ctx: &ToolContext) -> Result<String, ToolError> {
        let args: Args = super::parse_args(arguments)?;
        let path = paths::resolve(&ctx.workdir, &args.path);
        let shown = paths::display(&ctx.workdir, &path);
        // A write of this path in progress finishes first: a read never sees half an edit.
        let guard = path_locks::read(&path).await;
        let workdir = ctx.workdir.clone();
        let read_guard = ctx.read_guard.clone();
        let editor = ctx.editor_files.clone();
        let read = super::blocking(move || {
            let _guard = guard;
            let sensitive = |path: &std::path::Path| read_guard.withholds(path);
            // What the editor holds of the file (an unsaved buffer), within the same bound.
            let held = || {
                super::editor_files::read_blocking(editor.as_deref(), &path)
                    .filter(|text| text.len() <= MAX_READ_BYTES)
                    .map(|text| Window {
                        bytes: text.into_bytes(),
                        cut_from: None,
                    })
            };
            let window = match read_window(&workdir, &args.path, &sensitive, &shown) {
                // Opened as judged: the editor's buffer is what the model sees.
                Ok(window) => held().unwrap_or(window),
                // Not on disk but open in the editor (unsaved, never saved): judged by its name
                // as the disk's file would be, then read through the editor.
                Err(Missing::NotFound(error)) if !sensitive(&path) => held().ok_or(error)?,
                Err(Missing::NotFound(error) | Missing::Other(error)) => return Err(error),
            };
            Ok::<_, ToolError>((shown, window))
        })
        .await?;
        let (shown, window) = read?;
        render(
            &shown,
            &window,
            args.offset.unwrap_or(1).max(1),
            args.limit.unwrap_or(DEFAULT_LIMIT).max(1),
        )
    }
}

/// The part of a file `read_file` looks at.
struct Window {
    bytes: Vec<u8>,
    /// The file's size as its metadata gives it, when the file is longer than the window (then
    /// `bytes` ends at a line's end).
    cut_from: Option<u64>,
}

/// The first bytes of a regular file.
pub(super) struct Prefix {
    pub bytes: Vec<u8>,
    /// The file holds more than `bytes`.
    pub cut: bool,
    /// The file's size as its metadata gave it.
    pub size: u64,
}

/// Why a path could not be read as a regular file.
pub(super) enum NotReadable {
    Io(std::io::Error),
    Directory,
    /// A device, FIFO or socket: reading it could block or never end.
    NotRegular,
}

/// At most `limit` bytes of the regular file the model named `raw`, opened as it was judged
/// (`files::open`: beneath the working directory's handle when named inside it, what was opened
/// refused when `sensitive` and the name was not). The preview reads through here too, so no
/// file tool reads a device or waits on a FIFO.
pub(super) fn read_prefix(
    workdir: &std::path::Path,
    raw: &str,
    sensitive: &dyn Fn(&std::path::Path) -> bool,
    limit: usize,
) -> Result<Prefix, NotReadable> {
    // Non-blocking, so opening a FIFO returns at once instead of waiting for a writer; the kind
    // of file is then decided on the opened file itself, not on a path that may change.
    let file =
        open::open_read(workdir, std::path::Path::new(raw), sensitive).map_err(NotReadable::Io)?;
    prefix_of(file, limit)
}

/// At most `limit` bytes of `file`, refused unless it is a regular file.
pub(super) fn prefix_of(file: std::fs::File, limit: usize) -> Result<Prefix, NotReadable> {
    let metadata = file.metadata().map_err(NotReadable::Io)?;
    if metadata.is_dir() {
        return Err(NotReadable::Directory);
    }
    if !metadata.is_file() {
        return Err(NotReadable::NotRegular);
    }
    let mut bytes = Vec::with_capacity((metadata.len() as usize).min(limit + 1));
    file.take(limit as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(NotReadable::Io)?;
    let cut = bytes.len() > limit;
    bytes.truncate(limit);
    Ok(Prefix {
        bytes,
        cut,
        size: metadata.len(),
    })
}

/// Why `read_window` read nothing: the file is not there, or it cannot be read.
enum Missing {
    NotFound(ToolError),
    Other(ToolError),
}

fn read_window(
    workdir: &std::path::Path,
    raw: &str,
    sensitive: &dyn Fn(&std::path::Path) -> bool,
    shown: &str,
) -> Result<Window, Missing> {
    let prefix =
        read_prefix(workdir, raw, sensitive, MAX_READ_BYTES).map_err(|problem| match problem {
            NotReadable::Io(e) if e.kind() == std::io::ErrorKind::NotFound => {
                Missing::NotFound(missing(shown, &e))
            }
            NotReadable::Io(e) => Missing::Other(missing(shown, &e)),
            NotReadable::Directory => Missing::Other(ToolError::new(format!(
                "{shown} is a directory, not a file. Use list_dir to see what it contains."
            ))),
            NotReadable::NotRegular => Missing::Other(ToolError::new(format!(
                "{shown} is not a regular file (a device, FIFO or socket); read_file reads only \
             regular files."
            ))),
        })?;
    let mut bytes = prefix.bytes;
    if !prefix.cut {
        return Ok(Window {
            bytes,
            cut_from: None,
        });
    }
    // Keep whole lines only: the last, cut line is not shown as if it were complete.
    let end = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    bytes.truncate(end);
    Ok(Window {
        bytes,
        cut_from: Some(prefix.size),
    })
}

fn missing(shown: &str, error: &std::io::Error) -> ToolError {
    match error.kind() {
        std::io::ErrorKind::NotFound => ToolError::new(format!(
            "{shown} does not exist. Check the path with glob or list_dir."
        )),
        _ => ToolError::new(format!("cannot read {shown}: {error}")),
    }
}

fn render(shown: &str, window: &Window, offset: usize, limit: usize) -> Result<String, ToolError> {
    let bytes = &window.bytes;
    if bytes[..bytes.len().min(BINARY_SNIFF)].contains(&0) {
        let size = window.cut_from.unwrap_or(0).max(bytes.len() as u64);
        return Err(ToolError::new(format!(
            "{shown} is a binary file ({size} bytes); read_file shows text only."
        )));
    }
    let cut_note = window.cut_from.map(|size| {
        let mb = MAX_READ_BYTES / (1024 * 1024);
        // Files of /proc report a size of 0 however much they hold.
        if size > MAX_READ_BYTES as u64 {
            format!("{shown} is {size} bytes; read_file reads only its first {mb} MB")
        } else {
            format!("{shown} is larger than {mb} MB; read_file reads only its first {mb} MB")
        }
    });
    if bytes.is_empty() {
        return Ok(match cut_note {
            Some(note) => format!("{note}, and that part holds no complete line. Use grep."),
            None => format!("{shown} is empty."),
        });
    }
    let text = String::from_utf8_lossy(bytes);
    let total = text.lines().count();
    if offset > total {
        return Err(ToolError::new(match cut_note {
            Some(note) => format!(
                "{note} ({total} lines); offset {offset} is past them. Use grep to find text \
                 further on."
            ),
            None => format!("{shown} has {total} lines; offset {offset} is past the end."),
        }));
    }
    let mut out = String::with_capacity(bytes.len().min(limit * 100));
    let mut last = offset - 1;
    for (index, line) in text.lines().enumerate().skip(offset - 1).take(limit) {
        let number = index + 1;
        last = number;
        out.push_str(&format!("{number:>6}\t"));
        match line.char_indices().nth(MAX_LINE_CHARS) {
            Some((cut, _)) => {
                out.push_str(&line[..cut]);
                out.push_str(" … [line cut]");
            }
            None => out.push_str(line),
        }
        out.push('\n');
    }
    match (&cut_note, last < total) {
        (None, true) => out.push_str(&format!(
            "[{shown} has {total} lines; shown {offset}-{last}. Read on with offset={}.]",
            last + 1
        )),
        (Some(note), true) => out.push_str(&format!(
            "[{note} ({total} lines); shown {offset}-{last}. Read on with offset={}; for text \
             past line {total}, use grep.]",
            last + 1
        )),
        (Some(note), false) => out.push_str(&format!(
            "[{note} ({total} lines), all shown; for text past line {total}, use grep.]"
        )),
        (None, false) => {}
    }
    Ok(out.trim_end_matches('\n').to_owned())
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::Duration;

    use serde_json::json;
    use tokio_util::sync::CancellationToken;

    use super::*;
    use crate::planning::Mode;

    fn ctx(workdir: &std::path::Path) -> ToolContext {
        ToolContext {
            workdir: workdir.to_owned(),
            cancel: CancellationToken::new(),
            mode: Mode::Default,
            todos: Arc::default(),
            read_guard: Default::default(),
            outputs: None,
            editor_files: None,
            editor_terminal: None,
        }
    }

    async fn read(workdir: &std::path::Path, arguments: Value) -> Result<String, ToolError> {
        // Bounded so that a read that hangs fails the test instead of stalling it.
        tokio::time::timeout(
            Duration::from_secs(20),
            ReadFile.execute(arguments, &ctx(workdir)),
        )
        .await
        .expect("read_file returns")
    }

    #[tokio::test]
    async fn devices_are_refused_without_reading_them() {
        let dir = tempfile::tempdir().unwrap();
        for device in ["/dev/zero", "/dev/urandom"] {
            let error = read(dir.path(), json!({"path": device})).await.unwrap_err();
            assert!(error.0.contains("not a regular file"), "{error}");
        }
    }

    #[tokio::test]
    async fn a_fifo_is_refused_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("pipe");
        let c_path = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path; mkfifo only creates a file system node.
        assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0);
        let error = read(dir.path(), json!({"path": "pipe"})).await.unwrap_err();
        assert!(error.0.contains("not a regular file"), "{error}");
    }

    #[tokio::test]
    async fn a_50_mb_file_is_read_only_in_its_first_window() {
        let dir = tempfile::tempdir().unwrap();
        let line = format!("{}\n", "x".repeat(99));
        let block = line.repeat(10_000);
        let mut file = std::fs::File::create(dir.path().join("big.log")).unwrap();
        for _ in 0..50 {
            std::io::Write::write_all(&mut file, block.as_bytes()).unwrap();
        }
        drop(file);
        let lines_in_window = MAX_READ_BYTES / 100;

        let first = read(dir.path(), json!({"path": "big.log", "limit": 3}))
            .await
            .unwrap();
        assert!(first.starts_with("     1\txxx"), "{first}");
        assert!(
            first.contains("big.log is 50000000 bytes; read_file reads only its first 16 MB")
                && first.contains(&format!("({lines_in_window} lines); shown 1-3")),
            "{first}"
        );

        let tail = read(
            dir.path(),
            json!({"path": "big.log", "offset": lines_in_window}),
        )
        .await
        .unwrap();
        assert!(
            tail.contains(&format!("{lines_in_window}\txxx")) && tail.contains("all shown"),
            "{tail}"
        );

        let past = read(
            dir.path(),
            json!({"path": "big.log", "offset": lines_in_window + 1}),
        )
        .await
        .unwrap_err();
        assert!(past.0.contains("Use grep"), "{past}");
    }
}
