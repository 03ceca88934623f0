//! The session's MCP servers: each starts in the background (nothing waits for it unless it asks
//! to: `exec` and `serve` wait up to 10 s in all, the TUI never), has a status (starting,
//! connected, failed with the reason, disabled), and offers its tools to the registry as late
//! tools, so a server that connects or changes its list mid-session adds them at the next turn.
//! A failure is a notice for the front end, never fatal. A server that exits is seen as failed
//! at once (its stderr closes); `reconnect` starts it again. Its prompts (`prompts`) and resources
//! (`resources`) are listed on connect and fetched for the user.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use tokio::sync::watch;

use super::client::ClientSide;
use super::config::{ServerSpec, Skipped};
use super::connection::Connection;
use super::error::McpError;
use super::tool::{McpTool, tool_name};
use crate::tools::{LateTools, Tool};

mod callbacks;
mod instructions;
mod login;
mod prompts;
mod resources;

pub use login::LoginError;

/// How long one server may take to start before it counts as failed.
const START_TIMEOUT: Duration = Duration::from_secs(30);
/// How long fetching a prompt or a resource may take (the user waits for it).
const FETCH_TIMEOUT: Duration = Duration::from_secs(10);

/// Where a server stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Status {
    Starting,
    Connected,
    Failed(String),
    Disabled,
}

impl std::fmt::Display for Status {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Status::Starting => f.write_str("starting"),
            Status::Connected => f.write_str("connected"),
            Status::Failed(reason) => write!(f, "failed: {reason}"),
            Status::Disabled => f.write_str("disabled"),
        }
    }
}

/// A server as front ends show it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerStatus {
    pub name: String,
    pub scope: super::config::Scope,
    pub status: Status,
    /// Its tools as the model sees them (`mcp__server__tool`).
    pub tools: Vec<String>,
    /// The protocol revision agreed with it, once connected.
    pub protocol: String,
    /// A connected stdio server's process id (its process group's too).
    pub pid: Option<u32>,
    /// Its prompts as slash commands: (`mcp__server__prompt`, description, argument names).
    pub prompts: Vec<PromptInfo>,
    /// Its resources' URIs, attachable as `@server:uri`.
    pub resources: Vec<String>,
}

/// A server's prompt, offered as the slash command `/mcp__server__prompt`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptInfo {
    pub command: String,
    pub remote: String,
    pub description: String,
    pub arguments: Vec<String>,
}

struct Entry {
    spec: ServerSpec,
    status: Status,
    connection: Option<Arc<Connection>>,
    tools: Vec<Arc<McpTool>>,
    prompts: Vec<PromptInfo>,
    resources: Vec<String>,
    protocol: String,
    /// Bumped on every (re)start, so the answer of an abandoned start is dropped.
    generation: u64,
}

/// A connection, its tools and its prompts.
type Started = (
    Arc<Connection>,
    Vec<rmcp::model::Tool>,
    Vec<rmcp::model::Prompt>,
    Vec<String>,
);

struct Inner {
    workdir: PathBuf,
    /// The roots and the elicitation answer every connection shares.
    side: Arc<ClientSide>,
    entries: Mutex<Vec<Entry>>,
    /// Bumped whenever a status or a tool list changes.
    changed: watch::Sender<u64>,
    notices: Mutex<Vec<String>>,
    skipped: Vec<Skipped>,
}

/// The session's servers. Cloning shares them.
#[derive(Clone)]
pub struct McpManager {
    inner: Arc<Inner>,
}

impl McpManager {
    /// Starts every server in the background (needs a Tokio runtime) and returns at once.
    pub fn start(servers: Vec<ServerSpec>, skipped: Vec<Skipped>, workdir: PathBuf) -> Self {
        Self::start_with_home(servers, skipped, workdir, None)
    }

