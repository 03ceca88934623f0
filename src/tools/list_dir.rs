//! `list_dir`: one directory's entries, sorted, directories marked with `/`, ignored files left
//! out.

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{Tool, ToolContext, ToolError};
use std::collections::HashSet;
use std::ffi::OsString;

use crate::files::listing;
use crate::files::open::open_folder_read;
use crate::files::paths;
use crate::files::walk::{left_out_note, walker};
use crate::schema::ToolKind;

const MAX_ENTRIES: usize = 1000;

pub struct ListDir;

#[derive(Deserialize)]
struct Args {
    #[serde(default)]
    path: Option<String>,
}

#[async_trait]
impl Tool for ListDir {
    fn name(&self) -> &'static str {
        "list_dir"
    }

    fn description(&self) -> &'static str {
        "List one directory's entries (not recursive), sorted by name; directories end with `/`. \
         Files ignored by .gitignore and the .git directory are left out. `path` defaults to the \
         working directory. To find files by name across the tree use glob."
    }

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "Directory, relative to the working directory or absolute (default: the working directory)."},
            },
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
        let raw = args.path.unwrap_or_else(|| ".".to_owned());
        // Links resolved for the messages; the listing opens the name as given, judged again
        // (`open_folder_read`): a folder swapped for a link since cannot lead it outside.
        let dir = paths::resolve(&ctx.workdir, &raw);
        let named = paths::fold(&ctx.workdir.join(&raw));
        let shown = paths::display(&ctx.workdir, &dir);
        let workdir = ctx.workdir.clone();
        super::blocking(move || {
            if !dir.is_dir() {
                return Err(ToolError::new(if dir.exists() {
                    format!("{shown} is a file, not a directory. Use read_file to read it.")
                } else {
                    format!("{shown} does not exist.")
                }));
            }
            // Listed through a handle of the folder as judged, never by name again (issue 29
            // point 2); the ignore walker, which reads by name, only says which names to leave
            // out.
            let handle = open_folder_read(&workdir, &named)
                .map_err(|e| ToolError::new(format!("{shown}: {e}")))?;
            let not_ignored: HashSet<OsString> = walker(&named)
                .max_depth(Some(1))
                .build()
                .filter_map(Result::ok)
                .filter(|e| e.depth() == 1)
                .map(|e| e.file_name().to_owned())
                .collect();
            let keep = |found: &listing::Found| {
                found
                    .relative
                    .file_name()
                    .is_some_and(|name| not_ignored.contains(name))
            };
            let mut entries: Vec<String> = listing::walk(handle, 1, &|_| false, &keep)
                .map_err(|e| ToolError::new(format!("{shown}: {e}")))?
                .into_iter()
                .map(|found| {
                    let name = found.relative.to_string_lossy().into_owned();
                    if found.is_dir {
                        format!("{name}/")
                    } else {
                        name
                    }
                })
                .collect();
            entries.sort();
            let total = entries.len();
            if total == 0 {
                return Ok(format!("{shown} is empty (or holds only ignored files)."));
            }
            entries.truncate(MAX_ENTRIES);
            Ok(format!(
                "{}{}",
                entries.join("\n"),
                left_out_note(entries.len(), total, "entries")
            ))
        })
        .await?
    }
}
