//! The real binary in a pseudo-terminal, read back as a person sees it: the screen parsed by
//! vt100 (erasing as tmux does: `scroll_on_clear`) by a reader thread. Every wait sleeps until
//! the reader has fed the terminal new bytes (a condition variable), never spinning; the
//! screen's text is read only through a wait for what is looked for (the scrollback, the mode
//! and the raw bytes can be read at once, for a program that has finished).

use std::io::{Read, Write};
use std::num::NonZeroU16;
use std::path::Path;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use portable_pty::{CommandBuilder, PtySize, native_pty_system};

/// The size of a pseudo-terminal unless a test picks one.
pub const ROWS: u16 = 32;
pub const COLS: u16 = 110;
/// How long a wait on the screen lasts before the test fails.
pub const PATIENCE: Duration = Duration::from_secs(30);
/// Lines the parsed terminal keeps above its screen (for `--no-alt-screen`).
const SCROLLBACK: usize = 2000;

/// What the program has written so far, as the reader thread parsed it.
struct Terminal {
    parser: vt100::Parser,
    /// Every byte the program wrote (for sequences with no visible effect, like OSC 52).
    raw: Vec<u8>,
    /// The program's side is closed: nothing will change any more.
    closed: bool,
}

/// The terminal and the signal the reader gives after each change to it.
type Shared = Arc<(Mutex<Terminal>, Condvar)>;

pub struct Pty {
    terminal: Shared,
    writer: Box<dyn Write + Send>,
    child: Box<dyn portable_pty::Child + Send + Sync>,
    _master: Box<dyn portable_pty::MasterPty + Send>,
}

impl Pty {
    /// Runs `program args` in a new pseudo-terminal.
    pub fn spawn(program: &Path, args: &[&str], cwd: &Path, env: &[(&str, String)]) -> Pty {
        Pty::spawn_sized(program, args, cwd, env, (ROWS, COLS))
    }

    /// Runs `program args` in a new pseudo-terminal of `(rows, columns)`.
    pub fn spawn_sized(
        program: &Path,
        args: &[&str],
        cwd: &Path,
        env: &[(&str, String)],
        (rows, cols): (u16, u16),
    ) -> Pty {
        let system = native_pty_system();
        let pair = system
            .openpty(PtySize {
                rows,
                cols,
                pixel_width: 0,
                pixel_height: 0,
            })
            .expect("a pty");
        let mut command = CommandBuilder::new(program);
        command.args(args);
        command.cwd(cwd);
        command.env_clear();
        command.env("PATH", std::env::var("PATH").unwrap_or_default());
        command.env("TERM", "xterm-256color");
        for (key, value) in env {
            command.env(key, value);
        }
        let child = pair.slave.spawn_command(command).expect("spawn in the pty");
        drop(pair.slave);
        let mut reader = pair.master.try_clone_reader().expect("pty reader");
        let writer = pair.master.take_writer().expect("pty writer");
        let terminal: Shared = Arc::new((
            Mutex::new(Terminal {
                parser: vt100::Parser::new(
                    NonZeroU16::new(rows).unwrap(),
                    NonZeroU16::new(cols).unwrap(),
                    SCROLLBACK,
                ),
                raw: Vec::new(),
                closed: false,
            }),
            Condvar::new(),
        ));
        let feed = Arc::clone(&terminal);
        std::thread::spawn(move || {
            let (lock, changed) = &*feed;
            let mut buffer = [0u8; 8192];
            // As tmux: a whole-screen erase keeps what it erases in the scrollback.
            let mut clears = crate::scroll_on_clear::Feed::default();
            while let Ok(n) = reader.read(&mut buffer) {
                if n == 0 {
                    break;
                }
                let mut terminal = lock.lock().unwrap();
                clears.process(&mut terminal.parser, &buffer[..n]);
                terminal.raw.extend_from_slice(&buffer[..n]);
                drop(terminal);
                changed.notify_all();
            }
            lock.lock().unwrap().closed = true;
            changed.notify_all();
        });
        Pty {
            terminal,
            writer,
            child,
            _master: pair.master,
        }
    }

