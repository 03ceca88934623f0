//! Dialogs that answer with one key (approvals, folder trust) take keys only once they have
//! been on screen for `SETTLE` (CONTRACT "Folder trust", last paragraph): a `y` typed into a
//! sentence while the model streams must not approve the command that appears under it. The
//! time comes from the app's `Clock`, so tests control it instead of sleeping.

use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long a dialog is on screen before its keys count.
pub const SETTLE: Duration = Duration::from_millis(250);

/// The time the app reads: the system's, or one a test sets.
#[derive(Clone)]
pub struct Clock(Arc<dyn Fn() -> Instant + Send + Sync>);

impl Clock {
    pub fn system() -> Self {
        Clock(Arc::new(Instant::now))
    }

    /// A clock that reads `now()` (tests move it by hand).
    #[cfg(test)]
    pub fn from_fn(now: impl Fn() -> Instant + Send + Sync + 'static) -> Self {
        Clock(Arc::new(now))
    }

    pub fn now(&self) -> Instant {
        (self.0)()
    }
}

impl std::fmt::Debug for Clock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Clock")
    }
}

/// Which dialog is on top and since when it has been drawn.
#[derive(Debug, Default)]
pub struct DialogGuard {
    shown: Option<(String, Instant)>,
}

impl DialogGuard {
    /// A frame was drawn with `dialog` on top (`None`: no dialog). A dialog's time starts at
    /// the first frame that shows it; another dialog, or none, starts it again.
    pub fn drawn(&mut self, dialog: Option<String>, now: Instant) {
        match dialog {
            None => self.shown = None,
            Some(id) => {
                if self.shown.as_ref().is_none_or(|(shown, _)| *shown != id) {
                    self.shown = Some((id, now));
                }
            }
        }
    }

    /// Whether a key read at `now` may answer `dialog`: only once it has been on screen for
    /// `SETTLE`. A dialog not drawn yet takes no keys at all.
    pub fn accepts(&self, dialog: &str, now: Instant) -> bool {
        self.shown
            .as_ref()
            .is_some_and(|(shown, at)| shown == dialog && now.duration_since(*at) >= SETTLE)
    }
}
