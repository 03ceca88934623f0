//! Shell command lines parsed into the simple commands they would run, so that permission rules
//! and the read-only classifier judge structure, never substrings.
//!
//! The line is parsed with the bash grammar of `tree-sitter-bash`. Every simple command is
//! collected wherever it sits (pipelines, lists, subshells, groups, `if`/`while`/`for`/`case`
//! bodies, functions, command and process substitutions, the literal script of `bash -c` or
//! `eval`), its words are unquoted, and wrappers that only run the next word (`command`, `env`,
//! `sudo`, `xargs`...) are peeled. The invariant: anything whose meaning depends on the shell's
//! run-time state (an expansion, a redirection, an assignment, a glob, a parse error) is never
//! reported as plain.

mod walk;
mod words;
mod wrappers;

use std::cell::RefCell;
use std::fmt;

/// Lines longer than this are not parsed at all: they are simply not plain. Real commands are a
/// few hundred bytes; the bound keeps the work per call small whatever the model sends.
pub const MAX_LINE_BYTES: usize = 64 * 1024;

/// How deep `bash -c '…'`/`eval` scripts are followed before the line is called not plain.
const MAX_SCRIPT_NESTING: usize = 4;

/// One simple command as the shell would run it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimpleCommand {
    /// Its words after quote removal (`"rm"`, `\rm` and `'rm'` are all `rm`), with the
    /// wrappers that only run the next word (`command`, `exec`, `env`, `nohup`, `time`,
    /// `nice`, `timeout`, `sudo`, `xargs`...) removed, so `words[0]` is the program actually
    /// run, as written (`/bin/rm` stays `/bin/rm`; `program()` gives `rm`). A word the shell
    /// would expand (`$x`, `"$(…)"`) is kept as written, and the command is not plain.
    pub words: Vec<String>,
    /// Why this command is not plain: an expansion, a substitution, a redirection, an
    /// assignment, a glob that the shell would expand... `None` for a plain word list.
    pub not_plain: Option<String>,
    /// The words the shell expands to file names (globs, braces, a leading `~/`) as patterns,
    /// quoted characters escaped with `\`: the permission decision expands them as bash would.
    pub patterns: Vec<String>,
    /// Whether it runs with arguments only known when it runs: `xargs` appends words read from
    /// its input, `find -exec … {}` the files it finds.
    pub open_arguments: bool,
    /// The files its input is redirected from (`< FILE`, `<> FILE`), as plain words (a glob
    /// among them is in `patterns`).
    pub inputs: Vec<String>,
    /// The files a redirection empties before writing (`> FILE`, `>| FILE`, `&> FILE`,
    /// `2> FILE`; not `>>`, not `/dev/null`): the unquoted word, or the word as written when the
    /// shell expands it (`> "$f"`, `> *.txt`).
    pub overwrites: Vec<String>,
}

impl SimpleCommand {
    /// The program's name: the last component of `words[0]` (`/bin/rm` → `rm`).
    pub fn program(&self) -> &str {
        program_name(&self.words)
    }

    /// Whether `words[0]` names the program by path (`./x`, `/bin/ls`, `tools/cat`) rather
    /// than by a name looked up on `PATH`.
    pub fn has_path(&self) -> bool {
        self.words.first().is_some_and(|w| w.contains('/'))
    }

    /// The words joined by single spaces: what rule patterns such as `rm *` match.
    pub fn text(&self) -> String {
        self.words.join(" ")
    }

    pub fn is_plain(&self) -> bool {
        self.not_plain.is_none()
    }
}

/// A parsed command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParsedCommand {
    /// Every simple command the line can run, in source order, including those nested in
    /// subshells, groups, `if`/`for`/`while`/`case` bodies, pipelines, functions and
    /// command or process substitutions, and the literal scripts of `bash -c`/`sh -c`/`eval`.
    pub commands: Vec<SimpleCommand>,
    /// Why the line as a whole is not plain: a compound command, a background `&`, a
    /// function definition, a parse error, a part that is not plain... `None` when the line is
    /// plain simple commands joined only by `;`, `&&`, `||`, `|` and newlines.
    pub not_plain: Option<String>,
}

impl ParsedCommand {
    pub fn is_plain(&self) -> bool {
        self.not_plain.is_none()
    }
}

