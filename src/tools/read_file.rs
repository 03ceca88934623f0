//! `read_file`: a text file as numbered lines, a page at a time. Long lines are cut, binary files
//! and directories are refused with a pointer to the right tool.

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{Tool, ToolContext, ToolError, ToolKind, paths};

/// Lines shown when the model gives no limit.
const DEFAULT_LIMIT: usize = 2000;
/// Characters of one line shown before it is cut.
const MAX_LINE_CHARS: usize = 2000;
/// Bytes inspected for a NUL to call a file binary.
const BINARY_SNIFF: usize = 8192;

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

    fn kind(&self) -> ToolKind {
        ToolKind::ReadOnly
    }

    async fn execute(&self, arguments: Value, ctx: &ToolContext) -> Result<String, ToolError> {
        let args: Args = super::parse_args(arguments)?;
        let path = paths::resolve(&ctx.workdir, &args.path);
        let shown = paths::display(&ctx.workdir, &path);
        let (shown, bytes) = super::blocking(move || read_bytes(&path, &shown)).await??;
        render(
            &shown,
            &bytes,
            args.offset.unwrap_or(1).max(1),
            args.limit.unwrap_or(DEFAULT_LIMIT).max(1),
        )
    }
}

fn read_bytes(path: &std::path::Path, shown: &str) -> Result<(String, Vec<u8>), ToolError> {
    let metadata = std::fs::metadata(path).map_err(|e| missing(shown, &e))?;
    if metadata.is_dir() {
        return Err(ToolError::new(format!(
            "{shown} is a directory, not a file. Use list_dir to see what it contains."
        )));
    }
    let bytes = std::fs::read(path).map_err(|e| missing(shown, &e))?;
    Ok((shown.to_owned(), bytes))
}

fn missing(shown: &str, error: &std::io::Error) -> ToolError {
    match error.kind() {
        std::io::ErrorKind::NotFound => ToolError::new(format!(
            "{shown} does not exist. Check the path with glob or list_dir."
        )),
        _ => ToolError::new(format!("cannot read {shown}: {error}")),
    }
}

fn render(shown: &str, bytes: &[u8], offset: usize, limit: usize) -> Result<String, ToolError> {
    if bytes[..bytes.len().min(BINARY_SNIFF)].contains(&0) {
        return Err(ToolError::new(format!(
            "{shown} is a binary file ({} bytes); read_file shows text only.",
            bytes.len()
        )));
    }
    if bytes.is_empty() {
        return Ok(format!("{shown} is empty."));
    }
    let text = String::from_utf8_lossy(bytes);
    let total = text.lines().count();
    if offset > total {
        return Err(ToolError::new(format!(
            "{shown} has {total} lines; offset {offset} is past the end."
        )));
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
    if last < total {
        out.push_str(&format!(
            "[{shown} has {total} lines; shown {offset}-{last}. Read on with offset={}.]",
            last + 1
        ));
    }
    Ok(out.trim_end_matches('\n').to_owned())
}
