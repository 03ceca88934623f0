//! The input box: the text being typed, the earlier prompts Up and Down walk through, long pastes
//! shown collapsed, and the completion popup under it (its highlighted entry, whether Esc closed
//! it, the files `@` completes). Owned by `App`; keys and pastes change it (`editing.rs`,
//! `keys.rs`, `workflows.rs`).

use ratatui_textarea::TextArea;

use super::app::new_input;

pub struct InputBox {
    pub(super) input: TextArea<'static>,
    /// Earlier prompts, oldest first, and the one shown while walking through them.
    pub(super) history: Vec<String>,
    pub(super) history_index: Option<usize>,
    /// Long pastes shown collapsed in the input: placeholder → the whole text.
    pub(super) pastes: Vec<(String, String)>,
    /// The highlighted entry of the completion popup.
    pub(super) popup_selected: usize,
    /// The completion popup was closed with Esc (until the input changes).
    pub(super) popup_closed: bool,
    /// The working directory's files, for `@` completion (loaded on the first `@`).
    pub(super) files: Option<Vec<String>>,
}

impl Default for InputBox {
    fn default() -> Self {
        InputBox {
            input: new_input(),
            history: Vec::new(),
            history_index: None,
            pastes: Vec::new(),
            popup_selected: 0,
            popup_closed: false,
            files: None,
        }
    }
}
