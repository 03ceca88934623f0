//! Text that is not the model's markup (answers printed raw by `exec`, log lines, stored titles
//! and snippets) made safe for a terminal: every escape sequence (OSC 52 clipboard writes,
//! title changes, CSI cursor moves, DCS strings, their 8-bit C1 forms) and every other control
//! character goes; newlines and tabs stay. No control character survives, so pieces printed one
//! after another cannot form a sequence between them either.

/// `text` without terminal control sequences or control characters, but for `\n` and `\t`.
pub fn sanitize(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\n' | '\t' => out.push(c),
            '\x1b' => match chars.next() {
                Some('[') => skip_csi(&mut chars),
                Some(']' | 'P' | 'X' | '^' | '_') => skip_string(&mut chars),
                // ESC, intermediates (0x20–0x2F), then one final character.
                Some(' '..='/') => {
                    while chars.next_if(|c| (' '..='/').contains(c)).is_some() {}
                    chars.next();
                }
                _ => {}
            },
            '\u{9b}' => skip_csi(&mut chars),
            '\u{90}' | '\u{98}' | '\u{9d}' | '\u{9e}' | '\u{9f}' => skip_string(&mut chars),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

/// A CSI sequence's parameters and intermediates, up to and including its final byte.
fn skip_csi(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) {
    for c in chars.by_ref() {
        if ('\u{40}'..='\u{7e}').contains(&c) {
            return;
        }
    }
}

/// An OSC, DCS, SOS, PM or APC string, up to and including its terminator (BEL, ST or ESC \).
fn skip_string(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) {
    while let Some(c) = chars.next() {
        match c {
            '\x07' | '\u{9c}' => return,
            '\x1b' => {
                chars.next_if_eq(&'\\');
                return;
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::sanitize;

    #[test]
    fn clipboard_writes_titles_and_cursor_moves_are_removed_lines_and_tabs_kept() {
        let hostile = "a\x1b]52;c;cm0gLXJmIH4=\x07b\x1b]0;owned\x1b\\c\x1b[2J\x1b[1;1Hd\te\r\nf\u{9b}31mg\x08\x1b(Bh\x1bPq#0\x1b\\i";
        assert_eq!(sanitize(hostile), "abcd\te\nfghi");
        // A sequence cut in two leaves no escape in either piece.
        assert_eq!(sanitize("x\x1b]52;c;"), "x");
        assert_eq!(sanitize("cm0=\x07y"), "cm0=y");
    }
}
