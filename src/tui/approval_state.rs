//! The tool calls waiting for the user's answer, first shown first, with the reason being typed
//! for a denial and how far the approval overlay is scrolled. Owned by `App`.

use std::collections::VecDeque;

use ratatui_textarea::TextArea;

use crate::engine::ApprovalRequest;

#[derive(Default)]
pub struct ApprovalState {
    pub(super) requests: VecDeque<ApprovalRequest>,
    /// The reason typed for denying the request shown, while it is typed.
    pub(super) deny_reason: Option<TextArea<'static>>,
    /// How far the approval overlay is scrolled when it does not fit.
    pub(super) overlay_scroll: u16,
}
