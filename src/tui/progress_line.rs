//! A running call's progress (`tool_progress`: an MCP server's `notifications/progress`) as a
//! line of its block's live tail, the tail bash output uses (`tool_view`): `progress 1/2 (50%)
//! · message`. Each report is a line; the last few show while the call runs, and its result
//! replaces them.

use crate::engine::ToolProgress;

/// `n` without a fraction when it has none.
fn number(n: f64) -> String {
    if n.fract() == 0.0 && n.abs() < 1e15 {
        format!("{}", n as i64)
    } else {
        format!("{n:.2}")
    }
}

/// The line one report adds to its call's block.
pub(super) fn line(progress: &ToolProgress) -> String {
    let mut line = format!("progress {}", number(progress.progress));
    if let Some(total) = progress.total {
        line.push_str(&format!("/{}", number(total)));
        if total > 0.0 {
            let percent = (progress.progress / total * 100.0).clamp(0.0, 100.0);
            line.push_str(&format!(" ({percent:.0}%)"));
        }
    }
    if let Some(message) = progress.message.as_deref().filter(|m| !m.trim().is_empty()) {
        // One line per report: a server's newlines would push the others out of the tail.
        line.push_str(" · ");
        line.push_str(&message.replace(['\n', '\r'], " "));
    }
    line.push('\n');
    line
}
