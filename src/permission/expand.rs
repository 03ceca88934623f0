//! The words the shell expands to file names, expanded as bash does (brace expansion, then a
//! leading `~`, then `*`, `?` and `[…]` matched against the directories, a leading `.` only
//! matched explicitly), so the decision judges the files a command is really given: `cat .e?v`
//! reads `.env`. Patterns come from the parser (`SimpleCommand::patterns`), quoted characters
//! escaped with `\`. Only the directories the pattern names are read, never what a match holds.
//! What cannot be expanded with certainty (`**`, which `globstar` changes, extended globs,
//! character classes, `~user`, too many words or files) is an error: the caller asks.

use std::path::{Path, PathBuf};

/// Words brace expansion may make of one word before it counts as too wide to judge.
const MAX_WORDS: usize = 256;
/// Files one word may expand to before it counts as too wide to judge.
const MAX_MATCHES: usize = 1_000;
/// Directory entries read for one word.
const MAX_SCANNED: usize = 20_000;

/// A character of a pattern: literal (it was quoted or escaped) or as written, where it may
/// mean something to the expansion.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tok {
    Lit(char),
    Meta(char),
}

impl Tok {
    fn char(self) -> char {
        match self {
            Tok::Lit(c) | Tok::Meta(c) => c,
        }
    }
}

use Tok::{Lit, Meta};

/// Why the files a word expands to cannot be told with certainty (the decision then asks).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(super) enum Unexpandable {
    #[error("it is an extended glob")]
    ExtendedGlob,
    #[error("`**` means more with bash's `globstar` option")]
    Globstar,
    #[error("it expands to more than {0} files")]
    TooManyFiles(usize),
    #[error("its braces make more than {0} words")]
    TooManyWords(usize),
    /// `text`: what stands between the braces.
    #[error("the brace sequence `{{{text}}}` is not understood")]
    Sequence { text: String },
    #[error("`~user` expands to another user's home")]
    OtherHome,
    #[error("`~` expands to $HOME, which is not set")]
    NoHome,
    #[error("it reads more than {0} directory entries")]
    TooManyEntries(usize),
    #[error("it uses a character class such as `[[:alpha:]]`")]
    CharacterClass,
}

/// The paths `pattern` expands to: relative ones joined to `base`, `~` as `home`. A glob that
/// matches nothing stays the word itself, as bash leaves it.
pub(super) fn expand(
    pattern: &str,
    base: &Path,
    home: Option<&Path>,
) -> Result<Vec<PathBuf>, Unexpandable> {
    let mut words = Vec::new();
    braces(tokens(pattern), &mut words)?;
    let mut out = Vec::new();
    for word in words {
        let word = tilde(word, home)?;
        if word.iter().any(|t| matches!(t, Meta('(' | ')' | '|'))) {
            return Err(Unexpandable::ExtendedGlob);
        }
        if !has_glob(&word) {
            out.push(base.join(literal(&word)));
            continue;
        }
        if word.windows(2).any(|w| w == [Meta('*'), Meta('*')]) {
            return Err(Unexpandable::Globstar);
        }
        let matched = glob(&word, base)?;
        if matched.is_empty() {
            out.push(base.join(literal(&word)));
        }
        out.extend(matched);
        if out.len() > MAX_MATCHES {
            return Err(Unexpandable::TooManyFiles(MAX_MATCHES));
        }
    }
    Ok(out)
}

fn tokens(pattern: &str) -> Vec<Tok> {
    let mut out = Vec::new();
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        out.push(match c {
            '\\' => Lit(chars.next().unwrap_or('\\')),
            c => Meta(c),
        });
    }
    out
}

fn literal(word: &[Tok]) -> String {
    word.iter().map(|t| t.char()).collect()
}

fn has_glob(word: &[Tok]) -> bool {
    word.iter().any(|t| matches!(t, Meta('*' | '?' | '[')))
}

/// Brace expansion, left to right as bash does it: `a{b,c}d`, `{1..3}`, `{a..e..2}`.
fn braces(word: Vec<Tok>, out: &mut Vec<Vec<Tok>>) -> Result<(), Unexpandable> {
    if out.len() >= MAX_WORDS {
        return Err(Unexpandable::TooManyWords(MAX_WORDS));
    }
    let Some((open, close, items)) = first_brace(&word)? else {
        out.push(word);
        return Ok(());
    };
    for item in items {
        let mut next = word[..open].to_vec();
        next.extend(item);
        next.extend_from_slice(&word[close + 1..]);
        braces(next, out)?;
    }
    Ok(())
}

