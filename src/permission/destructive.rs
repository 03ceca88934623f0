//! Which commands of a `bash` line delete or overwrite files that exist (issue 32 point 1): in
//! `auto-edit` such a line asks, sandboxed or not (the sandbox lets a command write the working
//! directory, so it does not keep the user's files). Judged from the parsed commands wherever
//! they sit (after `;` or `&&`, in `$(…)`, in `bash -c '…'`, run by `find -exec` or `xargs`),
//! never by searching the text. A target only known when it runs (`rm "$f"`, `rm *.o`,
//! `xargs rm`, anything after a `cd`) counts as one that exists; a file a tool of this session
//! created does not (it is the session's, not the user's).

use std::path::Path;

use super::command::{CommandLine, find_delete};
use super::facts::named;
use super::git;
use crate::shell::SimpleCommand;

/// Programs that delete (or empty) every file they are given.
const DELETES: &[&str] = &["rm", "rmdir", "unlink", "shred", "truncate", "srm", "wipe"];
/// Programs whose last operand (or `-t DIR`) receives the others, replacing what is there.
const COPIES: &[&str] = &["mv", "cp", "install", "rsync"];
/// Programs that change the directory later relative paths are taken from.
const MOVES_DIRECTORY: &[&str] = &["cd", "pushd", "popd"];

/// What the first command of `line` that deletes or overwrites an existing file does, in a
/// few words (`` `rm` removes build ``), or `None` when no command does.
pub(super) fn destroys(
    line: &CommandLine,
    workdir: &Path,
    created: Option<&super::CreatedInSession>,
) -> Option<String> {
    let targets = Targets {
        workdir,
        created,
        moved: line
            .parsed
            .commands
            .iter()
            .any(|c| MOVES_DIRECTORY.contains(&c.program())),
    };
    line.parsed
        .commands
        .iter()
        .find_map(|command| targets.destroyed_by(command))
}

/// Judges whether a path a command names exists now.
struct Targets<'a> {
    workdir: &'a Path,
    created: Option<&'a super::CreatedInSession>,
    /// The line changes directory: a relative path may name any file.
    moved: bool,
}

impl Targets<'_> {
    /// Whether `word` names something that exists, or may (it is only known when it runs).
    fn exists(&self, word: &str) -> bool {
        if word.contains(['$', '`', '*', '?', '[', '{', '~']) {
            return true;
        }
        if self.moved && !word.starts_with('/') {
            return true;
        }
        let path = named(self.workdir, word).resolved;
        std::fs::symlink_metadata(&path).is_ok() && !self.created.is_some_and(|made| made(&path))
    }

    fn destroyed_by(&self, command: &SimpleCommand) -> Option<String> {
        let program = command.program();
        if let Some(file) = command.overwrites.iter().find(|w| self.exists(w)) {
            return Some(format!("`>` overwrites {file}"));
        }
        if find_delete(command).is_some() {
            return Some("`find -delete` removes what it finds".into());
        }
        let args = command.words.get(1..).unwrap_or_default();
        if DELETES.contains(&program) {
            if command.open_arguments {
                return Some(format!("`{program}` removes files only known when it runs"));
            }
            return operands(args)
                .find(|w| self.exists(w))
                .map(|w| format!("`{program}` removes {w}"));
        }
        if COPIES.contains(&program) || (program == "ln" && has_flag(args, 'f', "--force")) {
            return self.replaced(program, command, args);
        }
        if program == "tee" && !has_flag(args, 'a', "--append") {
            return operands(args)
                .find(|w| self.exists(w))
                .map(|w| format!("`tee` overwrites {w}"));
        }
        if program == "dd" {
            return args
                .iter()
                .filter_map(|w| w.strip_prefix("of="))
                .find(|w| self.exists(w))
                .map(|w| format!("`dd` overwrites {w}"));
        }
        self.git_discards(command)
    }

    /// `mv`, `cp`, `install`, `rsync`, `ln -f`: the destination, or the file of the same name in
    /// a destination directory, exists.
    fn replaced(&self, program: &str, command: &SimpleCommand, args: &[String]) -> Option<String> {
        if has_flag(args, 'n', "--no-clobber") {
            return None;
        }
        if command.open_arguments || (program == "rsync" && args.iter().any(|w| w == "--delete")) {
            return Some(format!(
                "`{program}` replaces files only known when it runs"
            ));
        }
        let mut operands: Vec<&str> = operands(args).collect();
        let target_dir = args.iter().enumerate().find_map(|(at, w)| {
            w.strip_prefix("--target-directory=")
                .or_else(|| (w == "-t").then(|| args.get(at + 1).map(String::as_str))?)
        });
        let (sources, destination) = match target_dir {
            Some(dir) => {
                operands.retain(|w| *w != dir);
                (operands, dir)
            }
            None => {
                let destination = operands.pop()?;
                (operands, destination)
            }
        };
        if sources.is_empty() {
            return None;
        }
        let into = named(self.workdir, destination).resolved;
        let hit = if self.exists(destination) && !into.is_dir() {
            Some(destination.to_owned())
        } else if into.is_dir() {
            sources.iter().find_map(|source| {
                let name = Path::new(source).file_name()?;
                let inside = format!("{destination}/{}", name.to_string_lossy());
                self.exists(&inside).then_some(inside)
            })
        } else {
            None
        };
        hit.map(|file| format!("`{program}` replaces {file}"))
    }

    /// The git commands that throw away the working tree's files or changes.
    fn git_discards(&self, command: &SimpleCommand) -> Option<String> {
        let (sub, rest) = git::subcommand(command)?;
        let options: Vec<&str> = rest
            .iter()
            .map(String::as_str)
            .take_while(|w| *w != "--")
            .filter(|w| w.starts_with('-'))
            .collect();
        let has = |short: char, long: &str| {
            options.iter().any(|o| {
                *o == long || (!o.starts_with("--") && o.len() > 1 && o[1..].contains(short))
            })
        };
        let discards = match sub {
            "clean" => !has('n', "--dry-run"),
            "checkout" => {
                rest.iter().any(|w| w == "--" || w == ".")
                    || has('f', "--force")
                    || operands(rest).any(|w| w != "-" && self.exists(w))
            }
            "restore" => !has('S', "--staged") || has('W', "--worktree"),
            "reset" => options.contains(&"--hard") || options.contains(&"--merge"),
            "rm" => !options.contains(&"--cached"),
            "switch" => has('f', "--force") || options.contains(&"--discard-changes"),
            _ => false,
        };
        discards.then(|| format!("`git {sub}` discards files or changes in the working tree"))
    }
}

/// The words that are not options (every word after `--`).
fn operands(args: &[String]) -> impl Iterator<Item = &str> {
    let end = args.iter().position(|w| w == "--");
    args.iter().enumerate().filter_map(move |(at, w)| {
        let after_dashes = end.is_some_and(|end| at > end);
        (after_dashes || (!w.starts_with('-') && Some(at) != end)).then_some(w.as_str())
    })
}

/// Whether `args` hold the short flag `short` (alone or in a cluster) or the long one, before
/// any `--`.
fn has_flag(args: &[String], short: char, long: &str) -> bool {
    args.iter()
        .take_while(|w| *w != "--")
        .any(|w| w == long || (!w.starts_with("--") && w.starts_with('-') && w.contains(short)))
}
