//! A `bash` line as the permission decision sees it: the simple commands the parser found (their
//! program normalised, so `/bin/rm`, `\rm` and `command rm` are all `rm`), whether a command's
//! program cannot be known before it runs, the words that could name a path, and the one prefix
//! "allow always" may remember. Judged from `shell::parse`'s structure, never by searching text.

use crate::shell::{self, ParsedCommand, SimpleCommand};

/// A command line, parsed once per decision.
pub struct CommandLine {
    pub parsed: ParsedCommand,
    /// Each simple command's text with its program normalised: what `bash(...)` rules match.
    /// (`find -exec CMD ;` is a command of its own: the parser reports it.)
    pub texts: Vec<String>,
    /// The commands whose arguments are only partly known before they run, as texts: those
    /// `xargs` and `find -exec` run, and `find … -delete` as the `rm -rf` it amounts to. Deny
    /// and ask rules match them by their program (`Subject::OpenCommand`).
    pub open: Vec<String>,
}

/// Programs that run their arguments (or their input) as code: when the parser could not see a
/// literal script behind them, what they run is unknown.
const RUNS_CODE: &[&str] = &[
    "eval", "source", ".", "exec", "bash", "sh", "zsh", "dash", "ksh", "fish", "xargs", "env",
    "command", "builtin", "sudo", "doas", "su", "nohup", "time", "timeout", "nice", "watch",
    "parallel",
];

impl CommandLine {
    pub fn parse(line: &str) -> CommandLine {
        Self::from_parsed(shell::parse(line))
    }

    /// The line as the parser gave it (tests build one by hand to judge the structure alone).
    pub fn from_parsed(parsed: ParsedCommand) -> CommandLine {
        let mut texts = Vec::new();
        let mut open = Vec::new();
        for command in &parsed.commands {
            texts.push(normalised(command));
            if command.open_arguments {
                open.push(normalised(command));
            }
            open.extend(find_delete(command));
        }
        CommandLine {
            parsed,
            texts,
            open,
        }
    }

    /// Whether every part is plain: plain simple commands joined only by `;`, `&&`, `||`, `|`.
    pub fn is_plain(&self) -> bool {
        self.parsed.is_plain() && self.parsed.commands.iter().all(|c| c.not_plain.is_none())
    }

    /// Whether some command's program cannot be known before it runs: no words at all, a
    /// program word that is not plain (`$x y`), or a code-running program (`eval "$y"`,
    /// `bash -c "$s"`) on a part that is not plain. Such a line cannot be proven to miss a deny
    /// rule.
    pub fn has_dynamic_program(&self) -> bool {
        if self.parsed.commands.is_empty() {
            return !self.parsed.is_plain();
        }
        self.parsed.commands.iter().any(|command| {
            let first = command.words.first().map(String::as_str).unwrap_or("");
            command.words.is_empty()
                || first.is_empty()
                || (command.not_plain.is_some()
                    && (first.contains(['$', '`', '*', '?', '[', '{', '~'])
                        || RUNS_CODE.contains(&command.program())))
        })
    }

    /// The argument words that could name a file: every word after a program, the value of a
    /// `--option=value`, and the files input is redirected from. Words starting with `-`
    /// otherwise are options.
    pub fn path_words(&self) -> Vec<&str> {
        let mut out = Vec::new();
        for command in &self.parsed.commands {
            out.extend(command.inputs.iter().map(String::as_str));
            for word in command.words.iter().skip(1) {
                match word.strip_prefix('-') {
                    Some(option) => {
                        if let Some((_, value)) = option.split_once('=') {
                            out.push(value);
                        }
                    }
                    None => {
                        out.push(word.as_str());
                        // git's `REV:PATH` (`git show HEAD:.env`) reads PATH as stored.
                        if let Some((_, stored)) = word.split_once(':') {
                            out.push(stored);
                        }
                    }
                }
            }
        }
        out.retain(|w| !w.is_empty());
        out
    }
}

/// Programs that read every file under a directory they are given (or the current one).
const SEARCHES_TREES: &[&str] = &["rg", "ag", "ack"];
/// `grep` and its aliases read trees only with a recursive flag.
const GREPS: &[&str] = &["grep", "egrep", "fgrep"];

impl CommandLine {
    /// Whether some command reads the contents of whole trees (`grep -r`, `rg`): a secret or
    /// denied file anywhere below its directories would be printed.
    pub fn searches_trees(&self) -> bool {
        self.parsed.commands.iter().any(|command| {
            let program = command.program();
            SEARCHES_TREES.contains(&program)
                || (GREPS.contains(&program)
                    && command.words.iter().skip(1).any(|w| is_recursive_flag(w)))
                || super::git::searches_untracked(command)
        })
    }
}

