//! `memory_write` and `memory_search`: the model's side of the long-term memory store
//! (`memory::long_term`). `memory_write` adds a memory, or updates or removes one by id (the
//! design's add/update/remove), of this project or the user's, never another project's. A
//! write rewrites `$HARNESS9_HOME/memory/MEMORY.md`. Whatever touches a `user` memory must say
//! `scope: "user"`, which the permission decision asks about (it reaches every future session):
//! the tool refuses a call whose memory's scope is not the one it says.

use std::path::PathBuf;

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{Tool, ToolContext, ToolError, parse_args};
use crate::memory::SessionStore;
use crate::memory::long_term::{
    DEFAULT_IMPORTANCE, MAX_CONTENT, MemoryChange, MemoryRecord, MemoryScope, NewMemory, Written,
    line_of,
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
    #[serde(default)]
    action: Action,
    id: Option<i64>,
    content: Option<String>,
    title: Option<String>,
    scope: Option<String>,
    importance: Option<i64>,
}

#[derive(Deserialize, Default, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
enum Action {
    #[default]
    Add,
    Update,
    Remove,
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
         (every future session; the user is asked first). The same fact again only counts up. \
         `action: update` with an `id` (from memory_search) corrects a memory that went stale, \
         `action: remove` retires one; for a `user` memory say `scope: user`. `importance` is \
         1 (kept out of the prompt) to 5, default 3."
    }

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "action": {"type": "string", "enum": ["add", "update", "remove"],
                           "description": "add (the default), or update/remove the memory `id`"},
                "id": {"type": "integer", "description": "the memory to update or remove"},
                "content": {"type": "string", "description": "the fact, one or two sentences"},
                "title": {"type": "string", "description": "a few words naming it"},
                "scope": {"type": "string", "enum": ["project", "user"]},
                "importance": {"type": "integer", "minimum": 1, "maximum": 5}
            },
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
        let scope = match args.scope.as_deref() {
            None => MemoryScope::Project,
            Some(raw) => MemoryScope::parse(raw)
                .ok_or_else(|| ToolError::new("`scope` is `project` or `user`"))?,
        };
        if let Some(importance) = args.importance
            && !(1..=5).contains(&importance)
        {
            return Err(ToolError::new("`importance` is a whole number from 1 to 5"));
        }
        let content = args.content.as_deref().map(checked_content).transpose()?;
        let place = &self.0;
        let said = match args.action {
            Action::Add => {
                let content = content.ok_or_else(|| {
                    ToolError::new("`content` is missing: write the fact to remember")
                })?;
                self.add(args.title, content, scope, args.importance)
                    .await?
            }
            Action::Update | Action::Remove => {
                let id = args.id.ok_or_else(|| {
                    ToolError::new("`id` is missing: name the memory (memory_search shows ids)")
                })?;
                let memory = self.visible(id, scope).await?;
                if args.action == Action::Remove {
                    place.store.memory_remove(memory.id).await.map_err(stored)?;
                    format!("Removed memory #{id}.")
                } else {
                    let change = MemoryChange {
                        content: content.map(str::to_owned),
                        title: args.title.map(|t| short_title(&t)),
                        importance: args.importance,
                    };
                    if change.content.is_none()
                        && change.title.is_none()
                        && change.importance.is_none()
                    {
                        return Err(ToolError::new(
                            "nothing to update: give `content`, `title` or `importance`",
                        ));
                    }
                    place
                        .store
                        .memory_update(memory.id, change)
                        .await
                        .map_err(stored)?;
                    format!("Updated memory #{id}.")
                }
            }
        };
        if let Err(error) = place.store.memory_export(&place.home).await {
            tracing::warn!("[memory] MEMORY.md not rewritten | error={error}");
        }
        Ok(said)
    }
}

impl MemoryWrite {
    async fn add(
        &self,
        title: Option<String>,
        content: &str,
        scope: MemoryScope,
        importance: Option<i64>,
    ) -> Result<String, ToolError> {
        let place = &self.0;
        let written = place
            .store
            .memory_write(NewMemory {
                title: short_title(&title.unwrap_or_default()),
                content: content.to_owned(),
                category: String::new(),
                scope,
                workdir: place.workdir.clone(),
                importance: importance.unwrap_or(DEFAULT_IMPORTANCE),
            })
            .await
            .map_err(stored)?;
        Ok(match written {
            Written::New(id) => format!("Remembered as #{id} ({} scope).", scope.as_str()),
            Written::Duplicate(id) => {
                format!("Already remembered as #{id}; counted it as used again.")
            }
        })
    }

    /// Memory `id` when this session may change it: this project's, or the user's when the
    /// call said `scope: user` (so the user was asked); another project's is not found.
    async fn visible(&self, id: i64, said: MemoryScope) -> Result<MemoryRecord, ToolError> {
        let place = &self.0;
        let memory = place
            .store
            .memory_get(id)
            .await
            .map_err(stored)?
            .filter(|m| m.scope == MemoryScope::User || m.workdir == place.workdir)
            .ok_or_else(|| ToolError::new(format!("there is no memory #{id} in this project")))?;
        if memory.scope != said {
            return Err(ToolError::new(format!(
                "memory #{id} is a `{}` memory: say `scope: {}` to change it",
                memory.scope.as_str(),
                memory.scope.as_str()
            )));
        }
        Ok(memory)
    }
}

fn checked_content(content: &str) -> Result<&str, ToolError> {
    let content = content.trim();
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
    Ok(content)
}

fn short_title(title: &str) -> String {
    title.trim().chars().take(120).collect()
}

fn stored(error: crate::memory::MemoryError) -> ToolError {
    ToolError::new(format!("the memory store failed: {error}"))
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

#[cfg(test)]
mod tests;
