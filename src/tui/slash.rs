//! Slash commands: one table for the completion popup, `/help` and dispatch, skills offered as
//! `/skill-name [task]`, and "did you mean" for a mistyped name.

/// A built-in command.
pub struct SlashCommand {
    pub name: &'static str,
    pub args: &'static str,
    pub help: &'static str,
}

pub const COMMANDS: &[SlashCommand] = &[
    SlashCommand {
        name: "/help",
        args: "",
        help: "keys and commands",
    },
    SlashCommand {
        name: "/new",
        args: "",
        help: "start a new session here",
    },
    SlashCommand {
        name: "/resume",
        args: "",
        help: "pick a session to resume (Ctrl+R)",
    },
    SlashCommand {
        name: "/rename",
        args: "NAME",
        help: "name this session (harness9 --resume NAME)",
    },
    SlashCommand {
        name: "/undo",
        args: "",
        help: "restore the files the last prompt changed",
    },
    SlashCommand {
        name: "/rewind",
        args: "",
        help: "go back to before a prompt: files, conversation or both",
    },
    SlashCommand {
        name: "/ps",
        args: "[N|stop N]",
        help: "list the background commands; N: one's whole output; stop N: stop it",
    },
    SlashCommand {
        name: "/worktree",
        args: "[list|merge NAME|remove NAME [--force]]",
        help: "this repository's worktrees: list, merge one back, remove one",
    },
    SlashCommand {
        name: "/rules",
        args: "",
        help: "let the allow rules added while the session ran count",
    },
    SlashCommand {
        name: "/compact",
        args: "",
        help: "summarise the conversation to free context",
    },
    SlashCommand {
        name: "/mode",
        args: "[default|auto-edit|plan|yolo]",
        help: "show or switch the mode",
    },
    SlashCommand {
        name: "/model",
        args: "[NAME]",
        help: "show or switch the model",
    },
    SlashCommand {
        name: "/hooks",
        args: "",
        help: "list the configured hooks and where each comes from",
    },
    SlashCommand {
        name: "/tasks",
        args: "",
        help: "list the sub-agents still running",
    },
    SlashCommand {
        name: "/todos",
        args: "",
        help: "show or hide the todo list (Ctrl+T)",
    },
    SlashCommand {
        name: "/copy",
        args: "[N]",
        help: "copy the last answer, or its code block N",
    },
    SlashCommand {
        name: "/clear",
        args: "",
        help: "a fresh context: start a new session (the last one is kept)",
    },
    SlashCommand {
        name: "/export",
        args: "[FILE]",
        help: "write the transcript as Markdown (a new file)",
    },
    SlashCommand {
        name: "/status",
        args: "",
        help: "provider, model, session, sandbox, context use and cost",
    },
    SlashCommand {
        name: "/cost",
        args: "",
        help: "tokens by kind and what they cost, since this screen opened",
    },
    SlashCommand {
        name: "/init",
        args: "",
        help: "ask the model to write an AGENTS.md for this project",
    },
    SlashCommand {
        name: "/mcp",
        args: "",
        help: "MCP servers: status, tools, reconnect, disable",
    },
    SlashCommand {
        name: "/memory",
        args: "",
        help: "long-term memories: search, edit, forget",
    },
    SlashCommand {
        name: "/quit",
        args: "",
        help: "leave harness9",
    },
];

/// An entry of the completion popup.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Completion {
    pub insert: String,
    pub label: String,
    pub help: String,
}

/// Commands and skills whose name starts with what was typed (only while the first word is
/// being typed).
pub fn completions(input: &str, skills: &[(String, String)]) -> Vec<Completion> {
    if !input.starts_with('/') || input.contains(char::is_whitespace) {
        return Vec::new();
    }
    let builtins = COMMANDS
        .iter()
        .filter(|c| c.name.starts_with(input))
        .map(|c| Completion {
            insert: c.name.to_owned(),
            label: if c.args.is_empty() {
                c.name.to_owned()
            } else {
                format!("{} {}", c.name, c.args)
            },
            help: c.help.to_owned(),
        });
    let skills = skills
        .iter()
        .filter(|(name, _)| format!("/{name}").starts_with(input))
        .map(|(name, description)| Completion {
            insert: format!("/{name}"),
            label: format!("/{name} [task]"),
            help: format!("skill: {description}"),
        });
    builtins.chain(skills).collect()
}

/// The closest command or skill name to a mistyped one.
pub fn nearest(name: &str, skills: &[(String, String)]) -> Option<String> {
    let candidates = COMMANDS
        .iter()
        .map(|c| c.name.to_owned())
        .chain(skills.iter().map(|(n, _)| format!("/{n}")));
    candidates
        .map(|c| (strsim::levenshtein(name, &c), c))
        .filter(|(distance, _)| *distance <= 3)
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, c)| c)
}

/// The fenced code blocks of a markdown text, in order.
pub fn code_blocks(markdown: &str) -> Vec<String> {
    let mut blocks = Vec::new();
    let mut current: Option<String> = None;
    for line in markdown.lines() {
        let fence = line.trim_start().starts_with("```") || line.trim_start().starts_with("~~~");
        match (&mut current, fence) {
            (None, true) => current = Some(String::new()),
            (Some(block), true) => {
                blocks.push(std::mem::take(block));
                current = None;
            }
            (Some(block), false) => {
                block.push_str(line);
                block.push('\n');
            }
            (None, false) => {}
        }
    }
    blocks
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn completes_commands_and_skills_and_suggests_the_nearest() {
        let skills = vec![("deploy".to_owned(), "ship it".to_owned())];
        let names: Vec<_> = completions("/re", &skills)
            .into_iter()
            .map(|c| c.insert)
            .collect();
        assert_eq!(names, ["/resume", "/rename", "/rewind"]);
        assert_eq!(completions("/de", &skills)[0].insert, "/deploy");
        assert!(completions("/rename x", &skills).is_empty());
        assert_eq!(nearest("/compcat", &skills).as_deref(), Some("/compact"));
        assert_eq!(nearest("/deplyo", &skills).as_deref(), Some("/deploy"));
        assert_eq!(nearest("/zzzzzzzz", &skills), None);
    }

    #[test]
    fn finds_code_blocks() {
        let text = "Intro\n```rust\nfn a() {}\n```\ntext\n```\nls -la\n```\n";
        assert_eq!(code_blocks(text), ["fn a() {}\n", "ls -la\n"]);
    }
}
