//! From the first frame to the opened session, inside the one loop (`runner`): the folder trust
//! question and the questions about a trusted project's extensions are layers of the app like
//! any other; their answers are settled off the UI task (`session::setup` in `spawn_blocking`:
//! resolving the trusted folder's settings, remembering the answers, finding what to ask), and
//! the session is opened after the last one while the screen stays live.

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;

use tokio::task::JoinHandle;

use super::TrustedSettings;
use super::app::{App, Command};
use super::extension_question::ExtensionQuestion;
use super::trust_question::TrustQuestion;
use crate::config::Settings;
use crate::session::setup::{self, PendingExtension};
use crate::session::{self, CoreOptions, Opened};
use crate::session::{AssembleError, SessionChoice};

/// A session being opened (here, or on a `serve` instance).
pub(super) type Opening = Pin<Box<dyn Future<Output = Result<Opened, AssembleError>>>>;

/// What blocking work settled: the settings to go on with, and the extensions to ask about
/// (when it looked for them).
type Settled = Result<(Settings, Option<Vec<PendingExtension>>), AssembleError>;

/// What the current step came to (`Startup::progress`).
pub(super) enum Done {
    Settled(Result<Settled, tokio::task::JoinError>),
    Opened(Result<Opened, AssembleError>),
}

/// Where the start is.
enum Work {
    /// The question on top waits for the user.
    Asking,
    /// Files are read or written off the UI task.
    Blocking(JoinHandle<Settled>),
    Opening(Opening),
    /// The session is open (or failed to be).
    Over,
}

pub(super) struct Startup {
    /// The settings the session opens with (resolved again when the folder is trusted).
    settings: Option<Settings>,
    choice: Option<SessionChoice>,
    trusted: Option<TrustedSettings>,
    /// The extensions not asked about yet.
    pending: VecDeque<PendingExtension>,
    /// The extension whose question is on screen.
    asking: Option<PendingExtension>,
    work: Work,
}

impl Startup {
    /// A session in this folder: the trust question first when its trust is not decided.
    pub fn local(
        settings: Settings,
        choice: SessionChoice,
        trusted: TrustedSettings,
        app: &mut App,
    ) -> Self {
        let mut startup = Startup {
            settings: None,
            choice: Some(choice),
            trusted: Some(trusted),
            pending: VecDeque::new(),
            asking: None,
            work: Work::Asking,
        };
        if settings.trust_decided {
            startup.work = Work::Blocking(resolve(settings, None));
        } else {
            app.open_layer(TrustQuestion::new(settings.workdir.display().to_string()));
            startup.settings = Some(settings);
        }
        startup
    }

    /// A session that only needs opening (`harness9 attach`).
    pub fn opening(opening: Opening) -> Self {
        Startup {
            settings: None,
            choice: None,
            trusted: None,
            pending: VecDeque::new(),
            asking: None,
            work: Work::Opening(opening),
        }
    }

    /// Whether work goes on with no question on screen (the session being opened, files
    /// being read): keys typed meanwhile wait for the session, as they waited in the terminal.
    pub fn holds_input(&self) -> bool {
        matches!(self.work, Work::Blocking(_) | Work::Opening(_))
    }

    /// The user's answer to a question of the start; whether `command` was one.
    pub fn answer(&mut self, command: &Command, app: &mut App) -> bool {
        match command {
            Command::TrustFolder(trusted) => {
                if let Some(settings) = self.settings.take() {
                    let resolving = self.trusted.take().filter(|_| *trusted);
                    self.work = Work::Blocking(resolve(settings, resolving));
                }
                true
            }
            Command::ApproveExtension(yes) => {
                let extension = self.asking.take();
                match (extension, self.settings.take()) {
                    (Some(extension), Some(settings)) if *yes => {
                        self.work = Work::Blocking(approve(settings, extension));
                    }
                    (_, settings) => {
                        self.settings = settings;
                        self.next(app);
                    }
                }
                true
            }
            _ => false,
        }
    }

    /// Waits for the current step's work; never ends while a question waits for the user.
    pub async fn progress(&mut self) -> Done {
        match &mut self.work {
            Work::Blocking(task) => {
                let settled = task.await;
                self.work = Work::Asking;
                Done::Settled(settled)
            }
            Work::Opening(opening) => {
                let opened = opening.await;
                self.work = Work::Over;
                Done::Opened(opened)
            }
            Work::Asking | Work::Over => std::future::pending().await,
        }
    }

    /// Takes what a step came to: the opened session once there is one.
    pub fn finish(&mut self, done: Done, app: &mut App) -> Result<Option<Opened>, AssembleError> {
        match done {
            Done::Settled(settled) => {
                let (settings, pending) = settled
                    .map_err(|e| AssembleError::Setup(format!("the start failed: {e}")))??;
                self.settings = Some(settings);
                if let Some(pending) = pending {
                    self.pending = pending.into();
                }
                self.next(app);
                Ok(None)
            }
            Done::Opened(opened) => opened.map(Some),
        }
    }

    /// The next extension's question, or the session opened when none is left.
    fn next(&mut self, app: &mut App) {
        if let Some(extension) = self.pending.pop_front() {
            app.open_layer(ExtensionQuestion::new(extension.clone()));
            self.asking = Some(extension);
            self.work = Work::Asking;
            return;
        }
        let (Some(settings), Some(choice)) = (self.settings.take(), self.choice.take()) else {
            return;
        };
        let options = CoreOptions {
            // The app shows and edits the queue and sends the next prompt itself.
            drive_queue: false,
            load_transcript: true,
            // The first frame never waits for MCP servers; late tools join at the next turn.
            wait_for_mcp: None,
        };
        self.work = Work::Opening(Box::pin(async move {
            session::open(&settings, choice, options).await
        }));
    }
}

/// Off the UI task: the trusted folder's settings (`trusted`, when the user trusted it, with the
/// answer remembered), then the project extensions waiting for an answer.
fn resolve(settings: Settings, trusted: Option<TrustedSettings>) -> JoinHandle<Settled> {
    tokio::task::spawn_blocking(move || {
        let mut settings = settings;
        if let Some(trusted) = trusted {
            settings = trusted().map_err(|e| AssembleError::Session(e.to_string()))?;
            if let Err(error) = setup::remember_trust(&settings) {
                settings
                    .notices
                    .push(format!("this folder is trusted for this run only: {error}"));
            }
        }
        // In the TUI the user answers for the project's extensions; `--trust` does not.
        settings.approve_extensions = false;
        let pending = setup::pending_extensions(&settings);
        Ok((settings, Some(pending)))
    })
}

/// Off the UI task: remembers the approval of `extension`; one that could not be written runs
/// for no session, which a notice says.
fn approve(settings: Settings, extension: PendingExtension) -> JoinHandle<Settled> {
    tokio::task::spawn_blocking(move || {
        let mut settings = settings;
        if let Err(error) = setup::approve_extension(&mut settings, &extension) {
            settings.notices.push(format!(
                "the approval of {} could not be remembered, so it does not run: {error}",
                extension.name
            ));
        }
        Ok((settings, None))
    })
}
