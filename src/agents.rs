//! Sub-agent definitions: the built-in `general` and `explore`, and agents defined in files
//! (`<workdir>/.harness9/agents/NAME.md`, `$HARNESS9_HOME/agents/NAME.md`) in Claude Code's shape,
//! so users can reuse theirs: YAML front matter with `name`, `description`, optional `tools`
//! (a comma list or a YAML list; Claude Code's tool names are understood), optional
//! `disallowedTools`, `model`, `maxTurns` and `skills` (skills whose instructions the agent starts
//! with); the body is the agent's system prompt. A key harness9 does not use is named in a notice
//! rather than dropped silently.
//!
//! A definition only ever narrows: the tools it names are looked up among the parent's (less
//! `task`), and the child runs under the parent's mode, rules, sandbox and hooks. A project's
//! agents are the repository's content, so they are read only in a trusted folder.

pub mod prompt;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::context::front_matter::FrontMatterError;

/// Which of the parent's tools an agent gets (never `task`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AgentTools {
    /// All of them.
    All,
    /// Those that only look (`ToolKind::ReadOnly`).
    ReadOnly,
    /// These, by name (those the parent does not have are ignored).
    Named(Vec<String>),
}

/// Which model an agent runs on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AgentModel {
    /// The parent's model.
    Inherit,
    /// The smaller model when one is configured (`HARNESS9_SMALL_MODEL`), else the parent's.
    Small,
    /// This model, on the parent's provider.
    Named(String),
}

/// Where a definition came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AgentSource {
    BuiltIn,
    User(PathBuf),
    Project(PathBuf),
}

/// One agent the `task` tool can start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentDefinition {
    pub name: String,
    pub description: String,
    pub tools: AgentTools,
    /// Tools taken away from whatever `tools` gives.
    pub disallowed: Vec<String>,
    pub model: AgentModel,
    /// The most turns one run of the agent may take (never more than the parent's limit).
    pub max_turns: Option<u32>,
    /// Skills whose instructions are in the agent's system prompt from its start.
    pub skills: Vec<String>,
    /// The agent's instructions (its system prompt, after the common part).
    pub instructions: String,
    pub source: AgentSource,
    /// Front-matter keys harness9 does not use, sorted (named in a notice).
    pub ignored_keys: Vec<String>,
}

impl AgentDefinition {
    /// Whether the agent gets the tool named `name`, of `kind`, from its parent.
    pub fn allows(&self, name: &str, kind: crate::schema::ToolKind) -> bool {
        if name == crate::schema::TASK_TOOL || self.disallowed.iter().any(|d| d == name) {
            return false;
        }
        match &self.tools {
            AgentTools::All => true,
            AgentTools::ReadOnly => kind == crate::schema::ToolKind::ReadOnly,
            AgentTools::Named(names) => names.iter().any(|n| n == name),
        }
    }
}

const GENERAL_INSTRUCTIONS: &str = "You are a sub-agent: the main agent handed you one \
self-contained task. Do it with the tools you have, then end with an answer that gives the main \
agent what it needs: the result, the files and lines that matter, and anything you could not do. \
Your last message is all the main agent sees of your work.";

const EXPLORE_INSTRUCTIONS: &str = "You are an explorer sub-agent: the main agent asked you to \
find something out. Search and read; change nothing. End with concise findings: the answer \
first, then the evidence as `path:line` references, in a few short paragraphs or a list. Your \
last message is all the main agent sees of your work.";

/// The built-in agents.
pub fn builtins() -> Vec<AgentDefinition> {
    vec![
        AgentDefinition {
            name: "general".into(),
            description: "a general-purpose agent with the main agent's tools (less `task`), \
                          for a self-contained multi-step job"
                .into(),
            tools: AgentTools::All,
            disallowed: Vec::new(),
            model: AgentModel::Inherit,
            max_turns: None,
            skills: Vec::new(),
            instructions: GENERAL_INSTRUCTIONS.into(),
            source: AgentSource::BuiltIn,
            ignored_keys: Vec::new(),
        },
        AgentDefinition {
            name: "explore".into(),
            description: "a fast read-only explorer: searches and reads the code and reports \
                          concise findings with file:line references"
                .into(),
            tools: AgentTools::ReadOnly,
            disallowed: Vec::new(),
            model: AgentModel::Small,
            max_turns: None,
            skills: Vec::new(),
            instructions: EXPLORE_INSTRUCTIONS.into(),
            source: AgentSource::BuiltIn,
            ignored_keys: Vec::new(),
        },
    ]
}

