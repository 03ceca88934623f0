//! The conservative read-only classifier plan mode runs `bash` through: a command runs only when
//! every part of it is a known read-only program used in a read-only way. Anything it cannot be
//! sure of (redirections, substitutions, unknown programs, writing flags) is refused, with why.

/// Programs that only read, whatever their arguments (beyond the checks below).
const READ_ONLY: &[&str] = &[
    "ls",
    "cat",
    "head",
    "tail",
    "wc",
    "pwd",
    "echo",
    "printf",
    "grep",
    "egrep",
    "fgrep",
    "rg",
    "tree",
    "file",
    "stat",
    "du",
    "df",
    "which",
    "whereis",
    "date",
    "uname",
    "whoami",
    "id",
    "diff",
    "cmp",
    "uniq",
    "cut",
    "nl",
    "realpath",
    "readlink",
    "dirname",
    "basename",
    "sha256sum",
    "sha1sum",
    "md5sum",
    "true",
    "false",
    "test",
    "[",
    "hostname",
    "cd",
];

/// `git` subcommands that only read.
const GIT_READ_ONLY: &[&str] = &[
    "status",
    "log",
    "diff",
    "show",
    "blame",
    "ls-files",
    "ls-tree",
    "rev-parse",
    "describe",
    "shortlog",
    "grep",
    "cat-file",
    "reflog",
    "whatchanged",
];

/// `find` actions that write or run things.
const FIND_WRITES: &[&str] = &[
    "-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls",
];

/// `Ok` when `command` only reads; otherwise why not.
pub fn check(command: &str) -> Result<(), String> {
    let command = command.trim();
    if command.is_empty() {
        return Err("the command is empty".into());
    }
    for (needle, what) in [
        ("`", "command substitution"),
        ("$(", "command substitution"),
        ("<(", "process substitution"),
        (">(", "process substitution"),
        (">", "an output redirection"),
        ("<", "an input redirection"),
    ] {
        if command.contains(needle) {
            return Err(format!("it uses {what} (`{needle}`)"));
        }
    }
    for part in split_parts(command)? {
        check_part(&part)?;
    }
    Ok(())
}

/// The simple commands of a line joined by `;`, `&&`, `||`, `|` or newlines.
fn split_parts(command: &str) -> Result<Vec<Vec<String>>, String> {
    let mut parts = Vec::new();
    let normalized = command
        .replace("&&", "\n")
        .replace("||", "\n")
        .replace([';', '|'], "\n");
    if normalized.contains('&') {
        return Err("it runs something in the background (`&`)".into());
    }
    for piece in normalized.lines().map(str::trim).filter(|p| !p.is_empty()) {
        let words = shell_words::split(piece).map_err(|e| format!("it cannot be parsed ({e})"))?;
        parts.push(words);
    }
    Ok(parts)
}

fn check_part(words: &[String]) -> Result<(), String> {
    let Some(program) = words.first() else {
        return Ok(());
    };
    if program.contains('=') {
        return Err(format!("it sets a variable (`{program}`)"));
    }
    let name = program.rsplit('/').next().unwrap_or(program);
    let args = &words[1..];
    match name {
        "git" => check_git(args),
        "find" => match args.iter().find(|a| FIND_WRITES.contains(&a.as_str())) {
            Some(flag) => Err(format!("`find {flag}` changes or runs things")),
            None => Ok(()),
        },
        "sort" if args.iter().any(|a| a == "-o" || a.starts_with("--output")) => {
            Err("`sort -o` writes a file".into())
        }
        "sort" => Ok(()),
        _ if READ_ONLY.contains(&name) => Ok(()),
        _ => Err(format!("`{name}` is not on the list of read-only commands")),
    }
}

fn check_git(args: &[String]) -> Result<(), String> {
    // Options before the subcommand (`git -C dir log`, `git --no-pager diff`); `-C` and `-c`
    // take a value.
    let mut at = 0;
    while at < args.len() && args[at].starts_with('-') {
        at += if matches!(args[at].as_str(), "-C" | "-c") {
            2
        } else {
            1
        };
    }
    let Some(sub) = args.get(at) else {
        return Ok(());
    };
    let tail: Vec<&String> = args.iter().skip(at + 1).collect();
    match sub.as_str() {
        s if GIT_READ_ONLY.contains(&s) => {
            if tail.iter().any(|a| a.starts_with("--output")) {
                return Err("`--output` writes a file".into());
            }
            Ok(())
        }
        // Listing forms only: no name to create, no flag that deletes, moves or sets.
        "branch" | "tag" | "remote" | "stash" => {
            let listing = match sub.as_str() {
                "branch" => tail.iter().all(|a| {
                    matches!(
                        a.as_str(),
                        "-a" | "-r"
                            | "-v"
                            | "-vv"
                            | "--all"
                            | "--list"
                            | "-l"
                            | "--show-current"
                            | "--merged"
                            | "--no-merged"
                    )
                }),
                "tag" => tail
                    .iter()
                    .all(|a| matches!(a.as_str(), "-l" | "--list" | "-n")),
                "remote" => tail
                    .iter()
                    .all(|a| matches!(a.as_str(), "-v" | "--verbose")),
                _ => tail
                    .first()
                    .is_some_and(|a| a.as_str() == "list" || a.as_str() == "show"),
            };
            if listing {
                Ok(())
            } else {
                Err(format!(
                    "`git {sub}` with these arguments changes the repository"
                ))
            }
        }
        other => Err(format!("`git {other}` is not a read-only git command")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table() {
        let cases: &[(&str, bool)] = &[
            ("ls -la src", true),
            ("cat README.md", true),
            ("head -n 20 src/main.rs", true),
            ("wc -l src/*.rs", true),
            ("git status", true),
            ("git log --oneline -n 5", true),
            ("git --no-pager diff HEAD~1", true),
            ("git -C sub show HEAD:README.md", true),
            ("git branch -a", true),
            ("grep -rn 'fn main' src", true),
            ("rg TODO", true),
            ("find . -name '*.rs'", true),
            ("ls && git status", true),
            ("git log | head -n 3", true),
            ("cat a.txt; wc -l a.txt", true),
            ("find . -name '*.tmp' -delete", false),
            ("find . -exec rm {} \\;", false),
            ("echo hi > file", false),
            ("cat a >> b", false),
            ("ls 2>&1", false),
            ("echo $(rm -rf /)", false),
            ("echo `whoami`", false),
            ("git push", false),
            ("git commit -m x", false),
            ("git branch new-feature", false),
            ("git branch -D main", false),
            ("git checkout main", false),
            ("git log --output=x.txt", false),
            ("rm -rf x", false),
            ("ls && rm -rf x", false),
            ("ls; touch x", false),
            ("sort -o out.txt in.txt", false),
            ("sed -i s/a/b/ f", false),
            ("FOO=1 ls", false),
            ("sleep 100 &", false),
            ("cargo build", false),
            ("python3 -c 'open(\"x\",\"w\")'", false),
            ("cat 'unterminated", false),
        ];
        for (command, read_only) in cases {
            let verdict = check(command);
            assert_eq!(verdict.is_ok(), *read_only, "{command}: {verdict:?}");
        }
        assert!(check("find . -delete").unwrap_err().contains("-delete"));
        assert!(check("ls > out").unwrap_err().contains("redirection"));
        assert!(check("git push").unwrap_err().contains("git push"));
    }
}
