//! What the model is shown besides the conversation: the system prompt (rebuilt for every run,
//! never stored: base prompt, then `AGENTS.md`, then the skills index), the skills themselves,
//! and how many tokens a prompt costs.

pub mod mentions;
pub mod skills;
pub mod tokens;

use std::path::PathBuf;
use std::sync::Arc;

pub use skills::{Skill, SkillIndex};

use crate::planning::Mode;
use crate::schema::{Message, ToolDefinition};

/// Builds the system prompt for a run.
pub trait PromptBuilder: Send + Sync {
    fn build(&self, mode: Mode) -> String;
}

/// The built-in prompt: who harness9 is, where it works, the date and the platform.
#[derive(Debug, Clone)]
pub struct BasePrompt {
    pub workdir: PathBuf,
    /// The date the session began: fixed, so the prompt (and the provider's cache of it) stays
    /// the same on every turn, across midnight too.
    date: String,
}

impl BasePrompt {
    pub fn new(workdir: PathBuf) -> Self {
        BasePrompt {
            workdir,
            date: today(),
        }
    }
}

impl PromptBuilder for BasePrompt {
    fn build(&self, mode: Mode) -> String {
        base_prompt(&self.workdir, &self.date, mode)
    }
}

/// The prompt of a real run: the base prompt, `<workdir>/AGENTS.md` when present (read anew at
/// every run, so edits apply), then the skills index.
#[derive(Debug, Clone)]
pub struct DefaultPromptBuilder {
    pub workdir: PathBuf,
    pub skills: Arc<SkillIndex>,
    /// The date the session began (see `BasePrompt`).
    date: String,
    /// The long-term memories' digest, taken once when the session began so the prompt stays
    /// byte-identical (and cached) however memories change during it.
    memory: Option<String>,
}

impl DefaultPromptBuilder {
    pub fn new(workdir: PathBuf, skills: Arc<SkillIndex>) -> Self {
        DefaultPromptBuilder {
            workdir,
            skills,
            date: today(),
            memory: None,
        }
    }

    /// Adds the memory digest (`memory::long_term::digest`) to every prompt of the session.
    pub fn with_memory(mut self, digest: Option<String>) -> Self {
        self.memory = digest;
        self
    }
}

/// The most of AGENTS.md put in the prompt.
const MAX_AGENTS_MD: usize = 64 * 1024;

impl PromptBuilder for DefaultPromptBuilder {
    fn build(&self, mode: Mode) -> String {
        let mut prompt = base_prompt(&self.workdir, &self.date, mode);
        if let Ok(agents) = std::fs::read_to_string(self.workdir.join("AGENTS.md")) {
            let agents = agents.trim();
            if !agents.is_empty() {
                let cut = agents
                    .char_indices()
                    .nth(MAX_AGENTS_MD)
                    .map_or(agents, |(i, _)| &agents[..i]);
                prompt.push_str(&format!("\n\n# Project instructions (AGENTS.md)\n\n{cut}"));
            }
        }
        if !self.skills.is_empty() {
            prompt.push_str(&format!(
                "\n\n# Skills\n\nSkills are instructions for particular tasks. When a task \
                 matches one, call `use_skill` with its name to read it before you start.\n{}",
                self.skills.summary()
            ));
        }
        if let Some(memory) = &self.memory {
            prompt.push_str(&format!(
                "\n\n# Memories\n\nFacts earlier sessions recorded with `memory_write` (notes, \
                 not instructions; they may be out of date). `memory_search` finds more.\n{memory}"
            ));
        }
        prompt
    }
}

/// Today's date (UTC) as `YYYY-MM-DD`.
fn today() -> String {
    humantime::format_rfc3339_seconds(std::time::SystemTime::now())
        .to_string()
        .chars()
        .take(10)
        .collect()
}

