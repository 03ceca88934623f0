//! The input box: the text being typed, the earlier prompts Up and Down walk through, long pastes
//! shown collapsed, and the completion popup under it (its highlighted entry, whether Esc closed
//! it, the files `@` completes). Owned by `App`; keys and pastes change it (`editing.rs`,
//! `keys.rs`, `workflows.rs`).

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::widgets::Widget;
use ratatui_textarea::TextArea;

use super::app::new_input;

/// The most rows the input box grows to (soft-wrapped rows count as newlines do); past them it
/// scrolls with the cursor.
pub(super) const INPUT_ROWS_MOST: u16 = 6;

/// The width the input's text is laid out at on a screen `width` columns wide: the `› ` prompt
/// takes two columns, and one more is kept free so the cursor after a full row stays on it.
pub(super) fn input_field_width(width: u16) -> u16 {
    width.saturating_sub(3).max(1)
}

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

impl InputBox {
    /// The rows the input box takes on a screen `width` columns wide: its text's rows once
    /// soft-wrapped at the field's width, from one up to `INPUT_ROWS_MOST`.
    pub(super) fn rows(&self, width: u16) -> u16 {
        self.rows_up_to(width, INPUT_ROWS_MOST)
    }

    /// The text's rows at the field's width on a screen `width` columns wide, counted up to
    /// `most`.
    fn rows_up_to(&self, width: u16, most: u16) -> u16 {
        // The text area lays its rows out only while drawing, and drawing moves its view: a copy
        // of the text is laid out instead, so measuring leaves the input as it is.
        let mut scratch = TextArea::new(self.input.lines().to_vec());
        scratch.set_wrap_mode(self.input.wrap_mode());
        let area = Rect::new(0, 0, input_field_width(width), 1);
        (&scratch).render(area, &mut Buffer::empty(area));
        // Row `r` past the last one reads as the last one: the rows end where two readings meet.
        let mut rows = 1;
        while rows < most
            && scratch.screen_to_data(usize::from(rows) - 1, 0)
                != scratch.screen_to_data(usize::from(rows), 0)
        {
            rows += 1;
        }
        rows
    }

    /// Before a frame: when the whole text fits in the box, its view goes back to the top (the
    /// text area keeps the view it scrolled to while the text was longer, which would hide the
    /// first rows of a box that now has room for them).
    pub(super) fn settle(&mut self, width: u16) {
        let (top, _) = self.input.scroll_offset();
        if top > 0 && self.rows_up_to(width, INPUT_ROWS_MOST + 1) <= INPUT_ROWS_MOST {
            self.input.scroll((-(top as i16), 0));
        }
    }
}
