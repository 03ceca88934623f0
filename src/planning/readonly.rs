//! The conservative read-only classifier plan mode (and default mode, for what it accepts) runs
//! `bash` through: a line runs only when it parses as plain simple commands, each a program found
//! by name on `PATH`, on an allowlist of commands *and of their options*. Anything else (an
//! unknown program or option, an expansion, a redirection, an option that writes or runs
//! something) is refused, with a reason written for the model.
//!
//! `cd` (and `pushd`/`popd`) is accepted only alone: before another command it changes what that
//! command's paths mean, and leads git into another repository, whose configuration can run
//! programs (`core.fsmonitor`).
//!
//! Globs: a word such as `src/*.rs` is accepted for programs whose operands are all files they
//! only read, when the word starts with a literal character other than `-` (so no file name it
//! expands to can be read as an option). `*.rs` or `-*` are refused. Whether an argument names a
//! secret or protected file is not decided here but by the permission module.

mod commands;
mod git;
mod options;

pub use options::ArgumentRefusal;

use crate::shell::{self, AnalysedCommand, Reason};

/// Why a command line is not accepted as read-only. Its Display is a clause written for the
/// model ("`uniq` with two file arguments writes the second"), read after "because".
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NotReadOnly {
    #[error("the command is empty")]
    Empty,
    /// The line's shape (a redirection, an expansion, a subshell...), in the parser's words.
    #[error("{0}")]
    Structure(String),
    #[error("it runs no command")]
    NoCommand,
    #[error(
        "`{program}` changes the directory the other commands run in: what their paths mean, and \
         which repository (with its own configuration) git reads; run them from the working \
         directory with relative paths instead"
    )]
    ChangesDirectory { program: String },
    #[error("it has an empty command")]
    EmptyCommand,
    #[error(
        "`{program}` is given the glob `{word}`, and the files it expands to could change what \
         `{program}` does"
    )]
    Glob { program: String, word: String },
    /// `suggest`: whether writing `./{word}` would do (not for a word that starts with `-`).
    #[error(
        "the glob `{word}` could expand to a file name starting with `-`, read as an option{}",
        if *.suggest { format!(" (write `./{word}`)") } else { String::new() }
    )]
    DashGlob { word: String, suggest: bool },
    #[error(
        "`xargs {program}` adds arguments from its input, and only commands whose every option \
         only reads may take them"
    )]
    Xargs { program: String },
    /// Something the parser found in one command (`Reason::Other`), in its words.
    #[error("`{program}`: {why}")]
    Unclear { program: String, why: String },
    #[error("`{path}` is run by path; only read-only programs found by name on PATH are accepted")]
    ByPath { path: String },
    #[error("`{program}` is not on the list of read-only commands")]
    NotListed { program: String },
    /// The program is listed, but these arguments or options are not read-only: the refusal is
    /// its allowlist's explanation.
    #[error("{refusal}")]
    Arguments {
        program: String,
        refusal: ArgumentRefusal,
    },
}

/// `Ok` when `command` only reads; otherwise why not.
pub fn check(command: &str) -> Result<(), NotReadOnly> {
    if command.trim().is_empty() {
        return Err(NotReadOnly::Empty);
    }
    let analysis = shell::analyse(command);
    if let Some(why) = analysis.structure {
        return Err(NotReadOnly::Structure(why));
    }
    if analysis.commands.is_empty() {
        return Err(NotReadOnly::NoCommand);
    }
    if analysis.commands.len() > 1
        && let Some(mover) = analysis
            .commands
            .iter()
            .find(|c| DIRECTORY_CHANGES.contains(&c.program()))
    {
        return Err(NotReadOnly::ChangesDirectory {
            program: mover.program().to_owned(),
        });
    }
    for part in &analysis.commands {
        check_command(part)?;
    }
    Ok(())
}

/// Builtins that move the shell to another directory. Alone on a line they change nothing (each
/// command runs in a shell of its own).
const DIRECTORY_CHANGES: &[&str] = &["cd", "pushd", "popd"];

fn check_command(part: &AnalysedCommand) -> Result<(), NotReadOnly> {
    let program = part.program();
    let Some(first) = part.words.first() else {
        return Err(NotReadOnly::EmptyCommand);
    };
    let spec = commands::lookup(program);
    for reason in &part.reasons {
        match reason {
            Reason::Glob {
                word,
                leading_literal,
            } => {
                if !spec.is_some_and(|s| s.globs) {
                    return Err(NotReadOnly::Glob {
                        program: program.to_owned(),
                        word: word.clone(),
                    });
                }
                if !leading_literal {
                    return Err(NotReadOnly::DashGlob {
                        word: word.clone(),
                        suggest: !word.starts_with('-'),
                    });
                }
            }
            Reason::XargsInput => {
                if !commands::XARGS_SAFE.contains(&program) {
                    return Err(NotReadOnly::Xargs {
                        program: program.to_owned(),
                    });
                }
            }
            // Output thrown away or joined: nothing is read or written.
            Reason::DiscardsOutput(_) => {}
            Reason::Other(why) => {
                return Err(NotReadOnly::Unclear {
                    program: program.to_owned(),
                    why: why.clone(),
                });
            }
        }
    }
    if first.contains('/') {
        return Err(NotReadOnly::ByPath {
            path: first.clone(),
        });
    }
    let args = &part.words[1..];
    let checked = match program {
        "git" => git::check(args),
        "find" => commands::check_find(args),
        _ => match spec {
            Some(spec) => commands::check_with(spec, args),
            None => {
                return Err(NotReadOnly::NotListed {
                    program: program.to_owned(),
                });
            }
        },
    };
    checked.map_err(|refusal| NotReadOnly::Arguments {
        program: program.to_owned(),
        refusal,
    })
}

#[cfg(test)]
mod tests;
