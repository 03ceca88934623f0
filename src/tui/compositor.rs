//! The layers the app opens over the conversation, each the owner of its state (helix's
//! compositor is the model): a layer reads its keys through the keymap in its own mode, answers
//! with what it wants done (`Outcome`: requests for the core, close me, open another layer, or
//! pass the key down), draws as a pure function of its state and names its hints. The `Stack`
//! keeps them in the order they were opened: keys go top first until one takes them, drawing goes
//! bottom up. A layer never reads another's state; what they all may read (the session's MCP
//! servers, ...) comes in `Shared`, read-only.

use std::any::Any;

use crossterm::event::KeyEvent;
use ratatui::Frame;
use ratatui::layout::Rect;

use super::app::Command;
use super::keymap::Focus;
use super::mcp_panel::McpView;

/// What the app shows to every layer, read-only.
pub(super) struct Shared<'a> {
    /// The session's MCP servers, as last reported.
    pub mcp: &'a [McpView],
}

/// One element on screen that takes keys.
pub(super) trait Layer: Any {
    /// The keymap's mode for this layer's keys, and the name its focus goes by.
    fn focus(&self) -> Focus;
    /// What `key` does to the layer, and what it wants done.
    fn handle_key(&mut self, key: KeyEvent, shared: &Shared) -> Outcome;
    /// Draws the layer in `area` (the body of the screen); a function of its state.
    fn draw(&self, shared: &Shared, frame: &mut Frame, area: Rect);
    /// The hints for the rule above the input while the layer has the focus.
    fn hints(&self) -> &'static str;
    /// A dialog one key answers names itself here, so its keys count only once it has been on
    /// screen a moment (`dialog_guard`).
    fn dialog(&self) -> Option<String> {
        None
    }
    /// The layer as `Any`, so the app can hand it the answers it asked for.
    fn as_any_mut(&mut self) -> &mut dyn Any;
}

/// What a layer wants after a key.
#[derive(Default)]
pub(super) struct Outcome {
    /// The key was not this layer's: the one below gets it.
    pub passed: bool,
    /// The layer is done: it leaves the stack.
    pub close: bool,
    /// Requests for the runner to carry out.
    pub commands: Vec<Command>,
    /// A word for the status line.
    pub flash: Option<String>,
    /// A layer to open over this one.
    pub open: Option<Box<dyn Layer>>,
}

impl Outcome {
    /// The key was taken and nothing more is wanted.
    pub fn done() -> Self {
        Outcome::default()
    }

    /// The key was not this layer's.
    pub fn pass() -> Self {
        Outcome {
            passed: true,
            ..Outcome::default()
        }
    }

    /// The key was taken and these requests go out.
    pub fn send(commands: Vec<Command>) -> Self {
        Outcome {
            commands,
            ..Outcome::default()
        }
    }

    /// The layer closes, and these requests go out.
    pub fn close(commands: Vec<Command>) -> Self {
        Outcome {
            close: true,
            commands,
            ..Outcome::default()
        }
    }

    /// The same, with `flash` said on the status line.
    pub fn flash(self, flash: impl Into<String>) -> Self {
        Outcome {
            flash: Some(flash.into()),
            ..self
        }
    }
}

/// The opened layers, bottom to top in the order they were opened.
#[derive(Default)]
pub(super) struct Stack {
    layers: Vec<Box<dyn Layer>>,
}

impl Stack {
    pub fn open(&mut self, layer: Box<dyn Layer>) {
        self.layers.push(layer);
    }

    /// The layers' focuses, bottom to top.
    pub fn focuses(&self) -> impl Iterator<Item = Focus> + '_ {
        self.layers.iter().map(|layer| layer.focus())
    }

    pub fn top(&self) -> Option<&dyn Layer> {
        self.layers.last().map(|layer| layer.as_ref())
    }

    /// The open layer of type `T` (the topmost, if several are).
    pub fn find_mut<T: Layer>(&mut self) -> Option<&mut T> {
        self.layers
            .iter_mut()
            .rev()
            .find_map(|layer| layer.as_any_mut().downcast_mut::<T>())
    }

    /// Gives `key` to the layers top first until one takes it; what that one wants (its close
    /// and open already done), or `None` when every layer passed it down.
    pub fn handle_key(&mut self, key: KeyEvent, shared: &Shared) -> Option<Outcome> {
        for index in (0..self.layers.len()).rev() {
            let mut outcome = self.layers[index].handle_key(key, shared);
            if outcome.passed {
                continue;
            }
            if outcome.close {
                self.layers.remove(index);
            }
            if let Some(layer) = outcome.open.take() {
                self.layers.push(layer);
            }
            return Some(outcome);
        }
        None
    }

    /// Draws the layers bottom up.
    pub fn draw(&self, shared: &Shared, frame: &mut Frame, area: Rect) {
        for layer in &self.layers {
            layer.draw(shared, frame, area);
        }
    }
}
