//! The session's language servers. Nothing starts with the session: a server starts in the
//! background on the first file it serves (so it never delays the first frame), one per server
//! and workspace root. A supervisor task keeps each one: a server that ends by itself is started
//! again after a backoff (doubling from `BACKOFF_FIRST` up to `BACKOFF_MAX`; after
//! `MAX_CRASHES` in a row it is given up), and the session's end shuts every one down in
//! bounded time. In an untrusted folder the set is empty: none ever starts.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_lsp::lsp_types::Diagnostic;
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::client::Client;
use super::spec::{self, Availability, ServerSpec};

/// How long the first edit of a language waits for its server to start (pyright answers in
/// about a second; more on a loaded machine).
pub const START_LIMIT: Duration = Duration::from_secs(20);
/// How long an edit waits for the server to publish the diagnostics of the new text.
pub const PUBLISH_LIMIT: Duration = Duration::from_secs(5);
/// How long the session's end waits for all servers to shut down.
const SHUTDOWN_LIMIT: Duration = Duration::from_secs(3);
const BACKOFF_FIRST: Duration = Duration::from_millis(500);
const BACKOFF_MAX: Duration = Duration::from_secs(30);
/// Crashes in a row after which a server is given up.
const MAX_CRASHES: u32 = 5;
/// A server that ran this long before it crashed starts its count of crashes again.
const STEADY: Duration = Duration::from_secs(60);

/// Where one server stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServerState {
    Starting,
    Running,
    /// It ended by itself; started again after the backoff.
    Restarting {
        crashes: u32,
    },
    /// Given up (or it could not start).
    Failed(String),
    Stopped,
}

impl std::fmt::Display for ServerState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ServerState::Starting => f.write_str("starting"),
            ServerState::Running => f.write_str("running"),
            ServerState::Restarting { crashes } => {
                write!(f, "restarting after {crashes} crash(es)")
            }
            ServerState::Failed(reason) => write!(f, "failed: {reason}"),
            ServerState::Stopped => f.write_str("stopped"),
        }
    }
}

/// One started server, as `/status` shows it.
#[derive(Debug, Clone)]
pub struct ServerView {
    pub name: String,
    pub root: PathBuf,
    pub state: ServerState,
    /// How many times it was started again after a crash.
    pub restarts: u32,
}

/// One server for one workspace root.
struct Slot {
    spec: ServerSpec,
    root: PathBuf,
    state: watch::Sender<(ServerState, Option<Arc<Client>>)>,
    restarts: AtomicU32,
}

impl Slot {
    fn set(&self, state: ServerState, client: Option<Arc<Client>>) {
        self.state.send_replace((state, client));
    }

    /// The running client, waiting at most `limit` for one.
    async fn ready(&self, limit: Duration) -> Option<Arc<Client>> {
        let mut watcher = self.state.subscribe();
        let wait = async {
            loop {
                {
                    let (state, client) = &*watcher.borrow_and_update();
                    if let Some(client) = client {
                        return Some(Arc::clone(client));
                    }
                    if matches!(state, ServerState::Failed(_) | ServerState::Stopped) {
                        return None;
                    }
                }
                if watcher.changed().await.is_err() {
                    return None;
                }
            }
        };
        tokio::time::timeout(limit, wait).await.ok().flatten()
    }
}

fn backoff(crashes: u32) -> Duration {
    BACKOFF_FIRST
        .saturating_mul(1 << crashes.saturating_sub(1).min(16))
        .min(BACKOFF_MAX)
}

/// Keeps `slot`'s server running until `stop` fires.
async fn supervise(slot: Arc<Slot>, stop: CancellationToken) {
    let mut crashes = 0u32;
    loop {
        slot.set(ServerState::Starting, None);
        let started = tokio::select! {
            started = Client::start(&slot.spec, &slot.root) => started,
            () = stop.cancelled() => break,
        };
        let reason = match started {
            Ok(client) => {
                let client = Arc::new(client);
                let since = Instant::now();
                slot.set(ServerState::Running, Some(Arc::clone(&client)));
                tokio::select! {
                    () = client.ended().cancelled() => {}
                    () = stop.cancelled() => {
                        client.shut_down().await;
                        break;
                    }
                }
                client.shut_down().await;
                if since.elapsed() >= STEADY {
                    crashes = 0;
                }
                "it exited".to_owned()
            }
            Err(error) => error.to_string(),
        };
        crashes += 1;
        tracing::warn!(target: "harness9::lsp", server = %slot.spec.name, "{reason} ({crashes} in a row)");
        if crashes >= MAX_CRASHES {
            slot.set(
                ServerState::Failed(format!("{reason}; given up after {crashes} tries")),
                None,
            );
            return;
        }
        slot.set(ServerState::Restarting { crashes }, None);
        tokio::select! {
            () = tokio::time::sleep(backoff(crashes)) => {}
            () = stop.cancelled() => break,
        }
        slot.restarts.fetch_add(1, Ordering::Relaxed);
    }
    slot.set(ServerState::Stopped, None);
}

