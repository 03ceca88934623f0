//! What the model is shown besides the conversation: the system prompt (rebuilt for every run,
//! never stored: base prompt, then `AGENTS.md`, then the skills index), the skills themselves,
//! and how many tokens a prompt costs.

pub mod clipboard;
pub mod front_matter;
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
    /// Notes for the provider's models, when it has any.
    notes: Option<&'static str>,
    /// The long-term memories' digest, taken once when the session began so the prompt stays
    /// byte-identical (and cached) however memories change during it.
    memory: Option<String>,
    /// Sections known only while the session runs (the MCP servers' instructions), asked for
    /// at every build.
    late: Option<LateSection>,
}

/// A section of the prompt its owner gives when asked (`None`: nothing now).
#[derive(Clone)]
pub struct LateSection(pub Arc<dyn Fn() -> Option<String> + Send + Sync>);

impl std::fmt::Debug for LateSection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("LateSection")
    }
}

impl DefaultPromptBuilder {
    pub fn new(workdir: PathBuf, skills: Arc<SkillIndex>) -> Self {
        DefaultPromptBuilder {
            workdir,
            skills,
            date: today(),
            notes: None,
            memory: None,
            late: None,
        }
    }

    /// Adds `section` (asked for at every build) at the end of every prompt.
    pub fn with_late_section(mut self, section: LateSection) -> Self {
        self.late = Some(section);
        self
    }

    /// Adds the notes for `provider`'s models.
    pub fn for_provider(mut self, provider: crate::provider::ProviderKind) -> Self {
        self.notes = provider_notes(provider);
        self
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
        if let Some(notes) = self.notes {
            prompt.push_str("\n\n");
            prompt.push_str(notes);
        }
        if let Some(section) = agents_md_section(&self.workdir) {
            prompt.push_str(&section);
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
        if let Some(section) = self.late.as_ref().and_then(|late| (late.0)()) {
            prompt.push_str(&section);
        }
        prompt
    }
}

/// `<workdir>/AGENTS.md` as a section of the system prompt (read now, cut at
/// `MAX_AGENTS_MD` characters), when there is one.
pub fn agents_md_section(workdir: &std::path::Path) -> Option<String> {
    let agents = std::fs::read_to_string(workdir.join("AGENTS.md")).ok()?;
    let agents = agents.trim();
    if agents.is_empty() {
        return None;
    }
    let cut = agents
        .char_indices()
        .nth(MAX_AGENTS_MD)
        .map_or(agents, |(i, _)| &agents[..i]);
    Some(format!("\n\n# Project instructions (AGENTS.md)\n\n{cut}"))
}

/// Today's date (UTC) as `YYYY-MM-DD`.
pub(crate) fn today() -> String {
    humantime::format_rfc3339_seconds(std::time::SystemTime::now())
        .to_string()
        .chars()
        .take(10)
        .collect()
}

/// The system prompt's parts, in our words (`assets/prompts/`): the base, then the mode's part,
/// then notes for the provider's models.
const BASE_PROMPT: &str = include_str!("../assets/prompts/base.md");
const PLAN_PROMPT: &str = include_str!("../assets/prompts/plan.md");
const AUTO_EDIT_PROMPT: &str = include_str!("../assets/prompts/auto-edit.md");
const YOLO_PROMPT: &str = include_str!("../assets/prompts/yolo.md");
const OPENAI_NOTES: &str = include_str!("../assets/prompts/openai.md");

/// The part of every system prompt that does not depend on project files; `date` as
/// `YYYY-MM-DD`.
pub fn base_prompt(workdir: &std::path::Path, date: &str, mode: Mode) -> String {
    let platform = format!("{} ({})", std::env::consts::OS, std::env::consts::ARCH);
    render_base(workdir, date, &platform, mode)
}

fn render_base(workdir: &std::path::Path, date: &str, platform: &str, mode: Mode) -> String {
    // The working directory goes in last: a path that happens to contain `{date}` stays as it is.
    let mut prompt = BASE_PROMPT
        .trim_end()
        .replace("{date}", date)
        .replace("{platform}", platform)
        .replace("{workdir}", &workdir.display().to_string());
    let part = match mode {
        Mode::Plan => Some(PLAN_PROMPT),
        Mode::AutoEdit => Some(AUTO_EDIT_PROMPT),
        Mode::Yolo => Some(YOLO_PROMPT),
        Mode::Default => None,
    };
    if let Some(part) = part {
        prompt.push_str("\n\n");
        prompt.push_str(part.trim_end());
    }
    prompt
}

/// Notes for the models of `provider`, when there are any.
pub fn provider_notes(provider: crate::provider::ProviderKind) -> Option<&'static str> {
    use crate::provider::ProviderKind;
    match provider {
        ProviderKind::OpenAi | ProviderKind::Responses => Some(OPENAI_NOTES.trim_end()),
        ProviderKind::Anthropic => None,
    }
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
        assert!(!plain.contains("# Project instructions") && !plain.contains("# Skills"));

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

    /// Every change to the system prompt shows up here, in review.
    #[test]
    fn the_system_prompt_per_mode_and_provider() {
        let work = std::path::Path::new("/work/repo");
        for mode in Mode::ALL {
            let prompt = render_base(work, "2026-01-02", "linux (x86_64)", mode);
            insta::assert_snapshot!(format!("system_prompt_{}", mode.as_str()), prompt);
        }
        let notes = provider_notes(crate::provider::ProviderKind::Responses).unwrap();
        insta::assert_snapshot!("system_prompt_openai_notes", notes);
        assert_eq!(
            provider_notes(crate::provider::ProviderKind::Anthropic),
            None
        );
    }

    /// Compact: every sentence has to earn its place (the figures are in PERFORMANCE.md).
    #[test]
    fn the_system_prompt_stays_compact() {
        let work = std::path::Path::new("/work/repo");
        for mode in Mode::ALL {
            let prompt = render_base(work, "2026-01-02", "linux (x86_64)", mode);
            let tokens = tokens::count(&prompt);
            println!("system prompt, {} mode: {tokens} tokens", mode.as_str());
            assert!(tokens < 1_600, "{} mode: {tokens} tokens", mode.as_str());
        }
    }

    #[test]
    fn a_workdir_with_braces_is_kept_as_it_is() {
        let prompt = render_base(
            std::path::Path::new("/w/{date}"),
            "2026-01-02",
            "linux",
            Mode::Default,
        );
        assert!(prompt.contains("Working directory: /w/{date}"), "{prompt}");
    }

    #[test]
    fn a_message_costs_its_text_and_some_framing() {
        let text = "The quick brown fox jumps over the lazy dog.";
        let messages = [Message::user(text)];
        let estimate = estimate_tokens(&messages, &[]);
        assert!((10..=16).contains(&estimate), "{estimate}");
    }
}
