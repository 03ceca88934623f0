//! The routes of the HTTP API (CONTRACT "HTTP API"): JSON in, JSON out; a body that does not
//! parse, or a field of the wrong shape or name, is a 400 that says what is wrong; an unknown
//! session a 404. Each route only sends the session core a request or reads its feed.

use std::collections::HashMap;

use axum::body::{Body, Bytes};
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use super::ServeState;
use super::feed::Answered;
use super::sessions::{OpenError, OpenRequest, Served};
use crate::engine::ApprovalDecision;
use crate::planning::Mode;
use crate::session::Request;

/// The most sessions `GET /sessions` lists.
const LIST_LIMIT: usize = 10_000;

pub fn error_response(status: StatusCode, message: &str) -> Response {
    (status, axum::Json(json!({ "error": message }))).into_response()
}

/// A refusal: its status and the words that say why, as `{"error": ...}`.
pub struct ApiError(StatusCode, String);

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        error_response(self.0, &self.1)
    }
}

type Reply = Result<Response, ApiError>;

fn parse<T: DeserializeOwned + Default>(body: &Bytes) -> Result<T, ApiError> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(T::default());
    }
    serde_json::from_slice(body).map_err(|e| {
        ApiError(
            StatusCode::BAD_REQUEST,
            format!("the body is not the JSON this route takes: {e}"),
        )
    })
}

async fn served(state: &ServeState, id: &str) -> Result<std::sync::Arc<Served>, ApiError> {
    state.sessions.get(id).await.ok_or_else(|| {
        ApiError(
            StatusCode::NOT_FOUND,
            format!("no open session {id}: open it with POST /sessions {{\"resume\": \"{id}\"}}"),
        )
    })
}

pub async fn health() -> Response {
    axum::Json(json!({"ok": true, "version": env!("CARGO_PKG_VERSION")})).into_response()
}

pub async fn not_found() -> Response {
    error_response(StatusCode::NOT_FOUND, "no such route")
}

pub async fn list(
    State(state): State<ServeState>,
    Query(query): Query<HashMap<String, String>>,
) -> Reply {
    let all = query
        .get("all")
        .is_some_and(|v| matches!(v.as_str(), "1" | "true" | ""));
    let search = query.get("search").map_or("", String::as_str);
    let store = state.sessions.store().map_err(internal)?;
    let workdir = state.sessions.default_workdir();
    let scope = (!all).then_some(workdir.as_str());
    let hits = store
        .find_sessions(search, scope, LIST_LIMIT)
        .await
        .map_err(|f| internal(f.message))?;
    let list: Vec<Value> = hits
        .iter()
        .map(|hit| crate::sessions_cmd::as_json(&hit.session, &hit.snippet))
        .collect();
    Ok(axum::Json(Value::Array(list)).into_response())
}

fn internal(message: impl ToString) -> ApiError {
    ApiError(StatusCode::INTERNAL_SERVER_ERROR, message.to_string())
}

pub async fn open(State(state): State<ServeState>, body: Bytes) -> Reply {
    let request: OpenRequest = parse(&body)?;
    let (served, notices) = state.sessions.open(request).await.map_err(|e| match e {
        OpenError::BadRequest(message) => ApiError(StatusCode::BAD_REQUEST, message),
        OpenError::NotFound(message) => ApiError(StatusCode::NOT_FOUND, message),
        OpenError::Forbidden(message) => ApiError(StatusCode::FORBIDDEN, message),
        OpenError::Failed(message) => internal(message),
    })?;
    Ok((StatusCode::CREATED, axum::Json(served.describe(&notices))).into_response())
}

#[derive(Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct PromptBody {
    text: Option<String>,
}

pub async fn prompt(State(state): State<ServeState>, Path(id): Path<String>, body: Bytes) -> Reply {
    let served = served(&state, &id).await?;
    let text = match parse::<PromptBody>(&body)? {
        PromptBody { text: Some(text) } if !text.trim().is_empty() => text,
        _ => {
            return Err(ApiError(
                StatusCode::BAD_REQUEST,
                "the prompt is empty: send {\"text\": \"what harness9 should do\"}".into(),
            ));
        }
    };
    if !served.handle.send(Request::Submit(text)) {
        return Err(ApiError(StatusCode::GONE, "the session has closed".into()));
    }
    Ok((StatusCode::ACCEPTED, axum::Json(json!({"accepted": true}))).into_response())
}

