//! One running language server, spoken to through `async-lsp`: started from its argv (never a
//! shell line) in a session of its own without `CAP_SYS_PTRACE`, with only the safe variables of
//! harness9's environment; initialized for its workspace root; told of the files harness9 opens
//! and changes (whole texts); its published diagnostics kept per file; shut down in bounded
//! time (`shutdown`, `exit`, then its process group is killed).

use std::collections::HashMap;
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use async_lsp::lsp_types::{self as types, Url, notification, request};
use async_lsp::router::Router;
use async_lsp::{MainLoop, ServerSocket};
use serde_json::Value;
use tokio::io::AsyncBufReadExt;
use tokio::sync::watch;
use tokio_util::compat::{TokioAsyncReadCompatExt, TokioAsyncWriteCompatExt};
use tokio_util::sync::CancellationToken;

use super::LspError;
use super::spec::ServerSpec;

/// How long a server has to answer `initialize` (node servers start slowly on a loaded machine).
pub const INITIALIZE_LIMIT: Duration = Duration::from_secs(30);
/// How long a server has to answer `shutdown`, then to exit after `exit`.
const SHUTDOWN_LIMIT: Duration = Duration::from_millis(1000);
/// The least a server's first file waits for its diagnostics (the project loads first).
const FIRST_FILE_LIMIT: Duration = Duration::from_secs(20);
const EXIT_LIMIT: Duration = Duration::from_millis(500);

/// The diagnostics a server last published for one file.
#[derive(Debug, Clone, Default)]
pub struct Published {
    /// The document version they are for, when the server says.
    pub version: Option<i32>,
    /// Counts every publication, to tell a new one from the last.
    pub serial: u64,
    pub diagnostics: Vec<types::Diagnostic>,
}

/// What the server published, shared with the main loop's handlers.
#[derive(Default)]
struct Inbox {
    files: Mutex<HashMap<Url, Published>>,
}

/// A document harness9 told the server of: its version and the text it was given.
struct OpenDocument {
    version: i32,
    text: String,
}

/// A running server.
pub struct Client {
    pub spec_name: String,
    pub root: PathBuf,
    socket: ServerSocket,
    inbox: std::sync::Arc<Inbox>,
    /// Bumped on every publication; waiters watch it.
    published: watch::Receiver<u64>,
    documents: tokio::sync::Mutex<HashMap<Url, OpenDocument>>,
    /// Fires when the main loop ends (the server exited or broke the protocol).
    ended: CancellationToken,
    child: tokio::sync::Mutex<Option<tokio::process::Child>>,
    /// The server's process group (its own session); 0 once it was killed.
    group: std::sync::atomic::AtomicI32,
    pub capabilities: types::ServerCapabilities,
}

/// `path` as a `file:` URL.
pub fn url_of(path: &Path) -> Result<Url, LspError> {
    Url::from_file_path(path).map_err(|()| LspError::Path {
        path: path.display().to_string(),
    })
}

fn router(inbox: std::sync::Arc<Inbox>, serial: watch::Sender<u64>) -> Router<()> {
    let mut router = Router::new(());
    router
        .notification::<notification::PublishDiagnostics>(move |_, params| {
            let mut next = 0;
            serial.send_modify(|n| {
                *n += 1;
                next = *n;
            });
            if let Ok(mut files) = inbox.files.lock() {
                files.insert(
                    params.uri,
                    Published {
                        version: params.version,
                        serial: next,
                        diagnostics: params.diagnostics,
                    },
                );
            }
            ControlFlow::Continue(())
        })
        // Log messages, progress, telemetry: nothing harness9 acts on.
        .unhandled_notification(|_, _| ControlFlow::Continue(()));
    router.unhandled_request(|_, request| {
        // `workspace/configuration` wants one value per item asked: none means the server's
        // defaults. Registrations, progress tokens and the like are accepted with nothing.
        let answer = if request.method == "workspace/configuration" {
            let items = request
                .params
                .get("items")
                .and_then(Value::as_array)
                .map_or(0, Vec::len);
            Value::Array(vec![Value::Null; items])
        } else {
            Value::Null
        };
        std::future::ready(Ok(answer))
    });
    router
}

fn client_capabilities() -> types::ClientCapabilities {
    use types::{
        ClientCapabilities, DocumentSymbolClientCapabilities, HoverClientCapabilities, MarkupKind,
        PublishDiagnosticsClientCapabilities, TextDocumentClientCapabilities,
    };
    ClientCapabilities {
        text_document: Some(TextDocumentClientCapabilities {
            publish_diagnostics: Some(PublishDiagnosticsClientCapabilities {
                version_support: Some(true),
                ..Default::default()
            }),
            hover: Some(HoverClientCapabilities {
                content_format: Some(vec![MarkupKind::PlainText, MarkupKind::Markdown]),
                ..Default::default()
            }),
            document_symbol: Some(DocumentSymbolClientCapabilities {
                hierarchical_document_symbol_support: Some(true),
                ..Default::default()
            }),
            ..Default::default()
        }),
        ..Default::default()
    }
}

