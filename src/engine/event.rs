//! The engine's events: past-tense facts a client (TUI, `exec`) consumes, in the order of design
//! §3.3. Their JSON form of CONTRACT.md is in `event_wire`.

use std::sync::{Arc, Mutex};
use std::time::Duration;

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
    /// A running call reported progress (an MCP server's `notifications/progress`).
    ToolProgress(ToolProgress),
    /// Output of a running command as it comes (stdout and stderr interleaved, control
    /// sequences stripped), before its result; at most a few a second per call.
    ToolOutput(ToolOutput),
    Compaction(CompactionInfo),
    Retry(RetryInfo),
    /// Something the user should know that is not an error: auto-continue progress and why it
    /// stopped, a settings file that was ignored, a permission rule that was written.
    Notice(String),
    /// A command hook runs (its event and command, for a status line), or `None`: it ended.
    /// Not one of CONTRACT's JSON events: `exec --json` leaves it out; hooks' messages come as
    /// `notice`s.
    HookRunning(Option<String>),
    /// An event of a sub-agent started by a `task` call. Its approvals do not come this way: they
    /// are the parent's `ApprovalRequired`, with `ApprovalRequest::agent` naming who asks, so every
    /// front end answers them on the path it already has.
    Subagent(SubagentEvent),
    Done(DoneInfo),
    /// The run failed; the kind says what class of failure, decided where it arose.
    Error(super::Failure),
}

/// Progress of a running tool call, as its tool reported it.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolProgress {
    pub tool_call_id: String,
    pub progress: f64,
    pub total: Option<f64>,
    pub message: Option<String>,
}

/// A piece of a running call's output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolOutput {
    pub tool_call_id: String,
    pub chunk: String,
}

/// One event of a sub-agent, as its parent's stream carries it.
#[derive(Debug, Clone)]
pub struct SubagentEvent {
    /// The id of the `task` call that started the sub-agent, so a client can put the child's
    /// events under that call's block. The child's own session id is in its first event,
    /// `SessionStarted`.
    pub task_id: String,
    /// The agent's name (`general`, `explore`, or a file agent's).
    pub agent: String,
    pub event: Box<Event>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionInfo {
    pub session_id: String,
    pub workdir: String,
    pub provider: String,
    pub model: String,
    pub mode: Mode,
}

#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct TokenUpdate {
    /// Every prompt token, cached or not (`cache_read_tokens` and `cache_write_tokens` are parts
    /// of it).
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub context_window: u64,
    /// `true` for the engine's estimate, `false` for the provider's count.
    pub estimated: bool,
    /// For an estimate: it stands for a finished call whose server sent no usage (and so counts
    /// toward the totals), rather than for the prompt about to be sent (the gauge only).
    pub after_call: bool,
    /// Prompt tokens read from the provider's cache (a provider's count only).
    pub cache_read_tokens: u64,
    /// Prompt tokens written to the provider's cache (Anthropic).
    pub cache_write_tokens: u64,
    /// What this call cost, when the model's prices are known.
    pub cost_usd: Option<f64>,
}

impl TokenUpdate {
    /// Whether this update is one model call's tokens, to add to the run's and session's totals:
    /// the provider's count, or harness9's estimate of a call the server sent no usage for.
    pub fn counts_toward_totals(&self) -> bool {
        !self.estimated || self.after_call
    }
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

#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct DoneInfo {
    pub turns: u32,
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// The run's prompt tokens read from and written to the provider's cache.
    pub cache_read_tokens: u64,
    pub cache_write_tokens: u64,
    /// What the run cost, when every call's model had known prices.
    pub cost_usd: Option<f64>,
    /// Some call's server sent no usage: its tokens in these totals are harness9's estimate.
    pub estimated: bool,
    /// The last model call stopped other than by the model's choice (the token limit, a
    /// refusal); not part of the JSON event.
    pub model_stop: Option<crate::schema::ModelStop>,
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
    /// The run was interrupted (Ctrl+C, Esc, an interrupt request) while the approval was open:
    /// the call is not run, and it is recorded and told to the model as an interruption, not as
    /// the user's refusal (issue 32 point 13).
    Interrupted,
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
    /// The sub-agent whose call this is (`None`: the main agent's own).
    pub agent: Option<String>,
    /// For an edit: the unified diff it would make to the file as it is now (computed where
    /// the file may be read; front ends never read it themselves).
    pub preview: Option<String>,
    /// Whether "allow for the rest of this session" is offered: `false` where the session never
    /// remembers such a grant (leaving the sandbox, a protected path, a write outside the
    /// working directory ask every time), so `AllowAlways` would allow this call only.
    pub always_offered: bool,
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
            agent: None,
            preview: None,
            always_offered: true,
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
