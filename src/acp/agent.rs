//! The agent's handlers: `initialize` (version, capabilities, how to authenticate),
//! `authenticate`, `session/new`, `session/load`, `session/set_mode`, `session/prompt` and
//! `session/cancel`. The SDK answers everything else: malformed JSON (-32700), an unknown method
//! (-32601), a request before `initialize`. Handlers run in the connection's dispatch loop, so
//! anything that waits (opening a session, a prompt turn) runs in a task of its own.

use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock};

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema as acp;
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{Agent, ByteStreams, Client, Error, ErrorCode};

use super::sessions::{Opened, Sessions, config_error, settings_for};
use super::{AcpContext, rpc_error, turn};
use crate::engine::Failure;
use crate::session::{Catalogue, Mode};

/// The id of the one authentication method: set an API key.
const API_KEY_METHOD: &str = "api-key";

/// What every handler shares.
pub struct State {
    pub context: AcpContext,
    pub sessions: Sessions,
    /// What the editor said it can do (`initialize`).
    client: Mutex<acp::ClientCapabilities>,
    /// The stored sessions, for `session/list` (opened at the first listing).
    catalogue: OnceLock<Result<Catalogue, Failure>>,
}

impl State {
    pub fn new(context: AcpContext) -> Arc<State> {
        Arc::new(State {
            context,
            sessions: Sessions::default(),
            client: Mutex::new(acp::ClientCapabilities::new()),
            catalogue: OnceLock::new(),
        })
    }

    async fn list(
        &self,
        request: &acp::ListSessionsRequest,
    ) -> Result<acp::ListSessionsResponse, Error> {
        let catalogue = self
            .catalogue
            .get_or_init(|| Catalogue::open(&self.context.home))
            .as_ref()
            .map_err(|f| rpc_error(ErrorCode::INTERNAL_ERROR, f.message.clone()))?;
        super::listing::list(catalogue, request).await
    }
}

/// The modes as the editor's picker shows them.
fn modes(current: Mode) -> acp::SessionModeState {
    let mode = |mode: Mode, name: &str, description: &str| {
        acp::SessionMode::new(mode.as_str(), name).description(description.to_owned())
    };
    acp::SessionModeState::new(
        current.as_str(),
        vec![
            mode(Mode::Default, "Default", "Asks before edits and commands"),
            mode(
                Mode::AutoEdit,
                "Auto-edit",
                "Edits files without asking; asks before commands",
            ),
            mode(Mode::Plan, "Plan", "Reads and plans; changes nothing"),
            mode(Mode::Yolo, "Yolo", "Runs everything without asking"),
        ],
    )
}

/// `initialize`: the version both speak, what harness9 can do, and how to authenticate when
/// no key is configured.
fn initialize(state: &State, request: &acp::InitializeRequest) -> acp::InitializeResponse {
    if let Ok(mut client) = state.client.lock() {
        *client = request.client_capabilities.clone();
    }
    let version = request.protocol_version.min(ProtocolVersion::LATEST);
    let capabilities = acp::AgentCapabilities::new()
        .load_session(true)
        .prompt_capabilities(
            acp::PromptCapabilities::new()
                .image(true)
                .audio(false)
                .embedded_context(true),
        )
        .session_capabilities(
            acp::SessionCapabilities::new().list(acp::SessionListCapabilities::new()),
        )
        .mcp_capabilities(acp::McpCapabilities::new().http(true));
    acp::InitializeResponse::new(version)
        .agent_capabilities(capabilities)
        .auth_methods(auth_methods(&state.context))
        .agent_info(
            acp::Implementation::new("harness9", env!("CARGO_PKG_VERSION"))
                .title("harness9".to_owned()),
        )
}

/// None when a key is configured; else one method whose description says which variable or
/// `.env` line to set (the editor shows it).
fn auth_methods(context: &AcpContext) -> Vec<acp::AuthMethod> {
    match settings_for(context, &context.workdir) {
        Err(
            error @ (crate::config::ConfigError::MissingKey { .. }
            | crate::config::ConfigError::NoProvider { .. }),
        ) => {
            vec![acp::AuthMethod::Agent(
                acp::AuthMethodAgent::new(API_KEY_METHOD, "Set an API key")
                    .description(error.to_string()),
            )]
        }
        _ => Vec::new(),
    }
}

