//! The engine's events on a wire: the CONTRACT.md JSON object (`{"type", "turn", "data"}`)
//! that `exec --json` prints and `serve` streams, and the way back from it, so a front end in
//! another process (`attach`) gets the same `Event`s the engine emitted. The JSON carries a few
//! fields beyond the contract's (an approval's `always_scope`, `suggested_rule` and an edit's
//! `preview`, an error's `kind`): additions a client may ignore.

use std::time::Duration;

use serde_json::{Value, json};

use super::event::{
    ApprovalRequest, CompactionInfo, DoneInfo, Event, EventKind, RetryInfo, SessionInfo,
    SubagentEvent, TokenUpdate, ToolOutcome, ToolOutput, ToolProgress,
};
use super::failure::{Failure, FailureKind};
use crate::planning::Mode;
use crate::schema::{ToolCall, ToolResult};

/// The compaction strategies the engine names (`CompactionInfo::strategy` is static).
const STRATEGIES: [&str; 3] = ["sliding_window", "token_budget", "summarization"];

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
            EventKind::ToolProgress(_) => "tool_progress",
            EventKind::ToolOutput(_) => "tool_output",
            EventKind::Compaction(_) => "compaction",
            EventKind::Retry(_) => "retry",
            EventKind::Notice(_) => "notice",
            EventKind::HookRunning(_) => "hook_running",
            EventKind::Subagent(_) => "subagent",
            EventKind::Done(_) => "done",
            EventKind::Error(_) => "error",
        }
    }
}

fn call_json(call: &ToolCall) -> Value {
    json!({"id": call.id, "name": call.name, "arguments": call.arguments_value()})
}

