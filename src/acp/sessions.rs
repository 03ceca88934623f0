//! The sessions the editor has open: each a session core opened as `exec` opens one (the
//! folder's settings resolved for the editor's working directory, trust as the user decided
//! it), with a pump task that turns its updates into `session/update` notifications.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use agent_client_protocol::v1::schema as acp;
use agent_client_protocol::{Error, ErrorCode};
use tokio::sync::oneshot;

use super::{AcpContext, rpc_error};
use crate::config::{ConfigError, Settings};
use crate::engine::Failure;
use crate::session::{
    self, AssembleError, CoreOptions, LoadedSession, Mode, Request, SessionChoice, SessionFacts,
    SessionHandle, Update,
};

/// How a prompt turn ended, as the pump saw it.
#[derive(Debug)]
pub enum TurnEnd {
    Stop(acp::StopReason),
    Failed(Failure),
}

/// One open session.
pub struct Live {
    pub id: String,
    pub handle: SessionHandle,
    pub workdir: PathBuf,
    pub home: PathBuf,
    pub facts: SessionFacts,
    pub mode: Mutex<Mode>,
    /// The model of the next run (`session/set_config_option`).
    model: Mutex<String>,
    /// The todo list as the core last published it (for the plan review).
    todos: Mutex<Vec<crate::session::TodoItem>>,
    /// The running prompt's answer, while one runs.
    turn: Mutex<Option<oneshot::Sender<TurnEnd>>>,
    /// `session/cancel` came during this turn: it ends `cancelled`, whatever else happened.
    cancelled: AtomicBool,
    /// The session's MCP servers, shut down when the session closes.
    mcp: crate::mcp::McpManager,
    /// Its tool calls the editor was shown, and which run in an embedded terminal.
    pub shown: Arc<super::terminal::ShownCalls>,
    /// The editor's files, when it offers them (an edit's diff is of its buffer).
    pub files: Option<Arc<dyn crate::tools::EditorFiles>>,
    /// Edits' diffs made from the editor's buffer when they were asked about, by call id, for
    /// their `tool_call` once they run.
    buffer_diffs: Mutex<HashMap<String, acp::Diff>>,
}

impl Live {
    /// Starts a turn; `None` when one is running already.
    pub fn begin_turn(&self) -> Option<oneshot::Receiver<TurnEnd>> {
        let mut slot = self.turn.lock().ok()?;
        if slot.as_ref().is_some_and(|tx| !tx.is_closed()) {
            return None;
        }
        let (tx, rx) = oneshot::channel();
        *slot = Some(tx);
        self.cancelled.store(false, Ordering::SeqCst);
        Some(rx)
    }

    /// Ends the running turn (if any) with `end`; a cancelled turn always ends `cancelled`.
    pub fn end_turn(&self, end: TurnEnd) {
        let sender = self.turn.lock().ok().and_then(|mut slot| slot.take());
        if let Some(tx) = sender {
            let end = if self.cancelled.load(Ordering::SeqCst) {
                TurnEnd::Stop(acp::StopReason::Cancelled)
            } else {
                end
            };
            let _ = tx.send(end);
        }
    }

    /// Whether a turn is running.
    pub fn in_turn(&self) -> bool {
        self.turn
            .lock()
            .map(|slot| slot.as_ref().is_some_and(|tx| !tx.is_closed()))
            .unwrap_or(false)
    }

    /// `session/cancel`: the run stops as Esc stops it in the TUI (the history stays valid).
    pub fn cancel(&self) {
        if self.in_turn() {
            self.cancelled.store(true, Ordering::SeqCst);
        }
        self.handle.send(Request::Interrupt);
    }

    pub fn mode(&self) -> Mode {
        self.mode.lock().map(|m| *m).unwrap_or_default()
    }

    pub fn todos(&self) -> Vec<crate::session::TodoItem> {
        self.todos.lock().map(|t| t.clone()).unwrap_or_default()
    }

    pub fn set_todos(&self, todos: &[crate::session::TodoItem]) {
        if let Ok(mut current) = self.todos.lock() {
            *current = todos.to_vec();
        }
    }

    pub fn model(&self) -> String {
        self.model.lock().map(|m| m.clone()).unwrap_or_default()
    }

    pub fn set_model(&self, model: String) {
        if let Ok(mut current) = self.model.lock() {
            *current = model;
        }
    }

    /// Keeps `diff` (made from the editor's buffer) for the call `id`'s `tool_call`.
    pub fn keep_buffer_diff(&self, id: &str, diff: acp::Diff) {
        if let Ok(mut diffs) = self.buffer_diffs.lock() {
            diffs.insert(id.to_owned(), diff);
        }
    }

    /// The diff kept for the call `id`, taken.
    pub fn take_buffer_diff(&self, id: &str) -> Option<acp::Diff> {
        self.buffer_diffs.lock().ok()?.remove(id)
    }

    /// Servers' forms go to the editor (`elicitation/create`) when it offers them.
    pub fn set_elicitor(&self, elicitor: Option<Arc<dyn crate::mcp::Elicitor>>) {
        self.mcp.set_elicitor(elicitor);
    }

    pub fn set_mode(&self, mode: Mode) {
        if let Ok(mut current) = self.mode.lock() {
            *current = mode;
        }
        self.handle.send(Request::SetMode(mode));
    }
}