impl Client {
    /// Starts `spec`'s program for the workspace `root` and completes the handshake.
    pub async fn start(spec: &ServerSpec, root: &Path) -> Result<Client, LspError> {
        let mut command = tokio::process::Command::new(&spec.program);
        command
            .args(&spec.args)
            .env_clear()
            .envs(crate::detach::server_environment())
            .current_dir(root)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .kill_on_drop(true);
        crate::detach::detach(command.as_std_mut());
        crate::detach::drop_ptrace(command.as_std_mut());
        let start_error = |source| LspError::Start {
            command: spec.program.display().to_string(),
            source,
        };
        let mut child = command.spawn().map_err(start_error)?;
        let group = child.id().and_then(|id| i32::try_from(id).ok());
        let missing = || start_error(std::io::Error::other("no standard stream"));
        let stdin = child.stdin.take().ok_or_else(missing)?;
        let stdout = child.stdout.take().ok_or_else(missing)?;
        if let Some(stderr) = child.stderr.take() {
            let name = spec.name.clone();
            tokio::spawn(async move {
                let mut lines = tokio::io::BufReader::new(stderr).lines();
                while let Ok(Some(line)) = lines.next_line().await {
                    tracing::debug!(target: "harness9::lsp", server = %name, "stderr: {line}");
                }
            });
        }
        let inbox = std::sync::Arc::new(Inbox::default());
        let (serial, published) = watch::channel(0u64);
        let (main_loop, socket) = MainLoop::new_client({
            let inbox = std::sync::Arc::clone(&inbox);
            move |_| router(inbox, serial)
        });
        let ended = CancellationToken::new();
        tokio::spawn({
            let ended = ended.clone();
            let name = spec.name.clone();
            // async-lsp's loop panics ("Sender is alive") when every socket is dropped while it
            // still runs, as happens when a server fails to start and its client is dropped:
            // the loop holds one of its own and ends when the server's output does (the child
            // is killed on drop).
            let keep_alive = socket.clone();
            async move {
                let _keep_alive = keep_alive;
                let outcome = main_loop
                    .run_buffered(stdout.compat(), stdin.compat_write())
                    .await;
                tracing::info!(target: "harness9::lsp", server = %name, "ended: {outcome:?}");
                ended.cancel();
            }
        });
        let root_url = url_of(root)?;
        #[allow(deprecated)] // `root_uri` is what older servers read; workspace folders the rest.
        let params = types::InitializeParams {
            process_id: Some(std::process::id()),
            root_uri: Some(root_url.clone()),
            workspace_folders: Some(vec![types::WorkspaceFolder {
                uri: root_url,
                name: root
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default(),
            }]),
            capabilities: client_capabilities(),
            initialization_options: spec.initialization_options.clone(),
            client_info: Some(types::ClientInfo {
                name: "harness9".into(),
                version: Some(env!("CARGO_PKG_VERSION").into()),
            }),
            ..Default::default()
        };
        let mut client = Client {
            spec_name: spec.name.clone(),
            root: root.to_path_buf(),
            socket,
            inbox,
            published,
            documents: tokio::sync::Mutex::new(HashMap::new()),
            ended,
            child: tokio::sync::Mutex::new(Some(child)),
            group: std::sync::atomic::AtomicI32::new(group.unwrap_or(0)),
            capabilities: types::ServerCapabilities::default(),
        };
        let answer = client
            .request::<request::Initialize>(params, INITIALIZE_LIMIT)
            .await;
        let answer = match answer {
            Ok(answer) => answer,
            Err(error) => {
                client.kill();
                return Err(error);
            }
        };
        client.capabilities = answer.capabilities;
        client.notify::<notification::Initialized>(types::InitializedParams {});
        Ok(client)
    }

    /// Sends request `R`, waiting at most `limit` for the answer.
    pub async fn request<R: request::Request>(
        &self,
        params: R::Params,
        limit: Duration,
    ) -> Result<R::Result, LspError> {
        let server = self.spec_name.clone();
        let answer = tokio::select! {
            answer = tokio::time::timeout(limit, self.socket.request::<R>(params)) => answer,
            () = self.ended.cancelled() => Ok(Err(async_lsp::Error::ServiceStopped)),
        };
        match answer {
            Ok(Ok(result)) => Ok(result),
            Ok(Err(source)) => Err(LspError::Protocol {
                server,
                method: R::METHOD,
                source: Box::new(source),
            }),
            Err(_) => Err(LspError::Timeout {
                server,
                method: R::METHOD,
                seconds: limit.as_secs(),
            }),
        }
    }