struct Inner {
    workdir: PathBuf,
    /// Whether the folder is trusted (an untrusted one has no servers).
    trusted: bool,
    specs: Vec<ServerSpec>,
    slots: Mutex<BTreeMap<(String, PathBuf), Arc<Slot>>>,
    tasks: Mutex<Vec<JoinHandle<()>>>,
    stop: CancellationToken,
}

/// The session's language servers (cheap to clone: one set).
#[derive(Clone)]
pub struct Servers {
    inner: Arc<Inner>,
}

/// What the servers said of a file before an edit, to tell what the edit introduced.
pub struct Baseline {
    path: PathBuf,
    before: Vec<(Arc<Client>, Vec<Diagnostic>)>,
}

impl Servers {
    /// The servers `specs` for `workdir`, none started yet.
    pub fn new(workdir: PathBuf, specs: Vec<ServerSpec>) -> Servers {
        Servers {
            inner: Arc::new(Inner {
                workdir,
                trusted: true,
                specs,
                slots: Mutex::new(BTreeMap::new()),
                tasks: Mutex::new(Vec::new()),
                stop: CancellationToken::new(),
            }),
        }
    }

    /// The servers `settings`' folder may use: none in an untrusted folder (rust-analyzer runs
    /// build scripts, others read project files that name programs). Also the notices to show.
    pub fn for_settings(settings: &crate::config::Settings) -> (Servers, Vec<String>) {
        let workdir = settings.workdir.clone();
        if !settings.trusted {
            let mut none = Servers::new(workdir, Vec::new());
            if let Some(inner) = Arc::get_mut(&mut none.inner) {
                inner.trusted = false;
            }
            return (none, Vec::new());
        }
        let mut notices = Vec::new();
        let path = std::env::var_os("PATH");
        let specs = spec::candidates(&workdir, &settings.home, path.as_ref(), &mut notices)
            .into_iter()
            .filter_map(|candidate| match candidate.availability {
                // Only the languages the folder holds: a program on PATH is not a project.
                Availability::Ready(spec) if spec.detected_in(&workdir) => Some(*spec),
                _ => None,
            })
            .collect();
        (Servers::new(workdir, specs), notices)
    }

    /// One line for a status: which servers the folder may start.
    pub fn label(&self) -> String {
        if !self.inner.trusted {
            return "language servers: none (the folder is not trusted)".to_owned();
        }
        if self.inner.specs.is_empty() {
            return "language servers: none found (`harness9 lsp list` shows why)".to_owned();
        }
        let names: Vec<&str> = self.inner.specs.iter().map(|s| s.name.as_str()).collect();
        format!(
            "language servers: {} (each starts on the first file it serves)",
            names.join(", ")
        )
    }

    /// Whether no server can ever start here.
    pub fn is_empty(&self) -> bool {
        self.inner.specs.is_empty()
    }

    pub fn workdir(&self) -> &Path {
        &self.inner.workdir
    }

    /// The slots of the servers that serve `path`, started now if they were not.
    fn slots_for(&self, path: &Path) -> Vec<Arc<Slot>> {
        let workdir = &self.inner.workdir;
        if self.inner.stop.is_cancelled() {
            return Vec::new();
        }
        let Ok(mut slots) = self.inner.slots.lock() else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for spec in &self.inner.specs {
            if !spec.serves(workdir, path) {
                continue;
            }
            let Some(root) = spec.root_for(workdir, path) else {
                continue;
            };
            let key = (spec.name.clone(), root.clone());
            let slot = slots.entry(key).or_insert_with(|| {
                let slot = Arc::new(Slot {
                    spec: spec.clone(),
                    root,
                    state: watch::channel((ServerState::Starting, None)).0,
                    restarts: AtomicU32::new(0),
                });
                let task = tokio::spawn(supervise(Arc::clone(&slot), self.inner.stop.clone()));
                if let Ok(mut tasks) = self.inner.tasks.lock() {
                    tasks.push(task);
                }
                slot
            });
            out.push(Arc::clone(slot));
        }
        out
    }

    /// The running servers of `path`, starting them if needed and waiting at most `limit`.
    pub async fn clients_for(&self, path: &Path, limit: Duration) -> Vec<Arc<Client>> {
        let slots = self.slots_for(path);
        let ready = futures_util::future::join_all(slots.iter().map(|slot| slot.ready(limit)));
        ready.await.into_iter().flatten().collect()
    }

    /// The servers running now (for a query that names no file).
    pub fn running(&self) -> Vec<Arc<Client>> {
        let Ok(slots) = self.inner.slots.lock() else {
            return Vec::new();
        };
        slots
            .values()
            .filter_map(|slot| slot.state.borrow().1.clone())
            .collect()
    }

