//! The help as a layer over the conversation (`?`, F1, `/help`): the keys of `keymap::KEY_HINTS`,
//! the slash commands (the `/` popup's table) and what the modes do, scrolled with ↑↓ and the
//! page keys when it does not fit; Esc, `q`, `?`, F1 or Enter close it.

use ratatui::Frame;
use ratatui::layout::Rect;

use super::compositor::{Layer, Outcome, Shared};
use super::keymap::{Action, Focus};
use super::layer_scroll::LayerScroll;

#[derive(Debug, Default)]
pub(super) struct Help {
    scroll: LayerScroll,
}

impl Layer for Help {
    fn focus(&self) -> Focus {
        Focus::Help
    }

    fn update(&mut self, action: Action, shared: &Shared) -> Outcome {
        if self.scroll.update(action, shared.viewport) {
            return Outcome::done();
        }
        match action {
            Action::Close => Outcome::close(Vec::new()),
            // Ctrl+C is the app's.
            Action::ClearOrQuit => Outcome::pass(),
            _ => Outcome::done(),
        }
    }

    fn draw(&self, _: &Shared, frame: &mut Frame, area: Rect) {
        let most = super::overlays::draw_help(self.scroll.top(), frame, area);
        self.scroll.found_end(most);
    }

    fn drawn(&mut self) {
        self.scroll.drawn();
    }

    fn hints(&self) -> std::borrow::Cow<'static, str> {
        " Esc closes the help · ↑↓ scroll ".into()
    }
}