/// A brace expression: where it opens, where it closes, and the words it stands for.
type Brace = (usize, usize, Vec<Vec<Tok>>);

/// The first brace expression of `word`.
fn first_brace(word: &[Tok]) -> Result<Option<Brace>, Unexpandable> {
    for open in 0..word.len() {
        if word[open] != Meta('{') {
            continue;
        }
        let mut depth = 0usize;
        let mut close = None;
        for (at, tok) in word.iter().enumerate().skip(open) {
            match tok {
                Meta('{') => depth += 1,
                Meta('}') => {
                    depth -= 1;
                    if depth == 0 {
                        close = Some(at);
                        break;
                    }
                }
                _ => {}
            }
        }
        let Some(close) = close else { continue };
        let inside = &word[open + 1..close];
        let mut items = Vec::new();
        let mut depth = 0usize;
        let mut start = 0;
        for (at, tok) in inside.iter().enumerate() {
            match tok {
                Meta('{') => depth += 1,
                Meta('}') => depth = depth.saturating_sub(1),
                Meta(',') if depth == 0 => {
                    items.push(inside[start..at].to_vec());
                    start = at + 1;
                }
                _ => {}
            }
        }
        if !items.is_empty() {
            items.push(inside[start..].to_vec());
            return Ok(Some((open, close, items)));
        }
        if let Some(items) = sequence(inside)? {
            return Ok(Some((open, close, items)));
        }
    }
    Ok(None)
}

/// `{A..B}` or `{A..B..STEP}` of integers or letters. Anything else with `..` in it is not
/// understood well enough to say what bash makes of it.
fn sequence(inside: &[Tok]) -> Result<Option<Vec<Vec<Tok>>>, Unexpandable> {
    if inside.iter().any(|t| matches!(t, Lit(_))) {
        return Ok(None);
    }
    let text = literal(inside);
    if !text.contains("..") {
        return Ok(None);
    }
    let unsure = || Unexpandable::Sequence { text: text.clone() };
    let parts: Vec<&str> = text.split("..").collect();
    let step: i64 = match parts.as_slice() {
        [_, _] => 1,
        [_, _, step] => step.parse::<i64>().map_err(|_| unsure())?.abs().max(1),
        _ => return Err(unsure()),
    };
    let words: Vec<String> = match (parts[0].parse::<i64>(), parts[1].parse::<i64>()) {
        (Ok(from), Ok(to)) => {
            if from.abs_diff(to) / step.unsigned_abs() >= MAX_WORDS as u64 {
                return Err(Unexpandable::TooManyWords(MAX_WORDS));
            }
            let padded = |s: &str| {
                s.trim_start_matches('-').len() > 1 && s.trim_start_matches('-').starts_with('0')
            };
            let width = if padded(parts[0]) || padded(parts[1]) {
                parts[0].len().max(parts[1].len())
            } else {
                0
            };
            let mut values = Vec::new();
            let mut value = from;
            while (from <= to && value <= to) || (from > to && value >= to) {
                values.push(format!("{value:0width$}"));
                value += if from <= to { step } else { -step };
            }
            values
        }
        _ => {
            let letter = |s: &str| {
                let mut chars = s.chars();
                match (chars.next(), chars.next()) {
                    (Some(c), None) if c.is_ascii_alphabetic() => Some(c as u8),
                    _ => None,
                }
            };
            let (Some(from), Some(to)) = (letter(parts[0]), letter(parts[1])) else {
                return Err(unsure());
            };
            let step = u8::try_from(step).unwrap_or(u8::MAX);
            let (low, high) = (from.min(to), from.max(to));
            let mut values: Vec<String> = (low..=high)
                .step_by(step.into())
                .map(|b| char::from(b).to_string())
                .collect();
            if from > to {
                values.reverse();
            }
            values
        }
    };
    Ok(Some(
        words
            .into_iter()
            .map(|w| w.chars().map(Lit).collect())
            .collect(),
    ))
}

