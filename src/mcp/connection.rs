//! One live connection to an MCP server through `rmcp`: a child process in its own process
//! group (its stderr goes to the log, the group is killed when the connection ends), or
//! Streamable HTTP with the configured headers. Both protocol generations are spoken: the
//! stateless 2026-07-28 revision first (`server/discover`), falling back to the `initialize`
//! handshake when the server answers as an older one. A tool call that is dropped (the run was
//! interrupted, or the call timed out) tells the server with `notifications/cancelled`.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};

use process_wrap::tokio::{CommandWrap, ProcessSession};
use rmcp::Peer;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, CancelledNotificationParam,
    ClientRequest, JsonObject, ProtocolVersion, ServerResult,
};
use rmcp::service::{
    ClientLifecycleMode, ClientServiceExt, PeerRequestOptions, RoleClient, RunningService,
};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use tokio::io::AsyncBufReadExt;
use tokio_util::sync::CancellationToken;

pub use super::client::OnChange;
use super::client::{Handler, ProgressRoutes};
use super::config::Transport;
use super::error::McpError;
use super::negotiate::Negotiating;
use super::shutdown;

/// A connected server.
pub struct Connection {
    peer: Peer<RoleClient>,
    /// Taken when the connection ends.
    service: Mutex<Option<RunningService<RoleClient, Handler>>>,
    /// Where the progress of each running call goes.
    progress: Arc<ProgressRoutes>,
    /// The child's process group (stdio), killed with the connection.
    group: Mutex<Option<i32>>,
}

impl Connection {
    /// Connects (spawning the child for stdio) and completes the handshake.
    pub async fn open(
        name: &str,
        transport: &Transport,
        workdir: &Path,
        handler: Handler,
        on_exit: OnChange,
    ) -> Result<Connection, McpError> {
        let progress = Arc::clone(&handler.progress);
        let lifecycle = ClientLifecycleMode::Auto {
            preferred_versions: vec![ProtocolVersion::LATEST],
            legacy_version: Some(ProtocolVersion::LATEST_WITH_INITIALIZE),
        };
        match transport {
            Transport::Stdio { command, args, env } => {
                let mut cmd = tokio::process::Command::new(command);
                // Only what a server needs, as the MCP SDKs pass it: the safe variables and
                // those its configuration names, no other secret of the user's.
                cmd.env_clear()
                    .envs(crate::detach::server_environment())
                    .args(args)
                    .envs(env.iter().map(|(k, v)| (k, v)))
                    .current_dir(workdir)
                    .kill_on_drop(true);
                crate::detach::drop_ptrace(cmd.as_std_mut());
                let mut wrapped = CommandWrap::from(cmd);
                // A session (so a group) of its own: no terminal to type into, one group to kill.
                wrapped.wrap(ProcessSession);
                let (child, stderr) = TokioChildProcess::builder(wrapped)
                    .stderr(std::process::Stdio::piped())
                    .spawn()
                    .map_err(|source| McpError::Start {
                        command: command.clone(),
                        source,
                    })?;
                let group = child.id().and_then(|id| i32::try_from(id).ok());
                if let Some(stderr) = stderr {
                    let server = name.to_owned();
                    tokio::spawn(async move {
                        let mut lines = tokio::io::BufReader::new(stderr).lines();
                        while let Ok(Some(line)) = lines.next_line().await {
                            tracing::info!(target: "harness9::mcp", server = %server, "stderr: {line}");
                        }
                        // Its stderr closes when the process ends: the moment to say it stopped.
                        on_exit();
                    });
                }
                let connection = handler
                    .serve_with_lifecycle(Negotiating::new(child, Arc::clone(&progress)), lifecycle)
                    .await;
                let service = match connection {
                    Ok(service) => service,
                    Err(e) => {
                        shutdown::signal_group(group, libc::SIGKILL);
                        return Err(e.into());
                    }
                };
                Connection {
                    peer: service.peer().clone(),
                    service: Mutex::new(Some(service)),
                    progress,
                    group: Mutex::new(group),
                }
                .speaking_a_known_version()
            }
            Transport::Http {
                url,
                headers,
                oauth,
            } => {
                let mut custom = HashMap::new();
                for (key, value) in headers {
                    let name = reqwest::header::HeaderName::from_bytes(key.as_bytes()).map_err(
                        |source| McpError::HeaderName {
                            key: key.clone(),
                            source,
                        },
                    )?;
                    let value =
                        reqwest::header::HeaderValue::from_str(value).map_err(|source| {
                            McpError::HeaderValue {
                                key: key.clone(),
                                source,
                            }
                        })?;
                    custom.insert(name, value);
                }
                let config = StreamableHttpClientTransportConfig::with_uri(url.as_str())
                    .custom_headers(custom);
                // With tokens from `harness9 mcp login`, they go with every request.
                // A machine's own credentials get their tokens here, without a login.
                if let Some(home) = &handler.side.home
                    && oauth.grant == super::oauth::Grant::ClientCredentials
                    && !super::oauth::token_file(home, name, url).exists()
                    && let Err(e) = super::oauth::client_credentials(home, name, url, oauth).await
                {
                    tracing::warn!(target: "harness9::mcp", "server `{name}`: no token: {e}");
                }
                let authorized = match &handler.side.home {
                    Some(home) => super::oauth::authorized_client(home, name, url).await,
                    None => None,
                };
                let service = match authorized {
                    Some(client) => {
                        let transport = StreamableHttpClientTransport::with_client(client, config);
                        let negotiating = Negotiating::new(transport, Arc::clone(&progress));
                        handler.serve_with_lifecycle(negotiating, lifecycle).await?
                    }
                    None => {
                        let client = reqwest::Client::new();
                        let transport = StreamableHttpClientTransport::with_client(client, config);
                        let negotiating = Negotiating::new(transport, Arc::clone(&progress));
                        handler.serve_with_lifecycle(negotiating, lifecycle).await?
                    }
                };
                Connection {
                    peer: service.peer().clone(),
                    service: Mutex::new(Some(service)),
                    progress,
                    group: Mutex::new(None),
                }
                .speaking_a_known_version()
            }
        }
    }

