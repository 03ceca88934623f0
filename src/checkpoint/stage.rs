//! The checkpoint as a stage of the tool-call chain, the one place every tool call passes: it
//! decides from the tool's kind, never its name. An edit tool's `written_paths` are kept before
//! it runs; a tool that runs commands (`ToolKind::Dangerous`: `bash`, an MCP server's tool) has
//! the working directory walked before and after it. Read-only, planning and network tools
//! change no file of the user's.

use std::path::PathBuf;
use std::sync::Arc;

use async_trait::async_trait;
use serde_json::Value;

use super::Checkpoints;
use crate::hooks::{ChainCall, Step, ToolHook};
use crate::schema::ToolKind;
use crate::schema::ToolResult;

/// What a background command does after `bash` returned is not seen by the walk after it.
pub const BACKGROUND_NOTE: &str = "a background command's changes after it started are not \
     tracked";

pub struct CheckpointStage {
    pub checkpoints: Arc<Checkpoints>,
}

fn written(call: &ChainCall) -> Vec<PathBuf> {
    call.tool
        .written_paths(&call.arguments)
        .iter()
        .map(|raw| crate::files::paths::resolve(&call.workdir, raw))
        .collect()
}

impl CheckpointStage {
    async fn blocking(&self, work: impl FnOnce(&Checkpoints) + Send + 'static) {
        let checkpoints = Arc::clone(&self.checkpoints);
        let _ = tokio::task::spawn_blocking(move || work(&checkpoints)).await;
    }
}

#[async_trait]
impl ToolHook for CheckpointStage {
    fn name(&self) -> &'static str {
        "checkpoint"
    }

    async fn before(&self, call: &mut ChainCall) -> Step {
        match call.tool.kind() {
            ToolKind::Edit => {
                let paths = written(call);
                self.blocking(move |c| c.before_write(&paths)).await;
            }
            ToolKind::Dangerous => {
                if call.arguments.get("background") == Some(&Value::Bool(true)) {
                    self.checkpoints.note(BACKGROUND_NOTE);
                }
                let id = call.id.clone();
                self.blocking(move |c| c.before_command(&id)).await;
            }
            _ => {}
        }
        Step::Continue
    }

    async fn after(&self, call: &mut ChainCall, _result: &mut ToolResult, executed: bool) {
        match call.tool.kind() {
            ToolKind::Edit => {
                let paths = written(call);
                self.blocking(move |c| c.after_write(&paths)).await;
            }
            ToolKind::Dangerous => {
                let id = call.id.clone();
                self.blocking(move |c| c.after_command(&id, executed)).await;
            }
            _ => {}
        }
    }
}