/// A leading `~` or `~/` becomes `home`; `~user` is refused.
fn tilde(word: Vec<Tok>, home: Option<&Path>) -> Result<Vec<Tok>, Unexpandable> {
    if word.first() != Some(&Meta('~')) {
        return Ok(word);
    }
    if word.get(1).is_some_and(|t| t.char() != '/') {
        return Err(Unexpandable::OtherHome);
    }
    let home = home.ok_or(Unexpandable::NoHome)?;
    let mut out: Vec<Tok> = home.to_string_lossy().chars().map(Lit).collect();
    out.extend_from_slice(&word[1..]);
    Ok(out)
}

/// The paths `word` (with a glob) matches, relative ones below `base`.
fn glob(word: &[Tok], base: &Path) -> Result<Vec<PathBuf>, Unexpandable> {
    let absolute = word.first().is_some_and(|t| t.char() == '/');
    let components: Vec<&[Tok]> = word
        .split(|t| t.char() == '/')
        .filter(|c| !c.is_empty())
        .collect();
    let last = components.len().saturating_sub(1);
    let mut current = vec![if absolute {
        PathBuf::from("/")
    } else {
        base.to_owned()
    }];
    let mut scanned = 0usize;
    for (index, component) in components.iter().enumerate() {
        if !has_glob(component) {
            let name = literal(component);
            for path in &mut current {
                path.push(&name);
            }
            continue;
        }
        // A leading `.` must be matched by a `.` written as such (bash without `dotglob`).
        let explicit_dot = component.first().is_some_and(|t| t.char() == '.');
        let mut next = Vec::new();
        for dir in &current {
            let Ok(entries) = std::fs::read_dir(dir) else {
                continue;
            };
            // Older bash matches `.` and `..` with `.*`: judged as if it did.
            let mut names: Vec<String> = if explicit_dot {
                vec![".".into(), "..".into()]
            } else {
                Vec::new()
            };
            for entry in entries {
                scanned += 1;
                if scanned > MAX_SCANNED {
                    return Err(Unexpandable::TooManyEntries(MAX_SCANNED));
                }
                if let Ok(entry) = entry {
                    names.push(entry.file_name().to_string_lossy().into_owned());
                }
            }
            for name in names {
                if name.starts_with('.') && !explicit_dot {
                    continue;
                }
                let chars: Vec<char> = name.chars().collect();
                if !matches(component, &chars)? {
                    continue;
                }
                let path = dir.join(&name);
                if index < last && !path.is_dir() {
                    continue;
                }
                next.push(path);
                if next.len() > MAX_MATCHES {
                    return Err(Unexpandable::TooManyFiles(MAX_MATCHES));
                }
            }
        }
        current = next;
        if current.is_empty() {
            break;
        }
    }
    Ok(current)
}

/// Whether `name` matches the pattern component `pattern` (`*`, `?`, `[…]`).
fn matches(pattern: &[Tok], name: &[char]) -> Result<bool, Unexpandable> {
    let (mut p, mut n) = (0, 0);
    // Where the last `*` was, and the name position it has swallowed up to.
    let mut star: Option<(usize, usize)> = None;
    while n < name.len() {
        let step = match pattern.get(p) {
            Some(Meta('*')) => {
                star = Some((p, n));
                p += 1;
                continue;
            }
            Some(Meta('?')) => Some(1),
            Some(Meta('[')) => match class(&pattern[p..], name[n])? {
                Some((true, len)) => Some(len),
                Some((false, _)) => None,
                // An unclosed `[` is a literal `[`.
                None => (name[n] == '[').then_some(1),
            },
            Some(tok) => (tok.char() == name[n]).then_some(1),
            None => None,
        };
        match (step, star) {
            (Some(len), _) => {
                p += len;
                n += 1;
            }
            (None, Some((star_at, swallowed))) => {
                p = star_at + 1;
                n = swallowed + 1;
                star = Some((star_at, swallowed + 1));
            }
            (None, None) => return Ok(false),
        }
    }
    while pattern.get(p) == Some(&Meta('*')) {
        p += 1;
    }
    Ok(p == pattern.len())
}

