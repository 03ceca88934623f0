//! `harness9 serve`: the HTTP API of CONTRACT.md, a third front end of the session core beside
//! the TUI and `exec`. Several sessions at once, each opened through `session::open` like any
//! other front end's; several watchers per session over SSE (`feed`), approvals answerable over
//! HTTP (the first answer wins), prompts queued by the core while a run is going. Who may talk
//! to it is decided in one place (`guard`): the bearer token, the `Host` and `Origin` checks.

mod connections;
mod feed;
mod guard;
mod routes;
mod sessions;
mod stream;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use axum::Router;
use axum::routing::{get, post};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

pub use feed::{BACKLOG, Feed, Frame, update_json};
pub use guard::host_allowed;
pub use stream::sse_body;

use crate::config::{Environment, RunOptions, ServeArgs, Settings};
use sessions::Sessions;

/// Everything `serve` needs to open sessions: the settings of its own folder (`-C`) and the
/// means to resolve another folder's.
pub struct ServeContext {
    pub settings: Settings,
    pub options: RunOptions,
    /// The secrets hardening took out of the environment (for another folder's `Environment`).
    pub secrets: Vec<(String, String)>,
    /// `HARNESS9_SERVE_TOKEN`, when the user set it.
    pub token: Option<String>,
}

/// The state every route sees.
#[derive(Clone)]
pub(crate) struct ServeState {
    token: Arc<str>,
    sessions: Arc<Sessions>,
}

/// Why `serve` could not start.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error(
        "{0} is not a loopback address: set HARNESS9_SERVE_TOKEN to a token of your own to listen there"
    )]
    NotLoopback(SocketAddr),
    #[error("cannot write the token file in {path}: {reason}")]
    Token { path: String, reason: String },
    #[error("cannot listen on {addr}: {reason}")]
    Listen { addr: SocketAddr, reason: String },
}

impl ServeError {
    /// The exit status (CONTRACT.md): a usage problem is 2, one of this machine 1.
    pub fn exit_code(&self) -> u8 {
        match self {
            ServeError::NotLoopback(_) => 2,
            ServeError::Token { .. } | ServeError::Listen { .. } => 1,
        }
    }
}

/// The routes of the API over `state`.
fn router(state: ServeState) -> Router {
    Router::new()
        .route("/health", get(routes::health))
        .route("/sessions", get(routes::list).post(routes::open))
        .route("/sessions/{id}/prompt", post(routes::prompt))
        .route("/sessions/{id}/events", get(routes::events))
        .route(
            "/sessions/{id}/approvals/{approval}",
            post(routes::approval),
        )
        .route("/sessions/{id}/interrupt", post(routes::interrupt))
        .route("/sessions/{id}/mode", post(routes::mode))
        .route("/sessions/{id}/auto_continue", post(routes::auto_continue))
        .route("/sessions/{id}/messages", get(routes::messages))
        .fallback(routes::not_found)
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            guard::guard,
        ))
        .with_state(state)
}

/// Runs `serve` until `shutdown` is cancelled; then closes every session (each run stores what
/// it has) and returns.
pub async fn run(
    context: ServeContext,
    args: ServeArgs,
    shutdown: CancellationToken,
) -> Result<(), ServeError> {
    let addr = args.listen;
    if !addr.ip().is_loopback() && context.token.is_none() {
        return Err(ServeError::NotLoopback(addr));
    }
    let home = context.settings.home.clone();
    let (token, token_path): (String, Option<PathBuf>) = match &context.token {
        Some(token) => (token.clone(), None),
        None => {
            let (token, path) = guard::new_token_file(&home).map_err(|e| ServeError::Token {
                path: home.display().to_string(),
                reason: e.to_string(),
            })?;
            (token, Some(path))
        }
    };
    let listener = TcpListener::bind(addr)
        .await
        .map_err(|e| ServeError::Listen {
            addr,
            reason: e.to_string(),
        })?;
    let bound = listener.local_addr().unwrap_or(addr);
    let sessions = Arc::new(Sessions::new(context));
    let state = ServeState {
        token: token.into(),
        sessions: Arc::clone(&sessions),
    };
    eprintln!("harness9 serve: listening on http://{bound}");
    match token_path {
        Some(path) => eprintln!("harness9 serve: the bearer token is in {}", path.display()),
        None => eprintln!("harness9 serve: the bearer token is HARNESS9_SERVE_TOKEN"),
    }
    let app = router(state);
    let limits = connections::Limits::from_args(&args);
    // Watchers' streams never end by themselves: the sessions are closed as the server stops,
    // which ends them, while the connections are asked to end.
    let closing = async {
        shutdown.cancelled().await;
        sessions.close_all().await;
    };
    tokio::join!(
        connections::serve(listener, app, limits, shutdown.clone()),
        closing
    );
    sessions.close_all().await;
    Ok(())
}

/// Another folder's settings, resolved as `serve`'s own were but without `--trust` (which covers
/// only the `-C` folder).
pub(crate) fn settings_for(
    context: &ServeContext,
    workdir: PathBuf,
) -> Result<Settings, crate::config::ConfigError> {
    if workdir == context.settings.workdir {
        return Ok(context.settings.clone());
    }
    let env = Environment::load(&workdir.join(".env"), context.secrets.clone());
    let mut options = context.options.clone();
    // `--trust` covers the -C folder and its own worktrees (a folder's trust is its repository's).
    options.trust = options.trust
        && crate::worktree::main_of_linked(&workdir).as_ref() == Some(&context.settings.workdir);
    options.workdir = Some(workdir.clone());
    crate::config::resolve(&options, workdir, &env)
}
