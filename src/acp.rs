//! `harness9 acp`: an Agent Client Protocol agent on stdin/stdout, so an editor (Zed, the
//! JetBrains IDEs, Neovim's CodeCompanion) drives harness9 as its agent. It is one more front end
//! of the session core, like `exec` and `serve`: each ACP session is a session core opened
//! through `session::open`, prompts go in as `Request`s and the core's `Update`s come out as
//! `session/update` notifications. The JSON-RPC layer is the official SDK
//! (`agent-client-protocol`); nothing but its messages reaches stdout, and logs go to
//! `$HARNESS9_HOME/logs/`. When the editor goes away (stdin ends), every session is interrupted
//! and closed, so what each run had is stored before the process exits.

mod agent;
mod content;
mod elicitation;
mod fs;
mod listing;
mod logs;
mod mcp_servers;
mod options;
mod permission;
mod plan_review;
mod replay;
mod sessions;
mod terminal;
mod tools;
mod turn;

use std::path::PathBuf;

use agent_client_protocol::{ByteStreams, ErrorCode};
use tokio_util::compat::{TokioAsyncReadCompatExt, TokioAsyncWriteCompatExt};

use crate::config::{Environment, RunOptions};

/// What `harness9 acp` needs to open sessions in any folder the editor names.
#[derive(Debug, Clone)]
pub struct AcpContext {
    /// The command line's options (`-C`, `--model`, `--mode`, `--trust`, ...).
    pub options: RunOptions,
    /// The folder harness9 was started in (the default for a session's settings).
    pub workdir: PathBuf,
    /// `$HARNESS9_HOME`.
    pub home: PathBuf,
    /// The secrets hardening took out of the environment (for another folder's `Environment`).
    pub secrets: Vec<(String, String)>,
}

/// Why the agent stopped other than by the editor closing stdin.
#[derive(Debug, thiserror::Error)]
pub enum AcpError {
    #[error("the ACP connection failed: {0}")]
    Connection(String),
}

impl AcpContext {
    /// The process environment (with the secrets) and `workdir`'s `.env`.
    fn environment(&self, workdir: &std::path::Path) -> Environment {
        Environment::load(&workdir.join(".env"), self.secrets.clone())
    }
}

/// A JSON-RPC error with words the editor shows.
fn rpc_error(code: ErrorCode, message: impl Into<String>) -> agent_client_protocol::Error {
    agent_client_protocol::Error::new(code, message)
}

/// Runs the agent on stdin/stdout until the editor closes the connection; returns the exit
/// status (0: the editor went away and every session was stored; 1: the connection failed).
pub async fn run(context: AcpContext) -> u8 {
    let _logs = logs::init(&context.home);
    tracing::info!(workdir = %context.workdir.display(), "harness9 acp started");
    let stdin = tokio::io::stdin().compat();
    let stdout = tokio::io::stdout().compat_write();
    match serve(context, stdout, stdin).await {
        Ok(()) => 0,
        Err(error) => {
            tracing::error!("{error}");
            1
        }
    }
}

/// Serves one ACP connection over `outgoing`/`incoming` (stdout/stdin, or a pipe in tests)
/// until the peer closes it; then every session is interrupted, closed and flushed.
pub async fn serve<W, R>(context: AcpContext, outgoing: W, incoming: R) -> Result<(), AcpError>
where
    W: futures_util::AsyncWrite + Send + 'static,
    R: futures_util::AsyncRead + Send + 'static,
{
    let state = agent::State::new(context);
    let result = agent::serve(
        std::sync::Arc::clone(&state),
        ByteStreams::new(outgoing, incoming),
    )
    .await;
    // The editor is gone (or the connection broke): nothing more can be shown, but what the
    // runs did must be kept.
    state.sessions.close_all().await;
    tracing::info!("harness9 acp stopped");
    result.map_err(|e| AcpError::Connection(e.to_string()))
}

#[cfg(test)]
mod tests;