/// The bracket expression at the start of `pattern` against `c`: whether it matches and how
/// many tokens it spans, `None` when it is not closed.
fn class(pattern: &[Tok], c: char) -> Result<Option<(bool, usize)>, Unexpandable> {
    let mut at = 1;
    let negated = matches!(pattern.get(1), Some(Meta('!' | '^')));
    if negated {
        at += 1;
    }
    let first = at;
    let mut found = false;
    loop {
        let Some(tok) = pattern.get(at) else {
            return Ok(None);
        };
        if *tok == Meta(']') && at > first {
            break;
        }
        if *tok == Meta('[') && matches!(pattern.get(at + 1), Some(Meta(':' | '=' | '.'))) {
            return Err(Unexpandable::CharacterClass);
        }
        let low = tok.char();
        let range_end = pattern
            .get(at + 2)
            .filter(|end| pattern.get(at + 1) == Some(&Meta('-')) && **end != Meta(']'));
        match range_end {
            Some(high) => {
                found |= low <= c && c <= high.char();
                at += 3;
            }
            None => {
                found |= low == c;
                at += 1;
            }
        }
    }
    Ok(Some((found != negated, at + 1)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(pattern: &str, base: &Path) -> Result<Vec<String>, Unexpandable> {
        let mut out: Vec<String> = expand(pattern, base, Some(Path::new("/home/u")))?
            .iter()
            .map(|p| {
                p.strip_prefix(base)
                    .map(|r| r.display().to_string())
                    .unwrap_or_else(|_| p.display().to_string())
            })
            .collect();
        out.sort();
        Ok(out)
    }

    #[test]
    fn globs_braces_and_tilde_expand_as_bash_does() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path();
        for name in [
            ".env",
            "a.pem",
            "b.rs",
            "src/main.rs",
            "src/.env",
            "[x",
            "x-1",
        ] {
            let path = base.join(name);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "").unwrap();
        }
        let table: &[(&str, &[&str])] = &[
            (".e?v", &[".env"]),
            (".en*", &[".env"]),
            ("\\.e*", &[".env"]),
            ("*", &["[x", "a.pem", "b.rs", "src", "x-1"]),
            ("*.pem", &["a.pem"]),
            ("?env", &["?env"]),
            ("[.]env", &["[.]env"]),
            (".[e]nv", &[".env"]),
            (".[!x]nv", &[".env"]),
            (".[^x]nv", &[".env"]),
            (".[a-f]nv", &[".env"]),
            (".[\\!]nv", &[".[!]nv"]),
            (".[a\\-f]nv", &[".[a-f]nv"]),
            ("src/*", &["src/main.rs"]),
            // `src/.` is `src` as a path.
            ("src/.*", &["src", "src/..", "src/.env"]),
            ("s*/.e*", &["src/.env"]),
            ("*/main.rs", &["src/main.rs"]),
            ("\\*", &["*"]),
            ("[x", &["[x"]),
            ("x-?", &["x-1"]),
            (".{e,x}nv", &[".env", ".xnv"]),
            (".e{m..o}v", &[".emv", ".env", ".eov"]),
            ("x-{1..3}", &["x-1", "x-2", "x-3"]),
            ("x-{01..3..2}", &["x-01", "x-03"]),
            ("{a,b}.{pem,rs}", &["a.pem", "a.rs", "b.pem", "b.rs"]),
            ("{x}{.e*,y}", &["{x}.e*", "{x}y"]),
            ("{{a,b}}", &["{a}", "{b}"]),
            ("\\{a,b}", &["{a,b}"]),
            ("~/.env", &["/home/u/.env"]),
            ("~", &["/home/u"]),
            ("{~,x}/y", &["/home/u/y", "x/y"]),
        ];
        for (pattern, want) in table {
            assert_eq!(names(pattern, base).unwrap(), *want, "{pattern}");
        }
        for unsure in [
            "src/**/*.rs",
            "@(a|b)",
            "[[:alpha:]]*",
            "~root/x",
            "{1..1000}",
            "{a..3}",
            "{1..2..x}",
        ] {
            assert!(names(unsure, base).is_err(), "{unsure}");
        }
        assert!(expand("~/x", base, None).is_err(), "no $HOME");
    }

    #[test]
    fn too_many_files_are_not_listed() {
        let dir = tempfile::tempdir().unwrap();
        for i in 0..=MAX_MATCHES {
            std::fs::write(dir.path().join(format!("f{i}")), "").unwrap();
        }
        assert!(expand("f*", dir.path(), None).is_err());
        assert_eq!(expand("g*", dir.path(), None).unwrap().len(), 1);
    }
}