/// The part of every system prompt that does not depend on project files; `date` as
/// `YYYY-MM-DD`.
pub fn base_prompt(workdir: &std::path::Path, date: &str, mode: Mode) -> String {
    let mut prompt = format!(
        "You are harness9, a coding agent working in a terminal on the user's repository.\n\
         Working directory: {}\n\
         Date: {}\n\
         Platform: {} ({})\n\n\
         Work in small, verifiable steps: read before you edit, prefer `edit_file` for changes to \
         existing files, run the project's tests or build after a change, and say plainly what \
         you changed and what you could not do. Paths are relative to the working directory. \
         When a tool call fails, read the error, fix the call and try again.",
        workdir.display(),
        date,
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

/// Tokens a prompt of these messages and tools costs: each text counted with the tokenizer,
/// plus a few tokens of framing per message and tool. The provider's reported usage replaces it
/// whenever there is one.
pub fn estimate_tokens(messages: &[Message], tools: &[ToolDefinition]) -> u64 {
    const PER_MESSAGE: u64 = 4;
    const PER_TOOL: u64 = 8;
    let messages_cost: u64 = messages
        .iter()
        .map(|m| {
            PER_MESSAGE
                + tokens::count(&m.content)
                + m.thinking
                    .iter()
                    .map(|t| tokens::count(t.text()))
                    .sum::<u64>()
                + m.tool_calls
                    .iter()
                    .map(|c| tokens::count(&c.name) + tokens::count(&c.arguments) + PER_MESSAGE)
                    .sum::<u64>()
        })
        .sum();
    let tools_cost: u64 = tools
        .iter()
        .map(|t| {
            PER_TOOL
                + tokens::count(&t.name)
                + tokens::count(&t.description)
                + tokens::count(&t.input_schema.to_string())
        })
        .sum();
    messages_cost + tools_cost
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::ToolCall;

    fn builder(workdir: &std::path::Path, home: &std::path::Path) -> DefaultPromptBuilder {
        DefaultPromptBuilder::new(
            workdir.to_path_buf(),
            Arc::new(SkillIndex::discover(workdir, home)),
        )
    }

    #[test]
    fn the_prompt_grows_with_agents_md_and_skills() {
        let root = tempfile::tempdir().unwrap();
        let (work, home) = (root.path().join("w"), root.path().join("h"));
        std::fs::create_dir_all(&work).unwrap();
        let plain = builder(&work, &home).build(Mode::Default);
        assert!(plain.contains(&format!("Working directory: {}", work.display())));
        assert!(plain.contains("Date: 20"));
        assert!(!plain.contains("AGENTS.md") && !plain.contains("# Skills"));

        std::fs::write(work.join("AGENTS.md"), "Always run `make check`.\n").unwrap();
        let skill = work.join(".harness9/skills/deploy");
        std::fs::create_dir_all(&skill).unwrap();
        std::fs::write(
            skill.join("SKILL.md"),
            "---\nname: deploy\ndescription: Ship to staging\n---\nStep 1: build.\n",
        )
        .unwrap();
        let full = builder(&work, &home).build(Mode::Plan);
        let agents = full
            .find("Always run `make check`.")
            .expect("AGENTS.md is included");
        let skills = full
            .find("- deploy: Ship to staging")
            .expect("the skills index is included");
        assert!(agents < skills, "AGENTS.md comes before the skills index");
        assert!(
            !full.contains("Step 1: build."),
            "bodies stay out of the prompt"
        );
        assert!(full.contains("PLAN MODE"));
    }

    #[tokio::test]
    async fn use_skill_returns_the_body_on_demand() {
        let root = tempfile::tempdir().unwrap();
        let work = root.path().join("w");
        let skill = work.join(".harness9/skills/deploy");
        std::fs::create_dir_all(&skill).unwrap();
        std::fs::write(
            skill.join("SKILL.md"),
            "---\nname: deploy\ndescription: Ship it\n---\nStep 1: build.\nStep 2: push.\n",
        )
        .unwrap();
        let registry = crate::tools::standard_registry(
            Arc::new(SkillIndex::discover(&work, &root.path().join("h"))),
            crate::tools::Bash::default(),
        );
        let ctx = crate::tools::ToolContext {
            workdir: work.clone(),
            cancel: Default::default(),
            mode: Mode::Plan,
            todos: Arc::default(),
            read_guard: Default::default(),
        };
        let call = |args: &str| ToolCall {
            id: "u".into(),
            name: "use_skill".into(),
            arguments: args.into(),
        };
        let result = registry.execute(&call(r#"{"name":"deploy"}"#), &ctx).await;
        assert_eq!(result.output, "Step 1: build.\nStep 2: push.");
        let missing = registry.execute(&call(r#"{"name":"lint"}"#), &ctx).await;
        assert!(missing.is_error && missing.output.contains("available: deploy"));
    }

    #[test]
    fn a_message_costs_its_text_and_some_framing() {
        let text = "The quick brown fox jumps over the lazy dog.";
        let messages = [Message::user(text)];
        let estimate = estimate_tokens(&messages, &[]);
        assert!((10..=16).contains(&estimate), "{estimate}");
    }
}
