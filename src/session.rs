//! The session core: one running session, whatever front end shows it. It owns the engine, the
//! session store, the todo list, the queue of prompts, provider and model switching, session
//! switching (`/new`, `/resume`), renaming, compaction, `!` shell commands, the file list for
//! `@` mentions and the reading of mentioned files. All wiring of a session lives here, once.
//!
//! Front ends are its clients and touch none of that themselves: they send `Request`s through a
//! `SessionHandle` (an mpsc sender, cheap to clone) and read `Update`s from a channel of their
//! own (`SessionHandle::subscribe`; several may watch one session). The TUI draws and maps
//! keys; `exec` prints; an HTTP front end can be a third client without changing the core.
//! Failures reach them typed (`Failure` with a `FailureKind`), decided from the typed errors
//! where they arose, so no front end ever reads an error's wording to decide what it was.
//!
//! What requests and updates carry is the session's own vocabulary: the engine's events, the
//! modes and todos, and view types (`views`) converted from the store's, tools', MCP's,
//! checkpoints' and the clipboard's internals at the core's edge, so a front end imports none
//! of those. Files a front end asks for (`/export`) are written by the core. Commands that run
//! no session (`sessions`, `memory`, `serve`'s lists) reach the store through `Catalogue`;
//! pure helpers front ends share with the core are in `text`.

mod actor;
mod catalogue;
mod elicitation;
mod export;
mod hub;
pub mod launch;
mod mcp_login;
mod memories;
mod protocol;
pub mod remote;
pub mod setup;
mod switching;
pub mod text;
mod undo;
mod views;
pub mod worktrees;

use std::sync::{Arc, Weak};

use tokio::sync::mpsc;

/// Opening a session is the core's business: which session (`SessionChoice`) and why it could
/// not be opened (`AssembleError`) are named through it, so front ends need not reach the wiring.
pub use crate::assemble::{AssembleError, SessionChoice};
pub use crate::engine::{Failure, FailureKind};
/// The user's answer to an MCP server's form is plain data the session passes on unchanged.
pub use crate::mcp::Elicited;
/// The approval modes and the todo list are the session's own vocabulary: the core stores
/// and switches the mode and keeps the todo list, and both are plain data. They are defined in
/// `planning` beside the rules that use them; front ends name them through the session.
pub use crate::planning::{Mode, TodoItem, TodoStatus};
pub use actor::MENTION_FILES;
pub use catalogue::Catalogue;
pub use elicitation::ElicitationAsk;
pub use export::ExportError;
pub use protocol::{Closing, JobAction, LoadedSession, Request, Restore, Restored, Update};
pub use views::{
    ClipboardImage, Conflicts, JobEnd, JobSummary, McpPromptInfo, McpServer, McpStatus, Memory,
    MemoryScope, PromptPoint, RestoreReport, SessionHit, SessionSummary, SessionTotals, Unsaved,
};

use crate::assemble::{self, ProviderFactory};
use crate::config::Settings;
use hub::Hub;

/// How a front end wants the core to behave.
#[derive(Debug, Clone, Copy, Default)]
pub struct CoreOptions {
    /// When a run ends well, start the next queued prompt. A front end that shows and edits
    /// the queue itself and sends the next prompt (the TUI) leaves this off and only has the
    /// queue stored (`Request::SetQueue`).
    pub drive_queue: bool,
    /// Load the whole stored conversation into `LoadedSession::messages` (a front end that
    /// shows it); `exec` does not need it.
    pub load_transcript: bool,
    /// Wait up to this long, in all, for the MCP servers to connect before returning (`exec`
    /// and `serve`); `None` never waits (the TUI: late tools join at the next turn).
    pub wait_for_mcp: Option<std::time::Duration>,
    /// The front end asks its user MCP servers' forms (`Update::Elicitation`, the TUI); without
    /// it they are declined with a notice (or, where `exec` allows it, filled with defaults).
    pub ask_elicitations: bool,
}

/// Facts about the session that front ends show and that do not change with a switch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionFacts {
    pub provider: String,
    pub model: String,
    pub workdir: String,
    pub context_window: u64,
    /// The commands' sandbox, for a status line (`workspace-write`).
    pub sandbox: String,
    /// Which web search applies, for a status (`engine::WebSearch::label`).
    pub web_search: String,
    /// The language servers the folder may start, for a status (`lsp::Servers::label`).
    pub language_servers: String,
    /// Skills as (name, description).
    pub skills: Vec<(String, String)>,
    /// The configured command hooks, one line each with where it comes from (`/hooks`).
    pub hooks: Vec<String>,
    /// The catalogue's models for this provider, with their context windows (`/model`).
    pub models: Vec<(String, Option<u64>)>,
    /// The git worktree the session runs in (`--worktree NAME`).
    pub worktree: Option<String>,
}

impl SessionFacts {
    /// The status line's label: the sandbox, after the worktree when there is one.
    pub fn status_label(&self) -> String {
        match &self.worktree {
            Some(name) => format!("worktree: {name} · {}", self.sandbox),
            None => self.sandbox.clone(),
        }
    }
}

/// Where a front end sends its requests and subscribes to updates. Dropping every handle
/// closes the session (as `Request::Close` without discarding).
#[derive(Clone)]
pub struct SessionHandle {
    requests: mpsc::UnboundedSender<Request>,
    /// Only the core keeps the hub alive: when its task ends (closed, or failed), every
    /// watcher's channel ends too, so no front end waits for updates that cannot come.
    hub: Weak<Hub>,
}

