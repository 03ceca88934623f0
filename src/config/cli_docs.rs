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
    let mut out = Vec::new();
    clap_mangen::Man::new(Cli::command()).render(&mut out)?;
    Ok(out)
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
        let page = man_page().unwrap();
        let page = String::from_utf8_lossy(&page);
        assert!(page.contains(".TH harness9"), "{page}");
        assert!(
            page.contains("completions") && page.contains("exec"),
            "{page}"
        );
    }
}
