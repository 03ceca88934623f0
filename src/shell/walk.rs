//! The walk over a bash syntax tree: every simple command is collected wherever it sits, and any
//! structure outside plain lists and pipelines marks the line as not plain.

use tree_sitter::Node;

use super::words::{self, Word, short};
use super::wrappers;
use super::{AnalysedCommand, Analysis, MAX_SCRIPT_NESTING, Reason, analyse_nested};

/// Deeper trees than this are not walked further (the walk recurses; the bound keeps the stack
/// small whatever the line nests).
const MAX_TREE_DEPTH: usize = 200;

pub(super) struct Walker<'s> {
    src: &'s str,
    nesting: usize,
    commands: Vec<AnalysedCommand>,
    structure: Option<String>,
}

impl<'s> Walker<'s> {
    pub(super) fn new(src: &'s str, nesting: usize) -> Self {
        Walker {
            src,
            nesting,
            commands: Vec::new(),
            structure: None,
        }
    }

    /// Records why the line is not plain; the first reason is the one reported.
    pub(super) fn mark(&mut self, why: impl Into<String>) {
        if self.structure.is_none() {
            self.structure = Some(why.into());
        }
    }

    pub(super) fn finish(self) -> Analysis {
        Analysis {
            commands: self.commands,
            structure: self.structure,
        }
    }

    /// A node where statements may sit.
    pub(super) fn statement(&mut self, node: Node<'_>, depth: usize) {
        if depth > MAX_TREE_DEPTH {
            self.mark("it nests too deeply to be checked");
            return;
        }
        if node.is_error() || node.is_missing() {
            self.mark("it cannot be parsed as a shell command");
        }
        let kind = node.kind();
        match kind {
            "program" | "list" | "pipeline" => {
                let mut cursor = node.walk();
                for child in node.children(&mut cursor) {
                    if child.is_named() {
                        self.statement(child, depth + 1);
                        continue;
                    }
                    match child.kind() {
                        ";" | "&&" | "||" | "|" | "|&" | "\n" => {}
                        "&" => self.mark("it runs something in the background (`&`)"),
                        other => self.mark(format!("it uses `{}`", short(other))),
                    }
                }
                return;
            }
            "command" => return self.command(node, depth),
            "comment" => return,
            "redirected_statement" => return self.redirected(node, depth),
            "variable_assignment" | "variable_assignments" => {
                self.mark(format!(
                    "it assigns a shell variable (`{}`)",
                    short(words::text(node, self.src))
                ));
                return self.nested(node, depth + 1);
            }
            "declaration_command" | "unset_command" => return self.declaration(node, depth),
            "command_substitution" => self.mark("it substitutes a command's output (`$(…)`)"),
            "process_substitution" => self.mark("it uses a process substitution (`<(…)`)"),
            "subshell" => self.mark("it runs a subshell (`( … )`)"),
            "compound_statement" => self.mark("it groups commands with `{ … }`"),
            "if_statement" | "elif_clause" | "else_clause" => self.mark("it uses `if`"),
            "while_statement" => self.mark("it uses a `while`/`until` loop"),
            "for_statement" | "c_style_for_statement" => self.mark("it uses a `for` loop"),
            "case_statement" | "case_item" => self.mark("it uses `case`"),
            "function_definition" => self.mark("it defines a function"),
            "negated_command" => self.mark("it negates a command with `!`"),
            "test_command" => self.mark("it uses a `[[ … ]]` or `(( … ))` test"),
            _ => self.mark(format!("it uses a `{kind}`")),
        }
        let mut cursor = node.walk();
        for child in node.named_children(&mut cursor) {
            self.statement(child, depth + 1);
        }
    }

    /// Inside words and redirections: only substitutions hold commands.
    fn nested(&mut self, node: Node<'_>, depth: usize) {
        if depth > MAX_TREE_DEPTH {
            self.mark("it nests too deeply to be checked");
            return;
        }
        let mut cursor = node.walk();
        for child in node.named_children(&mut cursor) {
            match child.kind() {
                "command_substitution" | "process_substitution" => self.statement(child, depth + 1),
                _ => self.nested(child, depth + 1),
            }
        }
    }

