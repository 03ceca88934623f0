//! From the first frame to the opened session, inside the one loop (`runner`): the folder trust
//! question and the questions about a trusted project's extensions are layers of the app like
//! any other; their answers are settled off the UI task (`session::launch::Launch` in
//! `spawn_blocking`: resolving the trusted folder's settings, remembering the answers, finding
//! what to ask), and the session is opened after the last one while the screen stays live.

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;

use tokio::task::JoinHandle;

use super::app::{App, Effect};
use super::extension_question::ExtensionQuestion;
use super::trust_question::TrustQuestion;
use crate::session::launch::Launch;
use crate::session::setup::PendingExtension;
use crate::session::{AssembleError, SessionChoice};
use crate::session::{CoreOptions, Opened};

/// A session being opened (here, or on a `serve` instance).
pub(super) type Opening = Pin<Box<dyn Future<Output = Result<Opened, AssembleError>>>>;

/// What blocking work settled: the launch to go on with, and the extensions to ask about (when
/// it looked for them).
type Settled = Result<(Launch, Option<Vec<PendingExtension>>), AssembleError>;

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
    /// What the session opens with (its settings resolved again when the folder is trusted).
    launch: Option<Launch>,
    choice: Option<SessionChoice>,
    /// The extensions not asked about yet.
    pending: VecDeque<PendingExtension>,
    /// The extension whose question is on screen.
    asking: Option<PendingExtension>,
    work: Work,
}

impl Startup {
    /// A session in this folder: the trust question first when its trust is not decided.
    pub fn local(launch: Launch, choice: SessionChoice, app: &mut App) -> Self {
        let mut startup = Startup {
            launch: None,
            choice: Some(choice),
            pending: VecDeque::new(),
            asking: None,
            work: Work::Asking,
        };
        if launch.trust_decided() {
            startup.work = Work::Blocking(resolve(launch, None));
        } else {
            app.open_layer(TrustQuestion::new(launch.workdir()));
            startup.launch = Some(launch);
        }
        startup
    }

    /// A session that only needs opening (`harness9 attach`).
    pub fn opening(opening: Opening) -> Self {
        Startup {
            launch: None,
            choice: None,
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

    /// The user's answer to a question of the start; whether `effect` was one.
    pub fn answer(&mut self, effect: &Effect, app: &mut App) -> bool {
        match effect {
            Effect::TrustFolder(trusted) => {
                if let Some(launch) = self.launch.take() {
                    self.work = Work::Blocking(resolve(launch, Some(*trusted)));
                }
                true
            }
            Effect::ApproveExtension(yes) => {
                let extension = self.asking.take();
                match (extension, self.launch.take()) {
                    (Some(extension), Some(launch)) if *yes => {
                        self.work = Work::Blocking(approve(launch, extension));
                    }
                    (_, launch) => {
                        self.launch = launch;
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
                let (launch, pending) = settled
                    .map_err(|e| AssembleError::Setup(format!("the start failed: {e}")))??;
                self.launch = Some(launch);
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
        let (Some(launch), Some(choice)) = (self.launch.take(), self.choice.take()) else {
            return;
        };
        let options = CoreOptions {
            // The app shows and edits the queue and sends the next prompt itself.
            drive_queue: false,
            load_transcript: true,
            // The first frame never waits for MCP servers; late tools join at the next turn.
            wait_for_mcp: None,
            // MCP servers' forms are asked in a dialog (`elicitation_form`).
            ask_elicitations: true,
        };
        self.work = Work::Opening(Box::pin(launch.open(choice, options)));
    }
}

/// Off the UI task: the folder's trust as answered (`None`: decided before), then the project
/// extensions waiting for an answer.
fn resolve(launch: Launch, trusted: Option<bool>) -> JoinHandle<Settled> {
    tokio::task::spawn_blocking(move || {
        let mut launch = launch;
        let pending = launch.settle_trust(trusted)?;
        Ok((launch, Some(pending)))
    })
}

/// Off the UI task: remembers the approval of `extension`.
fn approve(launch: Launch, extension: PendingExtension) -> JoinHandle<Settled> {
    tokio::task::spawn_blocking(move || {
        let mut launch = launch;
        launch.approve(&extension);
        Ok((launch, None))
    })
}
