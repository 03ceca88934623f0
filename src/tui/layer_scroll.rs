//! How far a layer that does not fit is scrolled (the help, a child's transcript): moved by the
//! arrows, the page keys and the wheel, and brought back after each frame to the furthest the
//! frame could show.

use std::cell::Cell;

use super::keymap::Action;

#[derive(Debug, Default)]
pub(super) struct LayerScroll {
    /// The first line shown.
    top: u16,
    /// The furthest it could scroll at the last frame (a cache of the drawing).
    most: Cell<u16>,
}

impl LayerScroll {
    /// Scrolled to the end (the end is found by the first frame).
    pub fn at_end() -> Self {
        LayerScroll {
            top: u16::MAX,
            most: Cell::new(u16::MAX),
        }
    }

    pub fn top(&self) -> u16 {
        self.top
    }

    /// Moves by `action` (a page is half of `viewport`); whether it was a scrolling action.
    pub fn update(&mut self, action: Action, viewport: u16) -> bool {
        self.top = match action {
            Action::ScrollUp(n) => self.top.saturating_sub(n),
            Action::ScrollDown(n) => self.top.saturating_add(n),
            Action::PageUp => self.top.saturating_sub(viewport / 2),
            Action::PageDown => self.top.saturating_add(viewport / 2),
            Action::Top => 0,
            Action::Bottom => u16::MAX,
            _ => return false,
        };
        true
    }

    /// The furthest it could scroll at the last frame.
    pub fn most(&self) -> u16 {
        self.most.get()
    }

    /// The frame being drawn could scroll at most `most` lines.
    pub fn found_end(&self, most: u16) {
        self.most.set(most);
    }

    /// After the frame: no further than it could show.
    pub fn drawn(&mut self) {
        self.top = self.top.min(self.most.get());
    }
}
