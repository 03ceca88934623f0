//! `--no-alt-screen`: the TUI inline in the terminal's main screen, as Codex runs. Finished
//! transcript entries are written once, with their styles, into the rows above a live area and
//! go on into the terminal's own scrollback as more come; the live area below them (what still
//! changes, the input, the status line) is redrawn in place by ratatui in a fixed viewport.
//!
//! The screen's rows, top to bottom: the conversation written so far (rows `0..top`), then the
//! live area right below it. The live area grows downwards; when it reaches the bottom, the
//! conversation's top rows are pushed into the scrollback by newlines at the last row (no
//! scrolling regions, no cursor-position query: `terminal::enter` leaves the screen blank with
//! the cursor at its top, so every position is known). Rows are erased one line at a time,
//! never the display (tmux keeps an erased screen in the scrollback: `terminal::clear_rows`),
//! so nothing but conversation lines reaches the scrollback. A dialog or popup that needs more room
//! than that covers conversation rows, which are painted again from `recent` when it closes;
//! rows that could not be painted again are pushed into the scrollback first, never lost.

use std::collections::VecDeque;
use std::io::{self, Write};

use crossterm::cursor::MoveTo;
use crossterm::queue;
use crossterm::terminal::{BeginSynchronizedUpdate, Clear, ClearType, EndSynchronizedUpdate};
use ratatui::backend::Backend;
use ratatui::buffer::Buffer;
use ratatui::layout::{Rect, Size};
use ratatui::text::Line;

use super::app::App;
use super::terminal::Term;

/// Where the conversation and the live area are on the main screen.
#[derive(Debug)]
pub struct Screen {
    /// The screen's size when last drawn.
    size: Size,
    /// The first row below the conversation written on screen.
    top: u16,
    /// The last conversation lines written (newest last, at most a screen's height): what
    /// paints rows a dialog covered again.
    recent: VecDeque<Line<'static>>,
    /// The live area as drawn last (`y < top` while it covers conversation rows).
    drawn: Rect,
    /// The cursor's row after the last frame: a terminal that gets shorter keeps it on screen.
    cursor_row: u16,
    /// Lines known to be in the scrollback: a terminal that gets taller brings them back.
    scrolled: usize,
}

impl Screen {
    /// A blank screen of `size` with the cursor at its top.
    pub fn new(size: Size) -> Self {
        Screen {
            size,
            top: 0,
            recent: VecDeque::new(),
            drawn: Rect::new(0, 0, size.width, 0),
            cursor_row: 0,
            // `terminal::enter` pushed a screenful into the scrollback.
            scrolled: usize::from(size.height),
        }
    }
}

/// Draws one frame inline: writes what finished into the conversation above the live area,
/// places the live area and draws it; one synchronized update.
pub fn draw(term: &mut Term, app: &mut App) -> io::Result<()> {
    let Some(mut screen) = term.inline.take() else {
        return Ok(());
    };
    let drawn = screen.draw(term, app);
    term.inline = Some(screen);
    drawn
}

/// Ends inline mode: the live area goes, every entry not written yet is written (finished or
/// not), and the cursor is left on the row below, where the resume line goes.
pub fn finish(term: &mut Term, app: &mut App) -> io::Result<()> {
    let Some(mut screen) = term.inline.take() else {
        return Ok(());
    };
    let size = term.size()?;
    if size != screen.size {
        screen.resized(term, size)?;
    }
    app.transcript().set_now(app.clock().now());
    // Nothing runs on once the TUI has gone: what still ran is written as cut off.
    app.transcript_mut().interrupt_running();
    let width = super::view::transcript_width(app, size.width);
    let (expanded, spinner) = (app.view().expanded, app.screen().spinner);
    let lines = app.transcript_mut().take_rest(width, expanded, spinner);
    screen.write(term, &lines)?;
    if screen.top >= size.height {
        screen.scroll(term, 1)?;
    }
    queue!(term.backend_mut(), MoveTo(0, screen.top))?;
    term.set_area(Rect::new(0, screen.top, size.width, 0))?;
    Write::flush(term.backend_mut())
}

impl Screen {
    fn draw(&mut self, term: &mut Term, app: &mut App) -> io::Result<()> {
        let size = term.size()?;
        queue!(term.backend_mut(), BeginSynchronizedUpdate)?;
        if size != self.size {
            self.resized(term, size)?;
        }
        let rows = size.height;
        if rows == 0 || size.width == 0 {
            return crossterm::execute!(term.backend_mut(), EndSynchronizedUpdate);
        }
        app.transcript().set_now(app.clock().now());
        // While a dialog is open nothing is written above it: it may cover those rows.
        let dialog = app.layers().len() > 1;
        if !dialog {
            let width = super::view::transcript_width(app, size.width);
            let (expanded, spinner) = (app.view().expanded, app.screen().spinner);
            let lines = app.transcript_mut().take_finished(width, expanded, spinner);
            if !lines.is_empty() {
                self.write(term, &lines)?;
            }
        }
        let (need, want) = super::view::inline_heights(app, size.width, rows);
        let want = if dialog { rows } else { want };
        // The live area's place is right below the conversation; when it does not fit, the
        // conversation's top rows go into the scrollback.
        let overflow = (self.top + need).saturating_sub(rows);
        if overflow > 0 {
            self.scroll(term, overflow)?;
        }
        // More room than that covers conversation rows; only rows that can be painted again
        // may be covered, the others go into the scrollback first.
        let mut y = (self.top + need).saturating_sub(want);
        let lowest = self.top - self.repaintable();
        if y < lowest {
            self.scroll(term, lowest)?;
            y = (self.top + need).saturating_sub(want);
        }
        let area = Rect::new(0, y, size.width, want.min(rows - y));
        if area != self.drawn {
            let from = self.drawn.y.min(area.y).min(self.top);
            self.clear_from(term, from)?;
            for row in from..self.top.min(area.y) {
                self.repaint(term, row)?;
            }
            term.set_area(area)?;
            self.drawn = area;
        }
        term.draw(|frame| super::view::render(app, frame))?;
        // A hidden cursor is put on a known row (a resize is judged by it).
        self.cursor_row = match app.cursor() {
            Some((_, row)) => row,
            None => {
                let last = area.bottom().saturating_sub(1);
                queue!(term.backend_mut(), MoveTo(0, last))?;
                last
            }
        };
        crossterm::execute!(term.backend_mut(), EndSynchronizedUpdate)
    }

