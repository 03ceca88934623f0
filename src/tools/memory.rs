//! `memory_write` and `memory_search`: the model's side of the long-term memory store
//! (`memory::long_term`). A write rewrites `$HARNESS9_HOME/memory/MEMORY.md`; a `user` write is
//! asked first by the permission decision (it reaches every future session).

use std::path::PathBuf;

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{Tool, ToolContext, ToolError, parse_args};
use crate::memory::SessionStore;
use crate::memory::long_term::{
    DEFAULT_IMPORTANCE, MAX_CONTENT, MemoryScope, NewMemory, Written, line_of,
};
use crate::schema::ToolKind;

/// Results `memory_search` returns.
const SEARCH_RESULTS: usize = 10;

/// Where the tools store: the database, this project, and the home MEMORY.md is under.
#[derive(Clone)]
pub struct MemoryPlace {
    pub store: SessionStore,
    pub workdir: String,
    pub home: PathBuf,
}

/// Adds `memory_write` and `memory_search` over `place` to `registry`.
pub fn register(registry: &mut super::Registry, place: &MemoryPlace) {
    // Distinct names, registered once: a clash is a programming error the tests catch.
    let _ = registry.register(std::sync::Arc::new(MemoryWrite(place.clone())));
    let _ = registry.register(std::sync::Arc::new(MemorySearch(place.clone())));
}

pub struct MemoryWrite(pub MemoryPlace);
pub struct MemorySearch(pub MemoryPlace);

#[derive(Deserialize)]
struct WriteArgs {
    content: String,
    title: Option<String>,
    scope: Option<String>,
}

#[derive(Deserialize)]
struct SearchArgs {
    query: String,
}

/// Whether a `memory_write` call writes a `user` memory (the permission decision asks).
pub fn writes_user_memory(tool: &dyn Tool, arguments: &Value) -> bool {
    tool.name() == "memory_write" && arguments.get("scope").and_then(Value::as_str) == Some("user")
}

#[async_trait]
impl Tool for MemoryWrite {
    fn name(&self) -> &'static str {
        "memory_write"
    }

    fn description(&self) -> &'static str {
        "Remember a durable fact for future sessions: a user preference, a project convention, \
         a decision and why, a command that works. One fact per call, short and self-contained; \
         never secrets. `scope` is `project` (this working directory, the default) or `user` \
         (every future session; the user is asked first). The same fact again only counts up."
    }

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "content": {"type": "string", "description": "the fact, one or two sentences"},
                "title": {"type": "string", "description": "a few words naming it"},
                "scope": {"type": "string", "enum": ["project", "user"]}
            },
            "required": ["content"],
            "additionalProperties": false
        })
    }

    fn kind(&self) -> ToolKind {
        ToolKind::Planning
    }

    fn bounds_own_output(&self) -> bool {
        true
    }

    async fn execute(&self, arguments: Value, _ctx: &ToolContext) -> Result<String, ToolError> {
        let args: WriteArgs = parse_args(arguments)?;
        let content = args.content.trim();
        if content.is_empty() {
            return Err(ToolError::new(
                "`content` is empty: write the fact to remember",
            ));
        }
        if content.chars().count() > MAX_CONTENT {
            return Err(ToolError::new(format!(
                "`content` is longer than {MAX_CONTENT} characters: remember one short fact"
            )));
        }
        let scope = match args.scope.as_deref() {
            None => MemoryScope::Project,
            Some(raw) => MemoryScope::parse(raw)
                .ok_or_else(|| ToolError::new("`scope` is `project` or `user`"))?,
        };
        let place = &self.0;
        let written = place
            .store
            .memory_write(NewMemory {
                title: args
                    .title
                    .unwrap_or_default()
                    .trim()
                    .chars()
                    .take(120)
                    .collect(),
                content: content.to_owned(),
                category: String::new(),
                scope,
                workdir: place.workdir.clone(),
                importance: DEFAULT_IMPORTANCE,
            })
            .await
            .map_err(|e| ToolError::new(format!("the memory could not be stored: {e}")))?;
        if let Err(error) = place.store.memory_export(&place.home).await {
            tracing::warn!("[memory] MEMORY.md not rewritten | error={error}");
        }
        Ok(match written {
            Written::New(id) => format!("Remembered as #{id} ({} scope).", scope.as_str()),
            Written::Duplicate(id) => {
                format!("Already remembered as #{id}; counted it as used again.")
            }
        })
    }
}

#[async_trait]
impl Tool for MemorySearch {
    fn name(&self) -> &'static str {
        "memory_search"
    }

    fn description(&self) -> &'static str {
        "Search the long-term memories of this project and user (facts earlier sessions \
         recorded) by words; the best matches first."
    }

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {"query": {"type": "string"}},
            "required": ["query"],
            "additionalProperties": false
        })
    }

    fn kind(&self) -> ToolKind {
        ToolKind::ReadOnly
    }

    fn bounds_own_output(&self) -> bool {
        true
    }

    async fn execute(&self, arguments: Value, _ctx: &ToolContext) -> Result<String, ToolError> {
        let args: SearchArgs = parse_args(arguments)?;
        let place = &self.0;
        let hits = place
            .store
            .memory_search(&args.query, &place.workdir, SEARCH_RESULTS)
            .await
            .map_err(|e| ToolError::new(format!("the memories could not be searched: {e}")))?;
        if hits.is_empty() {
            return Ok(format!("No memory matches `{}`.", args.query));
        }
        let lines: Vec<String> = hits
            .iter()
            .map(|m| format!("{} (#{})", line_of(m), m.id))
            .collect();
        Ok(lines.join("\n"))
    }
}