    fn terminal(&self) -> MutexGuard<'_, Terminal> {
        self.terminal.0.lock().unwrap()
    }

    pub fn raw_contains(&self, needle: &[u8]) -> bool {
        self.terminal()
            .raw
            .windows(needle.len())
            .any(|w| w == needle)
    }

    pub fn pid(&self) -> u32 {
        self.child.process_id().unwrap_or(0)
    }

    /// The scrollback and the screen, oldest line first.
    pub fn all_text(&self) -> String {
        let mut terminal = self.terminal();
        let screen = terminal.parser.screen_mut();
        screen.set_scrollback(usize::MAX);
        let above = screen.scrollback();
        let mut lines: Vec<String> = Vec::new();
        // Each window shows ROWS lines from `offset` lines back; its top line is new.
        for offset in (1..=above).rev() {
            screen.set_scrollback(offset);
            let window = screen.contents();
            lines.push(window.lines().next().unwrap_or("").to_owned());
        }
        screen.set_scrollback(0);
        lines.extend(screen.contents().lines().map(str::to_owned));
        lines.join("\n")
    }

    /// Changes the terminal's size, as a user dragging the window does (the program gets
    /// SIGWINCH).
    pub fn resize(&mut self, rows: u16, cols: u16) {
        self.terminal().parser.screen_mut().set_size(
            NonZeroU16::new(rows).unwrap(),
            NonZeroU16::new(cols).unwrap(),
        );
        self._master
            .resize(PtySize {
                rows,
                cols,
                pixel_width: 0,
                pixel_height: 0,
            })
            .expect("resize the pty");
    }

    pub fn alternate_screen(&self) -> bool {
        self.terminal().parser.screen().alternate_screen()
    }

    pub fn send(&mut self, bytes: &str) {
        self.writer.write_all(bytes.as_bytes()).unwrap();
        self.writer.flush().unwrap();
    }

    /// Waits until `check` finds what it looks for in the terminal, or `deadline` passes (or
    /// the program's side closes first): `Err` with the screen then. Each look follows a change
    /// the reader made; between them this thread sleeps. `check` runs with the terminal locked,
    /// so it must not call the `Pty`'s own methods.
    fn wait_terminal<T>(
        &self,
        deadline: Instant,
        mut check: impl FnMut(&Terminal) -> Option<T>,
    ) -> Result<T, String> {
        let (lock, changed) = &*self.terminal;
        let mut terminal = lock.lock().unwrap();
        loop {
            if let Some(found) = check(&terminal) {
                return Ok(found);
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() || terminal.closed {
                return Err(terminal.parser.screen().contents());
            }
            terminal = changed.wait_timeout(terminal, left).unwrap().0;
        }
    }

    /// Waits until `done` holds for the screen's text or `deadline` passes: `Err` with the
    /// screen then.
    pub fn wait_text(
        &self,
        deadline: Instant,
        done: impl Fn(&str) -> bool,
    ) -> Result<String, String> {
        self.wait_terminal(deadline, |terminal| {
            let text = terminal.parser.screen().contents();
            done(&text).then_some(text)
        })
    }

    /// Waits until `done` holds for the screen (its text, cursor, modes); returns its text.
    pub fn wait_until_screen(&self, what: &str, done: impl Fn(&vt100::Screen) -> bool) -> String {
        self.wait_terminal(Instant::now() + PATIENCE, |terminal| {
            let screen = terminal.parser.screen();
            done(screen).then(|| screen.contents())
        })
        .unwrap_or_else(|screen| panic!("timed out waiting for {what}; the screen:\n{screen}"))
    }

    /// Waits until the program has written `needle` (a sequence with no visible effect).
    pub fn wait_raw(&self, what: &str, needle: &[u8]) {
        self.wait_terminal(Instant::now() + PATIENCE, |terminal| {
            terminal
                .raw
                .windows(needle.len())
                .any(|w| w == needle)
                .then_some(())
        })
        .unwrap_or_else(|screen| panic!("timed out waiting for {what}; the screen:\n{screen}"));
    }

    /// Waits until the screen shows every one of `texts` (a frame may be half processed when
    /// the first appears); returns the screen.
    pub fn wait_for_all(&self, texts: &[&str]) -> String {
        self.wait_until(&format!("{texts:?}"), |screen| {
            texts.iter().all(|t| screen.contains(t))
        })
    }

    /// Waits until `done` holds for the screen; returns the screen.
    pub fn wait_until(&self, what: &str, done: impl Fn(&str) -> bool) -> String {
        self.wait_text(Instant::now() + PATIENCE, done)
            .unwrap_or_else(|screen| panic!("timed out waiting for {what}; the screen:\n{screen}"))
    }

    /// Waits until no run is going on: the status line's spinner (a braille character) is gone.
    /// An answer can be on screen a moment before its run ends, and Ctrl+C or a command typed
    /// before the end acts on the run.
    pub fn wait_idle(&self) -> String {
        self.wait_until("the run to end", idle)
    }

    /// Waits until the screen shows `text`; returns the screen.
    pub fn wait_for(&self, text: &str) -> String {
        self.wait_until(&format!("{text:?}"), |screen| screen.contains(text))
    }
}

/// No run is going on: the status line shows no spinner (a braille character).
pub fn idle(screen: &str) -> bool {
    !screen
        .chars()
        .any(|c| ('\u{2800}'..='\u{28FF}').contains(&c))
}

impl Drop for Pty {
    fn drop(&mut self) {
        let _ = self.child.kill();
    }
}
