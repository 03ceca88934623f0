//! Where the transcript view is and how it shows entries: scrolled or following, the moves asked
//! for since the last frame (settled when a frame is drawn, `frame.rs`), the page height, and
//! whether tool output is expanded. Owned by `App`.

use super::app::Scroll;

pub struct TranscriptView {
    pub(super) scroll: Scroll,
    /// Lines to move the view by at the next draw (negative is up), and a jump to the top.
    pub(super) pending_scroll: i64,
    pub(super) pending_top: bool,
    /// The transcript viewport's height at the last draw (a page).
    pub(super) viewport: u16,
    pub(super) expanded: bool,
}

impl Default for TranscriptView {
    fn default() -> Self {
        TranscriptView {
            scroll: Scroll::Follow,
            pending_scroll: 0,
            pending_top: false,
            viewport: 20,
            expanded: false,
        }
    }
}
