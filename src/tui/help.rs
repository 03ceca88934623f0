//! The help as a layer over the conversation (`?`, F1, `/help`): the keys of `keymap::KEY_HINTS`
//! and what the modes do, scrolled with ↑↓ and the page keys when it does not fit; Esc, `q`,
//! `?`, F1 or Enter close it.

use std::cell::Cell;

use ratatui::Frame;
use ratatui::layout::Rect;

use super::compositor::{Layer, Outcome, Shared};
use super::keymap::{Action, Focus};

#[derive(Debug, Default)]
pub(super) struct Help {
    /// The first line shown.
    scroll: u16,
    /// The furthest it could scroll at the last frame (a cache of the drawing).
    most: Cell<u16>,
}

impl Layer for Help {
    fn focus(&self) -> Focus {
        Focus::Help
    }

    fn update(&mut self, action: Action, shared: &Shared) -> Outcome {
        match action {
            Action::Close => return Outcome::close(Vec::new()),
            Action::ScrollUp(n) => self.scroll = self.scroll.saturating_sub(n),
            Action::ScrollDown(n) => self.scroll = self.scroll.saturating_add(n),
            Action::PageUp => self.scroll = self.scroll.saturating_sub(shared.viewport / 2),
            Action::PageDown => self.scroll = self.scroll.saturating_add(shared.viewport / 2),
            // Ctrl+C is the app's.
            Action::ClearOrQuit => return Outcome::pass(),
            _ => {}
        }
        Outcome::done()
    }

    fn draw(&self, _: &Shared, frame: &mut Frame, area: Rect) {
        self.most
            .set(super::overlays::draw_help(self.scroll, frame, area));
    }

    fn drawn(&mut self) {
        self.scroll = self.scroll.min(self.most.get());
    }

    fn hints(&self) -> &'static str {
        " Esc closes the help · ↑↓ scroll "
    }

    fn as_any_mut(&mut self) -> &mut dyn std::any::Any {
        self
    }
}
