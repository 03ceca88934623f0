//! The paths a `bash` line's arguments may name, as the shell would hand them to the programs:
//! every word that could be a path, resolved against the working directory and against every
//! directory a `cd` or `pushd` earlier in the line may move to; every word the shell expands to
//! file names (a glob, braces, `~/`) expanded as bash would, there too. What cannot be worked out
//! (a `cd` to a directory only known when it runs, a glob too wide to expand) is said, so the
//! decision can ask.

use std::path::{Path, PathBuf};

use super::command::CommandLine;
use super::expand::expand;
use super::facts::NamedPath;
use crate::files::paths;

/// Directories a line may move through before it counts as too winding to follow.
const MAX_DIRECTORIES: usize = 16;

/// What a line's arguments name.
pub(super) struct ArgumentPaths {
    pub paths: Vec<NamedPath>,
    /// The directories its relative words may be read against: the working directory first.
    pub directories: Vec<PathBuf>,
    /// Why not every directory could be followed (`cd "$d"`): words judged by their name alone
    /// are judged right wherever the line goes, expansions and repositories are not.
    pub unsure_directory: Option<String>,
    /// Why the files a word the shell expands names could not be worked out.
    pub unsure_expansion: Option<String>,
}

/// `raw` resolved against `base`, judged as the decision judges paths of `workdir`.
pub(super) fn named_in(workdir: &Path, base: &Path, raw: &str) -> NamedPath {
    let resolved = paths::resolve(base, raw);
    NamedPath {
        shown: paths::display(workdir, &resolved),
        inside: paths::is_inside(workdir, &resolved),
        resolved,
    }
}

/// What `line`'s arguments name, run in `workdir`. `~` is `$HOME` as the command will see it
/// (it inherits harness9's environment).
pub(super) fn gather(line: &CommandLine, workdir: &Path) -> ArgumentPaths {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let (directories, unsure_directory) = match directories(line, workdir, home.as_deref()) {
        Ok(directories) => (directories, None),
        Err(why) => (vec![workdir.to_owned()], Some(why)),
    };
    let mut paths = Vec::new();
    // A word or pattern named twice is judged once: long chains repeat their paths, and each
    // judgement resolves the path and matches it against every rule.
    let mut seen = std::collections::HashSet::new();
    for word in line.path_words() {
        if !seen.insert(word) {
            continue;
        }
        if Path::new(word).is_absolute() {
            paths.push(named_in(workdir, workdir, word));
            continue;
        }
        for base in &directories {
            paths.push(named_in(workdir, base, word));
        }
    }
    let mut unsure_expansion = None;
    let mut seen_patterns = std::collections::HashSet::new();
    for pattern in line.parsed.commands.iter().flat_map(|c| &c.patterns) {
        if !seen_patterns.insert(pattern) {
            continue;
        }
        if let Some(why) = &unsure_directory {
            unsure_expansion.get_or_insert_with(|| {
                format!("where `{}` is expanded is not known: {why}", shown(pattern))
            });
        }
        for base in &directories {
            match expand(pattern, base, home.as_deref()) {
                Ok(expanded) => paths.extend(
                    expanded
                        .iter()
                        .map(|p| named_in(workdir, base, &p.to_string_lossy())),
                ),
                Err(why) => {
                    unsure_expansion.get_or_insert_with(|| {
                        format!(
                            "the files `{}` expands to cannot be told: {why}",
                            shown(pattern)
                        )
                    });
                }
            }
        }
    }
    let mut judged = std::collections::HashSet::new();
    paths.retain(|p: &NamedPath| judged.insert(p.resolved.clone()));
    ArgumentPaths {
        paths,
        directories,
        unsure_directory,
        unsure_expansion,
    }
}

/// A pattern as the user would read it (escapes removed).
fn shown(pattern: &str) -> String {
    let mut out = String::new();
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        out.push(if c == '\\' {
            chars.next().unwrap_or(c)
        } else {
            c
        });
    }
    out
}

/// The working directory and every directory `cd`/`pushd` in a line of more than one command
/// may lead to (each move followed from every directory before it, so the set covers every
/// order the line may run in). `popd` only goes back to one of them.
fn directories(
    line: &CommandLine,
    workdir: &Path,
    home: Option<&Path>,
) -> Result<Vec<PathBuf>, String> {
    let mut out = vec![workdir.to_owned()];
    if line.parsed.commands.len() < 2 {
        return Ok(out);
    }
    for command in &line.parsed.commands {
        let program = command.program();
        if program != "cd" && program != "pushd" {
            continue;
        }
        if command.not_plain.is_some() {
            return Err(format!(
                "`{program}` moves to a directory only known when it runs"
            ));
        }
        let mut operands = command.words[1..]
            .iter()
            .skip_while(|w| w.starts_with('-') && w.len() > 1 && *w != "--");
        let operand = match operands.next().map(String::as_str) {
            Some("--") => operands.next().map(String::as_str),
            other => other,
        };
        let target: PathBuf = match operand {
            // `pushd` alone swaps the two top directories; `+N`/`-N` rotate the stack.
            None | Some(_) if program == "pushd" && operand.is_none_or(is_rotation) => continue,
            None => home
                .map(Path::to_owned)
                .ok_or("`cd` alone moves to $HOME, which is not set")?,
            Some("-") => return Err(format!("`{program} -` moves back to $OLDPWD")),
            Some(dir) => {
                if !Path::new(dir).is_absolute()
                    && !dir.starts_with('.')
                    && std::env::var_os("CDPATH").is_some()
                {
                    return Err(format!(
                        "`{program} {dir}` looks the directory up in $CDPATH"
                    ));
                }
                PathBuf::from(dir)
            }
        };
        let mut moved: Vec<PathBuf> = out
            .iter()
            .map(|base| paths::resolve(base, &target.to_string_lossy()))
            .collect();
        moved.retain(|p| !out.contains(p));
        moved.dedup();
        out.extend(moved);
        if out.len() > MAX_DIRECTORIES {
            return Err("it moves through too many directories to follow".into());
        }
    }
    Ok(out)
}

/// `+N` or `-N`: a rotation of `pushd`'s stack.
fn is_rotation(word: &str) -> bool {
    word.strip_prefix(['+', '-'])
        .is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
}