/// Opens (or loads) a session, tells the editor what it needs to know, and starts its pump.
async fn open(
    state: &State,
    cx: &ConnectionTo<Client>,
    cwd: &Path,
    resume: Option<&str>,
    servers: &[acp::McpServer],
) -> Result<Opened, Error> {
    if !cwd.is_absolute() {
        return Err(rpc_error(
            ErrorCode::INVALID_PARAMS,
            format!("cwd must be an absolute path, not {}", cwd.display()),
        ));
    }
    let client = state
        .client
        .lock()
        .map(|client| client.clone())
        .unwrap_or_default();
    let fs = client.fs.clone();
    let id = Arc::new(OnceLock::new());
    let shown = Arc::new(super::terminal::ShownCalls::default());
    let editor = crate::session::EditorSide {
        files: super::fs::EditorFs::offered(cx, &fs, Arc::clone(&id)),
        terminal: super::terminal::EditorTerminals::offered(
            cx,
            client.terminal,
            &state.context.home,
            Arc::clone(&id),
            Arc::clone(&shown),
        ),
    };
    let (servers, notices) = super::mcp_servers::from_editor(servers);
    let mut opened = state
        .sessions
        .open(&state.context, cwd, resume, (editor, shown), servers)
        .await?;
    opened.notices.extend(notices);
    let session = acp::SessionId::new(opened.live.id.clone());
    let _ = id.set(session.clone());
    let elicitation = client.elicitation.as_ref();
    let elicitor = super::elicitation::EditorElicitor::offered(cx, elicitation, session);
    opened.live.set_elicitor(elicitor);
    tracing::info!(session = %opened.live.id, cwd = %cwd.display(), "session opened");
    Ok(opened)
}

/// After the answer to `session/new` or `session/load`: the commands, the plan and what was
/// ignored at start, then the pump for the session's own updates.
fn start(cx: &ConnectionTo<Client>, opened: Opened) {
    let Opened {
        live,
        loaded,
        notices,
        updates,
    } = opened;
    turn::notify(
        cx,
        &live,
        acp::SessionUpdate::AvailableCommandsUpdate(acp::AvailableCommandsUpdate::new(
            turn::commands(&live),
        )),
    );
    if !loaded.todos.is_empty() {
        turn::notify(
            cx,
            &live,
            acp::SessionUpdate::Plan(turn::plan(&loaded.todos)),
        );
    }
    for notice in &notices {
        turn::say(cx, &live, notice);
    }
    tokio::spawn(turn::pump(live, updates, cx.clone()));
}

async fn new_session(
    state: Arc<State>,
    request: acp::NewSessionRequest,
    responder: Responder<acp::NewSessionResponse>,
    cx: ConnectionTo<Client>,
) -> Result<(), Error> {
    match open(&state, &cx, &request.cwd, None, &request.mcp_servers).await {
        Ok(opened) => {
            let answer = acp::NewSessionResponse::new(opened.live.id.clone())
                .modes(modes(opened.live.mode()))
                .config_options(super::options::config_options(&opened.live));
            responder.respond(answer)?;
            start(&cx, opened);
            Ok(())
        }
        Err(error) => responder.respond_with_error(error),
    }
}

async fn load_session(
    state: Arc<State>,
    request: acp::LoadSessionRequest,
    responder: Responder<acp::LoadSessionResponse>,
    cx: ConnectionTo<Client>,
) -> Result<(), Error> {
    let resume = Some(request.session_id.0.as_ref());
    let opened = match open(&state, &cx, &request.cwd, resume, &request.mcp_servers).await {
        Ok(opened) => opened,
        Err(error) => return responder.respond_with_error(error),
    };
    // The whole conversation comes before the answer, as the protocol asks.
    for update in super::replay::updates(&opened.loaded.messages, &opened.live.workdir) {
        turn::notify(&cx, &opened.live, update);
    }
    responder.respond(
        acp::LoadSessionResponse::new()
            .modes(modes(opened.live.mode()))
            .config_options(super::options::config_options(&opened.live)),
    )?;
    start(&cx, opened);
    Ok(())
}