    fn notify<N: notification::Notification>(&self, params: N::Params) {
        if let Err(error) = self.socket.notify::<N>(params) {
            tracing::debug!(target: "harness9::lsp", server = %self.spec_name, "{}: {error}", N::METHOD);
        }
    }

    /// Fires when the server has ended.
    pub fn ended(&self) -> &CancellationToken {
        &self.ended
    }

    /// What the server last published for `url`.
    pub fn published(&self, url: &Url) -> Option<Published> {
        self.inbox.files.lock().ok()?.get(url).cloned()
    }

    /// Tells the server `path` now holds `text` (opening it the first time) and waits at most
    /// `limit` for the diagnostics of that text; `None` when none came in time. A text the
    /// server already has is not sent again: what it published for it is the answer.
    pub async fn sync(&self, path: &Path, text: String, limit: Duration) -> Option<Published> {
        let url = url_of(path).ok()?;
        let mut watcher = self.published.clone();
        let serial_before = *watcher.borrow_and_update();
        let mut limit = limit;
        let version = {
            let mut documents = self.documents.lock().await;
            if documents.is_empty() && !limit.is_zero() {
                // The server's first file: it loads the project before it publishes anything
                // (typescript-language-server took 9.8 s here under load, pyright under one).
                limit = limit.max(FIRST_FILE_LIMIT);
            }
            match documents.get_mut(&url) {
                Some(open) if open.text == text => {
                    let version = open.version;
                    drop(documents);
                    if let Some(published) = self.published(&url)
                        && published.version.is_none_or(|v| v >= version)
                    {
                        return Some(published);
                    }
                    version
                }
                Some(open) => {
                    open.version += 1;
                    open.text.clone_from(&text);
                    let version = open.version;
                    self.notify::<notification::DidChangeTextDocument>(
                        types::DidChangeTextDocumentParams {
                            text_document: types::VersionedTextDocumentIdentifier {
                                uri: url.clone(),
                                version,
                            },
                            content_changes: vec![types::TextDocumentContentChangeEvent {
                                range: None,
                                range_length: None,
                                text,
                            }],
                        },
                    );
                    version
                }
                None => {
                    self.notify::<notification::DidOpenTextDocument>(
                        types::DidOpenTextDocumentParams {
                            text_document: types::TextDocumentItem {
                                uri: url.clone(),
                                language_id: super::spec::language_id(path),
                                version: 1,
                                text: text.clone(),
                            },
                        },
                    );
                    documents.insert(url.clone(), OpenDocument { version: 1, text });
                    1
                }
            }
        };
        let fresh = |published: &Published| match published.version {
            Some(v) => v >= version,
            None => published.serial > serial_before,
        };
        let wait = async {
            loop {
                if let Some(published) = self.published(&url).filter(fresh) {
                    return Some(published);
                }
                if watcher.changed().await.is_err() {
                    return None;
                }
            }
        };
        tokio::select! {
            found = tokio::time::timeout(limit, wait) => found.ok().flatten(),
            () = self.ended.cancelled() => None,
        }
    }

    /// Makes sure the server has `path` open with its text on disk (for a query about it).
    pub async fn open(&self, path: &Path) {
        let Ok(url) = url_of(path) else { return };
        if self.documents.lock().await.contains_key(&url) {
            return;
        }
        if let Ok(text) = tokio::fs::read_to_string(path).await {
            // The query does not wait for diagnostics.
            let _ = self.sync(path, text, Duration::ZERO).await;
        }
    }

    /// Ends the server: `shutdown` and `exit` as the protocol says, each step bounded, then its
    /// process group is killed with whatever it left running.
    pub async fn shut_down(&self) {
        if !self.ended.is_cancelled() {
            let _ = self.request::<request::Shutdown>((), SHUTDOWN_LIMIT).await;
            self.notify::<notification::Exit>(());
        }
        if let Some(mut child) = self.child.lock().await.take() {
            let _ = tokio::time::timeout(EXIT_LIMIT, child.wait()).await;
        }
        self.kill();
    }

    fn kill(&self) {
        let group = self.group.swap(0, std::sync::atomic::Ordering::SeqCst);
        if group > 1 {
            // SAFETY: killpg only sends a signal, to the group our child leads.
            unsafe {
                libc::killpg(group, libc::SIGKILL);
            }
        }
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        // A session that ends without the graceful path still leaves no server behind.
        self.kill();
    }
}