    /// `start`, with the HTTP servers' OAuth tokens kept in `home` sent to them.
    pub fn start_with_home(
        servers: Vec<ServerSpec>,
        skipped: Vec<Skipped>,
        workdir: PathBuf,
        home: Option<PathBuf>,
    ) -> Self {
        let (changed, _) = watch::channel(0);
        let manager = McpManager {
            inner: Arc::new(Inner {
                side: Arc::new(ClientSide::new(workdir.clone(), home)),
                workdir,
                entries: Mutex::new(
                    servers
                        .into_iter()
                        .map(|spec| Entry {
                            status: Status::Starting,
                            spec,
                            connection: None,
                            tools: Vec::new(),
                            prompts: Vec::new(),
                            resources: Vec::new(),
                            protocol: String::new(),
                            generation: 0,
                        })
                        .collect(),
                ),
                changed,
                notices: Mutex::new(Vec::new()),
                skipped,
            }),
        };
        let count = manager.entries().len();
        for index in 0..count {
            manager.launch(index);
        }
        manager
    }

    /// A manager with no servers.
    pub fn empty() -> Self {
        Self::start(Vec::new(), Vec::new(), PathBuf::new())
    }

    fn entries(&self) -> MutexGuard<'_, Vec<Entry>> {
        // A panic elsewhere while holding the lock leaves plain data behind; keep using it.
        self.inner
            .entries
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn bump(&self) {
        self.inner.changed.send_modify(|n| *n += 1);
    }

    fn notice(&self, text: String) {
        tracing::warn!(target: "harness9::mcp", "{text}");
        self.inner
            .notices
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(text);
    }

    /// Starts (or restarts) server `index` in the background.
    fn launch(&self, index: usize) {
        let (spec, generation) = {
            let mut entries = self.entries();
            let Some(entry) = entries.get_mut(index) else {
                return;
            };
            entry.generation += 1;
            if let Some(old) = entry.connection.take() {
                old.close();
            }
            entry.tools.clear();
            entry.status = match &entry.spec.transport {
                Ok(_) => Status::Starting,
                Err(reason) => Status::Failed(reason.to_string()),
            };
            (entry.spec.clone(), entry.generation)
        };
        self.bump();
        let Ok(transport) = spec.transport.clone() else {
            if let Err(reason) = &spec.transport {
                self.notice(format!("MCP server `{}` cannot start: {reason}", spec.name));
            }
            return;
        };
        let manager = self.clone();
        tokio::spawn(async move {
            let (handler, on_exit) = manager.callbacks(&spec.name, index, generation);
            let workdir = manager.inner.workdir.clone();
            let started = tokio::time::timeout(START_TIMEOUT, async {
                let connection = Arc::new(
                    Connection::open(&spec.name, &transport, &workdir, handler, on_exit).await?,
                );
                let tools = connection.list_tools().await?;
                let prompts = connection.list_prompts().await;
                let resources = connection.list_resources().await;
                Ok::<_, McpError>((connection, tools, prompts, resources))
            })
            .await
            .unwrap_or(Err(McpError::StartTimeout {
                limit: START_TIMEOUT,
            }));
            manager.finish_start(index, generation, started);
        });
    }

    fn finish_start(&self, index: usize, generation: u64, started: Result<Started, McpError>) {
        let failure = {
            let mut entries = self.entries();
            let Some(entry) = entries.get_mut(index) else {
                return;
            };
            if entry.generation != generation {
                return;
            }
            match started {
                Ok((connection, tools, prompts, resources)) => {
                    entry.resources = resources;
                    entry.tools = adapt(&entry.spec.name, &tools, &connection);
                    entry.prompts = prompts::prompt_infos(&entry.spec.name, &prompts);
                    entry.protocol = connection.protocol_version();
                    entry.connection = Some(connection);
                    entry.status = Status::Connected;
                    None
                }
                Err(reason) => {
                    let said = reason.with_next_step(&entry.spec.name);
                    entry.status = Status::Failed(said.clone());
                    Some(format!(
                        "MCP server `{}` failed to start: {said}",
                        entry.spec.name
                    ))
                }
            }
        };
        if let Some(text) = failure {
            self.notice(text);
        }
        self.bump();
    }

