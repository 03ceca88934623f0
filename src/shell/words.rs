//! One shell word of the syntax tree turned into the string the program receives, or the reason
//! it cannot be known before the shell runs (an expansion, a substitution...).

use tree_sitter::Node;

/// A word after quote removal.
#[derive(Debug, Clone)]
pub(super) struct Word {
    /// The unquoted value when `dynamic` is `None`, else the word as written.
    pub text: String,
    /// Why the value depends on the shell's run-time state.
    pub dynamic: Option<String>,
    /// Whether an unquoted glob character makes the shell expand it to file names.
    pub glob: bool,
    /// Whether the word starts with a literal character other than `-` (see `Reason::Glob`).
    pub leading_literal: bool,
    /// When the shell expands the word to file names (a glob, braces, a leading `~/`) and
    /// nothing else about it is dynamic: the word as a pattern, every quoted or escaped
    /// character that would mean something to brace expansion, `~` or a glob written `\c`.
    pub pattern: Option<String>,
}

/// Characters escaped in `Word::pattern` when they were quoted: they would otherwise mean
/// something to brace expansion, tilde expansion or a glob.
pub(super) const PATTERN_SPECIALS: &str = "*?[]{},\\~()|!^-";

/// Builds a word piece by piece, keeping track of what the shell would do to the unquoted parts.
#[derive(Default)]
struct Unquoter {
    out: String,
    /// Where in `out` (byte offsets) a character was unquoted and special: kept as is when
    /// `Word::pattern` is built, every other special character is escaped. Recorded rather than
    /// built as it goes: most words are never patterns.
    specials: Vec<usize>,
    dynamic: Option<String>,
    /// A leading `~` or `~/` the shell replaces with `$HOME` (`~user` and the rest are dynamic).
    tilde: bool,
    glob: bool,
    /// Whether the first character came from an unquoted glob character.
    first_is_meta: Option<bool>,
    /// Brace expansion (`{a,b}`, `{1..3}`) needs an unquoted `{`, a `,` or `..`, and a `}`.
    brace_open: bool,
    brace_separator: bool,
    brace: bool,
    pending_bracket: bool,
}

impl Unquoter {
    /// A character the shell takes literally (quoted, escaped, or plain).
    fn push(&mut self, c: char, meta: bool) {
        if self.first_is_meta.is_none() {
            self.first_is_meta = Some(meta);
        }
        self.out.push(c);
    }

    /// An unquoted character that may mean something to brace, tilde or glob expansion: kept
    /// as is in the pattern.
    fn push_special(&mut self, c: char, meta: bool) {
        if self.first_is_meta.is_none() {
            self.first_is_meta = Some(meta);
        }
        self.specials.push(self.out.len());
        self.out.push(c);
    }

    /// `out` as a pattern: the special characters that were quoted escaped with `\\`.
    fn pattern(&self) -> String {
        let mut pattern = String::with_capacity(self.out.len() + 8);
        let mut specials = self.specials.iter().peekable();
        for (at, c) in self.out.char_indices() {
            if specials.next_if(|s| **s == at).is_none() && PATTERN_SPECIALS.contains(c) {
                pattern.push('\\');
            }
            pattern.push(c);
        }
        pattern
    }

    fn dynamic(&mut self, why: impl Into<String>) {
        if self.dynamic.is_none() {
            self.dynamic = Some(why.into());
        }
    }