impl SessionHandle {
    /// Sends `request`; `false` when the session has already closed.
    pub fn send(&self, request: Request) -> bool {
        self.requests.send(request).is_ok()
    }

    /// A channel of every update from now on (one that has ended, once the session has).
    pub fn subscribe(&self) -> mpsc::UnboundedReceiver<Update> {
        match self.hub.upgrade() {
            Some(hub) => hub.subscribe(),
            None => mpsc::unbounded_channel().1,
        }
    }
}

/// A session opened and running.
pub struct Opened {
    pub handle: SessionHandle,
    /// Updates from the very start (subscribed before the core started, so none are missed).
    pub updates: mpsc::UnboundedReceiver<Update>,
    pub facts: SessionFacts,
    pub loaded: LoadedSession,
    /// What was ignored or changed at start, each once: the folder's `.env`, an untrusted
    /// folder's files, a malformed settings file, a sandbox that cannot be had.
    pub notices: Vec<String>,
    /// The session's MCP servers: statuses, reconnect and disable, later notices.
    pub mcp: crate::mcp::McpManager,
    /// A trusted project's MCP servers waiting for the user's approval.
    pub pending_mcp: Vec<crate::config::approved::PendingExtension>,
}

/// Opens the session `choice` names with the settings' provider and starts its core.
pub async fn open(
    settings: &Settings,
    choice: SessionChoice,
    options: CoreOptions,
) -> Result<Opened, AssembleError> {
    open_with(
        settings,
        choice,
        options,
        assemble::provider_factory(settings),
    )
    .await
}

/// What an editor front end (`acp`) lends the session it opens: the editor's file I/O, which
/// the file tools use once a path is judged, and its terminal, where `bash` runs commands.
#[derive(Default, Clone)]
pub struct EditorSide {
    pub files: Option<Arc<dyn crate::tools::EditorFiles>>,
    pub terminal: Option<Arc<dyn crate::tools::EditorTerminal>>,
}

/// `open` for a front end that has an editor on its other side (`acp`).
pub async fn open_in_editor(
    settings: &Settings,
    choice: SessionChoice,
    options: CoreOptions,
    editor: EditorSide,
) -> Result<Opened, AssembleError> {
    let providers = assemble::provider_factory(settings);
    open_full(settings, choice, options, providers, editor).await
}

/// `open` with the providers built by `providers`.
pub async fn open_with(
    settings: &Settings,
    choice: SessionChoice,
    options: CoreOptions,
    providers: ProviderFactory,
) -> Result<Opened, AssembleError> {
    open_full(settings, choice, options, providers, EditorSide::default()).await
}

async fn open_full(
    settings: &Settings,
    choice: SessionChoice,
    options: CoreOptions,
    providers: ProviderFactory,
    editor: EditorSide,
) -> Result<Opened, AssembleError> {
    let store = assemble::open_store(settings)?;
    let assembly = assemble::assemble_with(settings, store, choice, &providers).await?;
    let mut notices = settings.notices.clone();
    notices.extend(assembly.notices.iter().cloned());
    notices.extend(assembly.sandbox.notices().iter().cloned());
    // Settings files are read now, so one that cannot be used is reported at start, not at the
    // first tool call (or never, in a run without one).
    let rules = assembly.engine.rules();
    rules.refresh();
    notices.extend(rules.take_problems());
    let mcp = assembly.mcp.clone();
    let pending_mcp = assembly.pending_mcp.clone();
    if let Some(limit) = options.wait_for_mcp {
        if !mcp.wait_ready(limit).await {
            notices.push(format!(
                "some MCP servers were still starting after {}s; their tools join when they connect",
                limit.as_secs()
            ));
        }
        notices.extend(mcp.take_notices());
    }

    assembly.engine.set_editor_files(editor.files);
    assembly.engine.set_editor_terminal(editor.terminal);
    let mode: Mode = assembly.engine.mode();
    let loaded = switching::load_current(&assembly, mode, options.load_transcript).await;
    let facts = SessionFacts {
        provider: settings.provider.kind.to_string(),
        model: settings.provider.model.clone(),
        workdir: settings.workdir.display().to_string(),
        context_window: settings.context_window,
        sandbox: assembly.sandbox.label(),
        web_search: assembly.engine.web_search().label().to_owned(),
        language_servers: assembly.language_servers.label(),
        skills: assembly
            .skills
            .iter()
            .map(|s| (s.name.clone(), s.description.clone()))
            .collect(),
        hooks: assembly.engine.hooks().describe(),
        models: settings
            .catalogue
            .models_for(settings.provider.kind.as_str())
            .into_iter()
            .map(|m| (m.name.clone(), m.context_window))
            .collect(),
        worktree: settings.worktree.clone(),
    };
    let (tx, rx) = mpsc::unbounded_channel();
    let hub = Arc::new(Hub::default());
    let updates = hub.subscribe();
    let forms = Arc::new(elicitation::Elicitations::default());
    if options.ask_elicitations {
        let elicitor = elicitation::CoreElicitor::new(&hub, &forms);
        mcp.set_elicitor(Some(Arc::new(elicitor)));
    }
    let handle = SessionHandle {
        requests: tx,
        hub: Arc::downgrade(&hub),
    };
    actor::Core::start(
        actor::Parts {
            assembly,
            providers,
            workdir: settings.workdir.clone(),
            queue: loaded.queue.clone(),
            options,
            catalogue: settings.catalogue.clone(),
            forms,
        },
        hub,
        rx,
    );
    Ok(Opened {
        handle,
        updates,
        facts,
        loaded,
        notices,
        mcp,
        pending_mcp,
    })
}

#[cfg(test)]
mod tests;