/// A session as it was opened: the live session, and what to tell the editor about it.
pub struct Opened {
    pub live: Arc<Live>,
    pub loaded: LoadedSession,
    pub notices: Vec<String>,
    pub updates: tokio::sync::mpsc::UnboundedReceiver<Update>,
}

#[derive(Default)]
pub struct Sessions {
    open: tokio::sync::Mutex<HashMap<String, Arc<Live>>>,
}

impl Sessions {
    pub async fn get(&self, id: &acp::SessionId) -> Result<Arc<Live>, Error> {
        self.open
            .lock()
            .await
            .get(id.0.as_ref())
            .cloned()
            .ok_or_else(|| {
                rpc_error(
                    ErrorCode::RESOURCE_NOT_FOUND,
                    format!("no open session is named {}", id.0),
                )
            })
    }

    /// Opens a new session in `cwd`, or loads the stored session `resume` there, with the
    /// editor's side and the record of the tool calls it was shown.
    pub async fn open(
        &self,
        context: &AcpContext,
        cwd: &Path,
        resume: Option<&str>,
        (editor, shown): (session::EditorSide, Arc<super::terminal::ShownCalls>),
        editor_mcp: Vec<crate::config::EditorMcpServer>,
    ) -> Result<Opened, Error> {
        if let Some(id) = resume
            && self.open.lock().await.contains_key(id)
        {
            // One core per session: a second core would write the same history twice.
            return Err(rpc_error(
                ErrorCode::INVALID_REQUEST,
                format!("session {id} is already open"),
            ));
        }
        let files = editor.files.clone();
        let mut settings = settings_for(context, cwd).map_err(config_error)?;
        settings.editor_mcp = editor_mcp;
        let choice = match resume {
            Some(id) => SessionChoice::Resume(id.to_owned()),
            None => SessionChoice::New,
        };
        let options = CoreOptions {
            drive_queue: false,
            load_transcript: resume.is_some(),
            wait_for_mcp: Some(crate::mcp::HEADLESS_WAIT),
            // The editor is asked through the protocol instead (`acp::elicitation`).
            ask_elicitations: false,
        };
        let opened = session::open_in_editor(&settings, choice, options, editor)
            .await
            .map_err(|error| match error {
                AssembleError::Session(message) => {
                    rpc_error(ErrorCode::RESOURCE_NOT_FOUND, message)
                }
                other => rpc_error(ErrorCode::INTERNAL_ERROR, other.to_string()),
            })?;
        let mut notices = opened.notices;
        let loaded = opened.loaded;
        notices.extend(loaded.notices.iter().cloned());
        notices.extend(loaded.problems.iter().map(|p| p.message.clone()));
        let live = Arc::new(Live {
            id: loaded.session_id.clone(),
            handle: opened.handle,
            workdir: settings.workdir.clone(),
            home: settings.home.clone(),
            model: Mutex::new(opened.facts.model.clone()),
            todos: Mutex::new(loaded.todos.clone()),
            facts: opened.facts,
            mode: Mutex::new(loaded.mode),
            turn: Mutex::new(None),
            cancelled: AtomicBool::new(false),
            mcp: opened.mcp,
            shown,
            files,
            buffer_diffs: Mutex::new(HashMap::new()),
        });
        self.open
            .lock()
            .await
            .insert(live.id.clone(), Arc::clone(&live));
        Ok(Opened {
            live,
            loaded,
            notices,
            updates: opened.updates,
        })
    }

    /// Interrupts and closes every session, waiting until each has stored what it has.
    pub async fn close_all(&self) {
        let open: Vec<Arc<Live>> = self.open.lock().await.drain().map(|(_, s)| s).collect();
        for live in open {
            let mut updates = live.handle.subscribe();
            live.handle.send(Request::Close {
                discard_if_empty: true,
            });
            while let Some(update) = updates.recv().await {
                if let Update::Closed(closing) = update {
                    if !closing.unsaved.is_empty() {
                        tracing::error!(
                            session = %closing.session_id,
                            "could not store all of the session: {:?}",
                            closing.unsaved
                        );
                    }
                    break;
                }
            }
            live.mcp.shutdown();
        }
    }
}

/// The settings of a session in `cwd`: the process's own when it is the folder harness9 was
/// started in, else resolved for that folder (its `.env`, its trust as the user decided it:
/// `--trust` on the command line covers the starting folder only).
pub fn settings_for(context: &AcpContext, cwd: &Path) -> Result<Settings, ConfigError> {
    let workdir = crate::config::resolve_workdir(&crate::config::RunOptions {
        workdir: Some(cwd.to_path_buf()),
        ..Default::default()
    })?;
    let mut options = context.options.clone();
    if workdir != context.workdir {
        options.trust = false;
    }
    options.workdir = Some(workdir.clone());
    let env = context.environment(&workdir);
    crate::config::resolve(&options, workdir, &env)
}

/// A setting that keeps a session from opening: a missing key is the protocol's "auth
/// required", anything else a bad request, both with the words that say what to do.
pub fn config_error(error: ConfigError) -> Error {
    let code = match error {
        ConfigError::MissingKey { .. } | ConfigError::NoProvider { .. } => ErrorCode::AUTH_REQUIRED,
        _ => ErrorCode::INVALID_PARAMS,
    };
    rpc_error(code, error.to_string())
}
