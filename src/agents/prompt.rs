//! A sub-agent's system prompt: the common base (who harness9 is, the working directory, the
//! date, the mode's part), then the agent's instructions, the skills its file names (whole), then
//! the project's AGENTS.md. No skills index and no memories: a child does one job and reports.

use std::path::PathBuf;

use crate::context::{PromptBuilder, agents_md_section, base_prompt};
use crate::planning::Mode;

pub struct SubagentPrompt {
    workdir: PathBuf,
    name: String,
    instructions: String,
    /// The skills the agent file names, as (name, instructions).
    skills: Vec<(String, String)>,
    date: String,
}

impl SubagentPrompt {
    pub fn new(
        workdir: PathBuf,
        name: &str,
        instructions: &str,
        skills: Vec<(String, String)>,
    ) -> Self {
        SubagentPrompt {
            workdir,
            name: name.to_owned(),
            instructions: instructions.to_owned(),
            skills,
            date: crate::context::today(),
        }
    }
}

impl PromptBuilder for SubagentPrompt {
    fn build(&self, mode: Mode) -> String {
        let mut prompt = base_prompt(&self.workdir, &self.date, mode);
        prompt.push_str(&format!(
            "\n\n# Your role: the `{}` sub-agent\n\n{}",
            self.name, self.instructions
        ));
        for (name, body) in &self.skills {
            prompt.push_str(&format!("\n\n# Skill `{name}`\n\n{body}"));
        }
        if let Some(section) = agents_md_section(&self.workdir) {
            prompt.push_str(&section);
        }
        prompt
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_prompt_holds_the_workdir_the_role_and_agents_md() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("AGENTS.md"), "Run `make check`.").unwrap();
        let prompt = SubagentPrompt::new(
            dir.path().to_path_buf(),
            "explore",
            "Find things.",
            vec![("release".into(), "Tag, then push.".into())],
        )
        .build(Mode::Plan);
        assert!(prompt.contains(&dir.path().display().to_string()));
        let role = prompt.find("Find things.").unwrap();
        let agents = prompt.find("Run `make check`.").unwrap();
        let skill = prompt.find("# Skill `release`\n\nTag, then push.").unwrap();
        assert!(role < skill && skill < agents);
        assert!(prompt.contains("`explore` sub-agent"));
    }
}