    /// The connection, unless the server settled on a revision we do not speak (an old server
    /// may answer `initialize` with any version it likes); then it is closed.
    fn speaking_a_known_version(self) -> Result<Connection, McpError> {
        let version = self.protocol_version();
        if ProtocolVersion::KNOWN_VERSIONS
            .iter()
            .any(|known| known.as_str() == version)
        {
            return Ok(self);
        }
        self.close();
        Err(McpError::UnsupportedVersion {
            version,
            known: ProtocolVersion::KNOWN_VERSIONS
                .iter()
                .map(|v| v.as_str())
                .collect::<Vec<_>>()
                .join(", "),
        })
    }

    pub fn peer(&self) -> &Peer<RoleClient> {
        &self.peer
    }

    /// The protocol revision agreed with the server.
    pub fn protocol_version(&self) -> String {
        self.peer
            .peer_info()
            .map(|info| info.protocol_version.to_string())
            .unwrap_or_default()
    }

    /// What the server said about using it (`instructions`), when it said anything.
    pub fn instructions(&self) -> Option<String> {
        self.peer
            .peer_info()
            .and_then(|info| info.instructions.clone())
    }

    /// The stdio server's process id, which is also its process group's.
    pub fn pid(&self) -> Option<u32> {
        self.group
            .lock()
            .ok()
            .and_then(|g| *g)
            .and_then(|g| u32::try_from(g).ok())
    }

    /// Tells the server its roots changed.
    pub async fn roots_changed(&self) {
        if let Err(e) = self.peer().notify_roots_list_changed().await {
            tracing::warn!(target: "harness9::mcp", "cannot tell of the changed roots: {e}");
        }
    }

    /// Whether the connection has ended (the server exited or hung up).
    pub fn is_closed(&self) -> bool {
        self.service
            .lock()
            .map(|s| s.as_ref().is_none_or(|s| s.is_closed()))
            .unwrap_or(true)
    }

    /// Every tool of the server, across pages.
    pub async fn list_tools(&self) -> Result<Vec<rmcp::model::Tool>, McpError> {
        Ok(self.peer().list_all_tools().await?)
    }

    /// Every prompt of the server, or none when it offers no prompts.
    pub async fn list_prompts(&self) -> Vec<rmcp::model::Prompt> {
        let offers = self
            .peer
            .peer_info()
            .is_some_and(|info| info.capabilities.prompts.is_some());
        if !offers {
            return Vec::new();
        }
        self.peer().list_all_prompts().await.unwrap_or_else(|e| {
            tracing::warn!(target: "harness9::mcp", "cannot list the prompts: {e}");
            Vec::new()
        })
    }

