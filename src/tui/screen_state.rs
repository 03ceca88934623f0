//! How the screen itself is: the spinner's step, whether the mouse is captured, whether the TUI
//! draws inline in the main screen (`--no-alt-screen`), what the last frame settled (`frame.rs`),
//! and whether the user asked to leave. Owned by `App`.

use super::frame::FrameState;

pub struct ScreenState {
    pub(super) spinner: usize,
    pub(super) should_quit: bool,
    pub(super) mouse_captured: bool,
    /// Drawn inline in the main screen (`--no-alt-screen`): the body shows only what is not in
    /// the scrollback yet (`inline`), and the mouse is the terminal's.
    pub(super) inline: bool,
    /// What the last frame settled or found (`frame.rs`).
    pub(super) frame: FrameState,
}

impl Default for ScreenState {
    fn default() -> Self {
        ScreenState {
            spinner: 0,
            should_quit: false,
            mouse_captured: true,
            inline: false,
            frame: FrameState::default(),
        }
    }
}
