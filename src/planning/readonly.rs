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

use crate::shell::{self, AnalysedCommand, Reason};

/// `Ok` when `command` only reads; otherwise why not (a clause: "`uniq` with two file arguments
/// writes the second").
pub fn check(command: &str) -> Result<(), String> {
    if command.trim().is_empty() {
        return Err("the command is empty".into());
    }
    let analysis = shell::analyse(command);
    if let Some(why) = analysis.structure {
        return Err(why);
    }
    if analysis.commands.is_empty() {
        return Err("it runs no command".into());
    }
    if analysis.commands.len() > 1
        && let Some(mover) = analysis
            .commands
            .iter()
            .find(|c| DIRECTORY_CHANGES.contains(&c.program()))
    {
        return Err(format!(
            "`{}` changes the directory the other commands run in: what their paths mean, and \
             which repository (with its own configuration) git reads; run them from the working \
             directory with relative paths instead",
            mover.program()
        ));
    }
    for part in &analysis.commands {
        check_command(part)?;
    }
    Ok(())
}

/// Builtins that move the shell to another directory. Alone on a line they change nothing (each
/// command runs in a shell of its own).
const DIRECTORY_CHANGES: &[&str] = &["cd", "pushd", "popd"];

fn check_command(part: &AnalysedCommand) -> Result<(), String> {
    let program = part.program();
    let Some(first) = part.words.first() else {
        return Err("it has an empty command".into());
    };
    let spec = commands::lookup(program);
    for reason in &part.reasons {
        match reason {
            Reason::Glob {
                word,
                leading_literal,
            } => {
                if !spec.is_some_and(|s| s.globs) {
                    return Err(format!(
                        "`{program}` is given the glob `{word}`, and the files it expands to could change \
                         what `{program}` does"
                    ));
                }
                if !leading_literal && word.starts_with('-') {
                    return Err(format!(
                        "the glob `{word}` could expand to a file name starting with `-`, read as an \
                         option"
                    ));
                }
                if !leading_literal {
                    return Err(format!(
                        "the glob `{word}` could expand to a file name starting with `-`, read as an \
                         option (write `./{word}`)"
                    ));
                }
            }
            Reason::XargsInput => {
                if !commands::XARGS_SAFE.contains(&program) {
                    return Err(format!(
                        "`xargs {program}` adds arguments from its input, and only commands whose every \
                         option only reads may take them"
                    ));
                }
            }
            // Output thrown away or joined: nothing is read or written.
            Reason::DiscardsOutput(_) => {}
            Reason::Other(why) => return Err(format!("`{program}`: {why}")),
        }
    }
    if first.contains('/') {
        return Err(format!(
            "`{first}` is run by path; only read-only programs found by name on PATH are accepted"
        ));
    }
    let args = &part.words[1..];
    match program {
        "git" => git::check(args),
        "find" => commands::check_find(args),
        _ => match spec {
            Some(spec) => commands::check_with(spec, args),
            None => Err(format!(
                "`{program}` is not on the list of read-only commands"
            )),
        },
    }
}

#[cfg(test)]
mod tests;
