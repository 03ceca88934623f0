//! `glob`: files whose path (relative to the search root) matches a glob pattern, sorted,
//! ignored files left out.

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{Tool, ToolContext, ToolError};
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
        let root = paths::resolve(&ctx.workdir, args.path.as_deref().unwrap_or("."));
        let workdir = ctx.workdir.clone();
        super::blocking(move || {
            if !root.is_dir() {
                return Err(ToolError::new(format!(
                    "{} is not a directory.",
                    paths::display(&workdir, &root)
                )));
            }
            let mut found: Vec<String> = walker(&root)
                .build()
                .filter_map(Result::ok)
                .filter(|e| e.file_type().is_some_and(|t| t.is_file()))
                .filter(|e| {
                    e.path()
                        .strip_prefix(&root)
                        .is_ok_and(|relative| matcher.is_match(relative))
                })
                .map(|e| paths::display(&workdir, e.path()))
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