/// Why one simple command is not plain, as data: the read-only classifier tolerates all but
/// `Other` for some programs; everyone else treats any reason as "not plain".
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reason {
    /// A word with a glob the shell expands to file names (`src/*.rs`). `leading_literal` is
    /// true when the word starts with a literal character other than `-`, so no file name it
    /// expands to can be read as an option.
    Glob { word: String, leading_literal: bool },
    /// The command was peeled from `xargs`, which appends words read from its input.
    XargsInput,
    /// Its only redirections throw output away or join stdout and stderr (`2>/dev/null`,
    /// `>/dev/null`, `2>&1`): no file is read or written.
    DiscardsOutput(String),
    /// Anything else: an expansion, a substitution, a redirection, an assignment, a wrapper
    /// option that is not understood...
    Other(String),
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reason::Glob { word, .. } => write!(f, "the shell expands the glob `{word}`"),
            Reason::XargsInput => f.write_str("`xargs` adds arguments read from its input"),
            Reason::DiscardsOutput(redirects) => {
                write!(f, "it redirects its output (`{redirects}`)")
            }
            Reason::Other(why) => f.write_str(why),
        }
    }
}

/// One simple command with every reason it is not plain (empty when it is).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AnalysedCommand {
    pub words: Vec<String>,
    pub reasons: Vec<Reason>,
    /// See `SimpleCommand::patterns`.
    pub patterns: Vec<String>,
    /// See `SimpleCommand::open_arguments`.
    pub open_arguments: bool,
    /// See `SimpleCommand::inputs`.
    pub inputs: Vec<String>,
    /// See `SimpleCommand::overwrites`.
    pub overwrites: Vec<String>,
}

impl AnalysedCommand {
    pub fn program(&self) -> &str {
        program_name(&self.words)
    }
}

/// The detailed form of [`parse`]: reasons kept as data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Analysis {
    pub commands: Vec<AnalysedCommand>,
    /// Why the line's structure is not plain (compound commands, `&`, parse errors...),
    /// leaving aside the reasons of the single commands.
    pub structure: Option<String>,
}

fn program_name(words: &[String]) -> &str {
    let first = words.first().map(String::as_str).unwrap_or("");
    first.rsplit('/').next().unwrap_or(first)
}

/// Parses `line`. Never fails: what cannot be parsed is reported in `not_plain`.
pub fn parse(line: &str) -> ParsedCommand {
    let analysis = analyse(line);
    let commands: Vec<SimpleCommand> = analysis
        .commands
        .into_iter()
        .map(|c| SimpleCommand {
            not_plain: c.reasons.first().map(ToString::to_string),
            words: c.words,
            patterns: c.patterns,
            open_arguments: c.open_arguments,
            inputs: c.inputs,
            overwrites: c.overwrites,
        })
        .collect();
    let not_plain = analysis.structure.or_else(|| {
        commands.iter().find_map(|c| {
            c.not_plain
                .as_ref()
                .map(|why| format!("`{}` is not plain: {why}", c.program()))
        })
    });
    ParsedCommand {
        commands,
        not_plain,
    }
}

/// Parses `line` keeping every reason as data (see [`Reason`]).
pub fn analyse(line: &str) -> Analysis {
    analyse_nested(line, 0)
}

fn analyse_nested(line: &str, nesting: usize) -> Analysis {
    if line.len() > MAX_LINE_BYTES {
        return Analysis {
            commands: Vec::new(),
            structure: Some(format!(
                "it is longer than {} KiB, more than is checked",
                MAX_LINE_BYTES / 1024
            )),
        };
    }
    let Some(tree) = parse_tree(line) else {
        return Analysis {
            commands: Vec::new(),
            structure: Some("it cannot be parsed as a shell command".into()),
        };
    };
    let mut walker = walk::Walker::new(line, nesting);
    if line.contains('\0') {
        walker.mark("it contains a NUL byte");
    }
    let root = tree.root_node();
    if root.has_error() {
        walker.mark(
            "it cannot be parsed as a shell command (a syntax error or an unterminated quote)",
        );
    }
    walker.statement(root, 0);
    walker.finish()
}

thread_local! {
    /// One parser per thread: creating one costs more than parsing a typical command.
    static PARSER: RefCell<Option<tree_sitter::Parser>> = const { RefCell::new(None) };
}

fn parse_tree(line: &str) -> Option<tree_sitter::Tree> {
    PARSER.with(|cell| {
        let mut slot = cell.try_borrow_mut().ok()?;
        if slot.is_none() {
            let mut parser = tree_sitter::Parser::new();
            parser
                .set_language(&tree_sitter_bash::LANGUAGE.into())
                .ok()?;
            *slot = Some(parser);
        }
        slot.as_mut()?.parse(line, None)
    })
}

#[cfg(test)]
mod tests;