pub async fn events(
    State(state): State<ServeState>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Reply {
    let served = served(&state, &id).await?;
    let last_event_id = match headers.get("last-event-id") {
        None => None,
        Some(value) => Some(
            value
                .to_str()
                .ok()
                .and_then(|text| text.trim().parse::<u64>().ok())
                .ok_or_else(|| {
                    ApiError(
                        StatusCode::BAD_REQUEST,
                        "Last-Event-ID must be the id of an event this stream sent".into(),
                    )
                })?,
        ),
    };
    let subscription = served.feed.subscribe(last_event_id);
    Response::builder()
        .header(header::CONTENT_TYPE, "text/event-stream")
        .header(header::CACHE_CONTROL, "no-cache")
        .header("x-accel-buffering", "no")
        .body(Body::from_stream(super::stream::sse_body(subscription)))
        .map_err(|e| internal(e.to_string()))
}

#[derive(Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct ApprovalBody {
    decision: Option<String>,
    reason: Option<String>,
}

pub async fn approval(
    State(state): State<ServeState>,
    Path((id, approval)): Path<(String, String)>,
    body: Bytes,
) -> Reply {
    let served = served(&state, &id).await?;
    let body: ApprovalBody = parse(&body)?;
    let decision = match body.decision.as_deref() {
        Some("once") => ApprovalDecision::AllowOnce,
        Some("session") => ApprovalDecision::AllowAlways,
        Some("deny") => ApprovalDecision::Deny {
            reason: body.reason.filter(|r| !r.trim().is_empty()),
        },
        _ => {
            return Err(ApiError(
                StatusCode::BAD_REQUEST,
                "decision must be \"once\", \"session\" or \"deny\"".into(),
            ));
        }
    };
    match served.feed.answer(&approval, decision) {
        Answered::First => Ok(axum::Json(json!({"ok": true})).into_response()),
        Answered::Late => Err(ApiError(
            StatusCode::CONFLICT,
            format!("approval {approval} was answered already (or its turn ended)"),
        )),
        Answered::Unknown => Err(ApiError(
            StatusCode::NOT_FOUND,
            format!("no approval {approval} in this session"),
        )),
    }
}

pub async fn interrupt(State(state): State<ServeState>, Path(id): Path<String>) -> Reply {
    let served = served(&state, &id).await?;
    served.handle.send(Request::Interrupt);
    Ok((StatusCode::ACCEPTED, axum::Json(json!({"ok": true}))).into_response())
}

#[derive(Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct ModeBody {
    mode: Option<String>,
}

pub async fn mode(State(state): State<ServeState>, Path(id): Path<String>, body: Bytes) -> Reply {
    let served = served(&state, &id).await?;
    let Some(named) = parse::<ModeBody>(&body)?.mode else {
        return Err(ApiError(
            StatusCode::BAD_REQUEST,
            "send {\"mode\": NAME}".into(),
        ));
    };
    let Some(mode) = Mode::parse(&named) else {
        return Err(ApiError(
            StatusCode::BAD_REQUEST,
            format!("unknown mode {named:?}: one of default, auto-edit, plan, yolo"),
        ));
    };
    if mode == Mode::Yolo && !state.sessions.yolo_allowed() {
        return Err(ApiError(
            StatusCode::FORBIDDEN,
            "yolo is available over HTTP only when serve was started with --mode yolo".into(),
        ));
    }
    served.handle.send(Request::SetMode(mode));
    Ok(axum::Json(json!({"mode": mode.as_str()})).into_response())
}

#[derive(Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct AutoContinueBody {
    on: Option<bool>,
}

/// `POST /sessions/ID/auto_continue` `{"on": bool}`: whether the session keeps going by itself
/// while its todo list has open items (what the TUI's plan review turns on).
pub async fn auto_continue(
    State(state): State<ServeState>,
    Path(id): Path<String>,
    body: Bytes,
) -> Reply {
    let served = served(&state, &id).await?;
    let Some(on) = parse::<AutoContinueBody>(&body)?.on else {
        return Err(ApiError(
            StatusCode::BAD_REQUEST,
            "send {\"on\": true} or {\"on\": false}".into(),
        ));
    };
    if !served.handle.send(Request::SetAutoContinue(on)) {
        return Err(ApiError(StatusCode::GONE, "the session has closed".into()));
    }
    Ok(axum::Json(json!({ "auto_continue": on })).into_response())
}

pub async fn messages(State(state): State<ServeState>, Path(id): Path<String>) -> Reply {
    let store = state.sessions.store().map_err(internal)?;
    let Some(messages) = store
        .transcript(&id)
        .await
        .map_err(|f| internal(f.message))?
    else {
        return Err(ApiError(StatusCode::NOT_FOUND, format!("no session {id}")));
    };
    Ok(axum::Json(json!(messages)).into_response())
}
