//! The one-line message on the status line (`flash`): what the last action said, until the next
//! one or, for the Ctrl+C hint, until its second is over. Owned by `App`.

use std::time::Instant;

#[derive(Debug, Default)]
pub struct Flash {
    pub(super) text: Option<String>,
    /// When the flash goes away by itself (the Ctrl+C hint lives for its second).
    pub(super) until: Option<Instant>,
    /// When Ctrl+C was last pressed: a second press within the hint's second quits.
    pub(super) last_ctrl_c: Option<Instant>,
}