fn call_from(value: &Value) -> Option<ToolCall> {
    let arguments = match value.get("arguments") {
        Some(Value::String(text)) => text.clone(),
        Some(other) => other.to_string(),
        None => String::new(),
    };
    Some(ToolCall {
        id: value.get("id")?.as_str()?.to_owned(),
        name: value.get("name")?.as_str()?.to_owned(),
        arguments,
    })
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
            EventKind::TokenUpdate(update) => {
                let mut data = json!({
                    "input_tokens": update.input_tokens,
                    "output_tokens": update.output_tokens,
                    "context_window": update.context_window,
                    "estimated": update.estimated,
                });
                // An estimate of a finished call the server sent no usage for (it counts toward
                // the totals), told from the gauge's estimate of a prompt about to be sent.
                if update.estimated && update.after_call {
                    data["after_call"] = json!(true);
                }
                // Known only from a provider's count.
                if !update.estimated {
                    data["cache_read_tokens"] = json!(update.cache_read_tokens);
                    data["cache_write_tokens"] = json!(update.cache_write_tokens);
                }
                if let Some(cost) = update.cost_usd {
                    data["cost_usd"] = json!(cost);
                }
                data
            }
            EventKind::ThinkingDelta(text)
            | EventKind::ActionDelta(text)
            | EventKind::Notice(text) => {
                json!(text)
            }
            EventKind::ToolStart(call) => call_json(call),
            EventKind::ApprovalRequired(request) => {
                let mut data = json!({
                    "id": request.id,
                    "tool_call": call_json(&request.tool_call),
                    "reason": request.reason,
                    "always_scope": request.always_scope,
                    "suggested_rule": request.suggested_rule,
                });
                if let Some(agent) = &request.agent {
                    data["agent"] = json!(agent);
                }
                if let Some(preview) = &request.preview {
                    data["preview"] = json!(preview);
                }
                // Only when it is not: a grant for the session is the rule.
                if !request.always_offered {
                    data["always_offered"] = json!(false);
                }
                data
            }
            EventKind::Subagent(sub) => json!({
                "task_id": sub.task_id,
                "agent": sub.agent,
                "event": sub.event.to_json(),
            }),
            EventKind::ToolResult(outcome) => json!({
                "tool_call_id": outcome.result.tool_call_id,
                "name": outcome.name,
                "output": outcome.result.output,
                "is_error": outcome.result.is_error,
                "duration_ms": outcome.duration.as_millis() as u64,
            }),
            EventKind::ToolOutput(output) => json!({
                "tool_call_id": output.tool_call_id,
                "chunk": output.chunk,
            }),
            EventKind::ToolProgress(progress) => {
                let mut data = json!({
                    "tool_call_id": progress.tool_call_id,
                    "progress": progress.progress,
                });
                if let Some(total) = progress.total {
                    data["total"] = json!(total);
                }
                if let Some(message) = &progress.message {
                    data["message"] = json!(message);
                }
                data
            }
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
            EventKind::Done(info) => {
                let mut data = json!({
                    "turns": info.turns,
                    "input_tokens": info.input_tokens,
                    "output_tokens": info.output_tokens,
                    "cache_read_tokens": info.cache_read_tokens,
                    "cache_write_tokens": info.cache_write_tokens,
                });
                if let Some(cost) = info.cost_usd {
                    data["cost_usd"] = json!(cost);
                }
                if info.estimated {
                    data["estimated"] = json!(true);
                }
                data
            }
            EventKind::HookRunning(label) => json!(label),
            EventKind::Error(failure) => json!(failure.message),
        };
        let mut object = json!({"type": self.kind.type_name(), "turn": self.turn, "data": data});
        if let EventKind::Error(failure) = &self.kind {
            object["kind"] = json!(failure.kind.as_str());
        }
        object
    }

    /// The event a JSON object of `to_json` stands for; `None` for a type this build does not
    /// know or data of the wrong shape (a newer server: the client skips it). An approval made
    /// from JSON is answered through the receiver returned beside it.
    pub fn from_json(
        value: &Value,
    ) -> Option<(
        Event,
        Option<tokio::sync::oneshot::Receiver<super::ApprovalDecision>>,
    )> {
        let turn = u32::try_from(value.get("turn")?.as_u64()?).ok()?;
        let data = value.get("data")?;
        let text = |d: &Value| d.as_str().map(str::to_owned);
        let number = |key: &str| data.get(key).and_then(Value::as_u64);
        let string = |key: &str| data.get(key).and_then(Value::as_str).map(str::to_owned);
        let mut answer = None;
        let kind = match value.get("type")?.as_str()? {
            "session_started" => EventKind::SessionStarted(SessionInfo {
                session_id: string("session_id")?,
                workdir: string("workdir")?,
                provider: string("provider")?,
                model: string("model")?,
                mode: Mode::parse(data.get("mode")?.as_str()?)?,
            }),
            "token_update" => EventKind::TokenUpdate(TokenUpdate {
                input_tokens: number("input_tokens")?,
                output_tokens: number("output_tokens")?,
                context_window: number("context_window")?,
                estimated: data.get("estimated")?.as_bool()?,
                after_call: data
                    .get("after_call")
                    .and_then(Value::as_bool)
                    .unwrap_or_else(|| {
                        data.get("estimated").and_then(Value::as_bool) != Some(true)
                    }),
                cache_read_tokens: number("cache_read_tokens").unwrap_or(0),
                cache_write_tokens: number("cache_write_tokens").unwrap_or(0),
                cost_usd: data.get("cost_usd").and_then(Value::as_f64),
            }),
            "thinking_delta" => EventKind::ThinkingDelta(text(data)?),
            "action_delta" => EventKind::ActionDelta(text(data)?),
            "notice" => EventKind::Notice(text(data)?),
            "hook_running" => EventKind::HookRunning(text(data)),
            "tool_start" => EventKind::ToolStart(call_from(data)?),
            "approval_required" => {
                let (request, receiver) = ApprovalRequest::new(
                    call_from(data.get("tool_call")?)?,
                    string("reason")?,
                    string("always_scope").unwrap_or_default(),
                    "--mode",
                    string("suggested_rule"),
                );
                // The id it is answered by, which a server may have made unique (`serve`, when
                // the model used a tool call id twice); the tool call keeps its own.
                let mut request = request;
                if let Some(id) = string("id") {
                    request.id = id;
                }
                request.agent = string("agent");
                request.preview = string("preview");
                request.always_offered = data
                    .get("always_offered")
                    .and_then(Value::as_bool)
                    .unwrap_or(true);
                answer = Some(receiver);
                EventKind::ApprovalRequired(request)
            }
            // A child's approvals come as the parent's own (see `EventKind::Subagent`), so the
            // nested event never carries an answer.
            "subagent" => {
                let (event, _) = Event::from_json(data.get("event")?)?;
                EventKind::Subagent(SubagentEvent {
                    task_id: string("task_id")?,
                    agent: string("agent")?,
                    event: Box::new(event),
                })
            }
            "tool_result" => EventKind::ToolResult(ToolOutcome {
                name: string("name")?,
                result: ToolResult {
                    tool_call_id: string("tool_call_id")?,
                    output: string("output")?,
                    is_error: data.get("is_error")?.as_bool()?,
                },
                duration: Duration::from_millis(number("duration_ms")?),
            }),
            "tool_output" => EventKind::ToolOutput(ToolOutput {
                tool_call_id: string("tool_call_id")?,
                chunk: string("chunk")?,
            }),
            "tool_progress" => EventKind::ToolProgress(ToolProgress {
                tool_call_id: string("tool_call_id")?,
                progress: data.get("progress")?.as_f64()?,
                total: data.get("total").and_then(Value::as_f64),
                message: data
                    .get("message")
                    .and_then(Value::as_str)
                    .map(str::to_owned),
            }),
            "compaction" => {
                let named = data.get("strategy")?.as_str()?;
                EventKind::Compaction(CompactionInfo {
                    before_tokens: number("before_tokens")?,
                    after_tokens: number("after_tokens")?,
                    strategy: STRATEGIES.into_iter().find(|s| *s == named)?,
                })
            }
            "retry" => EventKind::Retry(RetryInfo {
                attempt: u32::try_from(number("attempt")?).ok()?,
                max_attempts: u32::try_from(number("max_attempts")?).ok()?,
                reason: string("reason")?,
                delay: Duration::from_millis(number("delay_ms")?),
            }),
            "done" => EventKind::Done(DoneInfo {
                turns: u32::try_from(number("turns")?).ok()?,
                input_tokens: number("input_tokens")?,
                output_tokens: number("output_tokens")?,
                cache_read_tokens: number("cache_read_tokens").unwrap_or(0),
                cache_write_tokens: number("cache_write_tokens").unwrap_or(0),
                cost_usd: data.get("cost_usd").and_then(Value::as_f64),
                estimated: data
                    .get("estimated")
                    .and_then(Value::as_bool)
                    .unwrap_or(false),
                model_stop: None,
            }),
            "error" => {
                let kind = value
                    .get("kind")
                    .and_then(Value::as_str)
                    .and_then(FailureKind::parse)
                    .unwrap_or(FailureKind::Provider);
                EventKind::Error(Failure::new(kind, text(data)?))
            }
            _ => return None,
        };
        Some((Event { turn, kind }, answer))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(event: Event) -> Event {
        let json = event.to_json();
        let (back, _) = Event::from_json(&json).expect("parses back");
        assert_eq!(back.to_json(), json, "the JSON survives a round trip");
        back
    }

    #[test]
    fn every_event_survives_the_wire() {
        let call = ToolCall {
            id: "call_1".into(),
            name: "bash".into(),
            arguments: r#"{"command":"ls"}"#.into(),
        };
        let (mut request, _) = ApprovalRequest::new(
            call.clone(),
            "bash needs approval".into(),
            "`bash` commands starting `ls`".into(),
            "--mode yolo",
            Some("Bash(ls:*)".into()),
        );
        request.preview = Some("--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b".into());
        let kinds = vec![
            EventKind::SessionStarted(SessionInfo {
                session_id: "s1".into(),
                workdir: "/w".into(),
                provider: "openai".into(),
                model: "gpt-4o".into(),
                mode: Mode::AutoEdit,
            }),
            EventKind::TokenUpdate(TokenUpdate {
                input_tokens: 10,
                output_tokens: 2,
                context_window: 128_000,
                estimated: false,
                after_call: true,
                cache_read_tokens: 4,
                cache_write_tokens: 1,
                cost_usd: Some(0.25),
            }),
            EventKind::ThinkingDelta("hm".into()),
            EventKind::ActionDelta("Hello\n".into()),
            EventKind::ToolStart(call.clone()),
            EventKind::ApprovalRequired(request),
            EventKind::ToolResult(ToolOutcome {
                name: "bash".into(),
                result: ToolResult {
                    tool_call_id: "call_1".into(),
                    output: "a\nb".into(),
                    is_error: false,
                },
                duration: Duration::from_millis(12),
            }),
            EventKind::ToolOutput(ToolOutput {
                tool_call_id: "call_1".into(),
                chunk: "tick 1\n".into(),
            }),
            EventKind::ToolProgress(ToolProgress {
                tool_call_id: "call_1".into(),
                progress: 1.0,
                total: Some(2.0),
                message: Some("one".into()),
            }),
            EventKind::ToolProgress(ToolProgress {
                tool_call_id: "call_1".into(),
                progress: 0.5,
                total: None,
                message: None,
            }),
            EventKind::Compaction(CompactionInfo {
                before_tokens: 900,
                after_tokens: 300,
                strategy: "summarization",
            }),
            EventKind::Retry(RetryInfo {
                attempt: 2,
                max_attempts: 4,
                reason: "rate limited".into(),
                delay: Duration::from_millis(1500),
            }),
            EventKind::Notice("a settings file was ignored".into()),
            EventKind::HookRunning(Some("PreToolUse: ./check.sh".into())),
            EventKind::HookRunning(None),
            EventKind::Subagent(SubagentEvent {
                task_id: "call_9".into(),
                agent: "explore".into(),
                event: Box::new(Event {
                    turn: 2,
                    kind: EventKind::ToolStart(call.clone()),
                }),
            }),
            EventKind::Done(DoneInfo {
                turns: 3,
                input_tokens: 100,
                output_tokens: 20,
                cache_read_tokens: 50,
                cache_write_tokens: 0,
                cost_usd: Some(0.0125),
                estimated: false,
                model_stop: None,
            }),
            EventKind::TokenUpdate(TokenUpdate {
                input_tokens: 700,
                output_tokens: 30,
                context_window: 128_000,
                estimated: true,
                after_call: true,
                ..TokenUpdate::default()
            }),
            EventKind::TokenUpdate(TokenUpdate {
                input_tokens: 700,
                context_window: 128_000,
                estimated: true,
                ..TokenUpdate::default()
            }),
            EventKind::Done(DoneInfo {
                turns: 1,
                input_tokens: 700,
                output_tokens: 30,
                estimated: true,
                ..DoneInfo::default()
            }),
            EventKind::Error(Failure::new(FailureKind::Interrupted, "interrupted")),
        ];
        for kind in kinds {
            round_trip(Event { turn: 1, kind });
        }
    }

    #[test]
    fn an_error_keeps_its_kind_and_an_approval_can_be_answered() {
        let back = round_trip(Event {
            turn: 2,
            kind: EventKind::Error(Failure::new(FailureKind::Auth, "the key was refused")),
        });
        assert!(matches!(back.kind, EventKind::Error(f) if f.kind == FailureKind::Auth));
        let json = json!({"type": "approval_required", "turn": 1, "data": {
            "id": "c", "tool_call": {"id": "c", "name": "bash", "arguments": {"command": "ls"}},
            "reason": "why"}});
        let (event, answer) = Event::from_json(&json).unwrap();
        let EventKind::ApprovalRequired(request) = event.kind else {
            panic!("an approval");
        };
        assert!(
            request.always_offered,
            "a grant for the session unless told otherwise"
        );
        assert!(request.respond(super::super::ApprovalDecision::AllowOnce));
        assert_eq!(
            answer.unwrap().try_recv().unwrap(),
            super::super::ApprovalDecision::AllowOnce
        );
    }

    #[test]
    fn an_approval_that_offers_no_session_grant_says_so_on_the_wire() {
        let (mut request, _answer) = super::super::ApprovalRequest::new(
            ToolCall {
                id: "c".into(),
                name: "bash".into(),
                arguments: r#"{"command":"make","sandbox":false}"#.into(),
            },
            "leaves the sandbox".into(),
            "leaving the sandbox asks every time".into(),
            "--mode yolo",
            None,
        );
        request.always_offered = false;
        let json = Event {
            turn: 1,
            kind: EventKind::ApprovalRequired(request),
        }
        .to_json();
        assert_eq!(json["data"]["always_offered"], json!(false), "{json}");
        let (back, _) = Event::from_json(&json).unwrap();
        let EventKind::ApprovalRequired(back) = back.kind else {
            panic!("an approval");
        };
        assert!(!back.always_offered);
    }

    #[test]
    fn an_approval_is_answered_by_its_own_id_not_its_tool_calls() {
        // `serve` gives a reused tool call id an approval id of its own; attach must answer by it.
        let json = json!({"type": "approval_required", "turn": 2, "data": {
            "id": "c~7", "tool_call": {"id": "c", "name": "bash", "arguments": {"command": "ls"}},
            "reason": "why"}});
        let (event, _) = Event::from_json(&json).unwrap();
        let EventKind::ApprovalRequired(request) = event.kind else {
            panic!("an approval");
        };
        assert_eq!(
            (request.id.as_str(), request.tool_call.id.as_str()),
            ("c~7", "c")
        );
    }

    #[test]
    fn unknown_types_and_wrong_shapes_are_skipped() {
        for value in [
            json!({"type": "from_the_future", "turn": 1, "data": {}}),
            json!({"type": "token_update", "turn": 1, "data": "text"}),
            json!({"type": "action_delta", "turn": -1, "data": "x"}),
            json!({"type": "compaction", "turn": 1,
                   "data": {"before_tokens": 1, "after_tokens": 1, "strategy": "other"}}),
            json!("not an object"),
        ] {
            assert!(Event::from_json(&value).is_none(), "{value}");
        }
    }
}
