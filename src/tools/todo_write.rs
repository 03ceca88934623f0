//! `todo_write`: replaces the session's whole todo list (the plan the user watches).

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{Tool, ToolContext, ToolError};
use crate::planning::{TodoItem, TodoStatus};
use crate::schema::ToolKind;

pub struct TodoWrite;

#[derive(Deserialize)]
struct Args {
    todos: Vec<TodoItem>,
}

#[async_trait]
impl Tool for TodoWrite {
    fn name(&self) -> &'static str {
        "todo_write"
    }

    fn description(&self) -> &'static str {
        "Write the task's todo list: the whole list every time (it replaces the previous one). \
         Use it for work of three or more steps: one item per concrete step, in order. Keep \
         exactly one item `in_progress` while you work on it, and mark it `completed` as soon \
         as it is done, before starting the next. The user sees this list."
    }

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "todos": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "content": {"type": "string", "description": "The step, imperative (\"Add tests for the parser\")."},
                            "status": {"type": "string", "enum": ["pending", "in_progress", "completed"]},
                        },
                        "required": ["content", "status"],
                        "additionalProperties": false,
                    },
                },
            },
            "required": ["todos"],
            "additionalProperties": false,
        })
    }

    fn bounds_own_output(&self) -> bool {
        true
    }

    fn kind(&self) -> ToolKind {
        ToolKind::Planning
    }

    async fn execute(&self, arguments: Value, ctx: &ToolContext) -> Result<String, ToolError> {
        let args: Args = super::parse_args(arguments)?;
        if args.todos.iter().any(|t| t.content.trim().is_empty()) {
            return Err(ToolError::new("every todo needs a non-empty `content`."));
        }
        check_progress(&ctx.todos.snapshot(), &args.todos)?;
        let rendered = render(&args.todos);
        ctx.todos.replace(args.todos);
        Ok(rendered)
    }
}

fn render(todos: &[TodoItem]) -> String {
    if todos.is_empty() {
        return "The todo list is now empty.".into();
    }
    let done = todos
        .iter()
        .filter(|t| t.status == TodoStatus::Completed)
        .count();
    let mut out = format!("Todo list updated ({done}/{} done):\n", todos.len());
    for todo in todos {
        let mark = match todo.status {
            TodoStatus::Pending => "[ ]",
            TodoStatus::InProgress => "[~]",
            TodoStatus::Completed => "[x]",
        };
        out.push_str(&format!("{mark} {}\n", todo.content));
    }
    out.trim_end().to_owned()
}

/// Refuses an update that hides work: several items going from `pending` straight to
/// `completed` in one call means they were never shown as in progress.
fn check_progress(before: &[TodoItem], after: &[TodoItem]) -> Result<(), ToolError> {
    let jumped: Vec<&str> = after
        .iter()
        .filter(|item| item.status == TodoStatus::Completed)
        .filter(|item| {
            before
                .iter()
                .any(|old| old.content == item.content && old.status == TodoStatus::Pending)
        })
        .map(|item| item.content.as_str())
        .collect();
    if jumped.len() < 2 {
        return Ok(());
    }
    Err(ToolError::new(format!(
        "This update marks {} items completed that were still pending ({}). Update the list as \
         you work: set an item in_progress when you start it and completed when it is done, one \
         step at a time, so the user can follow. If these really are done, mark them one call at \
         a time; nothing was changed.",
        jumped.len(),
        jumped
            .iter()
            .map(|j| format!("\"{j}\""))
            .collect::<Vec<_>>()
            .join(", ")
    )))
}
