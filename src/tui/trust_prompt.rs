//! The one-key dialogs' rules in the app: which dialog is on top (so its time on screen can be
//! tracked), whether a key may answer it yet; and the folder trust question, asked through the
//! app's own layer and keys before the session starts (its answer decides the settings).

use crossterm::event::{Event as TermEvent, EventStream};
use futures_util::StreamExt;

use super::app::{App, Command, SessionView};
use super::dialog_guard::SETTLE;
use super::keymap::{Action, Focus};
use super::terminal::Term;
use crate::config::Settings;

/// Asks whether to trust the working directory: `Some(true)` trust it, `Some(false)` not for
/// now, `None` the user quit.
pub(super) async fn ask(term: &mut Term, settings: &Settings) -> std::io::Result<Option<bool>> {
    let workdir = settings.workdir.display().to_string();
    let mut app = App::new(SessionView {
        session_id: String::new(),
        provider: settings.provider.kind.to_string(),
        model: settings.provider.model.clone(),
        workdir: workdir.clone(),
        mode: settings.mode,
        context_window: settings.context_window,
    });
    app.trust = Some(workdir);
    let mut input = EventStream::new();
    loop {
        super::draw_frame(term, &mut app)?;
        let key = match input.next().await {
            Some(Ok(TermEvent::Key(key))) => key,
            Some(Ok(_)) => continue,
            Some(Err(error)) => return Err(error),
            None => return Ok(None),
        };
        for command in app.handle_key(key) {
            match command {
                Command::TrustFolder(trusted) => return Ok(Some(trusted)),
                Command::Quit => return Ok(None),
                _ => {}
            }
        }
    }
}

impl App {
    /// The dialog on top that one key answers, named so that another dialog counts anew.
    pub(super) fn dialog_id(&self) -> Option<String> {
        match self.layer() {
            Focus::Trust => Some("trust".into()),
            Focus::Extension => self
                .extension
                .as_ref()
                .map(|e| format!("extension:{}:{}", e.name, e.hash)),
            Focus::Approval => self
                .approvals
                .front()
                .map(|request| format!("approval:{}", request.id)),
            _ => None,
        }
    }

    /// A frame was drawn: the dialog on top has been on screen since its first frame.
    pub(super) fn dialog_drawn(&mut self) {
        let dialog = self.dialog_id();
        let now = self.clock.now();
        self.dialogs.drawn(dialog, now);
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
        if self.dialogs.accepts(&dialog, self.clock.now()) {
            return true;
        }
        self.flash = Some(format!(
            "that key came before the dialog was on screen for {} ms: press it again to answer",
            SETTLE.as_millis()
        ));
        false
    }

    pub(super) fn answer_trust(&mut self, trusted: bool) -> Vec<Command> {
        self.trust = None;
        self.flash = None;
        vec![Command::TrustFolder(trusted)]
    }
}
