//! What a frame needs settled before it is drawn, and what the app takes in after: drawing
//! itself (`view::draw`) only reads the state. Before: the viewport's height and where the
//! transcript view is (a scroll asked for by keys is resolved here, once the width is known).
//! The opened layers settle their own layout for the body (how far an approval may scroll).
//! After: a layer scrolled past its end is brought back, and the dialog on top counts its
//! time on screen from this frame.

use ratatui::layout::Rect;

use super::app::{App, Scroll};

impl App {
    /// Settles what the frame drawn in `area` needs.
    pub(super) fn prepare(&mut self, area: Rect) {
        self.input_box_mut().settle(area.width);
        let (areas, _) = super::view::areas(self, area);
        let width = areas.transcript.width.saturating_sub(1).max(1);
        let height = areas.transcript.height as usize;
        self.view_mut().viewport = areas.transcript.height;
        self.screen_mut().frame.offset = 0;
        self.stack_mut().prepare(areas.body);
        // Inline, the terminal scrolls, not the view.
        if self.screen().inline {
            self.view_mut().scroll = Scroll::Follow;
            self.view_mut().pending_scroll = 0;
            self.view_mut().pending_top = false;
            return;
        }
        if self.view().pending_top {
            self.view_mut().pending_top = false;
            self.view_mut().scroll = Scroll::Anchored { top: 0 };
        }
        // Only a view that is (or is about to be) away from the bottom needs the total height;
        // it is measured once per frame.
        if self.view().pending_scroll != 0 || matches!(self.view().scroll, Scroll::Anchored { .. })
        {
            let total =
                self.transcript()
                    .total_height(width, self.view().expanded, self.screen().spinner);
            let bottom_top = total.saturating_sub(height);
            let top = match self.view().scroll {
                Scroll::Follow => bottom_top,
                Scroll::Anchored { top } => top.min(bottom_top),
            } as i64;
            let top = (top + self.view().pending_scroll).clamp(0, bottom_top as i64) as usize;
            self.view_mut().pending_scroll = 0;
            if top >= bottom_top {
                self.view_mut().scroll = Scroll::Follow;
            } else {
                self.view_mut().scroll = Scroll::Anchored { top };
                self.screen_mut().frame.offset = total.saturating_sub(top + height);
            }
        }
    }

    /// Takes in what the frame just drawn showed.
    pub(super) fn drawn(&mut self) {
        self.stack_mut().drawn();
        // What this frame shows is on screen from now: a dialog's keys count from its first
        // frame.
        self.dialog_drawn();
    }

    /// Lines between the bottom of the transcript and the bottom of the view.
    pub(super) fn scroll_offset(&self) -> usize {
        self.screen().frame.offset
    }

    /// Where the frame put the terminal's cursor (none: hidden).
    pub(super) fn set_cursor(&self, at: Option<(u16, u16)>) {
        self.screen().frame.cursor.set(at);
    }

    pub(super) fn cursor(&self) -> Option<(u16, u16)> {
        self.screen().frame.cursor.get()
    }
}

/// What the last frame settled or found.
#[derive(Debug, Default)]
pub(super) struct FrameState {
    /// Lines between the bottom of the transcript and the bottom of the view.
    offset: usize,
    /// Where the frame put the terminal's cursor.
    cursor: std::cell::Cell<Option<(u16, u16)>>,
}
