//! What front ends say to the session core (`Request`) and what it tells them (`Update`). Both
//! are plain data, so a front end in another process (an HTTP client) can be given the same
//! conversation over a wire. Beyond `schema` and the engine's event vocabulary (`Event`,
//! `ApprovalDecision`, `CompactionInfo`, `Failure`) they carry only the session's own types
//! (`views`, and `Mode`/`TodoItem` as the session re-exports them).

use std::sync::Arc;
use std::time::Duration;

use super::elicitation::ElicitationAsk;
use super::views::{
    ClipboardImage, Conflicts, JobSummary, McpServer, Memory, PromptPoint, RestoreReport,
    SessionHit, Unsaved,
};
use super::{Elicited, Mode, TodoItem};
use crate::engine::{ApprovalDecision, CompactionInfo, Event, Failure};
use crate::schema::{Message, ToolResult};

/// What `/ps` does with one background command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JobAction {
    /// Show all of its output that is kept.
    Output,
    /// Stop it with everything it started.
    Stop,
}

/// Something a front end asks of the session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Request {
    /// Send a prompt: it starts a run now, or is queued (and stored) while one is going; a
    /// queued prompt starts by itself when the run ends well if the core drives the queue
    /// (`CoreOptions::drive_queue`).
    Submit(String),
    /// Cancel the running turn (and any compaction or `!` command going on).
    Interrupt,
    SetMode(Mode),
    /// Use another model of the same provider from the next run on.
    SetModel(String),
    /// Keep going by itself while the todo list has open items.
    SetAutoContinue(bool),
    /// Replace the stored queue of prompts (a front end edited it).
    SetQueue(Vec<String>),
    /// Empty the todo list (a discarded plan).
    ClearTodos,
    /// Start a new session in the same working directory and switch to it.
    NewSession,
    /// Switch to a stored session by id.
    Resume(String),
    Rename(String),
    Compact,
    /// Run a command the user typed after `!`; `id` names it in the answer.
    RunShell {
        id: String,
        command: String,
    },
    /// Answer the approval `id` of the running turn; the first answer wins.
    AnswerApproval {
        id: String,
        decision: ApprovalDecision,
    },
    /// Answer the MCP server's form `id` (`Update::Elicitation`); the first answer wins.
    AnswerElicitation {
        id: String,
        answer: Elicited,
    },
    /// Find stored sessions; the answer carries `generation`, so a late answer to an older
    /// query can be told apart.
    ListSessions {
        query: String,
        /// Every working directory, not only this one.
        all: bool,
        generation: u64,
    },
    /// A stored session's conversation, read without switching to it (a sub-agent's
    /// transcript, opened from its task block).
    ReadSession {
        session_id: String,
    },
    /// The working directory's files (for `@` mentions).
    ListFiles {
        generation: u64,
    },
    /// This project's and the user's long-term memories (`/memory`): all of them when
    /// `query` is blank, else those matching it; answered with `Update::Memories`.
    ListMemories {
        query: String,
        generation: u64,
    },
    /// Sets memory `id`'s content, or forgets it (`content` `None`); `MEMORY.md` follows, and
    /// the list comes again as `ListMemories { query, generation }` answers.
    ChangeMemory {
        id: i64,
        content: Option<String>,
        query: String,
        generation: u64,
    },
    /// Start this MCP server again (`/mcp`).
    McpReconnect(String),
    /// Stop this MCP server for the rest of the session (`/mcp`).
    McpDisable(String),
    /// Log in to this HTTP MCP server (`/mcp`): the flow of `harness9 mcp login NAME`, off the
    /// front end's task; where to log in, then the result, come as notices, and the server
    /// starts again once logged in. `McpLogout` forgets its tokens.
    McpLogin(String),
    McpLogout(String),
    /// Fetch the text of an MCP server's prompt (`/mcp__server__prompt ARGS`). It comes back
    /// as `Update::McpPrompt` when the server answers; nothing waits for it meanwhile.
    McpPrompt {
        command: String,
        args: String,
    },
    /// An image from the system clipboard, for the prompt being written (answered with
    /// `Update::PastedImage`).
    PasteImage,
    /// The session's background commands (answered with `Update::Jobs`).
    ListJobs,
    /// One background command's whole output (a notice), or stopping it (a notice, then its
    /// end's notice and `Update::Jobs`); an unknown id is an `Update::Failed`.
    Job {
        id: String,
        action: JobAction,
    },
    /// The user confirms the allow rules the settings files gained while the session ran
    /// (held back until now, issue 29 point 4); a notice names them, or says there were none.
    ConfirmRules,
    /// Write `markdown` (the transcript as the front end shows it, `/export`) to the file
    /// `file` inside the working directory: never a protected path, never through a link, and
    /// over an existing file only with `overwrite`, which a front end sets after asking the
    /// user (answered with `Update::Exported`).
    Export {
        file: String,
        markdown: String,
        overwrite: bool,
    },
    /// The prompts of the conversation, for `/rewind` (answered with `Update::Prompts`).
    ListPrompts,
    /// List, merge or remove the worktrees of the repository the session's folder is in
    /// (`/worktree`; answered with `Update::Worktrees`).
    Worktrees(super::worktrees::WorktreeAction),
    /// Restore files (and for a rewind, the conversation) from the checkpoints; files changed
    /// since are only written with `Conflicts::Overwrite` (answered with `Update::Restored`).
    Restore {
        what: Restore,
        conflicts: Conflicts,
    },
    /// End the session: interrupt, let the run store what it has, flush the store. With
    /// `discard_if_empty`, a session that never got a prompt is deleted (the TUI's choice; a
    /// headless run always keeps its session).
    Close {
        discard_if_empty: bool,
    },
}

