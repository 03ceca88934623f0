//! The graph of `src/`'s top-level modules, read from the source: an arrow `a -> b` for every
//! path of a file under `a` that names `crate::b` (in code, a `use`, a `pub use` or a nested
//! `use crate::{b::{..}, c}` group) or climbs to the crate root with `super::` and names `b`.
//! Comments and string, char and raw string literals are blanked first, so a doc comment or a
//! message that mentions `crate::x` makes no arrow. Each arrow keeps the places that make it.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::{Path, PathBuf};

/// A place in the source that makes an arrow: file (relative to the crate) and line.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Site {
    pub file: String,
    pub line: usize,
}

pub struct Graph {
    pub modules: BTreeSet<String>,
    pub arrows: BTreeMap<String, BTreeMap<String, Vec<Site>>>,
}

impl Graph {
    /// The graph of the crate whose `src/` is `src` (modules as `lib.rs` declares them).
    pub fn read(src: &Path) -> Graph {
        let lib = std::fs::read_to_string(src.join("lib.rs")).expect("src/lib.rs is readable");
        let modules = declared_modules(&strip(&lib));
        let mut arrows: BTreeMap<String, BTreeMap<String, Vec<Site>>> = BTreeMap::new();
        let mut files = Vec::new();
        rust_files(src, &mut files);
        for file in files {
            let relative = file.strip_prefix(src).expect("a file under src");
            let parts: Vec<String> = relative
                .iter()
                .map(|part| part.to_string_lossy().into_owned())
                .collect();
            let top = parts[0].trim_end_matches(".rs").to_owned();
            if !modules.contains(&top) {
                continue; // lib.rs and main.rs: the crate root and the binary, not modules
            }
            let text = std::fs::read_to_string(&file).expect("a source file is readable");
            let shown = format!("src/{}", parts.join("/"));
            for (target, line) in references(&strip(&text), parts.len()) {
                if target != top && modules.contains(&target) {
                    let site = Site {
                        file: shown.clone(),
                        line,
                    };
                    let sites = arrows
                        .entry(top.clone())
                        .or_default()
                        .entry(target)
                        .or_default();
                    sites.push(site);
                }
            }
        }
        for targets in arrows.values_mut() {
            for sites in targets.values_mut() {
                sites.sort();
            }
        }
        Graph { modules, arrows }
    }

    /// The modules `from` imports directly.
    pub fn targets(&self, from: &str) -> impl Iterator<Item = &String> {
        self.arrows.get(from).into_iter().flat_map(|t| t.keys())
    }

    /// Where `from -> to` is made, for a message: the first site and how many more there are.
    pub fn explain(&self, from: &str, to: &str) -> String {
        let sites = &self.arrows[from][to];
        let more = match sites.len() - 1 {
            0 => String::new(),
            n => format!(" and {n} more"),
        };
        format!("{from} -> {to}: {}:{}{more}", sites[0].file, sites[0].line)
    }

    /// The shortest chain of arrows from `from` to any module `hit` accepts (`from` itself
    /// included, for a cycle), if there is one.
    pub fn path_to(&self, from: &str, hit: impl Fn(&str) -> bool) -> Option<Vec<String>> {
        let mut came_from: BTreeMap<String, String> = BTreeMap::new();
        let mut queue = VecDeque::from([from.to_owned()]);
        while let Some(at) = queue.pop_front() {
            for next in self.targets(&at) {
                if hit(next) {
                    let mut path = vec![next.clone(), at.clone()];
                    let mut back = &at;
                    while let Some(before) = came_from.get(back) {
                        path.push(before.clone());
                        back = before;
                    }
                    path.reverse();
                    return Some(path);
                }
                if next != from && !came_from.contains_key(next) {
                    came_from.insert(next.clone(), at.clone());
                    queue.push_back(next.clone());
                }
            }
        }
        None
    }

    /// Every group of modules that reach each other (strongly connected, more than one module),
    /// each with one cycle through its first module.
    pub fn cycles(&self) -> Vec<(Vec<String>, Vec<String>)> {
        let mut found = Vec::new();
        let mut placed = BTreeSet::new();
        for module in &self.modules {
            if placed.contains(module) {
                continue;
            }
            let group: Vec<String> = self
                .modules
                .iter()
                .filter(|other| {
                    *other == module
                        || (self.path_to(module, |m| m == other.as_str()).is_some()
                            && self.path_to(other, |m| m == module.as_str()).is_some())
                })
                .cloned()
                .collect();
            placed.extend(group.iter().cloned());
            if group.len() > 1 {
                let cycle = self
                    .path_to(module, |m| m == module.as_str())
                    .unwrap_or_default();
                found.push((group, cycle));
            }
        }
        found
    }
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("a source folder is readable")
        .map(|entry| entry.expect("a folder entry").path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

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

/// The modules `lib.rs` declares (`mod x;`, `pub mod x;`).
fn declared_modules(stripped: &str) -> BTreeSet<String> {
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
