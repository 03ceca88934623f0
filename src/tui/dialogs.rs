//! The one-key dialogs' rules in the app: which dialog is on top (so its time on screen can be
//! tracked), and whether a key may answer it yet.

use super::app::App;
use super::dialog_guard::SETTLE;
use super::keymap::Action;

impl App {
    /// The dialog on top that one key answers, named so that another dialog counts anew.
    pub(super) fn dialog_id(&self) -> Option<String> {
        if self.stack_focused() {
            return self.stack().top().and_then(|top| top.dialog());
        }
        None
    }

    /// A frame was drawn: the dialog on top has been on screen since its first frame.
    pub(super) fn dialog_drawn(&mut self) {
        let dialog = self.dialog_id();
        let now = self.clock().now();
        self.dialogs_mut().drawn(dialog, now);
    }

    /// Whether `action` may go ahead: an answer to a dialog that has not been on screen for
    /// `SETTLE` is dropped (it was typed for something else). Quitting and scrolling still work.
    pub(super) fn dialog_takes(&mut self, action: Action) -> bool {
        let Some(dialog) = self.dialog_id() else {
            return true;
        };
        if matches!(
            action,
            Action::Ignore | Action::ClearOrQuit | Action::PageUp | Action::PageDown
        ) {
            return true;
        }
        if self.dialogs().accepts(&dialog, self.clock().now()) {
            return true;
        }
        self.flash_mut().text = Some(format!(
            "that key came before the dialog was on screen for {} ms: press it again to answer",
            SETTLE.as_millis()
        ));
        false
    }
}
