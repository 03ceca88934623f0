//! What a `git` command may print, as far as secrets go: the contents of the files the
//! repository tracks (`git grep`, `git diff`, `git show`, `git cat-file`, `git log -p`...), of
//! files it does not track (`git grep --untracked`/`--no-index`), or of two directories
//! (`git diff --no-index`). Judged from the parsed words, never from the command's text.

use crate::shell::SimpleCommand;

/// Global options of `git` that take the next word as their value.
const VALUED_GLOBALS: &[&str] = &[
    "-C",
    "-c",
    "--git-dir",
    "--work-tree",
    "--namespace",
    "--super-prefix",
    "--config-env",
    "--list-cmds",
    "--attr-source",
];

/// Subcommands that print the contents of tracked files (or history that holds them) whatever
/// their options.
const PRINT_CONTENTS: &[&str] = &[
    "grep",
    "diff",
    "show",
    "cat-file",
    "archive",
    "format-patch",
    "fast-export",
    "bundle",
    "difftool",
    "range-diff",
    "stash",
];

/// Subcommands that print contents only with a patch option (`git log -p`).
const PRINT_WITH_PATCH: &[&str] = &[
    "log",
    "whatchanged",
    "reflog",
    "shortlog",
    "rev-list",
    "diff-tree",
    "diff-index",
    "diff-files",
];

/// Long options that make a log print patches, or search inside them (`-S`, `-G`: which
/// commits change a secret's text answers questions about it).
const PATCH_OPTIONS: &[&str] = &[
    "--patch",
    "--patch-with-stat",
    "--patch-with-raw",
    "--unified",
    "--function-context",
    "--word-diff",
    "--word-diff-regex",
    "--color-words",
    "--cc",
    "--dd",
    "--remerge-diff",
    "--diff-merges",
    "--binary",
    "--full-diff",
    "--pickaxe-regex",
    "--pickaxe-all",
    "--find-object",
    "--ext-diff",
    "--textconv",
];

/// Short options that print or search patches (`-p`, `-u`, `-U5`, `-W`, `-c`, `-m`, `-S`,
/// `-G`, `-L`): a cluster holding any of them counts.
const PATCH_SHORT: &str = "puUWcmSGL";

/// `git`'s subcommand in `command` and the words after it, if `command` runs git.
pub(super) fn subcommand(command: &SimpleCommand) -> Option<(&str, &[String])> {
    if command.program() != "git" {
        return None;
    }
    let mut at = 1;
    while let Some(word) = command.words.get(at) {
        if !word.starts_with('-') {
            return Some((word.as_str(), &command.words[at + 1..]));
        }
        at += if VALUED_GLOBALS.contains(&word.as_str()) {
            2
        } else {
            1
        };
    }
    None
}

/// A git global option that points git at another repository (`--git-dir`, `--work-tree`),
/// as written: where git reads cannot be followed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`git {option}` points git at another repository")]
pub(super) struct Elsewhere {
    pub option: String,
}

/// The directories a git command moves to before it runs (its `-C` options, in order), or why
/// where it reads cannot be followed.
pub(super) fn moves(command: &SimpleCommand) -> Result<Vec<&str>, Elsewhere> {
    let mut out = Vec::new();
    let mut at = 1;
    while let Some(word) = command.words.get(at) {
        let word = word.as_str();
        if !word.starts_with('-') {
            break;
        }
        let elsewhere = ["--git-dir", "--work-tree"].iter().any(|o| {
            word.strip_prefix(o)
                .is_some_and(|r| r.is_empty() || r.starts_with('='))
        });
        if elsewhere {
            return Err(Elsewhere {
                option: word.to_owned(),
            });
        }
        if word == "-C" {
            out.extend(command.words.get(at + 1).map(String::as_str));
            at += 2;
        } else if let Some(dir) = word.strip_prefix("-C") {
            out.push(dir);
            at += 1;
        } else {
            at += if VALUED_GLOBALS.contains(&word) { 2 } else { 1 };
        }
    }
    Ok(out)
}

