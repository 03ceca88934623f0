//! What a Rust file names, read without a parser: comments and string, char and raw string
//! literals are blanked first, so a doc comment or a message that mentions `crate::x` names
//! nothing; then every `crate::` path (in code, a `use`, a `pub use`, a nested
//! `use crate::{b::{..}, c}` group, a macro's `$crate::`) and every `super::` chain that climbs
//! to the crate root gives the top-level module it names.

use std::collections::BTreeSet;

/// `source` with comments and string, char and raw string literals blanked (newlines kept, so
/// lines still count right).
pub fn strip(source: &str) -> String {
    let chars: Vec<char> = source.chars().collect();
    let mut out = String::with_capacity(source.len());
    let blank = |out: &mut String, run: &[char]| {
        out.extend(run.iter().map(|&c| if c == '\n' { '\n' } else { ' ' }));
    };
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    let mut i = 0;
    while i < chars.len() {
        let rest = &chars[i..];
        let end = if rest.starts_with(&['/', '/']) {
            rest.iter()
                .position(|&c| c == '\n')
                .map_or(chars.len(), |n| i + n)
        } else if rest.starts_with(&['/', '*']) {
            block_comment_end(&chars, i)
        } else if let Some(hashes) = raw_string_start(&chars, i, ident) {
            raw_string_end(&chars, i, hashes)
        } else if chars[i] == '"' {
            quoted_end(&chars, i, '"')
        } else if chars[i] == '\'' {
            char_literal_end(&chars, i).unwrap_or(i + 1)
        } else {
            out.push(chars[i]);
            i += 1;
            continue;
        };
        if chars[i] == '\'' && end == i + 1 {
            out.push('\''); // a lifetime's quote
        } else {
            blank(&mut out, &chars[i..end]);
        }
        i = end;
    }
    out
}

/// The end of a (nested) block comment starting at `i`.
fn block_comment_end(chars: &[char], mut i: usize) -> usize {
    let mut depth = 0;
    while i < chars.len() {
        if chars[i..].starts_with(&['/', '*']) {
            depth += 1;
            i += 2;
        } else if chars[i..].starts_with(&['*', '/']) {
            depth -= 1;
            i += 2;
            if depth == 0 {
                return i;
            }
        } else {
            i += 1;
        }
    }
    chars.len()
}

/// The number of `#`s when a raw string (`r"`, `r#"`, `br#"`, `cr"`) starts at `i`.
fn raw_string_start(chars: &[char], i: usize, ident: impl Fn(char) -> bool) -> Option<usize> {
    if chars[i] != 'r' {
        return None;
    }
    let before = |n: usize| i.checked_sub(n).map(|at| chars[at]);
    let starts_word = match before(1) {
        None => true,
        Some('b' | 'c') => before(2).is_none_or(|c| !ident(c)),
        Some(c) => !ident(c),
    };
    let hashes = chars[i + 1..].iter().take_while(|&&c| c == '#').count();
    (starts_word && chars.get(i + 1 + hashes) == Some(&'"')).then_some(hashes)
}

fn raw_string_end(chars: &[char], i: usize, hashes: usize) -> usize {
    let mut at = i + 2 + hashes;
    while at < chars.len() {
        if chars[at] == '"'
            && chars[at + 1..]
                .iter()
                .take(hashes)
                .filter(|&&c| c == '#')
                .count()
                == hashes
        {
            return at + 1 + hashes;
        }
        at += 1;
    }
    chars.len()
}

/// The end of a literal quoted by `quote` starting at `i`, escapes honoured.
fn quoted_end(chars: &[char], i: usize, quote: char) -> usize {
    let mut at = i + 1;
    while at < chars.len() {
        match chars[at] {
            '\\' => at += 2,
            c if c == quote => return at + 1,
            _ => at += 1,
        }
    }
    chars.len()
}

