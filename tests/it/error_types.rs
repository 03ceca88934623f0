//! Failures are data: no signature visible outside its module returns a `String` (or a boxed
//! `dyn Error`) as its error. A front end decides on a typed error's kind, never on its words.
//!
//! The scan reads the whole of `src/` as text: every `pub`, `pub(crate)`, `pub(super)` or
//! `pub(in ...)` function that returns or takes (as an argument of its own, not a callback's) a
//! `Result<_, String>` or `Result<_, Box<dyn Error>>`, and every such `pub type` alias and `pub`
//! field, fails the test, named by file and line. Only functions private to their file may keep
//! text errors; nothing is allow-listed. The session protocol's enum variants are payloads, not
//! signatures; they carry `Failure`, and a front end passes that on rather than its words.

use std::path::{Path, PathBuf};

/// Every `.rs` file under `dir`, in a stable order.
pub(crate) fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut paths: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
    paths.sort();
    for path in paths {
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The generic arguments of the first `Result<...>` in `text`, split at top-level commas.
/// `->` inside a closure type is not a closing bracket.
fn result_arguments(text: &str) -> Vec<Vec<String>> {
    let text = text.replace("->", "→");
    let mut found = Vec::new();
    let mut rest = text.as_str();
    while let Some(at) = rest.find("Result<") {
        let inner = &rest[at + "Result<".len()..];
        let mut depth = 0usize;
        let mut current = String::new();
        let mut arguments = Vec::new();
        for c in inner.chars() {
            match c {
                '<' | '(' | '[' => {
                    depth += 1;
                    current.push(c);
                }
                '>' | ')' | ']' if depth == 0 => break,
                '>' | ')' | ']' => {
                    depth -= 1;
                    current.push(c);
                }
                ',' if depth == 0 => arguments.push(std::mem::take(&mut current)),
                _ => current.push(c),
            }
        }
        arguments.push(current);
        found.push(arguments.iter().map(|a| a.trim().to_string()).collect());
        rest = &rest[at + "Result<".len()..];
    }
    found
}

/// Whether a type's text holds a `Result` whose error is a string or a boxed `dyn Error`.
fn text_error(ty: &str) -> bool {
    result_arguments(ty).iter().any(|arguments| {
        arguments.get(1).is_some_and(|error| {
            let error = error.replace(' ', "");
            error == "String"
                || error == "std::string::String"
                || (error.starts_with("Box<dyn") && error.contains("Error"))
        })
    })
}

/// Whether a line opens an item visible beyond its own file (`pub(super)` reaches the parent
/// module's file).
fn crosses(line: &str) -> bool {
    line.trim_start().starts_with("pub ") || line.trim_start().starts_with("pub(")
}

/// The types of a function's own arguments (`self` has none), split at top-level commas.
fn argument_types(signature: &str) -> Vec<String> {
    let Some(open) = signature
        .find("fn ")
        .and_then(|at| signature[at..].find('(').map(|open| at + open))
    else {
        return Vec::new();
    };
    let text = signature[open + 1..].replace("->", "→");
    let mut depth = 0usize;
    let mut current = String::new();
    let mut arguments = Vec::new();
    for c in text.chars() {
        match c {
            '<' | '(' | '[' => depth += 1,
            ')' if depth == 0 => break,
            '>' | ')' | ']' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                arguments.push(std::mem::take(&mut current));
                continue;
            }
            _ => {}
        }
        current.push(c);
    }
    arguments.push(current);
    arguments
        .iter()
        .filter_map(|argument| {
            argument
                .split_once(": ")
                .map(|(_, ty)| ty.trim().to_string())
        })
        .collect()
}

/// What follows the `->` after a function's argument list (up to a `where`), or nothing.
fn return_type(signature: &str) -> String {
    let Some(open) = signature
        .find("fn ")
        .and_then(|at| signature[at..].find('(').map(|open| at + open))
    else {
        return String::new();
    };
    let mut depth = 0usize;
    for (at, c) in signature[open..].char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    let after = &signature[open + at + 1..];
                    return after
                        .trim_start()
                        .strip_prefix("->")
                        .map(|ret| ret.split(" where ").next().unwrap_or(ret).to_string())
                        .unwrap_or_default();
                }
            }
            _ => {}
        }
    }
    String::new()
}

/// Signatures in one file's text that return or hold a text error, as `line: text`.
fn offenders(text: &str) -> Vec<String> {
    let lines: Vec<&str> = text.lines().collect();
    let mut found = Vec::new();
    for (index, line) in lines.iter().enumerate() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("//") || !crosses(trimmed) {
            continue;
        }
        // A signature may run over several lines: read on to its body, `;` or `=` value.
        let is_fn = trimmed.contains("fn ");
        let mut signature = String::new();
        for next in &lines[index..] {
            signature.push_str(next.trim());
            signature.push(' ');
            let end = next.trim_end();
            if next.contains('{') || end.ends_with(';') || (!is_fn && end.ends_with(',')) {
                break;
            }
        }
        let ty = if is_fn {
            // The return type and the arguments that are results themselves: an argument may
            // still take a callback that returns text (`impl Fn() -> Result<_, String>`).
            let mut types = vec![return_type(&signature)];
            types.extend(
                argument_types(&signature)
                    .into_iter()
                    .filter(|ty| ty.starts_with("Result<") || ty.starts_with("std::result::")),
            );
            types.join(" ")
        } else if signature.starts_with("pub type") || signature.contains(':') {
            signature.clone()
        } else {
            String::new()
        };
        if text_error(&ty) {
            found.push(format!("{}: {}", index + 1, trimmed));
        }
    }
    found
}

#[test]
fn no_text_errors_cross_a_module_boundary() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&root, &mut files);
    assert!(
        files.len() > 50,
        "the scan found the sources under {}",
        root.display()
    );
    let mut named = Vec::new();
    for file in files {
        let Ok(text) = std::fs::read_to_string(&file) else {
            continue;
        };
        let shown = file
            .strip_prefix(&root)
            .unwrap_or(&file)
            .display()
            .to_string();
        for offender in offenders(&text) {
            named.push(format!("src/{shown}:{offender}"));
        }
    }
    assert!(
        named.is_empty(),
        "signatures that carry a failure as text (give them a thiserror type):\n{}",
        named.join("\n")
    );
}

#[test]
fn the_scan_sees_what_it_is_meant_to() {
    let bad = "pub fn a() -> Result<(), String> {\n\
               pub(crate) async fn b(\n    x: u8,\n) -> Result<Vec<u8>, String> {\n\
               pub type F = Arc<dyn Fn(&str) -> Result<u8, String> + Send>;\n\
               pub c: Result<u8, Box<dyn std::error::Error>>,\n\
               pub(super) fn d() -> Result<(), String> {\n\
               pub fn e(app: &mut App, result: Result<String, String>) -> Vec<u8> {\n";
    assert_eq!(offenders(bad).len(), 6, "{:?}", offenders(bad));
    let fine = "fn a() -> Result<(), String> {\n\
                pub fn c(f: impl Fn() -> Result<(), String>) -> Result<String, MyError> {\n\
                pub fn d() -> std::io::Result<String> {\n\
                pub fn e(&self, result: Result<String, Failure>) {\n";
    assert!(offenders(fine).is_empty(), "{:?}", offenders(fine));
}
