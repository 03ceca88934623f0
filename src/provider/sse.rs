//! Server-sent events framing, bounded: bytes in, `(event, data)` pairs out. Each byte is scanned
//! once (an unfinished line is never re-parsed), a line or an event past its bound is an error,
//! and a UTF-8 character split across chunks is decoded only once its line is complete.

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SseEvent {
    /// The `event:` field, `message` when absent.
    pub event: String,
    /// The `data:` lines joined by newlines.
    pub data: String,
}

/// Why a stream cannot be framed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum SseError {
    #[error("an event-stream line longer than {0} bytes")]
    LineTooLong(usize),
    #[error("an event larger than {0} bytes")]
    EventTooLarge(usize),
    #[error("an event-stream line that is not UTF-8")]
    NotUtf8,
}

/// Incremental parser state of one stream.
#[derive(Debug)]
pub(crate) struct SseFramer {
    /// Bytes of the line not yet complete.
    pending: Vec<u8>,
    /// The last line ended with CR: a LF that follows belongs to it (CRLF split across chunks).
    after_cr: bool,
    /// Whether the first line (which may carry a byte-order mark) has been seen.
    started: bool,
    event: String,
    data: String,
    has_data: bool,
    max_line: usize,
    max_event: usize,
}

impl SseFramer {
    pub fn new(max_line: usize, max_event: usize) -> Self {
        SseFramer {
            pending: Vec::new(),
            after_cr: false,
            started: false,
            event: String::new(),
            data: String::new(),
            has_data: false,
            max_line,
            max_event,
        }
    }

    /// Feeds the next bytes of the stream; complete events are appended to `out`.
    pub fn push(&mut self, mut bytes: &[u8], out: &mut Vec<SseEvent>) -> Result<(), SseError> {
        while !bytes.is_empty() {
            if std::mem::take(&mut self.after_cr) && bytes[0] == b'\n' {
                bytes = &bytes[1..];
                continue;
            }
            let Some(end) = bytes.iter().position(|&b| b == b'\n' || b == b'\r') else {
                if self.pending.len() + bytes.len() > self.max_line {
                    return Err(SseError::LineTooLong(self.max_line));
                }
                self.pending.extend_from_slice(bytes);
                return Ok(());
            };
            if self.pending.len() + end > self.max_line {
                return Err(SseError::LineTooLong(self.max_line));
            }
            self.after_cr = bytes[end] == b'\r';
            if self.pending.is_empty() {
                self.line(&bytes[..end], out)?;
            } else {
                let mut line = std::mem::take(&mut self.pending);
                line.extend_from_slice(&bytes[..end]);
                self.line(&line, out)?;
            }
            bytes = &bytes[end + 1..];
        }
        Ok(())
    }

    fn line(&mut self, line: &[u8], out: &mut Vec<SseEvent>) -> Result<(), SseError> {
        let mut line = std::str::from_utf8(line).map_err(|_| SseError::NotUtf8)?;
        if !self.started {
            self.started = true;
            line = line.strip_prefix('\u{feff}').unwrap_or(line);
        }
        if line.is_empty() {
            let event = std::mem::take(&mut self.event);
            let mut data = std::mem::take(&mut self.data);
            if std::mem::take(&mut self.has_data) {
                data.pop();
                out.push(SseEvent {
                    event: if event.is_empty() {
                        "message".to_owned()
                    } else {
                        event
                    },
                    data,
                });
            }
            return Ok(());
        }
        if line.starts_with(':') {
            return Ok(());
        }
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line, ""),
        };
        match field {
            "event" => value.clone_into(&mut self.event),
            "data" => {
                if self.data.len() + value.len() + 1 > self.max_event {
                    return Err(SseError::EventTooLarge(self.max_event));
                }
                self.data.push_str(value);
                self.data.push('\n');
                self.has_data = true;
            }
            // `id` and `retry` matter to reconnecting browsers, not to one model call.
            _ => {}
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame_in_pieces(body: &[u8], piece: usize) -> Vec<SseEvent> {
        let mut framer = SseFramer::new(1024, 1024);
        let mut out = Vec::new();
        for chunk in body.chunks(piece) {
            framer.push(chunk, &mut out).unwrap();
        }
        out
    }

    #[test]
    fn events_are_the_same_however_the_bytes_are_split() {
        let body = "\u{feff}: comment\r\nevent: delta\r\ndata: {\"t\": \"h\u{e9}llo\"}\r\n\r\ndata:a\ndata: b\n\nevent: x\rdata: c\r\rretry: 5\n\n"
            .as_bytes();
        let expected = vec![
            SseEvent {
                event: "delta".into(),
                data: "{\"t\": \"h\u{e9}llo\"}".into(),
            },
            SseEvent {
                event: "message".into(),
                data: "a\nb".into(),
            },
            SseEvent {
                event: "x".into(),
                data: "c".into(),
            },
        ];
        for piece in 1..body.len() {
            assert_eq!(frame_in_pieces(body, piece), expected, "pieces of {piece}");
        }
    }

    #[test]
    fn an_unfinished_event_at_the_end_is_not_dispatched() {
        assert!(frame_in_pieces(b"data: half", 3).is_empty());
        assert!(frame_in_pieces(b"data: half\n", 3).is_empty());
    }

    #[test]
    fn a_line_without_an_end_is_bounded() {
        let mut framer = SseFramer::new(100, 1000);
        let mut out = Vec::new();
        framer.push(b"data: ", &mut out).unwrap();
        let endless = [b'a'; 64];
        assert!(framer.push(&endless, &mut out).is_ok());
        assert_eq!(
            framer.push(&endless, &mut out),
            Err(SseError::LineTooLong(100))
        );
        let mut framer = SseFramer::new(100, 1000);
        let whole_line = [b'b'; 200];
        assert_eq!(
            framer.push(&whole_line, &mut out),
            Err(SseError::LineTooLong(100))
        );
    }

    #[test]
    fn an_event_of_many_lines_is_bounded() {
        let mut framer = SseFramer::new(100, 250);
        let mut out = Vec::new();
        let line = format!("data: {}\n", "x".repeat(90));
        framer.push(line.as_bytes(), &mut out).unwrap();
        framer.push(line.as_bytes(), &mut out).unwrap();
        assert_eq!(
            framer.push(line.as_bytes(), &mut out),
            Err(SseError::EventTooLarge(250))
        );
        assert!(out.is_empty());
    }

    #[test]
    fn a_line_that_is_not_utf8_is_refused() {
        let mut framer = SseFramer::new(100, 100);
        let mut out = Vec::new();
        assert_eq!(
            framer.push(b"data: \xff\xfe\n\n", &mut out),
            Err(SseError::NotUtf8)
        );
    }
}
