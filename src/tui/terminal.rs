//! The terminal's modes while the TUI runs (raw, alternate screen or not, mouse capture, bracketed
//! paste, keyboard enhancement) and their restoration on every way out: normal exit, error,
//! panic (restored before the panic is printed) and signals.

use std::io::{self, Stdout, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU16, Ordering};

use crossterm::event::{
    DisableBracketedPaste, DisableMouseCapture, EnableBracketedPaste, EnableMouseCapture,
    KeyboardEnhancementFlags, PopKeyboardEnhancementFlags, PushKeyboardEnhancementFlags,
};
use crossterm::execute;
use crossterm::terminal::{
    EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode,
};
use ratatui::backend::CrosstermBackend;
use ratatui::layout::Rect;
use ratatui::{Terminal, TerminalOptions, Viewport};

/// The terminal the TUI draws on, and in inline mode (`--no-alt-screen`) where on the main
/// screen its live area is (`inline::Screen`).
pub struct Term {
    terminal: Terminal<CrosstermBackend<Stdout>>,
    pub(super) inline: Option<super::inline::Screen>,
}

impl std::ops::Deref for Term {
    type Target = Terminal<CrosstermBackend<Stdout>>;
    fn deref(&self) -> &Self::Target {
        &self.terminal
    }
}

impl std::ops::DerefMut for Term {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.terminal
    }
}

impl Term {
    /// Draws from now on into `area` of the main screen (inline mode). What was drawn before is
    /// forgotten, so the next frame paints all of it.
    pub(super) fn set_area(&mut self, area: Rect) -> io::Result<()> {
        LIVE_TOP.store(area.y, Ordering::SeqCst);
        // A new terminal rather than `Terminal::resize`, which clears the whole screen when the
        // width shrinks: the rows above the live area are the conversation.
        self.terminal = Terminal::with_options(
            CrosstermBackend::new(io::stdout()),
            TerminalOptions {
                viewport: Viewport::Fixed(area),
            },
        )?;
        Ok(())
    }
}

/// Whether the terminal is in the TUI's modes (so restoring twice is harmless).
static ACTIVE: AtomicBool = AtomicBool::new(false);
/// Whether the alternate screen was entered (`--no-alt-screen` draws in the main one).
static ALTERNATE: AtomicBool = AtomicBool::new(false);
/// In inline mode, the first row of the live area: what a restore clears.
static LIVE_TOP: AtomicU16 = AtomicU16::new(0);

/// Switches the terminal into the TUI's modes; with `alt_screen` false the TUI draws inline in
/// the main screen, whose earlier lines are first scrolled into the scrollback (never erased),
/// and leaves the mouse to the terminal (its own scrollback and selection).
pub fn enter(alt_screen: bool) -> io::Result<Term> {
    enable_raw_mode()?;
    ACTIVE.store(true, Ordering::SeqCst);
    let mut stdout = io::stdout();
    if alt_screen {
        ALTERNATE.store(true, Ordering::SeqCst);
        execute!(stdout, EnterAlternateScreen)?;
    } else {
        let rows = crossterm::terminal::size()
            .map(|(_, rows)| rows)
            .unwrap_or(24);
        execute!(stdout, crossterm::cursor::MoveTo(0, rows.saturating_sub(1)))?;
        stdout.write_all("\r\n".repeat(usize::from(rows)).as_bytes())?;
        execute!(stdout, crossterm::cursor::MoveTo(0, 0))?;
    }
    if alt_screen {
        execute!(stdout, EnableMouseCapture)?;
    }
    // Terminals without the keyboard protocol ignore the push; those with it report
    // Shift+Enter apart from Enter. Asking first would cost a round trip at start.
    execute!(
        stdout,
        EnableBracketedPaste,
        // Focus reports decide whether a waiting approval rings (`notify`).
        crossterm::event::EnableFocusChange,
        PushKeyboardEnhancementFlags(KeyboardEnhancementFlags::DISAMBIGUATE_ESCAPE_CODES)
    )?;
    if alt_screen {
        return Ok(Term {
            terminal: Terminal::new(CrosstermBackend::new(stdout))?,
            inline: None,
        });
    }
    // The screen is blank and the cursor at its top: the live area starts there, empty.
    let (columns, rows) = crossterm::terminal::size().unwrap_or((80, 24));
    let size = ratatui::layout::Size::new(columns, rows);
    let mut term = Term {
        terminal: Terminal::new(CrosstermBackend::new(stdout))?,
        inline: Some(super::inline::Screen::new(size)),
    };
    term.set_area(Rect::new(0, 0, columns, 0))?;
    Ok(term)
}

/// Puts the terminal back as it was. Safe to call more than once and from a panic hook.
pub fn restore() {
    if !ACTIVE.swap(false, Ordering::SeqCst) {
        return;
    }
    let mut stdout = io::stdout();
    let _ = execute!(
        stdout,
        PopKeyboardEnhancementFlags,
        crossterm::event::DisableFocusChange,
        DisableBracketedPaste,
        DisableMouseCapture,
        crossterm::cursor::Show
    );
    if ALTERNATE.swap(false, Ordering::SeqCst) {
        let _ = execute!(stdout, LeaveAlternateScreen);
    } else {
        // The live area goes; the conversation above it stays, and what comes next (the
        // resume line, a panic's message) is printed below it.
        let top = LIVE_TOP.load(Ordering::SeqCst);
        let rows = crossterm::terminal::size().map_or(top, |(_, rows)| rows);
        let _ = clear_rows(&mut stdout, top, rows);
        let _ = execute!(stdout, crossterm::cursor::MoveTo(0, top));
    }
    let _ = disable_raw_mode();
    let _ = stdout.flush();
}

/// Erases rows `from..to` of the main screen, one line erase each. Never an erase of the
/// display: from the top left (or `ESC [ 2 J` anywhere) tmux first moves the screen into the
/// scrollback (its `scroll-on-clear`), which would leave the live area there.
pub(super) fn clear_rows(out: &mut impl Write, from: u16, to: u16) -> io::Result<()> {
    for row in from..to {
        crossterm::queue!(
            out,
            crossterm::cursor::MoveTo(0, row),
            crossterm::terminal::Clear(crossterm::terminal::ClearType::CurrentLine)
        )?;
    }
    Ok(())
}

/// Restores the terminal before the default hook prints a panic, then says where the log is.
pub fn install_panic_hook(log_dir: PathBuf) {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        restore();
        previous(info);
        eprintln!("harness9 crashed; the log is in {}", log_dir.display());
    }));
}

#[cfg(test)]
mod tests {
    #[test]
    fn rows_are_erased_line_by_line_never_the_display() {
        let mut out = Vec::new();
        super::clear_rows(&mut out, 0, 3).unwrap();
        let out = String::from_utf8(out).unwrap();
        // Each row: the cursor to its start, then an erase of that line only.
        assert_eq!(out, "\x1b[1;1H\x1b[2K\x1b[2;1H\x1b[2K\x1b[3;1H\x1b[2K");
    }
}
