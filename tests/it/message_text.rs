//! Messages read as written: a string literal broken over lines with `\` and the next line's
//! indentation must not carry that indentation into the text. Three user-facing messages did
//! ("Quit and run                  `harness9 --resume …`"), from a tool that turned the `\` into
//! nothing. The scan reads `src/` as text and names every literal with a run of ten or more
//! spaces inside it.

use std::path::Path;

use super::error_types::sources;

#[test]
fn no_message_carries_a_continuation_lines_indentation() {
    let mut files = Vec::new();
    sources(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
        &mut files,
    );
    assert!(files.len() > 100, "the scan sees src/");
    let mut found = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        for (number, line) in text.lines().enumerate() {
            let code = line.trim_start();
            if code.starts_with("//") {
                continue;
            }
            // The parts between quotes on this line: odd pieces are inside a literal.
            let inside = code.split('"').skip(1).step_by(2);
            if inside
                .into_iter()
                .any(|literal| literal.trim().contains("          "))
            {
                found.push(format!("{}:{}: {code}", file.display(), number + 1));
            }
        }
    }
    assert!(found.is_empty(), "{}", found.join("\n"));
}