    fn redirected(&mut self, node: Node<'_>, depth: usize) {
        let first = self.commands.len();
        let mut has_body = false;
        let mut redirects = Vec::new();
        let mut all_discard = true;
        let mut inputs = Inputs::default();
        let mut cursor = node.walk();
        for child in node.named_children(&mut cursor) {
            if node
                .child_by_field_name("body")
                .is_some_and(|body| body.id() == child.id())
            {
                has_body = true;
                self.statement(child, depth + 1);
            } else {
                all_discard &= discards_output(child, self.src);
                inputs.add(child, self.src);
                redirects.push(short(words::text(child, self.src)));
                self.nested(child, depth + 1);
            }
        }
        if !has_body {
            self.mark("it is a redirection without a command");
        }
        let text = redirects.join(" ");
        let reason = if all_discard {
            Reason::DiscardsOutput(text)
        } else {
            Reason::Other(format!("it redirects input or output (`{text}`)"))
        };
        // Every command of the body (and the substitutions inside it) has its output redirected
        // (and its input read from the files named).
        let end = self.commands.len();
        for command in self.commands.get_mut(first..end).into_iter().flatten() {
            command.reasons.push(reason.clone());
            command.inputs.extend(inputs.files.iter().cloned());
            command.patterns.extend(inputs.patterns.iter().cloned());
            command.overwrites.extend(inputs.overwrites.iter().cloned());
        }
    }

    fn declaration(&mut self, node: Node<'_>, depth: usize) {
        let mut cursor = node.walk();
        let words = node
            .children(&mut cursor)
            .map(|child| words::text(child, self.src).to_owned())
            .collect();
        self.commands.push(AnalysedCommand {
            words,
            reasons: vec![Reason::Other("it sets or unsets shell variables".into())],
            patterns: Vec::new(),
            open_arguments: false,
            inputs: Vec::new(),
            overwrites: Vec::new(),
        });
        self.nested(node, depth + 1);
    }

    fn command(&mut self, node: Node<'_>, depth: usize) {
        let mut words: Vec<Word> = Vec::new();
        let mut reasons = Vec::new();
        let mut inputs = Inputs::default();
        let mut cursor = node.walk();
        if cursor.goto_first_child() {
            loop {
                let child = cursor.node();
                if cursor.field_name() == Some("redirect") {
                    inputs.add(child, self.src);
                }
                match cursor.field_name() {
                    Some("name") | Some("argument") => words.push(words::word(child, self.src)),
                    Some("redirect") if discards_output(child, self.src) => {
                        reasons.push(Reason::DiscardsOutput(short(words::text(child, self.src))))
                    }
                    Some("redirect") => reasons.push(Reason::Other(format!(
                        "it redirects input or output (`{}`)",
                        short(words::text(child, self.src))
                    ))),
                    _ if child.kind() == "variable_assignment" => {
                        reasons.push(Reason::Other(format!(
                            "it sets a variable for the command (`{}`)",
                            short(words::text(child, self.src))
                        )))
                    }
                    _ if child.is_named() => reasons.push(Reason::Other(format!(
                        "it holds a `{}` the classifier does not read",
                        child.kind()
                    ))),
                    _ => {}
                }
                if !cursor.goto_next_sibling() {
                    break;
                }
            }
        }
        if words.first().is_some_and(|w| w.glob) {
            reasons.push(Reason::Other("its program name is a glob".into()));
        }
        // Wrapper words included: whatever the shell expands is judged.
        let mut patterns: Vec<String> = words.iter().filter_map(|w| w.pattern.clone()).collect();
        patterns.extend(inputs.patterns);
        let peeled = wrappers::peel(words, &mut reasons);
        let scripts = wrappers::scripts(&peeled);
        let exec_commands = wrappers::find_exec(&peeled);
        if !scripts.is_empty() {
            reasons.push(Reason::Other(format!(
                "`{}` runs an inline shell script",
                peeled.first().map(|w| w.text.as_str()).unwrap_or("")
            )));
        }
        for word in &peeled {
            if let Some(why) = &word.dynamic {
                reasons.push(Reason::Other(why.clone()));
            } else if word.glob {
                reasons.push(Reason::Glob {
                    word: word.text.clone(),
                    leading_literal: word.leading_literal,
                });
            }
        }
        reasons.dedup();
        let open_arguments = reasons.contains(&Reason::XargsInput);
        self.commands.push(AnalysedCommand {
            words: peeled.into_iter().map(|w| w.text).collect(),
            reasons,
            patterns,
            open_arguments,
            inputs: inputs.files,
            overwrites: inputs.overwrites,
        });
        for script in scripts {
            self.script(script);
        }
        for exec in exec_commands {
            let mut reasons = vec![Reason::Other(
                "`find` runs it once per file it finds".into(),
            )];
            let peeled = wrappers::peel(exec, &mut reasons);
            self.commands.push(AnalysedCommand {
                words: peeled.into_iter().map(|w| w.text).collect(),
                reasons,
                // Its words are find's: their patterns were taken with find's.
                patterns: Vec::new(),
                open_arguments: true,
                inputs: Vec::new(),
                overwrites: Vec::new(),
            });
        }
        self.nested(node, depth + 1);
    }