/// The end of a char literal at `i` (`'a'`, `'\n'`, `'\u{1F600}'`), or `None` for a lifetime.
fn char_literal_end(chars: &[char], i: usize) -> Option<usize> {
    match chars.get(i + 1) {
        Some('\\') => Some(quoted_end(chars, i, '\'')),
        Some(_) if chars.get(i + 2) == Some(&'\'') => Some(i + 3),
        _ => None,
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Ident(String),
    Path, // `::`
    Open,
    Close,
    Comma,
    Other,
}

fn tokens(stripped: &str) -> Vec<(Token, usize)> {
    let mut out = Vec::new();
    for (n, line) in stripped.lines().enumerate() {
        let chars: Vec<char> = line.chars().collect();
        let mut i = 0;
        while i < chars.len() {
            let c = chars[i];
            let (token, len) = if c.is_alphanumeric() || c == '_' {
                let len = chars[i..]
                    .iter()
                    .take_while(|c| c.is_alphanumeric() || **c == '_')
                    .count();
                (Token::Ident(chars[i..i + len].iter().collect()), len)
            } else if chars[i..].starts_with(&[':', ':']) {
                (Token::Path, 2)
            } else if c.is_whitespace() {
                i += 1;
                continue;
            } else {
                let token = match c {
                    '{' => Token::Open,
                    '}' => Token::Close,
                    ',' => Token::Comma,
                    _ => Token::Other,
                };
                (token, 1)
            };
            out.push((token, n + 1));
            i += len;
        }
    }
    out
}

fn is(tokens: &[(Token, usize)], at: usize, ident: &str) -> bool {
    matches!(tokens.get(at), Some((Token::Ident(name), _)) if name == ident)
}

/// The first line where `stripped` names the identifier `name` (a crate, in a path or a `use`).
pub fn first_use_of(stripped: &str, name: &str) -> Option<usize> {
    let tokens = tokens(stripped);
    (0..tokens.len())
        .find(|&at| is(&tokens, at, name))
        .map(|at| tokens[at].1)
}

/// The modules `lib.rs` declares (`mod x;`, `pub mod x;`).
pub fn declared_modules(stripped: &str) -> BTreeSet<String> {
    let tokens = tokens(stripped);
    let mut out = BTreeSet::new();
    for at in 0..tokens.len() {
        if is(&tokens, at, "mod")
            && let Some((Token::Ident(name), _)) = tokens.get(at + 1)
        {
            out.insert(name.clone());
        }
    }
    out
}

/// The top-level modules a file names, with the line of each naming. `depth` is how deep the
/// file's module sits (`src/a.rs` 1, `src/a/b.rs` 2); an inline `mod x { .. }` adds one, so a
/// `super::` chain that climbs to the crate root is recognised.
pub fn references(stripped: &str, depth: usize) -> Vec<(String, usize)> {
    let tokens = tokens(stripped);
    let mut out = Vec::new();
    let mut braces: Vec<bool> = Vec::new(); // per open brace: whether it opened an inline module
    for at in 0..tokens.len() {
        match &tokens[at].0 {
            Token::Open => {
                let opens_module = at >= 2
                    && is(&tokens, at - 2, "mod")
                    && matches!(tokens[at - 1].0, Token::Ident(_));
                braces.push(opens_module);
            }
            Token::Close => {
                braces.pop();
            }
            Token::Ident(name)
                if name == "crate" && tokens.get(at + 1).map(|t| &t.0) == Some(&Token::Path) =>
            {
                out.extend(first_segments(&tokens, at + 2));
            }
            Token::Ident(name)
                if name == "super" && (at == 0 || tokens[at - 1].0 != Token::Path) =>
            {
                let mut climbs = 0;
                let mut next = at;
                while is(&tokens, next, "super")
                    && tokens.get(next + 1).map(|t| &t.0) == Some(&Token::Path)
                {
                    climbs += 1;
                    next += 2;
                }
                let here = depth + braces.iter().filter(|&&module| module).count();
                if climbs >= here {
                    out.extend(first_segments(&tokens, next));
                }
            }
            _ => {}
        }
    }
    out
}

/// The first segment of the path at `at`, or of each entry of a `{ .. }` group there.
fn first_segments(tokens: &[(Token, usize)], at: usize) -> Vec<(String, usize)> {
    match tokens.get(at) {
        Some((Token::Ident(name), line)) if name != "self" => vec![(name.clone(), *line)],
        Some((Token::Open, _)) => {
            let mut out = Vec::new();
            let mut depth = 0;
            let mut entry_starts = true;
            for (token, line) in &tokens[at..] {
                match token {
                    Token::Open => {
                        depth += 1;
                        if depth == 1 {
                            continue; // the group's first entry starts after its brace
                        }
                    }
                    Token::Close => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    Token::Comma if depth == 1 => {
                        entry_starts = true;
                        continue;
                    }
                    Token::Ident(name) if depth == 1 && entry_starts && name != "self" => {
                        out.push((name.clone(), *line));
                    }
                    _ => {}
                }
                entry_starts = false;
            }
            out
        }
        _ => Vec::new(),
    }
}