    /// An unquoted piece: backslash escapes, globs, `~`, braces, and any `$` or backtick the
    /// grammar left inside the word.
    fn bare(&mut self, text: &str) {
        let mut chars = text.chars().peekable();
        let at_start = self.out.is_empty() && self.first_is_meta.is_none();
        if at_start && text.starts_with('~') {
            if text == "~" || text.starts_with("~/") {
                self.tilde = true;
            } else {
                self.dynamic("the shell expands `~`");
            }
        }
        let mut previous = None;
        while let Some(c) = chars.next() {
            match c {
                '\\' => match chars.next() {
                    Some('\n') | None => {}
                    Some(escaped) => self.push(escaped, false),
                },
                '$' => {
                    self.dynamic("it uses a `$` expansion");
                    self.push(c, true);
                }
                '`' => {
                    self.dynamic("it uses a backtick command substitution");
                    self.push(c, true);
                }
                '*' | '?' => {
                    self.glob = true;
                    self.push_special(c, true);
                }
                '[' => {
                    self.pending_bracket = true;
                    self.push_special(c, true);
                }
                ']' if self.pending_bracket => {
                    self.glob = true;
                    self.push_special(c, false);
                }
                '{' => {
                    self.brace_open = true;
                    self.push_special(c, false);
                }
                ',' if self.brace_open => {
                    self.brace_separator = true;
                    self.push_special(c, false);
                }
                '.' if self.brace_open && previous == Some('.') => {
                    self.brace_separator = true;
                    self.push_special(c, false);
                }
                '}' if self.brace_open && self.brace_separator => {
                    self.brace = true;
                    self.push_special(c, false);
                }
                '~' if matches!(previous, Some('=' | ':')) => {
                    self.dynamic("the shell may expand `~` after `=` or `:`");
                    self.push(c, false);
                }
                // Unquoted, these mean something in tilde and brace forms (`{~,x}`) and extended
                // globs (`@(a|b)`); after a `[`, in a bracket expression (`[!a-f]`). The
                // expansion decides; elsewhere they are literal (and escaped in the pattern).
                '~' | '(' | ')' | '|' => self.push_special(c, false),
                '!' | '^' | '-' if self.pending_bracket => self.push_special(c, false),
                _ => self.push(c, false),
            }
            previous = Some(c);
        }
    }

    /// The inside of `"…"`: only `\$`, `` \` ``, `\"`, `\\` and `\newline` are escapes.
    fn double_quoted(&mut self, inner: &str) {
        let mut chars = inner.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '\\' => match chars.peek().copied() {
                    Some(e @ ('$' | '`' | '"' | '\\')) => {
                        chars.next();
                        self.push(e, false);
                    }
                    Some('\n') => {
                        chars.next();
                    }
                    _ => self.push('\\', false),
                },
                '$' => {
                    self.dynamic("it uses a `$` expansion inside double quotes");
                    self.push(c, false);
                }
                '`' => {
                    self.dynamic("it uses a backtick command substitution");
                    self.push(c, false);
                }
                _ => self.push(c, false),
            }
        }
    }

    fn literal(&mut self, text: &str) {
        for c in text.chars() {
            self.push(c, false);
        }
    }

    fn finish(self, raw: &str) -> Word {
        let leading_literal = self.first_is_meta == Some(false) && !self.out.starts_with('-');
        let expands = (self.glob || self.brace || self.tilde)
            && self.dynamic.is_none()
            && !self.out.contains('\0');
        let pattern = expands.then(|| self.pattern());
        let mut word = Word {
            text: self.out,
            dynamic: self.dynamic,
            glob: self.glob,
            leading_literal,
            pattern,
        };
        if self.tilde && word.dynamic.is_none() {
            word.dynamic = Some("the shell expands `~`".into());
        }
        if self.brace && word.dynamic.is_none() {
            word.dynamic = Some("the shell expands the braces in it".into());
        }
        if word.text.contains('\0') && word.dynamic.is_none() {
            word.dynamic = Some("a word holds a NUL byte".into());
        }
        if word.dynamic.is_some() {
            word.text = raw.to_owned();
            word.glob = false;
        }
        word
    }
}

/// The word `node` stands for, read from `src`.
pub(super) fn word(node: Node<'_>, src: &str) -> Word {
    let raw = text(node, src);
    let mut unquoter = Unquoter::default();
    piece(node, src, &mut unquoter);
    unquoter.finish(raw)
}

pub(super) fn text<'s>(node: Node<'_>, src: &'s str) -> &'s str {
    src.get(node.byte_range()).unwrap_or("")
}

