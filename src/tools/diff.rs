//! Unified diffs of a file change, for the model and for the screen.

/// Lines of diff kept before the rest is summarised.
const MAX_DIFF_LINES: usize = 400;

/// A unified diff of `old` → `new` with three lines of context, headed `a/path` / `b/path`.
pub fn unified(path: &str, old: &str, new: &str) -> String {
    let diff = similar::TextDiff::from_lines(old, new);
    let text = diff
        .unified_diff()
        .context_radius(3)
        .header(&format!("a/{path}"), &format!("b/{path}"))
        .to_string();
    let lines: Vec<&str> = text.lines().collect();
    if lines.len() <= MAX_DIFF_LINES {
        return text.trim_end().to_owned();
    }
    format!(
        "{}\n[… {} more diff lines …]",
        lines[..MAX_DIFF_LINES].join("\n"),
        lines.len() - MAX_DIFF_LINES
    )
}