    /// Every resource of the server (its URIs), or none when it offers no resources.
    pub async fn list_resources(&self) -> Vec<String> {
        let offers = self
            .peer
            .peer_info()
            .is_some_and(|info| info.capabilities.resources.is_some());
        if !offers {
            return Vec::new();
        }
        match self.peer().list_all_resources().await {
            Ok(resources) => resources.into_iter().map(|r| r.uri.clone()).collect(),
            Err(e) => {
                tracing::warn!(target: "harness9::mcp", "cannot list the resources: {e}");
                Vec::new()
            }
        }
    }

    /// A resource's contents, as the wire shape (`{"contents": [...]}`).
    pub async fn read_resource(&self, uri: &str) -> Result<serde_json::Value, McpError> {
        let params = rmcp::model::ReadResourceRequestParams::new(uri);
        let result = self.peer().read_resource(params).await?;
        Ok(serde_json::to_value(result)?)
    }

    /// A prompt's messages, as the wire shape (`{"messages": [...]}`).
    pub async fn get_prompt(
        &self,
        name: &str,
        arguments: JsonObject,
    ) -> Result<serde_json::Value, McpError> {
        let params = rmcp::model::GetPromptRequestParams::new(name).with_arguments(arguments);
        let result = self.peer().get_prompt(params).await?;
        Ok(serde_json::to_value(result)?)
    }

    /// Calls a tool; when `cancel` fires or the returned future is dropped first, the server is
    /// told that the request is cancelled. With a `progress` sink, the call carries a progress
    /// token and the server's progress for it goes there.
    pub async fn call_tool(
        &self,
        name: &str,
        arguments: JsonObject,
        cancel: &CancellationToken,
        progress: Option<crate::tools::progress::ProgressSink>,
    ) -> Result<CallToolResult, McpError> {
        let params = CallToolRequestParams::new(name.to_owned()).with_arguments(arguments);
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
        let handle = self
            .peer()
            .send_cancellable_request(request, PeerRequestOptions::no_options())
            .await
            .map_err(McpError::Send)?;
        // `rmcp` gives every request a progress token; the server's reports for it go to the
        // call's sink while the call runs.
        let _route = progress.map(|sink| self.progress.open(&handle.progress_token, sink));
        let mut guard = CancelOnDrop {
            peer: Some(self.peer().clone()),
            id: handle.id.clone(),
        };
        let response = tokio::select! {
            response = handle.await_response() => response,
            _ = cancel.cancelled() => return Err(McpError::Cancelled),
        };
        guard.peer = None;
        match response {
            Ok(ServerResult::CallToolResult(result)) => Ok(result),
            Ok(_) => Err(McpError::NotAToolResult),
            Err(e) => Err(describe_error(e, self.is_closed())),
        }
    }

    /// Ends the connection at once and kills the child's process group (a restart, a server
    /// that stopped, the last resort when harness9 ends).
    pub fn close(&self) {
        if let Some(service) = self.take_service() {
            service.cancellation_token().cancel();
        }
        shutdown::signal_group(self.take_group(), libc::SIGKILL);
    }

    /// Ends the connection as the specification says, within a bounded time: a stdio server's
    /// stdin is closed and it gets a moment to exit, then SIGTERM, then SIGKILL; an HTTP
    /// session is deleted.
    pub async fn shut_down(&self) {
        let service = self.take_service();
        shutdown::end(service, self.take_group()).await;
    }

    fn take_service(&self) -> Option<RunningService<RoleClient, Handler>> {
        self.service
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
    }

    fn take_group(&self) -> Option<i32> {
        self.group.lock().unwrap_or_else(|p| p.into_inner()).take()
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        self.close();
    }
}

/// A failed call: the server's own error, or its connection ending under the call.
fn describe_error(error: rmcp::ServiceError, closed: bool) -> McpError {
    if closed {
        McpError::Stopped(error)
    } else {
        McpError::Request(error)
    }
}

/// Sends `notifications/cancelled` for a call whose future is dropped before it was answered.
struct CancelOnDrop {
    peer: Option<Peer<RoleClient>>,
    id: rmcp::model::RequestId,
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        let Some(peer) = self.peer.take() else {
            return;
        };
        let params = CancelledNotificationParam::new(
            Some(self.id.clone()),
            Some("the user interrupted the run, or the call timed out".into()),
        );
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                let _ = peer.notify_cancelled(params).await;
            });
        }
    }
}