/// The options of `words` before a `--`.
fn options(words: &[String]) -> impl Iterator<Item = &str> {
    words
        .iter()
        .map(String::as_str)
        .take_while(|w| *w != "--")
        .filter(|w| w.starts_with('-') && *w != "-")
}

/// The subcommand of `command` when it prints the contents of tracked files: every file the
/// repository's index holds could end up in its output.
pub(super) fn prints_tracked(command: &SimpleCommand) -> Option<&str> {
    let (sub, rest) = subcommand(command)?;
    if PRINT_CONTENTS.contains(&sub) {
        return Some(sub);
    }
    if !PRINT_WITH_PATCH.contains(&sub) {
        return None;
    }
    options(rest)
        .any(|option| match option.strip_prefix("--") {
            Some(long) => {
                let name = long.split('=').next().unwrap_or(long);
                PATCH_OPTIONS.iter().any(|o| o[2..] == *name)
            }
            None => option[1..].chars().any(|c| PATCH_SHORT.contains(c)),
        })
        .then_some(sub)
}

/// Whether `command`, a git command that prints tracked contents, may print past versions too
/// (and so a secret only the history holds): every such command but a `git diff` of the work
/// tree against the index, and a `git grep` of them, named with no word that could be a
/// revision (a word that could be a path counts, since git takes a revision first). Options
/// that take a separate value make their value such a word: asked about rather than guessed.
pub(super) fn prints_history(command: &SimpleCommand) -> bool {
    let Some(sub) = prints_tracked(command) else {
        return false;
    };
    let Some((_, rest)) = subcommand(command) else {
        return false;
    };
    // The words before `--` that are no option, a `git grep` pattern option's value aside.
    let mut operands = 0;
    let mut words = rest.iter().map(String::as_str).take_while(|w| *w != "--");
    while let Some(word) = words.next() {
        if sub == "grep" && matches!(word, "-e" | "-f" | "--regexp" | "--file") {
            words.next();
        } else if !word.starts_with('-') {
            operands += 1;
        }
    }
    match sub {
        "diff" => {
            operands > 0
                || options(rest).any(|o| {
                    let name = o.split('=').next().unwrap_or(o);
                    matches!(name, "--cached" | "--staged" | "--merge-base")
                })
        }
        "grep" => {
            // The pattern is the first operand unless an option gives it.
            let pattern_given = options(rest).any(|o| {
                o == "-e" || o == "-f" || o.starts_with("--regexp") || o.starts_with("--file")
            });
            operands > usize::from(!pattern_given)
        }
        _ => true,
    }
}

/// The raw object ids (whole or abbreviated: 4 to 64 hex digits) the words of `command`, a git
/// command that prints history, may name: every hex run between the separators of a revision
/// expression (`SHA`, `SHA:path`, `SHA^{tree}`, `A..B`, `SHA~2`, `--find-object=SHA`) before a
/// `--`. A word that only looks like one (a branch `cafe`, a pickaxe string) is counted too:
/// it then asks, never the other way round.
pub(super) fn named_object_ids(command: &SimpleCommand) -> Vec<String> {
    let Some((_, rest)) = subcommand(command) else {
        return Vec::new();
    };
    rest.iter()
        .map(String::as_str)
        .take_while(|w| *w != "--")
        .map(|word| match word.strip_prefix('-') {
            Some(option) => option.split_once('=').map_or("", |(_, value)| value),
            None => word,
        })
        .flat_map(|word| word.split(|c: char| !c.is_ascii_alphanumeric()))
        .filter(|part| {
            (4..=64).contains(&part.len()) && part.chars().all(|c| c.is_ascii_hexdigit())
        })
        .map(str::to_owned)
        .collect()
}

