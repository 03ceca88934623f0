//! `harness9 completions SHELL` and `harness9 man`: a completion script and the man page,
//! generated from the command line's own definition (`Cli`), so they never drift from it.

use std::io::Write;

use clap::CommandFactory;

use super::cli::Cli;

/// The shells `harness9 completions` writes a script for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum CompletionShell {
    Bash,
    Zsh,
    Fish,
    Powershell,
}

impl CompletionShell {
    fn generator(self) -> clap_complete::Shell {
        match self {
            CompletionShell::Bash => clap_complete::Shell::Bash,
            CompletionShell::Zsh => clap_complete::Shell::Zsh,
            CompletionShell::Fish => clap_complete::Shell::Fish,
            CompletionShell::Powershell => clap_complete::Shell::PowerShell,
        }
    }
}

/// The completion script for `shell`. Made in memory: the generator panics on a write error,
/// and a reader that closes early (`| head`) is no error of ours.
pub fn completions(shell: CompletionShell) -> Vec<u8> {
    let mut out = Vec::new();
    clap_complete::generate(shell.generator(), &mut Cli::command(), "harness9", &mut out);
    out
}

/// The man page (roff), with every subcommand's options.
pub fn man_page() -> std::io::Result<Vec<u8>> {
    let mut command = Cli::command();
    // clap_mangen's own synopsis names the options without their values (`--mode`, not
    // `--mode MODE`).
    let synopsis = synopsis(&command);
    command = command.override_usage(synopsis);
    let mut out = Vec::new();
    clap_mangen::Man::new(command).render(&mut out)?;
    Ok(out)
}

/// `harness9 [-C DIR] [--mode MODE] ... [COMMAND]`: every option shown, with its value.
fn synopsis(command: &clap::Command) -> String {
    let mut line = command.get_name().to_owned();
    for arg in command.get_arguments().filter(|a| !a.is_hide_set()) {
        let name = match (arg.get_long(), arg.get_short()) {
            (Some(long), _) => format!("--{long}"),
            (None, Some(short)) => format!("-{short}"),
            (None, None) => continue,
        };
        if matches!(name.as_str(), "--help" | "--version") {
            continue;
        }
        let value = if arg.get_action().takes_values() {
            let names = arg
                .get_value_names()
                .map(|names| names.join(" "))
                .unwrap_or_else(|| arg.get_id().as_str().to_uppercase());
            format!(" {names}")
        } else {
            String::new()
        };
        line.push_str(&format!(" [{name}{value}]"));
    }
    if command.has_subcommands() {
        line.push_str(" [COMMAND]");
    }
    line
}

/// The reference topics `harness9 help TOPIC` prints, each a section of docs/REFERENCE.md
/// (an installed binary has no docs/ folder).
const TOPICS: &[(&str, &str)] = &[("hooks", "## Hooks")];

/// Why `harness9 help TOPIC` has nothing to print (a usage error).
#[derive(Debug, thiserror::Error)]
#[error("no command or help topic `{0}`: try a command name or one of: {topics}", topics = topic_names())]
pub struct UnknownTopic(String);

fn topic_names() -> String {
    TOPICS
        .iter()
        .map(|(name, _)| *name)
        .collect::<Vec<_>>()
        .join(", ")
}

/// `harness9 help [TOPIC]`: the program's help, a command's, or a topic of the reference.
pub fn help(topic: Option<&str>) -> Result<Vec<u8>, UnknownTopic> {
    let mut command = Cli::command();
    command.build();
    let Some(topic) = topic else {
        return Ok(command.render_long_help().to_string().into_bytes());
    };
    if let Some(sub) = command.find_subcommand_mut(topic) {
        return Ok(sub.render_long_help().to_string().into_bytes());
    }
    let heading = TOPICS
        .iter()
        .find(|(name, _)| *name == topic)
        .map(|(_, heading)| *heading)
        .ok_or_else(|| UnknownTopic(topic.to_owned()))?;
    Ok(reference_section(heading).into_bytes())
}

/// The section of docs/REFERENCE.md under `heading`, up to the next heading of its level.
fn reference_section(heading: &str) -> String {
    const REFERENCE: &str = include_str!("../../docs/REFERENCE.md");
    let start = REFERENCE
        .match_indices(heading)
        .find(|(at, _)| REFERENCE[at + heading.len()..].starts_with('\n'))
        .map(|(at, _)| at)
        .unwrap_or(0);
    let body = &REFERENCE[start..];
    let end = body[heading.len()..]
        .find("\n## ")
        .map(|at| at + heading.len() + 1)
        .unwrap_or(body.len());
    body[..end].trim_end().to_owned() + "\n"
}

/// Writes `bytes` on stdout; a reader that stopped reading is not an error.
pub fn print(bytes: &[u8]) -> std::io::Result<()> {
    let mut stdout = std::io::stdout().lock();
    match stdout.write_all(bytes).and_then(|()| stdout.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every shell gets a script naming the program (tests/it/cli_docs.rs checks the bash one
    /// with `bash -n` through the binary); the man page covers the subcommands.
    #[test]
    fn every_shell_has_a_script_and_the_man_page_names_the_commands() {
        for shell in [
            CompletionShell::Bash,
            CompletionShell::Zsh,
            CompletionShell::Fish,
            CompletionShell::Powershell,
        ] {
            let out = completions(shell);
            assert!(
                String::from_utf8_lossy(&out).contains("harness9"),
                "{shell:?}"
            );
        }
        let hooks = String::from_utf8(help(Some("hooks")).unwrap()).unwrap();
        assert!(hooks.starts_with("## Hooks\n"), "{hooks}");
        assert!(!hooks.contains("\n## "), "one section: {hooks}");
        let page = man_page().unwrap();
        let page = String::from_utf8_lossy(&page);
        assert!(page.contains(".TH harness9"), "{page}");
        assert!(
            page.contains("completions") && page.contains("exec"),
            "{page}"
        );
    }
}
