//! What the model is shown besides the conversation: the system prompt (rebuilt for every run,
//! never stored) and the estimate of how many tokens a prompt will cost.

use std::path::PathBuf;

use crate::planning::Mode;
use crate::schema::{Message, ToolDefinition};

/// Builds the system prompt for a run.
pub trait PromptBuilder: Send + Sync {
    fn build(&self, mode: Mode) -> String;
}

/// The built-in prompt: who harness9 is, where it works, today's date and the platform.
#[derive(Debug, Clone)]
pub struct BasePrompt {
    pub workdir: PathBuf,
}

impl PromptBuilder for BasePrompt {
    fn build(&self, mode: Mode) -> String {
        base_prompt(&self.workdir, mode)
    }
}

/// The part of every system prompt that does not depend on project files.
pub fn base_prompt(workdir: &std::path::Path, mode: Mode) -> String {
    let mut prompt = format!(
        "You are harness9, a coding agent working in a terminal on the user's repository.\n\
         Working directory: {}\n\
         Platform: {} ({})\n\n\
         Work in small, verifiable steps: read before you edit, prefer `edit_file` for changes to \
         existing files, run the project's tests or build after a change, and say plainly what \
         you changed and what you could not do. Paths are relative to the working directory. \
         When a tool call fails, read the error, fix the call and try again.",
        workdir.display(),
        std::env::consts::OS,
        std::env::consts::ARCH,
    );
    if mode == Mode::Plan {
        prompt.push_str(
            "\n\nYou are in PLAN MODE: change nothing. Explore with read-only tools, then write \
             the plan as a todo list with `todo_write` (one item per concrete step), then stop \
             and present the plan in a few sentences. The user will review it and switch modes \
             to carry it out.",
        );
    }
    prompt
}

/// Roughly four characters per token for English prose and code, plus a few tokens of framing
/// per message; close enough to drive the gauge and the compaction threshold until the
/// provider reports the real count, which always replaces it.
pub fn estimate_tokens(messages: &[Message], tools: &[ToolDefinition]) -> u64 {
    const PER_MESSAGE: u64 = 4;
    let chars: usize = messages
        .iter()
        .map(|m| {
            m.content.len()
                + m.thinking_text().len()
                + m.tool_calls
                    .iter()
                    .map(|c| c.name.len() + c.arguments.len() + 8)
                    .sum::<usize>()
        })
        .sum::<usize>()
        + tools
            .iter()
            .map(|t| t.name.len() + t.description.len() + t.input_schema.to_string().len())
            .sum::<usize>();
    (chars as u64).div_ceil(4) + PER_MESSAGE * messages.len() as u64
}