    /// How many conversation rows right above `top` can be painted again.
    fn repaintable(&self) -> u16 {
        (self.recent.len().min(usize::from(self.top))) as u16
    }

    /// Writes `lines` into the conversation: the live area goes, the lines follow the last row
    /// of the conversation, and at the bottom each further line pushes the top one into the
    /// scrollback.
    fn write(&mut self, term: &mut Term, lines: &[Line<'static>]) -> io::Result<()> {
        self.uncover(term)?;
        let rows = self.size.height;
        for line in lines {
            if self.top >= rows {
                self.push_up(term, 1)?;
            }
            paint(term, line, self.top, self.size.width)?;
            self.top += 1;
            self.recent.push_back(line.clone());
            while self.recent.len() > usize::from(rows) {
                self.recent.pop_front();
            }
        }
        self.drawn = Rect::new(0, self.top, self.size.width, 0);
        Ok(())
    }

    /// Paints the conversation rows the live area covers again and clears everything below
    /// the conversation.
    fn uncover(&mut self, term: &mut Term) -> io::Result<()> {
        let from = self.drawn.y.min(self.top);
        self.clear_from(term, from)?;
        for row in from..self.top {
            self.repaint(term, row)?;
        }
        self.drawn = Rect::new(0, self.top, self.size.width, 0);
        Ok(())
    }

    /// Pushes the screen's top `n` rows into the scrollback (with the live area cleared first,
    /// so only conversation rows go there).
    fn scroll(&mut self, term: &mut Term, n: u16) -> io::Result<()> {
        self.uncover(term)?;
        self.push_up(term, n)
    }

    /// Newlines at the last row: the top `n` rows go into the scrollback.
    fn push_up(&mut self, term: &mut Term, n: u16) -> io::Result<()> {
        let last = self.size.height.saturating_sub(1);
        queue!(term.backend_mut(), MoveTo(0, last))?;
        term.backend_mut()
            .write_all("\n".repeat(usize::from(n)).as_bytes())?;
        self.scrolled += usize::from(n);
        self.top = self.top.saturating_sub(n);
        self.drawn = Rect::new(0, self.top, self.size.width, 0);
        Ok(())
    }

    /// The terminal changed size. Rows move as xterm moves them (vt100 does the same): a
    /// shorter screen drops blank rows below the cursor, then pushes top rows into the
    /// scrollback to keep the cursor's row; a taller one brings rows back from the scrollback.
    /// The live area is cleared where that put it and drawn again below the conversation, whose
    /// rows are the terminal's from now (laid out for the old width, they are not painted again).
    fn resized(&mut self, term: &mut Term, size: Size) -> io::Result<()> {
        let (old, new) = (self.size.height, size.height);
        let shift = if new < old {
            let below = old.saturating_sub(self.cursor_row + 1);
            -i32::from((old - new).saturating_sub(below))
        } else {
            let back = usize::from(new - old).min(self.scrolled);
            self.scrolled -= back;
            back as i32
        };
        let moved = |row: u16| (i32::from(row) + shift).clamp(0, i32::from(new)) as u16;
        let covered = moved(self.drawn.y.min(self.top));
        self.top = moved(self.top);
        self.size = size;
        // Rows a dialog covered get their lines back first.
        for row in covered..self.top {
            self.repaint(term, row)?;
        }
        self.recent.clear();
        if self.top >= new {
            self.push_up(term, 1)?;
        }
        self.clear_from(term, self.top)?;
        self.drawn = Rect::new(0, self.top, size.width, 0);
        Ok(())
    }

    fn clear_from(&self, term: &mut Term, row: u16) -> io::Result<()> {
        // Below the last row there is nothing to clear (a cursor sent there stops at the last
        // row, which is the conversation's).
        super::terminal::clear_rows(term.backend_mut(), row, self.size.height)
    }

    /// Paints conversation row `row` (above `top`) from `recent`.
    fn repaint(&self, term: &mut Term, row: u16) -> io::Result<()> {
        let back = usize::from(self.top - row);
        match self.recent.len().checked_sub(back) {
            Some(at) => paint(term, &self.recent[at], row, self.size.width),
            None => Ok(()),
        }
    }
}

/// Paints one line with its styles on screen row `row` (cleared first), as ratatui would.
fn paint(term: &mut Term, line: &Line<'static>, row: u16, width: u16) -> io::Result<()> {
    let area = Rect::new(0, 0, width, 1);
    let mut buffer = Buffer::empty(area);
    buffer.set_line(0, 0, line, width);
    let blank = Buffer::empty(area);
    queue!(
        term.backend_mut(),
        MoveTo(0, row),
        Clear(ClearType::CurrentLine)
    )?;
    // The diff against a blank row skips the cells a wide character covers.
    let cells = blank.diff(&buffer);
    term.backend_mut()
        .draw(cells.into_iter().map(|(x, _, cell)| (x, row, cell)))
}