    /// The server said its tool list changed: fetch it again for the next turn.
    fn refresh(&self, index: usize, generation: u64) {
        let manager = self.clone();
        tokio::spawn(async move {
            let connection = {
                let entries = manager.entries();
                match entries.get(index) {
                    Some(entry) if entry.generation == generation => entry.connection.clone(),
                    _ => None,
                }
            };
            let Some(connection) = connection else {
                return;
            };
            match connection.list_tools().await {
                Ok(tools) => {
                    let mut entries = manager.entries();
                    if let Some(entry) = entries.get_mut(index)
                        && entry.generation == generation
                    {
                        entry.tools = adapt(&entry.spec.name, &tools, &connection);
                    }
                }
                Err(e) => manager.notice(format!("MCP server: cannot refresh its tools: {e}")),
            }
            manager.bump();
        });
    }

    /// Server `index` of this `generation` exited: failed, its tools gone, a notice.
    fn stopped(&self, index: usize, generation: u64) {
        let name = {
            let mut entries = self.entries();
            let Some(entry) = entries.get_mut(index) else {
                return;
            };
            // A server that dies while starting is reported by its failed start instead.
            if entry.generation != generation || entry.status != Status::Connected {
                return;
            }
            if let Some(connection) = entry.connection.take() {
                connection.close();
            }
            entry.tools.clear();
            entry.status = Status::Failed("the server stopped".into());
            entry.spec.name.clone()
        };
        self.notice(format!(
            "MCP server `{name}` stopped; its tools are gone until it is reconnected (/mcp)"
        ));
        self.bump();
    }

    /// Marks servers whose connection ended as failed (a crash shows at the next look).
    fn notice_closed(&self) {
        let mut closed = Vec::new();
        for entry in self.entries().iter_mut() {
            if entry.status == Status::Connected
                && entry.connection.as_ref().is_some_and(|c| c.is_closed())
            {
                entry.status = Status::Failed("the server stopped".into());
                entry.tools.clear();
                if let Some(connection) = entry.connection.take() {
                    connection.close();
                }
                closed.push(entry.spec.name.clone());
            }
        }
        for name in closed {
            self.notice(format!(
                "MCP server `{name}` stopped; its tools are gone until it is reconnected (/mcp)"
            ));
        }
    }

    /// Waits until no server is starting, or `limit` passed; says whether all settled.
    pub async fn wait_ready(&self, limit: Duration) -> bool {
        let mut changes = self.inner.changed.subscribe();
        let settled = async {
            loop {
                if !self.entries().iter().any(|e| e.status == Status::Starting) {
                    return;
                }
                if changes.changed().await.is_err() {
                    return;
                }
            }
        };
        tokio::time::timeout(limit, settled).await.is_ok()
    }