/// Something that happened in the session, for every front end watching it.
#[derive(Debug, Clone)]
pub enum Update {
    /// An event of the running turn, as the engine emitted it.
    Engine(Event),
    /// The files the prompt being sent carries, each with the bytes of it attached.
    Attached(Vec<(String, usize)>),
    /// The images the prompt being sent carries (name and size, for `[image: name, WxH]`).
    Images(Vec<crate::schema::ImageRef>),
    /// The core started a queued prompt by itself (when it drives the queue).
    RunStarted {
        prompt: String,
    },
    /// Another session is now the current one.
    Loaded(Arc<LoadedSession>),
    Todos(Vec<TodoItem>),
    /// The queue of prompts changed.
    Queue(Vec<String>),
    Sessions {
        generation: u64,
        hits: Vec<SessionHit>,
    },
    Files {
        generation: u64,
        files: Arc<Vec<String>>,
    },
    Memories {
        generation: u64,
        memories: Vec<Memory>,
    },
    ShellDone {
        id: String,
        result: ToolResult,
        duration: Duration,
    },
    Compacted(Result<Option<CompactionInfo>, Failure>),
    /// The answer to `Request::ReadSession`.
    SessionRead {
        session_id: String,
        messages: Result<Vec<Message>, Failure>,
    },
    /// The session now has this name.
    Renamed(String),
    /// The MCP servers as they stand now (sent at start and at every change of a status or a
    /// tool list), with what went wrong with them since the last time.
    Mcp {
        servers: Arc<Vec<McpServer>>,
        notices: Vec<String>,
    },
    /// An MCP server asks the user to fill in a form (only when the front end opened the core
    /// with `CoreOptions::ask_elicitations`); the server waits for `Request::AnswerElicitation`.
    Elicitation(Arc<ElicitationAsk>),
    /// A server's prompt asked for with `Request::McpPrompt`: its text, or why there is none
    /// (to show; nothing is decided from it).
    McpPrompt {
        command: String,
        result: Result<String, Failure>,
    },
    /// The session's background commands, oldest first: on `Request::ListJobs`, and after
    /// every tool result and run.
    Jobs(Vec<JobSummary>),
    /// The answer to `Request::PasteImage`: the image's file and size, or why there is none.
    PastedImage(Result<ClipboardImage, Failure>),
    /// The conversation's prompts, oldest first.
    Prompts(Vec<PromptPoint>),
    /// The answer to `Request::Export`: the file written, or why there is none.
    Exported {
        file: String,
        result: Result<std::path::PathBuf, super::ExportError>,
    },
    /// The answer to `Request::Worktrees`: the lines to show.
    Worktrees(super::worktrees::WorktreeReport),
    /// What a `Request::Restore` did, or (`report.asking`) what it must ask first.
    Restored(Arc<Restored>),
    /// A request could not be carried out (the run's own failures come as `Engine` errors).
    Failed(Failure),
    /// The session was closed; nothing follows.
    Closed(Arc<Closing>),
}

/// A session as it is loaded: what a front end shows of it.
#[derive(Debug, Clone)]
pub struct LoadedSession {
    pub session_id: String,
    /// Its name, when it has one (given in this run or an earlier one): the exit line's key.
    pub name: Option<String>,
    pub mode: Mode,
    /// The whole stored conversation (empty when the core was told not to load it).
    pub messages: Vec<Message>,
    /// Its sub-agents' sessions by the `task` call each answers (call id, child session id),
    /// so a task block read back from the store opens its child's transcript.
    pub child_sessions: Vec<(String, String)>,
    pub todos: Vec<TodoItem>,
    pub queue: Vec<String>,
    /// What could not be read: it is left in `sessions.db` as stored, and the user is told.
    pub problems: Vec<Failure>,
    /// Worth telling the user (a `yolo` session resumed in `default`).
    pub notices: Vec<String>,
}

/// How a session ended.
#[derive(Debug, Clone)]
pub struct Closing {
    pub session_id: String,
    /// Whether the session is still stored (an empty one may have been discarded).
    pub kept: bool,
    /// What the store did not take.
    pub unsaved: Unsaved,
    /// The store's last writes failed to flush.
    pub flush_error: Option<Failure>,
}

/// What to restore.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Restore {
    /// `/undo`: the files the last prompt that changed any changed.
    Undo,
    /// `/rewind`: to before the prompt at `seq`, its files, its conversation, or both.
    Rewind {
        seq: i64,
        files: bool,
        conversation: bool,
    },
}

/// The answer to a `Request::Restore`.
#[derive(Debug, Clone)]
pub struct Restored {
    pub what: Restore,
    /// The prompt it went back to before (its text), when there was one.
    pub prompt: Option<String>,
    pub report: RestoreReport,
    /// The conversation now goes on from before `prompt`; this many later messages were kept
    /// as a branch.
    pub branched: Option<usize>,
    /// All of it in plain words.
    pub text: String,
}
