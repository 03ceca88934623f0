//! `glob`: files whose path (relative to the search root) matches a glob pattern, sorted,
//! ignored files left out.

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{Tool, ToolContext, ToolError};
use std::collections::HashSet;
use std::path::Path;

use crate::files::listing;
use crate::files::open::open_folder_read;
use crate::files::paths;
use crate::files::walk::{left_out_note, walker};
use crate::schema::ToolKind;

const MAX_RESULTS: usize = 1000;

pub struct Glob;

#[derive(Deserialize)]
struct Args {
    pattern: String,
    #[serde(default)]
    path: Option<String>,
}

#[async_trait]
impl Tool for Glob {
    fn name(&self) -> &'static str {
        "glob"
    }

    fn description(&self) -> &'static str {
        "Find files by glob pattern, matched against paths relative to `path` (default: the \
         working directory). `*` stays within a directory, `**` crosses directories: \
         `**/*.rs` finds Rust files at any depth, `src/*.ts` only directly in src. Results are \
         sorted, relative to the working directory, and skip .gitignore'd files and .git."
    }

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "pattern": {"type": "string", "description": "Glob pattern, e.g. **/*.rs"},
                "path": {"type": "string", "description": "Directory to search in (default: the working directory)."},
            },
            "required": ["pattern"],
            "additionalProperties": false,
        })
    }

    fn bounds_own_output(&self) -> bool {
        true
    }

    fn kind(&self) -> ToolKind {
        ToolKind::ReadOnly
    }

    fn read_paths(&self, arguments: &Value) -> Vec<String> {
        super::grep::root_path(arguments)
    }

    async fn execute(&self, arguments: Value, ctx: &ToolContext) -> Result<String, ToolError> {
        let args: Args = super::parse_args(arguments)?;
        let matcher = globset::GlobBuilder::new(&args.pattern)
            .literal_separator(true)
            .build()
            .map_err(|e| ToolError::new(format!("`{}` is not a valid glob: {e}", args.pattern)))?
            .compile_matcher();
        let raw = args.path.unwrap_or_else(|| ".".to_owned());
        // Links resolved for the message; the walk opens the name as given, judged again
        // (`open_folder_read`): a folder swapped for a link since cannot lead it outside.
        let root = paths::resolve(&ctx.workdir, &raw);
        let named = paths::fold(&ctx.workdir.join(&raw));
        let workdir = ctx.workdir.clone();
        super::blocking(move || {
            if !root.is_dir() {
                return Err(ToolError::new(format!(
                    "{} is not a directory.",
                    paths::display(&workdir, &root)
                )));
            }
            // Listed through a handle of the root as judged and its subfolders' handles, never
            // by name again (issue 29 point 2); the ignore walker, which reads by name, only
            // says which folders to enter and which files match.
            let handle = open_folder_read(&workdir, &named)
                .map_err(|e| ToolError::new(format!("{}: {e}", paths::display(&workdir, &root))))?;
            let mut folders = HashSet::new();
            let mut matching = HashSet::new();
            for entry in walker(&named).build().filter_map(Result::ok) {
                let Ok(relative) = entry.path().strip_prefix(&named) else {
                    continue;
                };
                let Some(file_type) = entry.file_type() else {
                    continue;
                };
                if file_type.is_dir() {
                    folders.insert(relative.to_owned());
                } else if file_type.is_file() && matcher.is_match(relative) {
                    matching.insert(relative.to_owned());
                }
            }
            let keep = |found: &listing::Found| found.is_file && matching.contains(&found.relative);
            let enter = |relative: &Path| folders.contains(relative);
            let mut found: Vec<String> = listing::walk(handle, usize::MAX, &enter, &keep)
                .map_err(|e| ToolError::new(e.to_string()))?
                .into_iter()
                .map(|found| paths::display(&workdir, &named.join(found.relative)))
                .collect();
            found.sort();
            let total = found.len();
            if total == 0 {
                return Ok(format!("No files match `{}`.", args.pattern));
            }
            found.truncate(MAX_RESULTS);
            Ok(format!(
                "{}{}",
                found.join("\n"),
                left_out_note(found.len(), total, "files")
            ))
        })
        .await?
    }
}
