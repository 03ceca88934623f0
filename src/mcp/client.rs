//! harness9's side of a connection, as the server sees it: the client capabilities it declares
//! and keeps (roots: the working directory, with `list_changed`; elicitation: form requests;
//! progress: the `notifications/progress` of a running call go to that call's progress sink, as
//! the transport reads them: see `negotiate`),
//! and the answers to the server's own requests. A form elicitation goes to the front end's
//! `Elicitor` when it has one (an editor that asks its user: ACP's `elicitation/create`); else it
//! is declined with a notice, except where the front end allows accepting a request whose every
//! field has a default with those defaults (`exec --mode yolo`, the specification's SEP-1034).

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use rmcp::model::{
    ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult, ElicitationAction,
    ElicitationCapability, FormElicitationCapability, Implementation, NumberOrString,
    ProgressNotificationParam, ProgressToken, RootsCapabilities,
};
#[allow(deprecated)]
use rmcp::model::{ListRootsResult, Root};
use rmcp::service::{NotificationContext, RequestContext, RoleClient};
use rmcp::{ClientHandler, ErrorData};

use crate::tools::progress::{Progress, ProgressSink};

/// Called when the server says its tool list changed.
pub type OnChange = Arc<dyn Fn() + Send + Sync>;
/// Where a connection's notices go (the manager's list, shown by the front end).
pub type OnNotice = Arc<dyn Fn(String) + Send + Sync>;

/// The user's answer to a server's form, as a front end that asked it gives it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Elicited {
    Accept(serde_json::Map<String, serde_json::Value>),
    Decline,
    Cancel,
}

/// A front end that can ask its user on a server's behalf.
#[async_trait::async_trait]
pub trait Elicitor: Send + Sync {
    /// Asks `message` with the form `schema` (the server's `requestedSchema`); `None` when it
    /// could not ask (the request is then declined with a notice).
    async fn ask(
        &self,
        server: &str,
        message: &str,
        schema: &serde_json::Value,
    ) -> Option<Elicited>;
}

/// What every connection of one manager shares: the roots it offers and the front end's answer
/// to elicitation.
#[derive(Default)]
pub struct ClientSide {
    workdir: RwLock<PathBuf>,
    accept_elicitation_defaults: AtomicBool,
    /// Who asks the user a server's form, when the front end can.
    elicitor: RwLock<Option<Arc<dyn Elicitor>>>,
    /// `$HARNESS9_HOME`, where the HTTP servers' OAuth tokens are kept (none: none are used).
    pub home: Option<PathBuf>,
}

impl ClientSide {
    pub fn new(workdir: PathBuf, home: Option<PathBuf>) -> Self {
        ClientSide {
            workdir: RwLock::new(workdir),
            accept_elicitation_defaults: AtomicBool::new(false),
            elicitor: RwLock::new(None),
            home,
        }
    }

    pub fn workdir(&self) -> PathBuf {
        self.workdir
            .read()
            .map(|w| w.clone())
            .unwrap_or_else(|p| p.into_inner().clone())
    }

    pub fn set_workdir(&self, workdir: PathBuf) {
        match self.workdir.write() {
            Ok(mut w) => *w = workdir,
            Err(p) => *p.into_inner() = workdir,
        }
    }

    pub fn set_elicitor(&self, elicitor: Option<Arc<dyn Elicitor>>) {
        match self.elicitor.write() {
            Ok(mut slot) => *slot = elicitor,
            Err(p) => *p.into_inner() = elicitor,
        }
    }

    fn elicitor(&self) -> Option<Arc<dyn Elicitor>> {
        self.elicitor.read().ok().and_then(|slot| slot.clone())
    }

    pub fn set_accept_elicitation_defaults(&self, accept: bool) {
        self.accept_elicitation_defaults
            .store(accept, Ordering::SeqCst);
    }
}

/// Reports kept for a token no call has claimed yet: `rmcp` names a call's progress token only
/// once the call is sent, and a quick server may report before the call is registered.
const EARLY_TOKENS: usize = 32;

/// The progress sinks of the calls running on one connection, by their progress token.
#[derive(Default)]
pub struct ProgressRoutes {
    routes: Mutex<Routes>,
}

#[derive(Default)]
struct Routes {
    sinks: HashMap<String, ProgressSink>,
    early: HashMap<String, Vec<Progress>>,
}

fn token_key(token: &ProgressToken) -> String {
    match &token.0 {
        NumberOrString::String(s) => format!("s:{s}"),
        NumberOrString::Number(n) => format!("n:{n}"),
    }
}