/// The agents of a run, by name, and what was wrong with the files that were skipped.
#[derive(Debug, Clone, Default)]
pub struct AgentCatalog {
    agents: BTreeMap<String, AgentDefinition>,
    /// One line per skipped file or directory, for a notice.
    pub notices: Vec<String>,
}

impl AgentCatalog {
    /// The built-in agents only.
    pub fn builtin() -> Self {
        let mut catalog = AgentCatalog::default();
        for agent in builtins() {
            catalog.agents.insert(agent.name.clone(), agent);
        }
        catalog
    }

    /// The built-ins, then the user's agents, then the project's (a later one replaces an
    /// earlier one of the same name). An untrusted folder's agents are not read.
    pub fn discover(workdir: &Path, home: &Path, trusted: bool) -> Self {
        let mut catalog = AgentCatalog::builtin();
        catalog.scan(&home.join("agents"), AgentSource::User);
        let project = workdir.join(".harness9").join("agents");
        if trusted {
            catalog.scan(&project, AgentSource::Project);
        } else if !agent_files(&project).is_empty() {
            catalog.notices.push(format!(
                "this folder is not trusted: the agents in {} are ignored (--trust, or trusting \
                 it in the TUI, lifts this)",
                project.display()
            ));
        }
        catalog
    }

    fn scan(&mut self, dir: &Path, source: fn(PathBuf) -> AgentSource) {
        for path in agent_files(dir) {
            match read_agent(&path, source(path.clone())) {
                Ok(agent) => {
                    if !agent.ignored_keys.is_empty() {
                        self.notices.push(format!(
                            "the agent file {} has keys harness9 does not use, ignored: {}",
                            path.display(),
                            agent
                                .ignored_keys
                                .iter()
                                .map(|k| format!("`{k}`"))
                                .collect::<Vec<_>>()
                                .join(", ")
                        ));
                    }
                    self.agents.insert(agent.name.clone(), agent);
                }
                Err(problem) => self.notices.push(format!(
                    "the agent file {} was skipped: {problem}",
                    path.display()
                )),
            }
        }
    }

    /// Adds (or replaces) an agent.
    pub fn insert(&mut self, agent: AgentDefinition) {
        self.agents.insert(agent.name.clone(), agent);
    }

    pub fn get(&self, name: &str) -> Option<&AgentDefinition> {
        self.agents.get(name)
    }

    pub fn iter(&self) -> impl Iterator<Item = &AgentDefinition> {
        self.agents.values()
    }

    pub fn names(&self) -> Vec<&str> {
        self.agents.keys().map(String::as_str).collect()
    }

    /// One line per agent, for the `task` tool's description.
    pub fn summary(&self) -> String {
        self.agents
            .values()
            .map(|a| format!("- {}: {}", a.name, a.description))
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// The `*.md` files of `dir`, sorted (none when it does not exist).
fn agent_files(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut paths: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "md") && p.is_file())
        .collect();
    paths.sort();
    paths
}

/// The most of an agent file that is read.
const MAX_AGENT_FILE: u64 = 256 * 1024;

