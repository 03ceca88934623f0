//! What a front end is started with, in the session's own terms: a local session about to open
//! (`Launch`: the settings as resolved, and how to resolve them again once the user trusts the
//! folder), how the screen looks (`Display`, `Theme`), and the file logs of a full-screen front
//! end. The TUI holds these without reading the settings or the observability wiring, so it
//! imports neither `config` nor `observe`. The steps that read or write files (`settle_trust`,
//! `approve`) block: a front end calls them off its UI task.

use std::path::Path;

use super::setup::{self, PendingExtension};
use super::{AssembleError, CoreOptions, Opened, SessionChoice};
use crate::config::{ConfigError, Settings};
use crate::planning::Mode;

/// Settings resolved again for a folder the user just trusted.
pub type TrustedSettings = Box<dyn FnOnce() -> Result<Settings, ConfigError> + Send>;

/// A local session about to open: its settings, resolved again as trusted when the user trusts
/// the folder.
pub struct Launch {
    settings: Settings,
    trusted: Option<TrustedSettings>,
}

impl Launch {
    pub fn new(settings: Settings, trusted: TrustedSettings) -> Self {
        Launch {
            settings,
            trusted: Some(trusted),
        }
    }

    /// `$HARNESS9_HOME`.
    pub fn home(&self) -> &Path {
        &self.settings.home
    }

    /// Whether the folder's trust is decided (remembered, or `--trust`): else the user is asked.
    pub fn trust_decided(&self) -> bool {
        self.settings.trust_decided
    }

    /// The working directory, for the screen.
    pub fn workdir(&self) -> String {
        self.settings.workdir.display().to_string()
    }

    /// The provider's name, for the screen.
    pub fn provider(&self) -> String {
        self.settings.provider.kind.to_string()
    }

    pub fn model(&self) -> &str {
        &self.settings.provider.model
    }

    pub fn mode(&self) -> Mode {
        self.settings.mode
    }

    pub fn context_window(&self) -> u64 {
        self.settings.context_window
    }

    /// Blocking: the user's answer to the folder's trust (`None` when it was decided already).
    /// Trusted, the settings are resolved again as trusted and the answer remembered (one that
    /// cannot be written trusts the folder for this run only, which a notice says). Returns the
    /// project's extensions that wait for the user's approval: in a front end that asks, the
    /// user answers for them (`--trust` does not).
    pub fn settle_trust(
        &mut self,
        trusted: Option<bool>,
    ) -> Result<Vec<PendingExtension>, AssembleError> {
        if trusted == Some(true)
            && let Some(resolve) = self.trusted.take()
        {
            self.settings = resolve().map_err(|e| AssembleError::Session(e.to_string()))?;
            if let Err(error) = setup::remember_trust(&self.settings) {
                self.settings
                    .notices
                    .push(format!("this folder is trusted for this run only: {error}"));
            }
        }
        self.trusted = None;
        self.settings.approve_extensions = false;
        Ok(setup::pending_extensions(&self.settings))
    }

    /// Blocking: remembers the approval of `extension`; one that could not be written runs for
    /// no session, which a notice says.
    pub fn approve(&mut self, extension: &PendingExtension) {
        if let Err(error) = setup::approve_extension(&mut self.settings, extension) {
            self.settings.notices.push(format!(
                "the approval of {} could not be remembered, so it does not run: {error}",
                extension.name
            ));
        }
    }

    /// Opens the session (`session::open`).
    pub async fn open(
        self,
        choice: SessionChoice,
        options: CoreOptions,
    ) -> Result<Opened, AssembleError> {
        super::open(&self.settings, choice, options).await
    }
}

/// The colours a full-screen front end draws with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Theme {
    /// Light text on a dark background.
    Dark,
    /// Dark text on a light background.
    Light,
}

/// How a full-screen front end looks and where it draws (`--theme`, `--no-alt-screen` and the
/// `"tui"` section of the user's settings, as resolved).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Display {
    /// `None`: ask the terminal (its background colour, `COLORFGBG`), else dark.
    pub theme: Option<Theme>,
    /// Draw on the alternate screen; without it the transcript stays in the scrollback.
    pub alt_screen: bool,
    /// Ring the bell when an approval waits or a run ends unseen.
    pub bell: bool,
    /// Send an OSC 9 notification then.
    pub notify: bool,
    /// What in the settings file was ignored, for the front end to show.
    pub notices: Vec<String>,
}

impl From<crate::config::display::Display> for Display {
    fn from(display: crate::config::display::Display) -> Self {
        use crate::config::display::Theme as Configured;
        Display {
            theme: display.theme.map(|theme| match theme {
                Configured::Dark => Theme::Dark,
                Configured::Light => Theme::Light,
            }),
            alt_screen: display.alt_screen,
            bell: display.bell,
            notify: display.notify,
            notices: display.notices,
        }
    }
}

/// Keeps a full-screen front end's file logs (and, with the `otel` feature, its span exporter)
/// alive; dropping it flushes them.
pub struct FileLogs {
    _logs: crate::observe::FileLogs,
}

/// File logs in `home/logs/` (0700, `private_home`): a full-screen front end never logs to the
/// terminal. It starts them after its first frame, which never waits for them.
pub fn file_logs(home: &Path) -> Option<FileLogs> {
    crate::observe::init_file_logging(home).map(|logs| FileLogs { _logs: logs })
}
