//! The engine's events: past-tense facts a client (TUI, `exec`) consumes, in the order of design
//! §3.3, and their JSON form of CONTRACT.md (`{"type", "turn", "data"}`).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::oneshot;

use crate::planning::Mode;
use crate::schema::{ToolCall, ToolResult};

/// One event of a run.
#[derive(Debug, Clone)]
pub struct Event {
    /// The turn it belongs to; 0 before the first.
    pub turn: u32,
    pub kind: EventKind,
}

#[derive(Debug, Clone)]
pub enum EventKind {
    SessionStarted(SessionInfo),
    TokenUpdate(TokenUpdate),
    ThinkingDelta(String),
    ActionDelta(String),
    ToolStart(ToolCall),
    ApprovalRequired(ApprovalRequest),
    ToolResult(ToolOutcome),
    Compaction(CompactionInfo),
    Retry(RetryInfo),
    /// Something the user should know that is not an error: auto-continue progress and why it
    /// stopped, a settings file that was ignored, a permission rule that was written.
    Notice(String),
    /// A command hook runs (its event and command, for a status line), or `None`: it ended.
    /// Not one of CONTRACT's JSON events: `exec --json` leaves it out; hooks' messages come as
    /// `notice`s.
    HookRunning(Option<String>),
    Done(DoneInfo),
    /// The run failed; the kind says what class of failure, decided where it arose.
    Error(super::Failure),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionInfo {
    pub session_id: String,
    pub workdir: String,
    pub provider: String,
    pub model: String,
    pub mode: Mode,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TokenUpdate {
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub context_window: u64,
    /// `true` for the engine's estimate before a call, `false` for the provider's count.
    pub estimated: bool,
}

/// A finished tool call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolOutcome {
    pub name: String,
    pub result: ToolResult,
    pub duration: Duration,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CompactionInfo {
    pub before_tokens: u64,
    pub after_tokens: u64,
    pub strategy: &'static str,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetryInfo {
    pub attempt: u32,
    pub max_attempts: u32,
    pub reason: String,
    pub delay: Duration,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DoneInfo {
    pub turns: u32,
    pub input_tokens: u64,
    pub output_tokens: u64,
}

/// How the user answered an approval.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ApprovalDecision {
    AllowOnce,
    /// Allow this call and, for the rest of the session, calls of the same scope.
    AllowAlways,
    /// Allow this call and write `suggested_rule` into the project's settings, so calls like it
    /// never ask again.
    AllowRule,
    /// Refuse; the optional text tells the model what to do instead.
    Deny {
        reason: Option<String>,
    },
    /// Nobody is there to answer (a headless run): the call is refused, and the model and the
    /// log are told which flag would allow it.
    NoApprover,
}

/// A tool call waiting for the user, with the means to answer it. Clones share one answer:
/// the first `respond` wins, later ones do nothing.
#[derive(Debug, Clone)]
pub struct ApprovalRequest {
    pub id: String,
    pub tool_call: ToolCall,
    /// Why approval is needed, in words for the user.
    pub reason: String,
    /// What "allow always" would cover, in words (e.g. "`bash` commands starting `cargo test`").
    pub always_scope: String,
    /// The command-line flag under which this call would run without asking.
    pub allow_flag: &'static str,
    /// The narrowest permission rule that would allow calls like this one.
    pub suggested_rule: Option<String>,
    responder: Arc<Mutex<Option<oneshot::Sender<ApprovalDecision>>>>,
}

impl ApprovalRequest {
    pub(crate) fn new(
        tool_call: ToolCall,
        reason: String,
        always_scope: String,
        allow_flag: &'static str,
        suggested_rule: Option<String>,
    ) -> (Self, oneshot::Receiver<ApprovalDecision>) {
        let (tx, rx) = oneshot::channel();
        let request = ApprovalRequest {
            id: tool_call.id.clone(),
            tool_call,
            reason,
            always_scope,
            allow_flag,
            suggested_rule,
            responder: Arc::new(Mutex::new(Some(tx))),
        };
        (request, rx)
    }

    /// Answers the request; returns `false` when it was already answered or abandoned.
    pub fn respond(&self, decision: ApprovalDecision) -> bool {
        let sender = self.responder.lock().ok().and_then(|mut slot| slot.take());
        sender.is_some_and(|tx| tx.send(decision).is_ok())
    }
}

impl EventKind {
    /// The `type` of the JSON form.
    pub fn type_name(&self) -> &'static str {
        match self {
            EventKind::SessionStarted(_) => "session_started",
            EventKind::TokenUpdate(_) => "token_update",
            EventKind::ThinkingDelta(_) => "thinking_delta",
            EventKind::ActionDelta(_) => "action_delta",
            EventKind::ToolStart(_) => "tool_start",
            EventKind::ApprovalRequired(_) => "approval_required",
            EventKind::ToolResult(_) => "tool_result",
            EventKind::Compaction(_) => "compaction",
            EventKind::Retry(_) => "retry",
            EventKind::Notice(_) => "notice",
            EventKind::HookRunning(_) => "hook_running",
            EventKind::Done(_) => "done",
            EventKind::Error(_) => "error",
        }
    }
}

fn call_json(call: &ToolCall) -> Value {
    json!({"id": call.id, "name": call.name, "arguments": call.arguments_value()})
}

impl Event {
    /// The CONTRACT.md JSON object of this event.
    pub fn to_json(&self) -> Value {
        let data = match &self.kind {
            EventKind::SessionStarted(info) => json!({
                "session_id": info.session_id,
                "workdir": info.workdir,
                "provider": info.provider,
                "model": info.model,
                "mode": info.mode.as_str(),
            }),
            EventKind::TokenUpdate(update) => json!({
                "input_tokens": update.input_tokens,
                "output_tokens": update.output_tokens,
                "context_window": update.context_window,
                "estimated": update.estimated,
            }),
            EventKind::ThinkingDelta(text)
            | EventKind::ActionDelta(text)
            | EventKind::Notice(text) => {
                json!(text)
            }
            EventKind::ToolStart(call) => call_json(call),
            EventKind::ApprovalRequired(request) => json!({
                "id": request.id,
                "tool_call": call_json(&request.tool_call),
                "reason": request.reason,
            }),
            EventKind::ToolResult(outcome) => json!({
                "tool_call_id": outcome.result.tool_call_id,
                "name": outcome.name,
                "output": outcome.result.output,
                "is_error": outcome.result.is_error,
                "duration_ms": outcome.duration.as_millis() as u64,
            }),
            EventKind::Compaction(info) => json!({
                "before_tokens": info.before_tokens,
                "after_tokens": info.after_tokens,
                "strategy": info.strategy,
            }),
            EventKind::Retry(info) => json!({
                "attempt": info.attempt,
                "max_attempts": info.max_attempts,
                "reason": info.reason,
                "delay_ms": info.delay.as_millis() as u64,
            }),
            EventKind::HookRunning(label) => json!(label),
            EventKind::Done(info) => json!({
                "turns": info.turns,
                "input_tokens": info.input_tokens,
                "output_tokens": info.output_tokens,
            }),
            EventKind::Error(failure) => json!(failure.message),
        };
        json!({"type": self.kind.type_name(), "turn": self.turn, "data": data})
    }
}
