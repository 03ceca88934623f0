//! The layers the app opens over the conversation, each the owner of its state (helix's
//! compositor is the model): a layer is given its keys as the keymap's actions in its own mode
//! (it never reads raw keys but a text box's), answers with what it wants done (`Outcome`:
//! requests for the core, close me, open another layer, or pass the key down), draws as a
//! function of its state and names its hints. The `Stack` keeps them in the order they were
//! opened: keys go top first until one takes them, drawing goes bottom up. A layer never reads
//! another's state; what they all may read (the conversation, the session's MCP servers, ...)
//! comes in `Shared`, read-only.

use std::any::Any;
use std::borrow::Cow;

use crossterm::event::KeyEvent;
use ratatui::Frame;
use ratatui::layout::Rect;

use super::app::Effect;
use super::dialog_guard::Clock;
use super::keymap::{self, Action, Focus};
use super::mcp_panel::McpView;
use super::transcript::Transcript;

/// What the app shows to every layer, read-only.
pub(super) struct Shared<'a> {
    /// The session's MCP servers, as last reported.
    pub mcp: &'a [McpView],
    /// The conversation.
    pub transcript: &'a Transcript,
    /// Tool output and thinking unfolded (`Ctrl+O`).
    pub expanded: bool,
    pub spinner: usize,
    /// The time the screen reads.
    pub clock: &'a Clock,
    /// The transcript viewport's height at the last frame (a page).
    pub viewport: u16,
    /// The session shown.
    pub session_id: &'a str,
    /// A turn runs.
    pub running: bool,
}

/// One element on screen that takes keys.
pub(super) trait Layer: Any {
    /// The name the layer's focus goes by.
    fn focus(&self) -> Focus;
    /// The keymap's mode for the layer's keys now (a layer with a text box in it has two).
    fn mode(&self) -> Focus {
        self.focus()
    }
    /// What `action` (a key's, or the mouse wheel's) does to the layer, and what it wants done.
    fn update(&mut self, action: Action, shared: &Shared) -> Outcome;
    /// A frame is about to be drawn with `area` for the body: a layer whose layout depends on
    /// the screen settles it here (how far it may scroll), so drawing stays a function of its
    /// state and its hints fit the frame they are drawn in.
    fn prepare(&mut self, _area: Rect) {}
    /// Draws the layer in `area` (the body of the screen); a function of its state.
    fn draw(&self, shared: &Shared, frame: &mut Frame, area: Rect);
    /// A frame was drawn (a layer that scrolls brings its scroll back to what it showed).
    fn drawn(&mut self) {}
    /// The hints for the rule above the input while the layer has the focus.
    fn hints(&self) -> Cow<'static, str>;
    /// A paste from the terminal, taken when the layer has a text box that is being typed in.
    fn paste(&mut self, _text: &str) -> bool {
        false
    }
    /// A dialog one key answers names itself here, so its keys count only once it has been on
    /// screen a moment (`dialog_guard`).
    fn dialog(&self) -> Option<String> {
        None
    }
}

/// What a layer wants after a key.
#[derive(Default)]
pub(super) struct Outcome {
    /// The key was not this layer's: the one below gets it.
    pub passed: bool,
    /// The layer is done: it leaves the stack.
    pub close: bool,
    /// Requests for the runner to carry out.
    pub commands: Vec<Effect>,
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
    pub fn send(commands: Vec<Effect>) -> Self {
        Outcome {
            commands,
            ..Outcome::default()
        }
    }

    /// The layer closes, and these requests go out.
    pub fn close(commands: Vec<Effect>) -> Self {
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

    /// The open layer of type `T` (the topmost, if several are), to hand it the answers it
    /// asked for.
    pub fn find_mut<T: Layer>(&mut self) -> Option<&mut T> {
        self.layers.iter_mut().rev().find_map(|layer| {
            let layer: &mut dyn Any = layer.as_mut();
            layer.downcast_mut::<T>()
        })
    }

    /// The open layer of type `T` (the topmost, if several are).
    pub fn find<T: Layer>(&self) -> Option<&T> {
        self.layers.iter().rev().find_map(|layer| {
            let layer: &dyn Any = layer.as_ref();
            layer.downcast_ref::<T>()
        })
    }

    /// Closes every open layer of type `T`.
    pub fn close<T: Layer>(&mut self) {
        self.layers.retain(|layer| {
            let layer: &dyn Any = layer.as_ref();
            !layer.is::<T>()
        });
    }

    /// Gives `key` to the layers top first, each in its mode of the keymap, until one takes it.
    pub fn handle_key(&mut self, key: KeyEvent, shared: &Shared) -> Option<Outcome> {
        self.handle(shared, |layer| keymap::action(layer.mode(), key, true))
    }

    /// Gives `action` (the mouse wheel's) to the layers top first until one takes it.
    pub fn handle_action(&mut self, action: Action, shared: &Shared) -> Option<Outcome> {
        self.handle(shared, |_| action)
    }

    /// What the layer that took the action wants (its close and open already done), or
    /// `None` when every layer passed it down.
    fn handle(
        &mut self,
        shared: &Shared,
        action: impl Fn(&dyn Layer) -> Action,
    ) -> Option<Outcome> {
        for index in (0..self.layers.len()).rev() {
            let action = action(self.layers[index].as_ref());
            let mut outcome = self.layers[index].update(action, shared);
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

    /// A frame is about to be drawn with `area` for the body.
    pub fn prepare(&mut self, area: Rect) {
        for layer in &mut self.layers {
            layer.prepare(area);
        }
    }

    /// Gives a paste to the top layer; whether it took it.
    pub fn paste(&mut self, text: &str) -> bool {
        self.layers
            .last_mut()
            .is_some_and(|layer| layer.paste(text))
    }

    /// A frame was drawn.
    pub fn drawn(&mut self) {
        for layer in &mut self.layers {
            layer.drawn();
        }
    }

    /// Draws the layers bottom up.
    pub fn draw(&self, shared: &Shared, frame: &mut Frame, area: Rect) {
        for layer in &self.layers {
            layer.draw(shared, frame, area);
        }
    }
}
