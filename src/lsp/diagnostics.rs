//! The diagnostics an edit introduced, as the lines its result ends with: errors first, then
//! warnings (information and hints are left out); only those that were not there before the edit
//! (compared by severity, source, code and message, since an edit moves lines); at most
//! `MAX_SHOWN` of them, each message cut to `MAX_MESSAGE` characters.

use std::collections::HashMap;
use std::path::Path;

use async_lsp::lsp_types::{Diagnostic, DiagnosticSeverity, NumberOrString};

/// How many new diagnostics a result shows; the rest are counted.
pub const MAX_SHOWN: usize = 10;
/// How many characters of one message a result shows.
pub const MAX_MESSAGE: usize = 300;

/// What makes two diagnostics the same one, wherever the edit moved it.
fn identity(diagnostic: &Diagnostic) -> (u8, String, String, String) {
    let code = match &diagnostic.code {
        Some(NumberOrString::Number(n)) => n.to_string(),
        Some(NumberOrString::String(s)) => s.clone(),
        None => String::new(),
    };
    (
        rank(diagnostic),
        diagnostic.source.clone().unwrap_or_default(),
        code,
        diagnostic.message.clone(),
    )
}

/// 0 for errors, 1 for warnings (a missing severity counts as an error, as the protocol says
/// the client may decide), 2 for the rest.
fn rank(diagnostic: &Diagnostic) -> u8 {
    match diagnostic.severity {
        None | Some(DiagnosticSeverity::ERROR) => 0,
        Some(DiagnosticSeverity::WARNING) => 1,
        Some(_) => 2,
    }
}

/// The errors and warnings of `after` that `before` did not have (as many times as they are
/// new), errors first, each group in the order of the file.
pub fn introduced(before: &[Diagnostic], after: &[Diagnostic]) -> Vec<Diagnostic> {
    let mut known: HashMap<_, usize> = HashMap::new();
    for diagnostic in before {
        *known.entry(identity(diagnostic)).or_default() += 1;
    }
    let mut new: Vec<Diagnostic> = after
        .iter()
        .filter(|diagnostic| rank(diagnostic) < 2)
        .filter(|diagnostic| match known.get_mut(&identity(diagnostic)) {
            Some(count) if *count > 0 => {
                *count -= 1;
                false
            }
            _ => true,
        })
        .cloned()
        .collect();
    new.sort_by_key(|d| (rank(d), d.range.start.line, d.range.start.character));
    new
}

/// The lines for `diagnostics` of `shown_path` (as the model names the file), bounded.
pub fn lines(shown_path: &str, diagnostics: &[Diagnostic]) -> String {
    let mut out = String::new();
    for diagnostic in diagnostics.iter().take(MAX_SHOWN) {
        let kind = if rank(diagnostic) == 0 {
            "error"
        } else {
            "warning"
        };
        // One line per diagnostic: a message's own lines (pyright explains on a second one)
        // joined with "; ".
        let joined = diagnostic
            .message
            .lines()
            .map(|line| line.split_whitespace().collect::<Vec<_>>().join(" "))
            .filter(|line| !line.is_empty())
            .collect::<Vec<_>>()
            .join("; ");
        let message = if joined.chars().count() > MAX_MESSAGE {
            let mut cut: String = joined.chars().take(MAX_MESSAGE).collect();
            cut.push('…');
            cut
        } else {
            joined
        };
        let origin = match (&diagnostic.source, &diagnostic.code) {
            (Some(source), Some(NumberOrString::String(code))) => format!(" [{source} {code}]"),
            (Some(source), Some(NumberOrString::Number(code))) => format!(" [{source} {code}]"),
            (Some(source), None) => format!(" [{source}]"),
            (None, _) => String::new(),
        };
        out.push_str(&format!(
            "{shown_path}:{}:{}: {kind}: {message}{origin}\n",
            diagnostic.range.start.line + 1,
            diagnostic.range.start.character + 1
        ));
    }
    if diagnostics.len() > MAX_SHOWN {
        out.push_str(&format!("… and {} more\n", diagnostics.len() - MAX_SHOWN));
    }
    out.trim_end().to_owned()
}

/// The text an edit's result ends with for the new diagnostics of `path`, fenced as data from
/// outside (a server's messages quote the project's code, which anyone may have written).
pub fn report(server: &str, workdir: &Path, path: &Path, new: &[Diagnostic]) -> Option<String> {
    if new.is_empty() {
        return None;
    }
    let shown = crate::files::paths::display(workdir, path);
    let errors = new.iter().filter(|d| rank(d) == 0).count();
    let summary = format!(
        "The language server ({server}) reports {errors} new error(s) and {} new warning(s) \
         after this change:",
        new.len() - errors
    );
    let fenced =
        crate::schema::fence_outside(&format!("language server {server}"), &lines(&shown, new));
    Some(format!("{summary}\n{fenced}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use async_lsp::lsp_types::{Position, Range};

    fn diagnostic(line: u32, severity: DiagnosticSeverity, message: &str) -> Diagnostic {
        Diagnostic {
            range: Range::new(Position::new(line, 4), Position::new(line, 9)),
            severity: Some(severity),
            source: Some("Pyright".into()),
            message: message.into(),
            ..Diagnostic::default()
        }
    }

    #[test]
    fn only_new_errors_and_warnings_come_back_errors_first_wherever_lines_moved() {
        let before = [
            diagnostic(3, DiagnosticSeverity::ERROR, "old error"),
            diagnostic(5, DiagnosticSeverity::WARNING, "old warning"),
        ];
        let after = [
            diagnostic(1, DiagnosticSeverity::WARNING, "new warning"),
            diagnostic(9, DiagnosticSeverity::ERROR, "old error"),
            diagnostic(7, DiagnosticSeverity::ERROR, "new error"),
            diagnostic(8, DiagnosticSeverity::HINT, "a hint"),
            diagnostic(6, DiagnosticSeverity::WARNING, "old warning"),
        ];
        let new = introduced(&before, &after);
        let messages: Vec<_> = new.iter().map(|d| d.message.as_str()).collect();
        assert_eq!(messages, ["new error", "new warning"]);
        assert_eq!(
            lines("m.py", &new),
            "m.py:8:5: error: new error [Pyright]\nm.py:2:5: warning: new warning [Pyright]"
        );
    }

    #[test]
    fn the_report_is_bounded_and_fenced() {
        let long = "x".repeat(2 * MAX_MESSAGE);
        let many: Vec<_> = (0..25)
            .map(|line| diagnostic(line, DiagnosticSeverity::ERROR, &long))
            .collect();
        let text = report("pyright", Path::new("/w"), Path::new("/w/m.py"), &many).unwrap();
        assert!(text.contains("[data from outside"), "{text}");
        assert!(text.contains("… and 15 more"), "{text}");
        assert!(
            text.len() < MAX_SHOWN * (MAX_MESSAGE + 60) + 400,
            "{}",
            text.len()
        );
        assert_eq!(
            report("pyright", Path::new("/w"), Path::new("/w/m.py"), &[]),
            None
        );
    }
}