/// For `find … -delete` (its own `-delete`, not a word of a command `-exec` runs): the
/// `rm -rf` it amounts to, naming find's starting points.
pub(super) fn find_delete(command: &SimpleCommand) -> Option<String> {
    if command.program() != "find" {
        return None;
    }
    let args = &command.words[1..];
    let mut in_exec = false;
    let mut deletes = false;
    for word in args {
        match word.as_str() {
            ";" | "+" if in_exec => in_exec = false,
            _ if in_exec => {}
            "-exec" | "-execdir" | "-ok" | "-okdir" => in_exec = true,
            "-delete" => deletes = true,
            _ => {}
        }
    }
    if !deletes {
        return None;
    }
    let starts: Vec<&str> = args
        .iter()
        .map(String::as_str)
        .skip_while(|w| matches!(*w, "-H" | "-L" | "-P"))
        .take_while(|w| !w.starts_with('-') && !matches!(*w, "(" | "!" | ")" | ","))
        .collect();
    Some(if starts.is_empty() {
        "rm -rf .".to_owned()
    } else {
        format!("rm -rf {}", starts.join(" "))
    })
}

/// `-r`, `-R`, clusters holding them (`-rn`), `--recursive`, `--dereference-recursive`,
/// `--directories=recurse`.
fn is_recursive_flag(word: &str) -> bool {
    match word.strip_prefix("--") {
        Some(long) => matches!(
            long,
            "recursive" | "dereference-recursive" | "directories=recurse"
        ),
        None => word.strip_prefix('-').is_some_and(|short| {
            short.chars().all(char::is_alphanumeric) && short.contains(['r', 'R'])
        }),
    }
}

/// `program args...` with the program as `program()` gives it.
fn normalised(command: &SimpleCommand) -> String {
    let mut words = vec![command.program()];
    words.extend(command.words.iter().skip(1).map(String::as_str));
    words.join(" ")
}

/// Families whose first two words name what they do (`cargo test`, `git status`), each with the
/// subcommands "allow always" may remember as a prefix. Everything else that may get a prefix is
/// in `PREFIX_ONE_WORD`. Destructive and interpreter commands (`rm`, `mv`, `dd`, `chmod`,
/// `python*`, `node`, `bash`, `curl`, `eval`, `xargs`, ...) are in neither: they get the exact
/// command or nothing.
const PREFIX_FAMILIES: &[(&str, &[&str])] = &[
    (
        "cargo",
        &[
            "build", "check", "test", "clippy", "fmt", "doc", "bench", "tree", "metadata",
            "nextest",
        ],
    ),
    (
        "git",
        &[
            "status", "log", "diff", "show", "blame", "add", "commit", "fetch", "ls-files", "grep",
        ],
    ),
    ("npm", &["test", "ci", "install", "run", "ls"]),
    ("pnpm", &["test", "install", "run", "ls"]),
    ("yarn", &["test", "install", "run"]),
    ("go", &["build", "test", "vet", "fmt", "list"]),
    ("uv", &["sync", "run", "lock"]),
    ("dotnet", &["build", "test"]),
    ("gradle", &["build", "test"]),
    ("mvn", &["compile", "test", "package", "verify"]),
];

/// Plain programs whose every use may be remembered by their name.
const PREFIX_ONE_WORD: &[&str] = &[
    "ls", "cat", "head", "tail", "wc", "echo", "grep", "rg", "tree", "pwd", "stat", "du", "df",
    "file", "diff", "make", "pytest", "mkdir", "touch", "tsc", "eslint", "prettier", "ruff",
    "mypy", "just", "jq",
];

/// The prefix "allow always" may remember for `line`: its program, or program and subcommand
/// for a family, only for a plain line of one command from the allowlists. `None` otherwise:
/// such a call gets the exact command or nothing.
pub fn command_prefix(line: &CommandLine) -> Option<String> {
    if !line.is_plain() || line.parsed.commands.len() != 1 || line.texts.len() != 1 {
        return None;
    }
    let command = &line.parsed.commands[0];
    if command.has_path() {
        return None;
    }
    let program = command.program();
    if PREFIX_ONE_WORD.contains(&program) {
        return Some(program.to_owned());
    }
    let (_, subcommands) = PREFIX_FAMILIES.iter().find(|(name, _)| *name == program)?;
    let sub = command.words.get(1)?;
    subcommands
        .contains(&sub.as_str())
        .then(|| format!("{program} {sub}"))
}

/// The exact command as a `bash(...)` rule pattern: only for one plain command whose text has
/// no glob characters (a pattern must match it and nothing else).
pub fn exact_pattern(line: &CommandLine) -> Option<String> {
    if !line.is_plain() || line.parsed.commands.len() != 1 || line.texts.len() != 1 {
        return None;
    }
    let text = &line.texts[0];
    (!text.contains(['*', '?', '[', ']', '{', '}', '\\', '(', ')'])).then(|| text.clone())
}