fn piece(node: Node<'_>, src: &str, u: &mut Unquoter) {
    let raw = text(node, src);
    match node.kind() {
        "word" | "number" if node.child_count() == 0 => u.bare(raw),
        "command_name" | "concatenation" | "word" | "number" => {
            let mut cursor = node.walk();
            let mut end = node.start_byte();
            for child in node.children(&mut cursor) {
                // Text between children (the grammar leaves some of it out of any node) is
                // part of the word too.
                if child.start_byte() > end {
                    u.bare(src.get(end..child.start_byte()).unwrap_or(""));
                }
                piece(child, src, u);
                end = child.end_byte();
            }
            if node.end_byte() > end {
                u.bare(src.get(end..node.end_byte()).unwrap_or(""));
            }
        }
        "raw_string" => u.literal(strip(raw, "'", "'")),
        "string" => u.double_quoted(strip(raw, "\"", "\"")),
        "ansi_c_string" => match ansi_c(strip(raw, "$'", "'")) {
            Some(decoded) => u.literal(&decoded),
            None => u.dynamic("it uses a `$'…'` escape that is not understood"),
        },
        "translated_string" => u.dynamic("it uses a `$\"…\"` translated string"),
        "simple_expansion" | "expansion" => {
            u.dynamic(format!("it expands a parameter (`{}`)", short(raw)))
        }
        "command_substitution" => u.dynamic("it substitutes a command's output (`$(…)`)"),
        "process_substitution" => u.dynamic("it uses a process substitution (`<(…)`)"),
        "arithmetic_expansion" => u.dynamic("it uses an arithmetic expansion (`$((…))`)"),
        "brace_expression" => u.dynamic("the shell expands the braces in it"),
        "extglob_pattern" => {
            u.glob = true;
            u.bare(raw);
        }
        _ if !node.is_named() => u.bare(raw),
        other => u.dynamic(format!("it uses a `{other}` the classifier does not read")),
    }
}

fn strip<'a>(raw: &'a str, open: &str, close: &str) -> &'a str {
    let inner = raw.strip_prefix(open).unwrap_or(raw);
    inner.strip_suffix(close).unwrap_or(inner)
}

/// At most 60 characters of `raw`, for messages.
pub(super) fn short(raw: &str) -> String {
    let mut out: String = raw.chars().take(60).collect();
    if raw.chars().nth(60).is_some() {
        out.push('…');
    }
    out
}

/// Decodes the inside of `$'…'`, or `None` for an escape this code does not decode.
fn ansi_c(inner: &str) -> Option<String> {
    let mut out = String::new();
    let mut chars = inner.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let e = chars.next()?;
        let simple = match e {
            'a' => Some('\x07'),
            'b' => Some('\x08'),
            'e' | 'E' => Some('\x1b'),
            'f' => Some('\x0c'),
            'n' => Some('\n'),
            'r' => Some('\r'),
            't' => Some('\t'),
            'v' => Some('\x0b'),
            '\\' | '\'' | '"' | '?' => Some(e),
            _ => None,
        };
        if let Some(s) = simple {
            out.push(s);
            continue;
        }
        let (radix, max, first) = match e {
            '0'..='7' => (8, 3, Some(e)),
            'x' => (16, 2, None),
            'u' => (16, 4, None),
            'U' => (16, 8, None),
            _ => return None,
        };
        let mut digits: String = first.into_iter().collect();
        while digits.len() < max {
            match chars.peek() {
                Some(d) if d.is_digit(radix) => {
                    digits.push(*d);
                    chars.next();
                }
                _ => break,
            }
        }
        let value = u32::from_str_radix(&digits, radix).ok()?;
        if radix == 8 || e == 'x' {
            // Octal and `\x` escapes are bytes; only ASCII ones are decoded with certainty.
            if value > 0x7f {
                return None;
            }
        }
        out.push(char::from_u32(value)?);
    }
    Some(out)
}