impl ProgressRoutes {
    /// Sends `token`'s progress to `sink` until the returned route is dropped.
    pub fn open(self: &Arc<Self>, token: &ProgressToken, sink: ProgressSink) -> ProgressRoute {
        let key = token_key(token);
        let mut routes = self.lock();
        for report in routes.early.remove(&key).unwrap_or_default() {
            let _ = sink.send(report);
        }
        routes.sinks.insert(key.clone(), sink);
        ProgressRoute {
            routes: Arc::clone(self),
            key,
        }
    }

    /// Hands a server's progress report to the call it belongs to.
    pub fn deliver(&self, params: &ProgressNotificationParam) {
        let report = Progress {
            progress: params.progress,
            total: params.total,
            message: params.message.clone(),
        };
        let key = token_key(&params.progress_token);
        let mut routes = self.lock();
        if let Some(sink) = routes.sinks.get(&key) {
            let _ = sink.send(report);
        } else if routes.early.len() < EARLY_TOKENS || routes.early.contains_key(&key) {
            routes.early.entry(key).or_default().push(report);
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Routes> {
        self.routes.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// One call's claim on its progress token; released when dropped.
pub struct ProgressRoute {
    routes: Arc<ProgressRoutes>,
    key: String,
}

impl Drop for ProgressRoute {
    fn drop(&mut self) {
        let mut routes = self.routes.lock();
        routes.sinks.remove(&self.key);
        routes.early.remove(&self.key);
    }
}

/// What we tell a server about ourselves, and our answers to its requests and notifications.
#[derive(Clone)]
pub struct Handler {
    pub server: String,
    pub on_tools_changed: OnChange,
    pub on_notice: OnNotice,
    pub side: Arc<ClientSide>,
    pub progress: Arc<ProgressRoutes>,
}

/// The values of a form whose every field has a default, or `None` when one has none.
fn defaults_of(schema: &serde_json::Value) -> Option<serde_json::Map<String, serde_json::Value>> {
    let properties = schema.get("properties")?.as_object()?;
    properties
        .iter()
        .map(|(name, field)| Some((name.clone(), field.get("default")?.clone())))
        .collect()
}

impl ClientHandler for Handler {
    fn get_info(&self) -> ClientConfig {
        let mut capabilities = ClientCapabilities::default();
        let mut roots = RootsCapabilities::default();
        roots.list_changed = Some(true);
        capabilities.roots = Some(roots);
        capabilities.elicitation =
            Some(ElicitationCapability::new().with_form(FormElicitationCapability::new()));
        ClientConfig::new(
            capabilities,
            Implementation::new("harness9", env!("CARGO_PKG_VERSION")),
        )
    }

    // Roots are deprecated from the 2026-07-28 revision on (SEP-2577), but the revisions with
    // `initialize` that most servers speak still ask for them.
    #[allow(deprecated)]
    async fn list_roots(
        &self,
        _context: RequestContext<RoleClient>,
    ) -> Result<ListRootsResult, ErrorData> {
        let workdir = self.side.workdir();
        let name = workdir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| workdir.display().to_string());
        let uri = url::Url::from_directory_path(&workdir)
            .map(String::from)
            .unwrap_or_else(|()| format!("file://{}", workdir.display()));
        Ok(ListRootsResult::new(vec![Root::new(uri).with_name(name)]))
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let (message, defaults) = match &request {
            ElicitRequestParams::FormElicitationParams {
                message,
                requested_schema,
                ..
            } => {
                let schema = serde_json::to_value(requested_schema).unwrap_or_default();
                if let Some(elicitor) = self.side.elicitor()
                    && let Some(answer) = elicitor.ask(&self.server, message, &schema).await
                {
                    return Ok(match answer {
                        Elicited::Accept(values) => ElicitResult::new(ElicitationAction::Accept)
                            .with_content(serde_json::Value::Object(values)),
                        Elicited::Decline => ElicitResult::new(ElicitationAction::Decline),
                        Elicited::Cancel => ElicitResult::new(ElicitationAction::Cancel),
                    });
                }
                (message.clone(), defaults_of(&schema))
            }
            ElicitRequestParams::UrlElicitationParams { message, .. } => (message.clone(), None),
            _ => (
                String::from("(a request of a kind harness9 does not know)"),
                None,
            ),
        };
        let accept = self.side.accept_elicitation_defaults.load(Ordering::SeqCst);
        if accept && let Some(values) = defaults {
            (self.on_notice)(format!(
                "MCP server `{}` asked \"{message}\"; accepted with its defaults (--mode yolo)",
                self.server
            ));
            return Ok(ElicitResult::new(ElicitationAction::Accept)
                .with_content(serde_json::Value::Object(values)));
        }
        (self.on_notice)(format!(
            "MCP server `{}` asked \"{message}\"; declined: harness9 cannot ask you here \
             (under --mode yolo a request whose every field has a default is accepted with those)",
            self.server
        ));
        Ok(ElicitResult::new(ElicitationAction::Decline))
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        (self.on_tools_changed)();
    }
}