    /// A receiver that sees every change of status or tools.
    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.inner.changed.subscribe()
    }

    /// Every configured server, in the files' order.
    pub fn statuses(&self) -> Vec<ServerStatus> {
        self.notice_closed();
        self.entries()
            .iter()
            .map(|entry| ServerStatus {
                name: entry.spec.name.clone(),
                scope: entry.spec.scope,
                status: entry.status.clone(),
                tools: entry.tools.iter().map(|t| t.name().to_owned()).collect(),
                protocol: entry.protocol.clone(),
                pid: entry.connection.as_ref().and_then(|c| c.pid()),
                prompts: if entry.status == Status::Connected {
                    entry.prompts.clone()
                } else {
                    Vec::new()
                },
                resources: if entry.status == Status::Connected {
                    entry.resources.clone()
                } else {
                    Vec::new()
                },
            })
            .collect()
    }

    /// Project servers that were not started, and why.
    pub fn skipped(&self) -> &[Skipped] {
        &self.inner.skipped
    }

    /// How many servers are connected (the status line's count).
    pub fn connected(&self) -> usize {
        self.statuses()
            .iter()
            .filter(|s| s.status == Status::Connected)
            .count()
    }

    /// Notices gathered since the last call (failures, crashes).
    pub fn take_notices(&self) -> Vec<String> {
        std::mem::take(&mut *self.inner.notices.lock().unwrap_or_else(|p| p.into_inner()))
    }

    /// Starts server `name` again; false when there is no such server.
    pub fn reconnect(&self, name: &str) -> bool {
        let index = self.entries().iter().position(|e| e.spec.name == name);
        match index {
            Some(index) => {
                self.launch(index);
                true
            }
            None => false,
        }
    }

    /// Stops server `name` for the rest of the session; false when there is no such server.
    pub fn disable(&self, name: &str) -> bool {
        let found = {
            let mut entries = self.entries();
            let Some(entry) = entries.iter_mut().find(|e| e.spec.name == name) else {
                return false;
            };
            entry.generation += 1;
            entry.status = Status::Disabled;
            entry.tools.clear();
            if let Some(connection) = entry.connection.take() {
                connection.close();
            }
            true
        };
        self.bump();
        found
    }

    /// Whether a server's elicitation whose every field has a default is accepted with those
    /// defaults (`exec --mode yolo`) instead of declined.
    /// Servers' forms go to `elicitor` (the front end asks its user) from now on.
    pub fn set_elicitor(&self, elicitor: Option<std::sync::Arc<dyn super::client::Elicitor>>) {
        self.inner.side.set_elicitor(elicitor);
    }

    pub fn accept_elicitation_defaults(&self, accept: bool) {
        self.inner.side.set_accept_elicitation_defaults(accept);
    }

    /// The folder the servers' roots name changed: every connected server is told
    /// (`notifications/roots/list_changed`) and asks again.
    pub fn set_root(&self, workdir: PathBuf) {
        self.inner.side.set_workdir(workdir);
        let connections: Vec<_> = self
            .entries()
            .iter()
            .filter_map(|e| e.connection.clone())
            .collect();
        for connection in connections {
            tokio::spawn(async move { connection.roots_changed().await });
        }
    }

    /// Ends every connection as the specification says (see `shutdown`), all at once, within
    /// about 1.5 s however the servers behave.
    pub async fn shut_down_gracefully(&self) {
        let connections: Vec<Arc<Connection>> = self
            .entries()
            .iter_mut()
            .filter_map(|entry| {
                entry.tools.clear();
                entry.connection.take()
            })
            .collect();
        let ends = connections.iter().map(|c| c.shut_down());
        futures_util::future::join_all(ends).await;
    }

    /// Ends every connection at once and kills every server's process group.
    pub fn shutdown(&self) {
        for entry in self.entries().iter_mut() {
            if let Some(connection) = entry.connection.take() {
                connection.close();
            }
            entry.tools.clear();
        }
    }
}

/// Shuts the servers down when dropped (see `McpManager::shutdown_guard`).
pub struct ShutdownGuard(McpManager);

impl Drop for ShutdownGuard {
    fn drop(&mut self) {
        self.0.shutdown();
    }
}

impl McpManager {
    /// A guard that shuts every server down when the front end's scope ends.
    pub fn shutdown_guard(&self) -> ShutdownGuard {
        ShutdownGuard(self.clone())
    }
}

impl LateTools for McpManager {
    fn tools(&self) -> Vec<Arc<dyn Tool>> {
        self.notice_closed();
        self.entries()
            .iter()
            .filter(|e| e.status == Status::Connected)
            .flat_map(|e| e.tools.iter().map(|t| Arc::clone(t) as Arc<dyn Tool>))
            .collect()
    }
}

/// A server's tools as ours; a name that two of its tools would share after sanitising is
/// given to the first only (the other is logged and left out).
fn adapt(
    server: &str,
    tools: &[rmcp::model::Tool],
    connection: &Arc<Connection>,
) -> Vec<Arc<McpTool>> {
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for tool in tools {
        let name = tool_name(server, &tool.name);
        if !seen.insert(name.clone()) {
            tracing::warn!(target: "harness9::mcp", "MCP server `{server}`: two tools map to `{name}`; `{}` is left out", tool.name);
            continue;
        }
        out.push(Arc::new(McpTool::new(
            server,
            name,
            tool,
            Arc::clone(connection),
        )));
    }
    out
}
