//! The sessions `serve` has open: each a session core (opened as any front end opens one, with
//! the core driving its queue) whose updates a pump task turns into its `Feed`. A session is
//! opened once: resuming one that is already open returns it.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use serde_json::{Value, json};
use tokio::sync::Mutex;

use super::feed::Feed;
use super::{ServeContext, settings_for};
use crate::assemble::{AssembleError, SessionChoice};
use crate::engine::Failure;
use crate::planning::Mode;
use crate::session::{self, Catalogue, CoreOptions, Request, SessionFacts, SessionHandle, Update};

/// One open session.
pub struct Served {
    pub id: String,
    pub handle: SessionHandle,
    pub feed: Arc<Feed>,
    /// What `POST /sessions` answers about it.
    pub facts: SessionFacts,
    pub mode: Mode,
}

impl Served {
    pub fn describe(&self, notices: &[String]) -> Value {
        json!({
            "id": self.id,
            "workdir": self.facts.workdir,
            "provider": self.facts.provider,
            "model": self.facts.model,
            "mode": self.mode.as_str(),
            "context_window": self.facts.context_window,
            // The status line's label without its "sandbox: " prefix: `workspace-write`.
            "sandbox": self.facts.sandbox.strip_prefix("sandbox: ").unwrap_or(&self.facts.sandbox),
            "worktree": self.facts.worktree,
            "web_search": self.facts.web_search,
            "language_servers": self.facts.language_servers,
            "notices": notices,
        })
    }
}

/// Why a session could not be opened, as the route answers it.
pub enum OpenError {
    /// The request names something that cannot be used (400), or a session that does not exist
    /// (404).
    BadRequest(String),
    NotFound(String),
    /// `yolo` was asked for and `serve` was not started with it.
    Forbidden(String),
    Failed(String),
}

/// What `POST /sessions` asks for.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OpenRequest {
    pub workdir: Option<PathBuf>,
    pub mode: Option<String>,
    pub resume: Option<String>,
    /// The session runs in this git worktree of the workdir's repository (`--worktree NAME`).
    pub worktree: Option<String>,
}

pub struct Sessions {
    context: ServeContext,
    open: Mutex<HashMap<String, Arc<Served>>>,
    store: std::sync::OnceLock<Result<Catalogue, Failure>>,
}

impl Sessions {
    pub fn new(context: ServeContext) -> Self {
        Sessions {
            context,
            open: Mutex::new(HashMap::new()),
            store: std::sync::OnceLock::new(),
        }
    }

    /// `serve` may hand out `yolo` only when it was started in it.
    pub fn yolo_allowed(&self) -> bool {
        self.context.settings.mode == Mode::Yolo
    }

    /// The stored sessions, for listing them and reading transcripts (the cores keep their
    /// own store), opened once.
    pub fn store(&self) -> Result<&Catalogue, Failure> {
        self.store
            .get_or_init(|| Catalogue::open(&self.context.settings.home))
            .as_ref()
            .map_err(Clone::clone)
    }

    fn default_workdir_path(&self) -> &std::path::Path {
        &self.context.settings.workdir
    }

    pub fn default_workdir(&self) -> String {
        self.context.settings.workdir.display().to_string()
    }

    pub async fn get(&self, id: &str) -> Option<Arc<Served>> {
        self.open.lock().await.get(id).cloned()
    }

    /// Opens a new session or resumes a stored one; one that is open already is returned.
    pub async fn open(
        &self,
        request: OpenRequest,
    ) -> Result<(Arc<Served>, Vec<String>), OpenError> {
        let mode = match request.mode.as_deref() {
            None => None,
            Some(name) => Some(Mode::parse(name).ok_or_else(|| {
                OpenError::BadRequest(format!(
                    "unknown mode {name:?}: one of default, auto-edit, plan, yolo"
                ))
            })?),
        };
        if mode == Some(Mode::Yolo) && !self.yolo_allowed() {
            return Err(OpenError::Forbidden(
                "yolo is available over HTTP only when serve was started with --mode yolo".into(),
            ));
        }
        let workdir = match &request.workdir {
            None => self.context.settings.workdir.clone(),
            Some(dir) => crate::config::resolve_workdir(&crate::config::RunOptions {
                workdir: Some(dir.clone()),
                ..Default::default()
            })
            .map_err(|e| OpenError::BadRequest(e.to_string()))?,
        };
        // Opening is one at a time, so a session resumed twice at once is opened once.
        let mut open = self.open.lock().await;
        if let Some(key) = &request.resume {
            let store = self.store().map_err(|e| OpenError::Failed(e.to_string()))?;
            if let Ok(record) = store.resolve(key).await
                && let Some(served) = open.get(&record.id)
            {
                if let Some(mode) = mode {
                    served.handle.send(Request::SetMode(mode));
                }
                return Ok((Arc::clone(served), Vec::new()));
            }
        }
        let (workdir, worktree, worktree_notices) = match &request.worktree {
            None => (workdir, None, Vec::new()),
            Some(name) => {
                let trust_flag =
                    self.context.options.trust && workdir == self.default_workdir_path();
                let entered = crate::config::worktree::enter(
                    &workdir,
                    &self.context.settings.home,
                    name,
                    trust_flag,
                )
                .map_err(|e| OpenError::BadRequest(e.to_string()))?;
                (entered.path, Some(entered.name), entered.notices)
            }
        };
        let mut settings = settings_for(&self.context, workdir)
            .map_err(|e| OpenError::BadRequest(e.to_string()))?;
        settings.worktree = worktree;
        settings.notices.extend(worktree_notices);
        if let Some(mode) = mode {
            settings.mode = mode;
            settings.mode_given = true;
        }
        let choice = match request.resume {
            Some(key) => SessionChoice::Resume(key),
            None => SessionChoice::New,
        };
        let options = CoreOptions {
            drive_queue: true,
            load_transcript: false,
            // Like exec: the first prompt waits (10 s at most) for the MCP servers' tools.
            wait_for_mcp: Some(crate::mcp::HEADLESS_WAIT),
            ask_elicitations: false,
        };
        let opened =
            session::open(&settings, choice, options)
                .await
                .map_err(|error| match error {
                    AssembleError::Session(message) => OpenError::NotFound(message),
                    AssembleError::Setup(message) | AssembleError::Storage(message) => {
                        OpenError::Failed(message)
                    }
                })?;
        let feed = Arc::new(Feed::default());
        let served = Arc::new(Served {
            id: opened.loaded.session_id.clone(),
            handle: opened.handle,
            feed: Arc::clone(&feed),
            facts: opened.facts,
            mode: opened.loaded.mode,
        });
        let mut notices = opened.notices;
        notices.extend(opened.loaded.notices);
        notices.extend(opened.loaded.problems.into_iter().map(|p| p.message));
        let mut updates = opened.updates;
        tokio::spawn(async move {
            while let Some(update) = updates.recv().await {
                feed.publish(&update);
                if matches!(update, Update::Closed(_)) {
                    break;
                }
            }
        });
        open.insert(served.id.clone(), Arc::clone(&served));
        Ok((served, notices))
    }

    /// Closes every open session and waits until each has stored what it has.
    pub async fn close_all(&self) {
        let served: Vec<Arc<Served>> = self.open.lock().await.drain().map(|(_, s)| s).collect();
        for session in &served {
            let mut updates = session.handle.subscribe();
            session.handle.send(Request::Close {
                discard_if_empty: true,
            });
            while let Some(update) = updates.recv().await {
                if matches!(update, Update::Closed(_)) {
                    break;
                }
            }
        }
    }
}