    /// The script run by `bash -c SCRIPT` or `eval WORDS`: parsed in turn when it is literal.
    fn script(&mut self, script: wrappers::Script) {
        match script {
            wrappers::Script::Literal(text) if self.nesting < MAX_SCRIPT_NESTING => {
                let inner = analyse_nested(&text, self.nesting + 1);
                self.commands.extend(inner.commands);
                if let Some(why) = inner.structure {
                    self.mark(format!("in its inline script, {why}"));
                }
            }
            wrappers::Script::Literal(_) => self.mark("it nests shell scripts too deeply"),
            wrappers::Script::Dynamic => {
                self.mark("it runs a shell script that is only known when it runs")
            }
        }
    }
}

/// The files redirections read, as plain words and as patterns the shell expands, and the files
/// they empty (`SimpleCommand::overwrites`).
#[derive(Default)]
struct Inputs {
    files: Vec<String>,
    patterns: Vec<String>,
    overwrites: Vec<String>,
}

impl Inputs {
    /// Takes the file of `redirect` when it is read (`< FILE`, `<> FILE`). A word only known when
    /// it runs (`< "$f"`) is left, as such arguments are. The file of `> FILE` (and `>|`, `&>`)
    /// is taken as an overwrite, as written when it is only known when it runs.
    fn add(&mut self, redirect: Node<'_>, src: &str) {
        if redirect.kind() != "file_redirect" {
            return;
        }
        let mut reads = false;
        let mut empties = false;
        let mut cursor = redirect.walk();
        for child in redirect.children(&mut cursor) {
            if !child.is_named() {
                reads = matches!(child.kind(), "<" | "<>");
                empties = matches!(child.kind(), ">" | ">|" | "&>");
            } else if empties && child.kind() != "file_descriptor" {
                let word = words::word(child, src);
                if word.dynamic.is_some() || word.glob || word.text != "/dev/null" {
                    self.overwrites.push(word.text);
                }
            } else if reads && child.kind() != "file_descriptor" {
                let word = words::word(child, src);
                if let Some(pattern) = word.pattern {
                    self.patterns.push(pattern);
                } else if word.dynamic.is_none() {
                    self.files.push(word.text);
                }
            }
        }
    }
}

/// Whether `redirect` only throws output away or joins stdout and stderr: `[1|2]>/dev/null`,
/// `[1|2]>>/dev/null`, `&>/dev/null`, `[1|2]>&1`, `[1|2]>&2`.
fn discards_output(redirect: Node<'_>, src: &str) -> bool {
    if redirect.kind() != "file_redirect" {
        return false;
    }
    let mut descriptor = None;
    let mut operator = None;
    let mut destination = None;
    let mut cursor = redirect.walk();
    for child in redirect.children(&mut cursor) {
        match child.kind() {
            "file_descriptor" if descriptor.is_none() && operator.is_none() => {
                descriptor = Some(words::text(child, src))
            }
            _ if !child.is_named() && operator.is_none() => operator = Some(child.kind()),
            _ if child.is_named() && operator.is_some() && destination.is_none() => {
                destination = Some(child)
            }
            _ => return false,
        }
    }
    if !matches!(descriptor, None | Some("1" | "2")) {
        return false;
    }
    let Some(destination) = destination else {
        return false;
    };
    match operator {
        Some(">" | ">>" | "&>" | "&>>") => {
            let word = words::word(destination, src);
            word.dynamic.is_none() && !word.glob && word.text == "/dev/null"
        }
        Some(">&") => {
            destination.kind() == "number" && matches!(words::text(destination, src), "1" | "2")
        }
        _ => false,
    }
}
