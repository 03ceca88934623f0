//! The `harness9` binary: parse the command line, hand over to the library, map the outcome to
//! an exit status (CONTRACT.md: 0 ok, 1 runtime failure, 2 usage or configuration, 130 interrupted).

use std::process::ExitCode;

use clap::Parser;
use harness9::config::{self, Cli, Command, Environment};

fn main() -> ExitCode {
    let cli = Cli::parse();
    let workdir = match config::resolve_workdir(&cli.options) {
        Ok(dir) => dir,
        Err(e) => return usage_error(&e),
    };
    let env = Environment::load(&workdir.join(".env"));
    let settings = match config::resolve(&cli.options, workdir, &env) {
        Ok(settings) => settings,
        Err(e) => return usage_error(&e),
    };
    let what = match cli.command {
        Some(Command::Exec(_)) => "harness9 exec",
        Some(Command::Sessions(_)) => "harness9 sessions",
        None => "the full-screen TUI",
    };
    let _ = settings;
    eprintln!("harness9: {what} is not yet available in this build");
    ExitCode::from(2)
}

fn usage_error(error: &dyn std::fmt::Display) -> ExitCode {
    eprintln!("harness9: {error}");
    ExitCode::from(2)
}