    /// Every server started so far.
    pub fn views(&self) -> Vec<ServerView> {
        let Ok(slots) = self.inner.slots.lock() else {
            return Vec::new();
        };
        slots
            .values()
            .map(|slot| ServerView {
                name: slot.spec.name.clone(),
                root: slot.root.clone(),
                state: slot.state.borrow().0.clone(),
                restarts: slot.restarts.load(Ordering::Relaxed),
            })
            .collect()
    }

    /// Shuts every server down (`shutdown`, `exit`, then its group killed), in bounded time.
    pub async fn shut_down_gracefully(&self) {
        self.inner.stop.cancel();
        let tasks = self
            .inner
            .tasks
            .lock()
            .map(|mut tasks| std::mem::take(&mut *tasks))
            .unwrap_or_default();
        let all = futures_util::future::join_all(tasks);
        let _ = tokio::time::timeout(SHUTDOWN_LIMIT, all).await;
    }

    /// Before a tool writes `paths`: what their servers say of them now, one baseline per file
    /// a server serves.
    pub async fn before_edits(&self, paths: &[PathBuf]) -> Vec<Baseline> {
        let mut baselines = Vec::new();
        for path in paths {
            baselines.extend(self.before_edit(path).await);
        }
        baselines
    }

    /// After a command changed `paths`: the baselines its change is measured against.
    pub async fn after_commands(&self, paths: &[PathBuf]) -> Vec<Baseline> {
        let mut baselines = Vec::new();
        for path in paths {
            baselines.extend(self.after_command(path).await);
        }
        baselines
    }

    /// After the writes: the diagnostics they introduced, the reports of every file that has
    /// any as one text (`None`: nothing new).
    pub async fn after_edits(&self, baselines: Vec<Baseline>) -> Option<String> {
        let mut reports = Vec::new();
        for baseline in baselines {
            reports.extend(self.after_edit(baseline).await);
        }
        (!reports.is_empty()).then(|| reports.join("\n\n"))
    }

    /// Before a tool writes `path`: what its servers say of it now (starting them, and opening
    /// the file with its present text, when they had not). `None`: no server serves it.
    async fn before_edit(&self, path: &Path) -> Option<Baseline> {
        let clients = self.clients_for(path, START_LIMIT).await;
        if clients.is_empty() {
            return None;
        }
        let text = tokio::fs::read_to_string(path).await.ok();
        let before = futures_util::future::join_all(clients.into_iter().map(|client| {
            let text = text.clone();
            async move {
                let diagnostics = match text {
                    Some(text) => client
                        .sync(path, text, PUBLISH_LIMIT)
                        .await
                        .map(|published| published.diagnostics)
                        .unwrap_or_default(),
                    None => Vec::new(),
                };
                (client, diagnostics)
            }
        }))
        .await;
        Some(Baseline {
            path: path.to_path_buf(),
            before,
        })
    }

    /// After a command changed `path`: what its servers last said of it (nothing for a file
    /// they never had open) is the baseline the change is measured against.
    async fn after_command(&self, path: &Path) -> Option<Baseline> {
        let clients = self.clients_for(path, START_LIMIT).await;
        if clients.is_empty() {
            return None;
        }
        let url = super::client::url_of(path).ok();
        let before = clients
            .into_iter()
            .map(|client| {
                let said = url.as_ref().and_then(|url| client.published(url));
                (client, said.map(|p| p.diagnostics).unwrap_or_default())
            })
            .collect();
        Some(Baseline {
            path: path.to_path_buf(),
            before,
        })
    }

    /// After the write: the diagnostics it introduced, as the text its result ends with
    /// (`None`: nothing new, or no server answered in time).
    async fn after_edit(&self, baseline: Baseline) -> Option<String> {
        let Baseline { path, before } = baseline;
        let text = tokio::fs::read_to_string(&path).await.ok()?;
        let reports = futures_util::future::join_all(before.into_iter().map(|(client, old)| {
            let (text, path) = (text.clone(), &path);
            async move {
                let published = client.sync(path, text, PUBLISH_LIMIT).await?;
                let new = super::diagnostics::introduced(&old, &published.diagnostics);
                super::diagnostics::report(&client.spec_name, &self.inner.workdir, path, &new)
            }
        }))
        .await;
        let reports: Vec<String> = reports.into_iter().flatten().collect();
        (!reports.is_empty()).then(|| reports.join("\n\n"))
    }
}

impl Drop for Inner {
    fn drop(&mut self) {
        // The supervisors end with the last handle; their clients kill their groups on drop.
        self.stop.cancel();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_backoff_doubles_up_to_its_cap() {
        assert_eq!(backoff(1), BACKOFF_FIRST);
        assert_eq!(backoff(2), BACKOFF_FIRST * 2);
        assert_eq!(backoff(3), BACKOFF_FIRST * 4);
        assert_eq!(backoff(40), BACKOFF_MAX);
    }
}
