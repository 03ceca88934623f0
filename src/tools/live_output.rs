//! A running command's output as it comes, for the `tool_output` events (issue 32 point 3):
//! bytes gathered and sent at most every `EVERY` as text (control sequences stripped, a
//! character cut between two reads kept for the next), at most `MAX_CHUNK` bytes a piece (the
//! latest part of what came, after a `…` line), so a command that floods its output cannot flood
//! the front ends. The model still gets the whole output in the call's result.

use std::time::Duration;

use tokio::time::Instant;

use super::progress::OutputSink;

/// The shortest time between two chunks of one call.
pub const EVERY: Duration = Duration::from_millis(100);
/// The most one chunk holds.
pub const MAX_CHUNK: usize = 8 * 1024;

/// The output of one call not sent yet.
pub struct LiveOutput {
    sink: Option<OutputSink>,
    pending: Vec<u8>,
    /// More came since the last chunk than one holds: the chunk starts with `…`.
    cut: bool,
    last_sent: Option<Instant>,
}

impl LiveOutput {
    /// Sends to `sink`; with none, everything is thrown away.
    pub fn new(sink: Option<OutputSink>) -> Self {
        LiveOutput {
            sink,
            pending: Vec::new(),
            cut: false,
            last_sent: None,
        }
    }

    pub fn push(&mut self, bytes: &[u8]) {
        if self.sink.is_none() {
            return;
        }
        self.pending.extend_from_slice(bytes);
        if self.pending.len() > MAX_CHUNK {
            let mut from = self.pending.len() - MAX_CHUNK;
            // Start on a character's first byte.
            while from < self.pending.len() && (self.pending[from] & 0xC0) == 0x80 {
                from += 1;
            }
            self.pending.drain(..from);
            self.cut = true;
        }
    }

    /// When the next chunk may go, if something waits.
    pub fn due(&self) -> Option<Instant> {
        if self.pending.is_empty() {
            return None;
        }
        Some(self.last_sent.map_or_else(Instant::now, |at| at + EVERY))
    }

    /// Sends what waits when it is time (or `always`, at the end).
    pub fn flush(&mut self, always: bool) {
        let Some(sink) = &self.sink else { return };
        if self.pending.is_empty() || (!always && self.due().is_some_and(|d| d > Instant::now())) {
            return;
        }
        let valid = match std::str::from_utf8(&self.pending) {
            Ok(text) => text.len(),
            // A character cut by the read waits for its end; anything else is shown replaced.
            Err(e) if e.error_len().is_none() && !always => e.valid_up_to(),
            Err(_) => self.pending.len(),
        };
        if valid == 0 {
            return;
        }
        let rest = self.pending.split_off(valid);
        let text = String::from_utf8_lossy(&self.pending).into_owned();
        self.pending = rest;
        let mut chunk = crate::terminal_text::sanitize(&text);
        if std::mem::take(&mut self.cut) {
            chunk.insert_str(0, "…\n");
        }
        self.last_sent = Some(Instant::now());
        if !chunk.is_empty() {
            let _ = sink.send(chunk);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn chunks_are_spaced_bounded_and_whole_characters() {
        let (sink, mut chunks) = tokio::sync::mpsc::unbounded_channel();
        let mut live = LiveOutput::new(Some(sink));
        live.push(b"tick 1\n\x1b[31mred\x1b[0m\n");
        live.flush(false);
        assert_eq!(chunks.try_recv().unwrap(), "tick 1\nred\n");
        // Within EVERY of the last chunk: it waits.
        live.push("é".as_bytes().split_at(1).0);
        live.flush(false);
        assert!(chunks.try_recv().is_err());
        tokio::time::advance(EVERY).await;
        live.flush(false);
        assert!(
            chunks.try_recv().is_err(),
            "half a character waits for the rest"
        );
        live.push("é".as_bytes().split_at(1).1);
        live.flush(false);
        assert_eq!(chunks.try_recv().unwrap(), "é");
        tokio::time::advance(EVERY).await;
        live.push(&vec![b'x'; 3 * MAX_CHUNK]);
        live.flush(true);
        let chunk = chunks.try_recv().unwrap();
        assert!(
            chunk.starts_with("…\n") && chunk.len() <= MAX_CHUNK + 4,
            "{}",
            chunk.len()
        );
    }
}
