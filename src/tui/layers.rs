//! The screen as one stack of layers, bottom to top (helix's compositor is the model): the
//! conversation and the picker, the plan review, then the layers the app opened (`compositor`'s
//! stack, in the order they were opened: `/mcp`, `/memory`, `/rewind` and its question, a
//! child's transcript, the help, the start's questions, an approval and its reason). The
//! same stack decides what is drawn last and which layer gets the keys, so a dialog drawn over
//! the picker also takes the keys, never the query hidden under it. Each layer draws itself
//! and lists its hints for the input rule; its keys are in `keymap::action`.

use std::borrow::Cow;

use ratatui::Frame;
use ratatui::layout::Rect;

use super::app::App;
use super::compositor::{Shared, Stack};
use super::keymap::Focus;

impl App {
    /// The layers on screen, bottom to top; the last one has the focus.
    pub fn layers(&self) -> Vec<Focus> {
        let mut stack = vec![Focus::Main];
        // The layers the app opened, in the order it opened them.
        stack.extend(self.stack().focuses());
        stack
    }

    /// The layer with the focus: the top of the stack.
    pub fn layer(&self) -> Focus {
        self.layers().last().copied().unwrap_or(Focus::Main)
    }

    /// Whether the top of the stack of opened layers has the focus (nothing is drawn over it).
    pub(super) fn stack_focused(&self) -> bool {
        self.stack()
            .top()
            .is_some_and(|top| top.focus() == self.layer())
    }

    /// What every opened layer may read.
    pub(super) fn shared(&self) -> Shared<'_> {
        Shared {
            mcp: self.mcp(),
            transcript: self.transcript(),
            expanded: self.view().expanded,
            spinner: self.screen().spinner,
            clock: self.clock(),
            viewport: self.view().viewport,
            session_id: &self.session().session_id,
            running: self.run().running,
        }
    }

    /// `give` the stack of opened layers, with what they may read of the rest of the app.
    pub(super) fn with_stack<R>(&mut self, give: impl FnOnce(&mut Stack, &Shared) -> R) -> R {
        // Out of the app while it is given: the layers read the app beside it.
        let mut stack = std::mem::take(self.stack_mut());
        let given = give(&mut stack, &self.shared());
        *self.stack_mut() = stack;
        given
    }

    /// The hints of the focused layer, shown in the rule above the input.
    pub fn hints(&self) -> Cow<'static, str> {
        if self.stack_focused()
            && let Some(top) = self.stack().top()
        {
            return top.hints();
        }
        let hints = match self.layer() {
            Focus::Main if self.busy() => {
                " Enter queues · Esc or Ctrl+C interrupt · Shift+Enter newline · ? keys "
            }
            Focus::Main => " Enter send · Shift+Enter newline · / commands · ? keys ",
            // The opened layers name their own hints (above).
            _ => "",
        };
        hints.into()
    }
}

/// Draws the layers over the conversation (`Main` is drawn by `view::draw` first), bottom to
/// top, in `body`.
pub(super) fn draw_over(app: &App, frame: &mut Frame, body: Rect) {
    let mut opened_drawn = false;
    for layer in app.layers() {
        match layer {
            Focus::Main => {
                if app.layer() == Focus::Main {
                    super::view::draw_popup(app, frame, body);
                }
            }
            // The opened layers (the stack's), bottom up, drawn once for all of them.
            _ => {
                if !opened_drawn {
                    app.stack().draw(&app.shared(), frame, body);
                    opened_drawn = true;
                }
            }
        }
    }
}