/// Whether `command` prints objects whose ids it reads from its input, or every object there
/// is (`git cat-file --batch`, `--batch-check`, `--batch-command`, `--batch-all-objects`):
/// unreachable ones included, which no path judges.
pub(super) fn prints_any_object(command: &SimpleCommand) -> bool {
    subcommand(command).is_some_and(|(sub, rest)| {
        sub == "cat-file" && options(rest).any(|o| o.starts_with("--batch"))
    })
}

/// Whether `command` is a `git grep` that reads files git does not track (`--untracked`,
/// `--no-index`): it searches the trees below its paths like `grep -r`.
pub(super) fn searches_untracked(command: &SimpleCommand) -> bool {
    subcommand(command).is_some_and(|(sub, rest)| {
        sub == "grep" && options(rest).any(|o| o == "--untracked" || o == "--no-index")
    })
}

/// Whether `command` is a `git diff` that compares files outside the index: with
/// `--no-index`, or (`outside_repository`) run where no repository is, as git then does.
/// Directories it is given are compared file by file.
pub(super) fn diffs_paths(command: &SimpleCommand, outside_repository: bool) -> bool {
    subcommand(command).is_some_and(|(sub, rest)| {
        sub == "diff" && (outside_repository || options(rest).any(|o| o == "--no-index"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn command(line: &str) -> SimpleCommand {
        crate::shell::parse(line)
            .commands
            .into_iter()
            .next()
            .unwrap()
    }

    #[test]
    fn which_git_commands_print_file_contents() {
        for (line, prints) in [
            ("git grep KEY", Some("grep")),
            ("git --no-pager diff --cached", Some("diff")),
            ("git -C sub show", Some("show")),
            ("git cat-file -p HEAD:x", Some("cat-file")),
            ("git log -p", Some("log")),
            ("git log -1 --patch", Some("log")),
            ("git log -SKEY", Some("log")),
            ("git log -G KEY --oneline", Some("log")),
            ("git log -U5", Some("log")),
            ("git log --word-diff=color", Some("log")),
            ("git log -np", Some("log")),
            ("git diff-tree -p HEAD", Some("diff-tree")),
            ("git stash show -p", Some("stash")),
            ("git log --oneline -5", None),
            ("git log --stat -- -p", None),
            ("git status", None),
            ("git ls-files", None),
            ("git blame src/main.rs", None),
            ("ls -p", None),
        ] {
            assert_eq!(prints_tracked(&command(line)), prints, "{line}");
        }
        for (line, history) in [
            ("git log -p", true),
            ("git show HEAD~1", true),
            ("git cat-file -p 1234abcd", true),
            ("git diff", false),
            ("git diff -- src", false),
            ("git diff --stat", false),
            ("git diff HEAD~1", true),
            ("git diff a b", true),
            ("git diff --cached", true),
            ("git grep KEY", false),
            ("git grep -n KEY -- src", false),
            ("git grep KEY HEAD~1", true),
            ("git grep -e KEY", false),
            ("git grep -e KEY HEAD", true),
            ("git grep -A 3 KEY", true),
            ("git log --oneline", false),
        ] {
            assert_eq!(prints_history(&command(line)), history, "{line}");
        }
        assert!(searches_untracked(&command("git grep --untracked KEY")));
        assert!(searches_untracked(&command(
            "git grep -n --no-index KEY src"
        )));
        assert!(!searches_untracked(&command("git grep KEY -- --untracked")));
        assert!(diffs_paths(&command("git diff --no-index a b"), false));
        assert!(!diffs_paths(&command("git diff a b"), false));
        assert!(diffs_paths(&command("git diff a b"), true));
        assert_eq!(
            moves(&command("git -C a -C ../b log -p")).unwrap(),
            ["a", "../b"]
        );
        assert_eq!(moves(&command("git -Ca grep x")).unwrap(), ["a"]);
        assert!(moves(&command("git --git-dir=x log -p")).is_err());
        assert!(moves(&command("git --work-tree x log -p")).is_err());
        assert!(moves(&command("git log -C")).unwrap().is_empty());
    }
}
