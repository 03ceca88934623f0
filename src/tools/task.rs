//! `task`: hands a self-contained job to a sub-agent with a fresh context and returns its final
//! answer. The tool only checks and passes on the model's arguments; the child run itself is the
//! engine's (`engine::subagent`), behind `SubagentRunner`. The arguments choose an agent and give
//! it a prompt, nothing more: the child's tools, mode, rules and sandbox come from the parent.

use std::sync::Arc;

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{Tool, ToolContext, ToolError};
use crate::schema::TASK_TOOL;
use crate::schema::ToolKind;

/// What the model asked for.
#[derive(Debug, Clone, Deserialize)]
pub struct TaskRequest {
    pub agent: String,
    /// A few words, for the user's view of the task.
    pub description: String,
    pub prompt: String,
    /// Return at once with a task id; the answer comes with a later turn.
    #[serde(default)]
    pub background: bool,
}

/// Runs a sub-agent to its end; `Ok` is its final answer with a line of totals, `Err` a failed
/// or unfinished run.
#[async_trait]
pub trait SubagentRunner: Send + Sync {
    async fn run(&self, request: TaskRequest, ctx: &ToolContext) -> Result<String, ToolError>;
}

pub struct TaskTool {
    runner: Arc<dyn SubagentRunner>,
    agents: Vec<String>,
    description: String,
}

impl TaskTool {
    /// `agents` names the agents the model may choose; `summary` is their (name, description)
    /// list, offered to the model. Both come from the agents' catalogue, which the engine owns.
    pub fn new(runner: Arc<dyn SubagentRunner>, agents: Vec<String>, summary: &str) -> Self {
        let description = format!(
            "Hand a self-contained job to a sub-agent that works in a fresh context and returns \
             only its final answer, keeping your own context small. Use it for searches across \
             the codebase or independent pieces of work; several `task` calls in one response \
             run at the same time. The sub-agent sees only `prompt`: give it everything it needs \
             (what to find or do, where to look, what to report). It works under the same mode \
             and permissions as you and cannot start tasks itself. Agents:\n{}",
            summary
        );
        TaskTool {
            runner,
            agents,
            description,
        }
    }
}

#[async_trait]
impl Tool for TaskTool {
    fn name(&self) -> &str {
        TASK_TOOL
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "agent": {
                    "type": "string",
                    "enum": self.agents,
                    "description": "Which sub-agent runs the job."
                },
                "description": {
                    "type": "string",
                    "description": "A few words saying what the job is, shown to the user."
                },
                "prompt": {
                    "type": "string",
                    "description": "The whole task for the sub-agent, with the context it needs."
                },
                "background": {
                    "type": "boolean",
                    "description": "Return at once with a task id and go on working; the sub-agent's answer comes in a later message naming that id."
                }
            },
            "required": ["agent", "description", "prompt"],
            "additionalProperties": false
        })
    }

    /// The call itself reads nothing: every call its agent makes is checked on its own, under
    /// the parent's mode and rules. So it runs unasked, in plan mode too (where the child is
    /// in plan mode as well).
    fn kind(&self) -> ToolKind {
        ToolKind::ReadOnly
    }

    fn read_paths(&self, _arguments: &Value) -> Vec<String> {
        Vec::new()
    }

    /// A sub-agent runs for many turns: `--tool-timeout` bounds each of its own tool calls,
    /// not the whole run.
    fn has_own_time_limit(&self) -> bool {
        true
    }

    async fn execute(&self, arguments: Value, ctx: &ToolContext) -> Result<String, ToolError> {
        let request: TaskRequest = super::parse_args(arguments)?;
        if request.prompt.trim().is_empty() {
            return Err(ToolError::new(
                "`prompt` is empty: give the sub-agent the whole task it should do",
            ));
        }
        self.runner.run(request, ctx).await
    }
}
