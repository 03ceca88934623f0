//! The one-line message on the status line (`flash`): what the last action said, until the next
//! one or, for the Ctrl+C hint, until its second is over. Owned by `App`. `App::tell` puts a
//! notice that matters in the transcript as well.

use std::time::Instant;

use super::app::App;
use super::transcript::Tone;

#[derive(Debug, Default)]
pub struct Flash {
    pub(super) text: Option<String>,
    /// When the flash goes away by itself (the Ctrl+C hint lives for its second).
    pub(super) until: Option<Instant>,
    /// When Ctrl+C was last pressed: a second press within the hint's second quits.
    pub(super) last_ctrl_c: Option<Instant>,
}

impl App {
    /// A notice that matters beyond the moment (a refusal, a rename, an export, a mode's
    /// meaning): its whole text goes into the transcript, where it stays readable, and its
    /// first line onto the status line.
    pub(super) fn tell(&mut self, text: impl Into<String>, tone: Tone) {
        let text = text.into();
        self.flash_mut().text = Some(text.lines().next().unwrap_or("").to_owned());
        self.transcript_mut().notice(text, tone);
    }

    /// The mode just changed: what it does from the next turn goes into the transcript (too
    /// long for a status line at 80 columns, cut at 50); the status line's mode badge shows
    /// the new mode, so no flash repeats it.
    pub(super) fn mode_switched(&mut self) {
        let mode = self.session().mode;
        self.transcript_mut()
            .notice(mode.switch_notice(), Tone::Quiet);
        self.flash_mut().text = None;
    }
}
