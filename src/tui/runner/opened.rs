//! The session, once opened, taken into the app: its facts, its conversation, what went wrong
//! loading it and what was ignored at start; the runner holds its two ends from then on.

use super::super::app::{App, Effect, Facts, SessionView};
use super::super::transcript::Tone;
use super::{Live, Runner};
use crate::session::Opened;

impl Runner {
    /// The session is open: the app shows it from now on.
    pub(super) fn show(&mut self, app: &mut App, opened: Opened) -> Vec<Effect> {
        let Opened {
            handle,
            updates,
            facts,
            loaded,
            notices,
            mcp,
            ..
        } = opened;
        self.mcp_guard = Some(Box::new(mcp.shutdown_guard()));
        self.session = Some(Live { handle, updates });
        tracing::info!("[tui] session shown");
        let status_label = facts.status_label();
        app.show_session(
            SessionView {
                session_id: loaded.session_id.clone(),
                provider: facts.provider,
                model: facts.model,
                workdir: facts.workdir,
                mode: loaded.mode,
                context_window: facts.context_window,
            },
            Facts {
                skills: facts.skills,
                hooks: facts.hooks,
                models: facts.models,
                sandbox: Some(status_label),
                web_search: Some(format!(
                    "{}
{}",
                    facts.web_search, facts.language_servers
                )),
                inline: !self.display.alt_screen,
            },
        );
        // A session named in an earlier run is still resumed by its name (`show_loaded`); the
        // notices said at start are the opening's.
        let (problems, _) = app.show_loaded(loaded);
        app.flash_mut().text = None;
        // Unreadable stored state is reported and left in sessions.db until the user changes it.
        for problem in problems {
            app.transcript_mut().notice(problem.message, Tone::Warning);
        }
        // What was ignored or changed at start (the folder's .env, an untrusted folder's files,
        // a malformed settings file, a yolo session resumed in default, a sandbox that cannot
        // be had) stays readable in the transcript.
        for notice in notices
            .into_iter()
            .chain(self.display.notices.iter().cloned())
        {
            app.flash_mut().text = Some(notice.lines().next().unwrap_or("").to_owned());
            app.transcript_mut().notice(notice, Tone::Warning);
        }
        if self.open_picker {
            return app.open_picker();
        }
        Vec::new()
    }
}
