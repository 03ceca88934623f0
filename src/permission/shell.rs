//! Shell command lines parsed into the simple commands they would run, so that permission rules
//! and the read-only classifier judge structure, never substrings.
//!
//! SKELETON: the naive splitter below only keeps the crate building; it is replaced by a real
//! grammar (issue 11). The types are the interface the rest of the crate codes against.

/// One simple command as the shell would run it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimpleCommand {
    /// Its words after quote removal (`"rm"`, `\rm` and `'rm'` are all `rm`), with the
    /// wrappers that only run the next word (`command`, `exec`, `env`, `nohup`, `time`,
    /// `nice`, `timeout`, `sudo`, `xargs`...) removed, so `words[0]` is the program actually
    /// run, as written (`/bin/rm` stays `/bin/rm`; `program()` gives `rm`).
    pub words: Vec<String>,
    /// Why this command is not plain: an expansion, a substitution, a redirection, an
    /// assignment, a glob that the shell would expand... `None` for a plain word list.
    pub not_plain: Option<String>,
}

impl SimpleCommand {
    /// The program's name: the last component of `words[0]` (`/bin/rm` → `rm`).
    pub fn program(&self) -> &str {
        let first = self.words.first().map(String::as_str).unwrap_or("");
        first.rsplit('/').next().unwrap_or(first)
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

/// Parses `line`. Never fails: what cannot be parsed is reported in `not_plain`.
pub fn parse(line: &str) -> ParsedCommand {
    let mut commands = Vec::new();
    let mut not_plain = None;
    for piece in line
        .split(['\n', ';', '|', '&'])
        .map(str::trim)
        .filter(|p| !p.is_empty())
    {
        match shell_words::split(piece) {
            Ok(words) => commands.push(SimpleCommand {
                words,
                not_plain: None,
            }),
            Err(e) => not_plain = Some(format!("it cannot be parsed ({e})")),
        }
    }
    ParsedCommand {
        commands,
        not_plain,
    }
}