/// Why an agent file was skipped (the notice names the file).
#[derive(Debug, thiserror::Error)]
pub enum AgentFileError {
    #[error(transparent)]
    Io(#[from] std::io::Error),
    #[error("it is larger than {} KB", .limit / 1024)]
    TooLarge { limit: u64 },
    #[error(transparent)]
    FrontMatter(#[from] FrontMatterError),
    #[error("`{name}` is not a usable agent name (lowercase letters, digits and hyphens)")]
    BadName { name: String },
    #[error("`{key}: {value}` is not a number of turns (a whole number from 1)")]
    BadTurns { key: String, value: String },
}

/// The front-matter keys an agent file may have: those harness9 uses, and Claude Code's
/// cosmetic `color` (the TUI has no per-agent colour, and nothing is lost without it).
const KNOWN_KEYS: &[&str] = &[
    "name",
    "description",
    "tools",
    "disallowedTools",
    "model",
    "maxTurns",
    "max_turns",
    "skills",
    "color",
];

fn read_agent(path: &Path, source: AgentSource) -> Result<AgentDefinition, AgentFileError> {
    let size = std::fs::metadata(path)?.len();
    if size > MAX_AGENT_FILE {
        return Err(AgentFileError::TooLarge {
            limit: MAX_AGENT_FILE,
        });
    }
    let text = std::fs::read_to_string(path)?;
    parse_agent(&text, source)
}

/// An agent file's text as a definition.
pub fn parse_agent(text: &str, source: AgentSource) -> Result<AgentDefinition, AgentFileError> {
    let (front, body) =
        crate::context::front_matter::split(text).ok_or(FrontMatterError::Missing)?;
    let fields = crate::context::front_matter::parse(front)?;
    let text_field = |key: &str| fields.get(key).and_then(|v| v.text()).map(str::trim);
    let name = text_field("name")
        .filter(|n| !n.is_empty())
        .ok_or(FrontMatterError::NoField { key: "name" })?;
    if !name
        .chars()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_')
    {
        return Err(AgentFileError::BadName {
            name: name.to_owned(),
        });
    }
    let description = text_field("description")
        .filter(|d| !d.is_empty())
        .ok_or(FrontMatterError::NoField { key: "description" })?;
    let tools = match fields.get("tools") {
        None => AgentTools::All,
        Some(value) => AgentTools::Named(value.items().iter().map(|t| tool_name(t)).collect()),
    };
    let disallowed = fields
        .get("disallowedTools")
        .map(|v| v.items().iter().map(|t| tool_name(t)).collect())
        .unwrap_or_default();
    let model = match text_field("model") {
        None | Some("" | "inherit" | "sonnet" | "opus") => AgentModel::Inherit,
        Some("haiku") => AgentModel::Small,
        Some(model) => AgentModel::Named(model.to_owned()),
    };
    let max_turns = match ["maxTurns", "max_turns"]
        .into_iter()
        .find_map(|key| text_field(key).map(|value| (key, value)))
    {
        None => None,
        Some((key, value)) => Some(value.parse::<u32>().ok().filter(|n| *n > 0).ok_or_else(
            || AgentFileError::BadTurns {
                key: key.to_owned(),
                value: value.to_owned(),
            },
        )?),
    };
    let skills = fields.get("skills").map(|v| v.items()).unwrap_or_default();
    let ignored_keys = fields
        .keys()
        .filter(|key| !KNOWN_KEYS.contains(&key.as_str()))
        .cloned()
        .collect();
    let instructions = body.trim();
    Ok(AgentDefinition {
        name: name.to_owned(),
        description: description.to_owned(),
        tools,
        disallowed,
        model,
        max_turns,
        skills,
        instructions: if instructions.is_empty() {
            GENERAL_INSTRUCTIONS.to_owned()
        } else {
            instructions.to_owned()
        },
        source,
        ignored_keys,
    })
}

/// Our name for a tool a Claude Code agent file names (theirs are capitalised); any other name
/// is kept as it is.
fn tool_name(name: &str) -> String {
    let ours = match name {
        "Read" => "read_file",
        "Write" => "write_file",
        "Edit" | "MultiEdit" => "edit_file",
        "Bash" => "bash",
        "BashOutput" => "bash_output",
        "KillBash" | "KillShell" => "bash_kill",
        "Glob" => "glob",
        "Grep" => "grep",
        "LS" => "list_dir",
        "TodoWrite" => "todo_write",
        "WebFetch" => "web_fetch",
        "WebSearch" => "web_search",
        other => other,
    };
    ours.to_owned()
}

#[cfg(test)]
mod tests;
