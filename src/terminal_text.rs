//! Text that is not the model's markup (answers printed raw by `exec`, log lines, stored titles
//! and snippets) made safe for a terminal: every escape sequence (OSC 52 clipboard writes,
//! title changes, CSI cursor moves) and every other control character goes; newlines and tabs
//! stay. No control character survives, so pieces printed one after another cannot form a
//! sequence between them either.

/// `text` without terminal control sequences or control characters, but for `\n` and `\t`.
pub fn sanitize(text: &str) -> String {
    let stripped = strip_ansi_escapes::strip_str(text);
    stripped.chars().filter(|&c| is_printable(c)).collect()
}

fn is_printable(c: char) -> bool {
    c == '\n' || c == '\t' || !c.is_control()
}

#[cfg(test)]
mod tests {
    use super::sanitize;

    #[test]
    fn clipboard_writes_titles_and_cursor_moves_are_removed_lines_and_tabs_kept() {
        let hostile = "a\x1b]52;c;cm0gLXJmIH4=\x07b\x1b]0;owned\x1b\\c\x1b[2J\x1b[1;1Hd\te\r\nf\u{9b}31mg\x08";
        assert_eq!(sanitize(hostile), "abcd\te\nf31mg");
        assert!(!sanitize("\x1b]52;c;").contains('\x1b'));
    }
}
