//! Bounded text output: keeps the head and the tail of a stream of bytes in constant memory,
//! with a line saying how much was cut from the middle. Invalid UTF-8 is shown lossily.

use std::collections::VecDeque;

#[derive(Debug)]
pub struct HeadTail {
    head: Vec<u8>,
    tail: VecDeque<u8>,
    half: usize,
    total: usize,
}

impl HeadTail {
    /// Keeps at most `limit` bytes: half from the start, half from the end.
    pub fn new(limit: usize) -> Self {
        let half = limit / 2;
        HeadTail {
            head: Vec::with_capacity(half.min(8192)),
            tail: VecDeque::new(),
            half,
            total: 0,
        }
    }

    pub fn push(&mut self, mut bytes: &[u8]) {
        self.total += bytes.len();
        if self.head.len() < self.half {
            let take = (self.half - self.head.len()).min(bytes.len());
            self.head.extend_from_slice(&bytes[..take]);
            bytes = &bytes[take..];
        }
        if bytes.len() >= self.half {
            self.tail.clear();
            self.tail.extend(&bytes[bytes.len() - self.half..]);
        } else {
            self.tail.extend(bytes);
            let excess = self.tail.len().saturating_sub(self.half);
            self.tail.drain(..excess);
        }
    }

    /// The kept text; when bytes were cut, a line in the middle says how many.
    pub fn finish(self) -> String {
        let kept = self.head.len() + self.tail.len();
        let head = String::from_utf8_lossy(&self.head).into_owned();
        let tail_bytes: Vec<u8> = self.tail.into_iter().collect();
        let tail = String::from_utf8_lossy(&tail_bytes);
        let mut text = head;
        if self.total > kept {
            text.push_str(&format!(
                "\n[… {} bytes of output cut; the first and last {} bytes are shown …]\n",
                self.total - kept,
                self.half
            ));
        }
        text.push_str(&tail);
        text.trim_end_matches('\n').to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_output_is_kept_whole() {
        let mut out = HeadTail::new(100);
        out.push(b"hello\n");
        out.push(b"world\n");
        assert_eq!(out.finish(), "hello\nworld");
    }

    #[test]
    fn long_output_keeps_head_and_tail() {
        let mut out = HeadTail::new(20);
        for i in 0..1000 {
            out.push(format!("{i:04}\n").as_bytes());
        }
        let text = out.finish();
        assert!(text.starts_with("0000\n0001"));
        assert!(text.ends_with("0998\n0999"));
        assert!(text.contains("4980 bytes of output cut"), "{text}");
    }

    #[test]
    fn invalid_utf8_is_shown_lossily() {
        let mut out = HeadTail::new(100);
        out.push(&[b'a', 0xff, b'b']);
        assert_eq!(out.finish(), "a\u{fffd}b");
    }
}