async fn set_mode(
    state: &State,
    request: acp::SetSessionModeRequest,
    cx: &ConnectionTo<Client>,
) -> Result<acp::SetSessionModeResponse, Error> {
    let live = state.sessions.get(&request.session_id).await?;
    let mode = Mode::parse(&request.mode_id.0).ok_or_else(|| {
        rpc_error(
            ErrorCode::INVALID_PARAMS,
            format!(
                "unknown mode {}: one of default, auto-edit, plan, yolo",
                request.mode_id.0
            ),
        )
    })?;
    live.set_mode(mode);
    turn::notify(
        cx,
        &live,
        acp::SessionUpdate::CurrentModeUpdate(acp::CurrentModeUpdate::new(mode.as_str())),
    );
    Ok(acp::SetSessionModeResponse::new())
}

/// Serves the agent over `transport` until the editor closes it.
pub async fn serve<W, R>(state: Arc<State>, transport: ByteStreams<W, R>) -> Result<(), Error>
where
    W: futures_util::AsyncWrite + Send + 'static,
    R: futures_util::AsyncRead + Send + 'static,
{
    let on_initialize = Arc::clone(&state);
    let on_authenticate = Arc::clone(&state);
    let on_new = Arc::clone(&state);
    let on_load = Arc::clone(&state);
    let on_mode = Arc::clone(&state);
    let on_prompt = Arc::clone(&state);
    let on_cancel = Arc::clone(&state);
    let on_list = Arc::clone(&state);
    let on_option = Arc::clone(&state);
    Agent
        .v1()
        .name("harness9")
        .on_receive_request(
            async move |request: acp::InitializeRequest,
                        responder: Responder<acp::InitializeResponse>,
                        _cx: ConnectionTo<Client>| {
                responder.respond(initialize(&on_initialize, &request))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |_request: acp::AuthenticateRequest,
                        responder: Responder<acp::AuthenticateResponse>,
                        _cx: ConnectionTo<Client>| {
                // The key is read where harness9 reads it; the editor cannot hand one over.
                match settings_for(&on_authenticate.context, &on_authenticate.context.workdir) {
                    Ok(_) => responder.respond(acp::AuthenticateResponse::new()),
                    Err(error) => responder.respond_with_error(config_error(error)),
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: acp::NewSessionRequest,
                        responder: Responder<acp::NewSessionResponse>,
                        cx: ConnectionTo<Client>| {
                let state = Arc::clone(&on_new);
                cx.clone().spawn(new_session(state, request, responder, cx))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: acp::LoadSessionRequest,
                        responder: Responder<acp::LoadSessionResponse>,
                        cx: ConnectionTo<Client>| {
                let state = Arc::clone(&on_load);
                cx.clone()
                    .spawn(load_session(state, request, responder, cx))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: acp::SetSessionModeRequest,
                        responder: Responder<acp::SetSessionModeResponse>,
                        cx: ConnectionTo<Client>| {
                responder.respond_with_result(set_mode(&on_mode, request, &cx).await)
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: acp::PromptRequest,
                        responder: Responder<acp::PromptResponse>,
                        cx: ConnectionTo<Client>| {
                let live = match on_prompt.sessions.get(&request.session_id).await {
                    Ok(live) => live,
                    Err(error) => return responder.respond_with_error(error),
                };
                cx.spawn(
                    async move { responder.respond_with_result(turn::prompt(live, request).await) },
                )
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: acp::ListSessionsRequest,
                        responder: Responder<acp::ListSessionsResponse>,
                        cx: ConnectionTo<Client>| {
                let state = Arc::clone(&on_list);
                cx.spawn(async move { responder.respond_with_result(state.list(&request).await) })
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: acp::SetSessionConfigOptionRequest,
                        responder: Responder<acp::SetSessionConfigOptionResponse>,
                        _cx: ConnectionTo<Client>| {
                let answer = match on_option.sessions.get(&request.session_id).await {
                    Ok(live) => super::options::set(&live, &request),
                    Err(error) => Err(error),
                };
                responder.respond_with_result(answer)
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_notification(
            async move |notification: acp::CancelNotification, _cx: ConnectionTo<Client>| {
                if let Ok(live) = on_cancel.sessions.get(&notification.session_id).await {
                    live.cancel();
                }
                Ok(())
            },
            agent_client_protocol::on_receive_notification!(),
        )
        .connect_to(transport)
        .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_four_modes_are_offered_with_the_current_one() {
        let json = serde_json::to_value(modes(Mode::Plan)).unwrap();
        assert_eq!(json["currentModeId"], "plan");
        let ids: Vec<&str> = json["availableModes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["id"].as_str().unwrap())
            .collect();
        assert_eq!(ids, ["default", "auto-edit", "plan", "yolo"]);
    }
}
