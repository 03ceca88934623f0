//! The pty tests' terminal does what tmux does (its `scroll-on-clear` option, on by default)
//! and vt100 does not: on the main screen, erasing the whole display (`ESC [ 2 J` anywhere, or
//! `ESC [ J` / `ESC [ 0 J` with the cursor at the top left) first moves the rows in use into
//! the scrollback. A program that clears that way in inline mode leaves a copy of whatever was
//! on screen in the user's scrollback; the tests see it as tmux's users do.

/// Feeds the program's bytes to a vt100 parser, holding back the start of an escape sequence
/// a read cut in two until the rest comes.
#[derive(Default)]
pub struct Feed {
    carry: Vec<u8>,
}

impl Feed {
    pub fn process(&mut self, parser: &mut vt100::Parser, bytes: &[u8]) {
        let mut data = std::mem::take(&mut self.carry);
        data.extend_from_slice(bytes);
        let mut done = 0;
        let mut at = 0;
        while let Some(found) = data[at..].iter().position(|&b| b == 0x1b) {
            let start = at + found;
            match erase_in_display(&data[start..]) {
                Sequence::Incomplete => {
                    parser.process(&data[done..start]);
                    self.carry = data[start..].to_vec();
                    return;
                }
                Sequence::Other => at = start + 1,
                Sequence::Erase { whole, len } => {
                    parser.process(&data[done..start]);
                    scroll_into_history(parser, whole);
                    done = start;
                    at = start + len;
                }
            }
        }
        parser.process(&data[done..]);
    }
}

enum Sequence {
    /// The bytes end before the sequence does.
    Incomplete,
    /// Not an erase in display (or not one that scrolls).
    Other,
    /// `ESC [ Ps J` with Ps 0 (`whole` false: only from the top left is it the whole screen)
    /// or 2, `len` bytes long.
    Erase { whole: bool, len: usize },
}

/// Reads the escape sequence at the start of `bytes` (which starts with ESC).
fn erase_in_display(bytes: &[u8]) -> Sequence {
    match bytes.get(1) {
        None => return Sequence::Incomplete,
        Some(b'[') => {}
        Some(_) => return Sequence::Other,
    }
    let params = bytes[2..]
        .iter()
        .take_while(|b| b.is_ascii_digit() || **b == b';' || **b == b'?')
        .count();
    let Some(&last) = bytes.get(2 + params) else {
        return Sequence::Incomplete;
    };
    let len = 3 + params;
    match (&bytes[2..2 + params], last) {
        (b"" | b"0", b'J') => Sequence::Erase { whole: false, len },
        (b"2", b'J') => Sequence::Erase { whole: true, len },
        _ => Sequence::Other,
    }
}

/// What tmux does before such an erase: the rows down to the last one in use go into the
/// scrollback (newlines at the last row), the cursor stays where it was.
fn scroll_into_history(parser: &mut vt100::Parser, whole: bool) {
    let screen = parser.screen();
    if screen.alternate_screen() || (!whole && screen.cursor_position() != (0, 0)) {
        return;
    }
    let (rows, columns) = screen.size();
    let used = screen
        .rows(0, columns.get())
        .enumerate()
        .filter(|(_, row)| !row.trim().is_empty())
        .map(|(i, _)| i + 1)
        .last()
        .unwrap_or(0);
    if used == 0 {
        return;
    }
    let push = format!("\x1b7\x1b[{rows};1H{}\x1b8", "\n".repeat(used));
    parser.process(push.as_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::num::NonZeroU16;

    fn parser() -> vt100::Parser {
        let size = |n| NonZeroU16::new(n).unwrap();
        vt100::Parser::new(size(4), size(10), 100)
    }

    fn scrollback(parser: &mut vt100::Parser) -> usize {
        parser.screen_mut().set_scrollback(usize::MAX);
        let n = parser.screen().scrollback();
        parser.screen_mut().set_scrollback(0);
        n
    }

    #[test]
    fn an_erase_from_the_top_left_keeps_the_screen_in_the_scrollback() {
        let mut parser = parser();
        let mut feed = Feed::default();
        feed.process(&mut parser, b"a\r\nb\r\nc");
        // Cut in the middle of the sequence.
        feed.process(&mut parser, b"\x1b[1;1H\x1b[");
        feed.process(&mut parser, b"Jx");
        assert_eq!(scrollback(&mut parser), 3);
        assert_eq!(parser.screen().contents(), "x");
        // From another row it is an ordinary erase; a line erase never scrolls.
        feed.process(&mut parser, b"\r\ny\x1b[2;1H\x1b[J\x1b[1;1H\x1b[2K");
        assert_eq!(scrollback(&mut parser), 3);
        feed.process(&mut parser, b"z\x1b[2J");
        assert_eq!(scrollback(&mut parser), 4);
    }
}
