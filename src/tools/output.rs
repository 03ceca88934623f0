//! Bounded text output: keeps the head and the tail of a stream of bytes in constant memory,
//! with a line saying how much was cut from the middle. Invalid UTF-8 is shown lossily. Given a
//! file, output past the bound is kept there whole (up to `SPILL_LIMIT`), and the line names
//! it: the model reads the middle with `read_file` or `grep` (the session's outputs folder is
//! readable without asking: `permission`).

use std::collections::VecDeque;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The most of one output kept in its file.
pub const SPILL_LIMIT: usize = 64 * 1024 * 1024;

/// The folder a session's cut outputs are kept in: `$HARNESS9_HOME/outputs/SESSION`.
pub fn outputs_dir(home: &Path, session_id: &str) -> PathBuf {
    home.join("outputs").join(session_id)
}

#[derive(Debug)]
pub struct HeadTail {
    head: Vec<u8>,
    tail: VecDeque<u8>,
    half: usize,
    total: usize,
    spill: Option<Spill>,
}

/// Where the whole output goes once it passes the bound.
#[derive(Debug)]
struct Spill {
    path: PathBuf,
    file: Option<std::fs::File>,
    written: usize,
    /// Why the file could not be written, once it could not.
    failed: Option<String>,
}

impl Spill {
    /// Opens the file (0600, in a 0700 folder) with what was kept so far.
    fn start(&mut self, head: &[u8], tail: &VecDeque<u8>) {
        let opened = self
            .path
            .parent()
            .map_or(Ok(()), |dir| {
                crate::private_home::create_dir(dir).map_err(|e| e.to_string())
            })
            .and_then(|()| {
                use std::os::unix::fs::OpenOptionsExt;
                std::fs::OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .mode(0o600)
                    .open(&self.path)
                    .map_err(|e| format!("cannot create {}: {e}", self.path.display()))
            });
        match opened {
            Ok(file) => {
                self.file = Some(file);
                let (front, back) = tail.as_slices();
                for part in [head, front, back] {
                    self.write(part);
                }
            }
            Err(why) => self.failed = Some(why),
        }
    }

    fn write(&mut self, bytes: &[u8]) {
        let Some(file) = &mut self.file else { return };
        let room = SPILL_LIMIT.saturating_sub(self.written);
        let take = room.min(bytes.len());
        match file.write_all(&bytes[..take]) {
            Ok(()) => self.written += take,
            Err(e) => {
                self.failed = Some(format!("cannot write {}: {e}", self.path.display()));
                self.file = None;
            }
        }
    }
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
            spill: None,
        }
    }

    /// Keeps the whole output in `file` once it passes the bound (`None`: nowhere).
    pub fn spilling_to(mut self, file: Option<PathBuf>) -> Self {
        self.spill = file.map(|path| Spill {
            path,
            file: None,
            written: 0,
            failed: None,
        });
        self
    }

    pub fn push(&mut self, mut bytes: &[u8]) {
        if let Some(spill) = &mut self.spill {
            // Before these bytes are taken in, head and tail still hold everything so far.
            if spill.file.is_none()
                && spill.failed.is_none()
                && self.total + bytes.len() > 2 * self.half
            {
                spill.start(&self.head, &self.tail);
            }
            spill.write(bytes);
        }
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
            let cut = self.total - kept;
            let line = match &self.spill {
                Some(Spill {
                    path,
                    failed: None,
                    written,
                    ..
                }) => format!(
                    "\n[… {cut} bytes of output cut here; {} is in {} (read_file with offset \
                     and limit, or grep it) …]\n",
                    if *written < self.total {
                        format!("the first {written} bytes of the output")
                    } else {
                        format!("the whole output ({} bytes)", self.total)
                    },
                    path.display()
                ),
                Some(Spill {
                    failed: Some(why), ..
                }) => format!(
                    "\n[… {cut} bytes of output cut; the first and last {} bytes are shown \
                     (the whole output could not be kept: {why}) …]\n",
                    self.half
                ),
                None => format!(
                    "\n[… {cut} bytes of output cut; the first and last {} bytes are shown …]\n",
                    self.half
                ),
            };
            text.push_str(&line);
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
    fn past_the_bound_the_whole_output_is_kept_in_a_private_file_the_text_names() {
        use std::os::unix::fs::PermissionsExt;
        let home = tempfile::tempdir().unwrap();
        let dir = outputs_dir(home.path(), "s1");
        let file = dir.join("bash-1.txt");
        let mut out = HeadTail::new(20).spilling_to(Some(file.clone()));
        let mut whole = String::new();
        for i in 0..1000 {
            let line = format!("{i:04}\n");
            whole.push_str(&line);
            out.push(line.as_bytes());
        }
        let text = out.finish();
        assert!(text.starts_with("0000\n0001") && text.ends_with("0998\n0999"));
        assert!(
            text.contains(&format!(
                "the whole output (5000 bytes) is in {}",
                file.display()
            )),
            "{text}"
        );
        assert_eq!(std::fs::read_to_string(&file).unwrap(), whole);
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!((mode(&file), mode(&dir)), (0o600, 0o700));

        // Within the bound nothing is written.
        let small = dir.join("bash-2.txt");
        let mut out = HeadTail::new(100).spilling_to(Some(small.clone()));
        out.push(b"short");
        assert_eq!(out.finish(), "short");
        assert!(!small.exists());
    }

    #[test]
    fn invalid_utf8_is_shown_lossily() {
        let mut out = HeadTail::new(100);
        out.push(&[b'a', 0xff, b'b']);
        assert_eq!(out.finish(), "a\u{fffd}b");
    }
}
