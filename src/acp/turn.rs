//! Prompt turns: a `session/prompt` becomes a `Request::Submit`, and a pump per session turns
//! the core's updates into `session/update` notifications (text and thought chunks, tool calls
//! and their updates, the plan, mode changes) until the run ends with a stop reason. The pump
//! sends every update of a turn before it ends the turn, so the editor has them all before the
//! `session/prompt` answer (both go out through the connection's one ordered queue).

use std::sync::Arc;

use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema as acp;
use agent_client_protocol::{Client, Error, ErrorCode};
use tokio::sync::mpsc::UnboundedReceiver;

use super::rpc_error;
use super::sessions::{Live, TurnEnd};
use crate::engine::{Event, EventKind, FailureKind, TokenUpdate, ToolOutcome};
use crate::schema::ModelStop;
use crate::session::{Request, TodoItem, TodoStatus, Update};

fn text_chunk(text: impl Into<String>) -> acp::ContentChunk {
    acp::ContentChunk::new(acp::ContentBlock::Text(acp::TextContent::new(text)))
}

/// Sends `update` for `live`'s session (a client that is gone is not an error here: the
/// connection's end closes the sessions).
pub fn notify(cx: &ConnectionTo<Client>, live: &Live, update: acp::SessionUpdate) {
    let notification = acp::SessionNotification::new(live.id.clone(), update);
    if let Err(error) = cx.send_notification(notification) {
        tracing::debug!("session/update not sent: {error}");
    }
}

/// Something harness9 says beside the model (a notice, a failure), as a message chunk.
pub fn say(cx: &ConnectionTo<Client>, live: &Live, text: &str) {
    notify(
        cx,
        live,
        acp::SessionUpdate::AgentMessageChunk(text_chunk(format!("\n\n_harness9: {text}_\n\n"))),
    );
}

/// The todo list as the editor's plan.
pub fn plan(todos: &[TodoItem]) -> acp::Plan {
    acp::Plan::new(
        todos
            .iter()
            .map(|todo| {
                let status = match todo.status {
                    TodoStatus::Pending => acp::PlanEntryStatus::Pending,
                    TodoStatus::InProgress => acp::PlanEntryStatus::InProgress,
                    TodoStatus::Completed => acp::PlanEntryStatus::Completed,
                };
                acp::PlanEntry::new(todo.content.clone(), acp::PlanEntryPriority::Medium, status)
            })
            .collect(),
    )
}

/// How a run's end reads as a stop reason; `None`: a failure the prompt answers with an error.
fn stop_reason(kind: &EventKind) -> Option<Result<acp::StopReason, ()>> {
    match kind {
        EventKind::Done(done) => Some(Ok(match done.model_stop {
            Some(ModelStop::MaxTokens) => acp::StopReason::MaxTokens,
            Some(ModelStop::Refusal) => acp::StopReason::Refusal,
            None => acp::StopReason::EndTurn,
        })),
        EventKind::Error(failure) => Some(match failure.kind {
            FailureKind::Interrupted => Ok(acp::StopReason::Cancelled),
            FailureKind::MaxTurns => Ok(acp::StopReason::MaxTurnRequests),
            FailureKind::ContextTooLong => Ok(acp::StopReason::MaxTokens),
            _ => Err(()),
        }),
        _ => None,
    }
}

/// Turns the core's updates for `live` into notifications until the session closes.
pub async fn pump(
    live: Arc<Live>,
    mut updates: UnboundedReceiver<Update>,
    cx: ConnectionTo<Client>,
) {
    while let Some(update) = updates.recv().await {
        match update {
            Update::Engine(event) => engine_event(&live, &cx, event),
            Update::Todos(todos) => {
                live.set_todos(&todos);
                notify(&cx, &live, acp::SessionUpdate::Plan(plan(&todos)));
            }
            Update::Compacted(result) => {
                match result {
                    Ok(Some(info)) => say(
                        &cx,
                        &live,
                        &format!(
                            "compacted the conversation from {} to {} tokens",
                            info.before_tokens, info.after_tokens
                        ),
                    ),
                    Ok(None) => say(&cx, &live, "nothing to compact yet"),
                    Err(failure) => say(&cx, &live, &failure.message),
                }
                live.end_turn(TurnEnd::Stop(acp::StopReason::EndTurn));
            }
            Update::Failed(failure) => say(&cx, &live, &failure.message),
            // What the MCP servers said (a declined form, a server that stopped).
            Update::Mcp { notices, .. } => {
                for notice in &notices {
                    say(&cx, &live, notice);
                }
            }
            Update::Closed(_) => {
                live.end_turn(TurnEnd::Stop(acp::StopReason::Cancelled));
                break;
            }
            _ => {}
        }
    }
}

fn engine_event(live: &Arc<Live>, cx: &ConnectionTo<Client>, event: Event) {
    if let Some(end) = stop_reason(&event.kind) {
        let todos = live.todos();
        if matches!(event.kind, EventKind::Done(_))
            && super::plan_review::waiting(live.mode(), &todos)
        {
            // The turn goes on with the user's answer about the plan.
            super::plan_review::review(Arc::clone(live), cx.clone(), todos);
            return;
        }
        match (end, event.kind) {
            (Ok(reason), _) => live.end_turn(TurnEnd::Stop(reason)),
            (Err(()), EventKind::Error(failure)) => live.end_turn(TurnEnd::Failed(failure)),
            (Err(()), _) => {}
        }
        return;
    }
    match event.kind {
        EventKind::ThinkingDelta(text) => {
            notify(
                cx,
                live,
                acp::SessionUpdate::AgentThoughtChunk(text_chunk(text)),
            );
        }
        EventKind::ActionDelta(text) => {
            notify(
                cx,
                live,
                acp::SessionUpdate::AgentMessageChunk(text_chunk(text)),
            );
        }
        EventKind::ToolStart(call) => {
            let mut started = super::tools::started(&call, &live.workdir, &call.id);
            if let Some(diff) = live.take_buffer_diff(&call.id) {
                started.content = vec![acp::ToolCallContent::Diff(diff)];
            }
            notify(cx, live, acp::SessionUpdate::ToolCall(started));
            live.shown.started(&call.id);
        }
        EventKind::ToolResult(outcome) => {
            let id = outcome.result.tool_call_id.clone();
            tool_ended(live, cx, &outcome, &id);
        }
        EventKind::ApprovalRequired(request) => {
            super::permission::ask(Arc::clone(live), cx.clone(), request);
        }
        EventKind::TokenUpdate(tokens) => {
            if let Some(usage) = usage_update(&tokens) {
                notify(cx, live, acp::SessionUpdate::UsageUpdate(usage));
            }
        }
        EventKind::Subagent(nested) => subagent_event(live, cx, &nested),
        EventKind::Notice(text) => say(cx, live, &text),
        _ => {}
    }
}

/// After each model call: the tokens in context (the call's prompt and answer) out of the
/// model's window, as the protocol's `usage_update`; `None` for the gauge's estimate before a
/// call, or when the window is unknown.
fn usage_update(tokens: &TokenUpdate) -> Option<acp::UsageUpdate> {
    (tokens.after_call && tokens.context_window > 0).then(|| {
        acp::UsageUpdate::new(
            tokens.input_tokens + tokens.output_tokens,
            tokens.context_window,
        )
    })
}

/// A call's end as `tool_call_update` (its embedded terminal, if any, stays its content).
fn tool_ended(live: &Live, cx: &ConnectionTo<Client>, outcome: &ToolOutcome, id: &str) {
    let in_terminal = live.shown.ended(id);
    let update = super::tools::finished(&outcome.result, &outcome.name, id, in_terminal);
    notify(cx, live, acp::SessionUpdate::ToolCallUpdate(update));
}

/// A sub-agent's tool calls, shown as calls of their own under the agent's name.
fn subagent_event(live: &Live, cx: &ConnectionTo<Client>, nested: &crate::engine::SubagentEvent) {
    match &nested.event.kind {
        EventKind::ToolStart(call) => {
            let id = format!("{}/{}", nested.task_id, call.id);
            let mut started = super::tools::started(call, &live.workdir, &id);
            started.title = format!("{}: {}", nested.agent, started.title);
            notify(cx, live, acp::SessionUpdate::ToolCall(started));
            live.shown.started(&id);
        }
        EventKind::ToolResult(outcome) => {
            let id = format!("{}/{}", nested.task_id, outcome.result.tool_call_id);
            tool_ended(live, cx, outcome, &id);
        }
        _ => {}
    }
}

/// Skills as slash commands (`/name task`), and `/compact`.
pub fn commands(live: &Live) -> Vec<acp::AvailableCommand> {
    let mut commands = vec![acp::AvailableCommand::new(
        "compact",
        "Summarise the conversation so far to free context",
    )];
    for (name, description) in &live.facts.skills {
        commands.push(
            acp::AvailableCommand::new(name.clone(), description.clone()).input(
                acp::AvailableCommandInput::Unstructured(acp::UnstructuredCommandInput::new(
                    "what to do with it",
                )),
            ),
        );
    }
    commands
}

/// What the prompt asks of the core: `/compact`, a skill (as the TUI words it), or the text.
fn request_for(live: &Live, text: String) -> Request {
    if let Some(command) = text.strip_prefix('/') {
        let (name, rest) = command
            .split_once(char::is_whitespace)
            .unwrap_or((command, ""));
        if name == "compact" {
            return Request::Compact;
        }
        if live.facts.skills.iter().any(|(skill, _)| skill == name) {
            return Request::Submit(format!(
                "Use the `{name}` skill: call use_skill with name \"{name}\", then follow it \
                 for this task: {}",
                rest.trim()
            ));
        }
    }
    Request::Submit(text)
}

/// `session/prompt`: runs one turn and answers with its stop reason.
pub async fn prompt(
    live: Arc<Live>,
    request: acp::PromptRequest,
) -> Result<acp::PromptResponse, Error> {
    let text = super::content::prompt_text(&request.prompt, &live.home, &live.workdir)
        .map_err(|e| rpc_error(ErrorCode::INVALID_PARAMS, e.to_string()))?;
    let Some(ended) = live.begin_turn() else {
        return Err(rpc_error(
            ErrorCode::INVALID_REQUEST,
            "a prompt is already running in this session: cancel it first",
        ));
    };
    if !live.handle.send(request_for(&live, text)) {
        return Err(rpc_error(
            ErrorCode::INTERNAL_ERROR,
            "the session has closed",
        ));
    }
    match ended.await {
        Ok(TurnEnd::Stop(reason)) => Ok(acp::PromptResponse::new(reason)),
        Ok(TurnEnd::Failed(failure)) => Err(rpc_error(ErrorCode::INTERNAL_ERROR, failure.message)
            .data(serde_json::json!({ "kind": failure.kind.as_str() }))),
        Err(_) => Err(rpc_error(
            ErrorCode::INTERNAL_ERROR,
            "the session has closed",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ends_of_a_run_map_to_stop_reasons() {
        let error = |kind| EventKind::Error(crate::engine::Failure::new(kind, "x"));
        assert_eq!(
            stop_reason(&EventKind::Done(Default::default())),
            Some(Ok(acp::StopReason::EndTurn))
        );
        assert_eq!(
            stop_reason(&error(FailureKind::Interrupted)),
            Some(Ok(acp::StopReason::Cancelled))
        );
        assert_eq!(
            stop_reason(&error(FailureKind::MaxTurns)),
            Some(Ok(acp::StopReason::MaxTurnRequests))
        );
        assert_eq!(
            stop_reason(&error(FailureKind::ContextTooLong)),
            Some(Ok(acp::StopReason::MaxTokens))
        );
        assert_eq!(stop_reason(&error(FailureKind::Network)), Some(Err(())));
        let stopped = |model_stop| {
            EventKind::Done(crate::engine::DoneInfo {
                model_stop: Some(model_stop),
                ..Default::default()
            })
        };
        assert_eq!(
            stop_reason(&stopped(ModelStop::MaxTokens)),
            Some(Ok(acp::StopReason::MaxTokens))
        );
        assert_eq!(
            stop_reason(&stopped(ModelStop::Refusal)),
            Some(Ok(acp::StopReason::Refusal))
        );
        assert_eq!(stop_reason(&EventKind::ActionDelta("a".into())), None);
    }

    #[test]
    fn todos_become_plan_entries() {
        let todos = vec![TodoItem {
            content: "write it".into(),
            status: TodoStatus::InProgress,
        }];
        let json = serde_json::to_value(plan(&todos)).unwrap();
        assert_eq!(json["entries"][0]["content"], "write it");
        assert_eq!(json["entries"][0]["status"], "in_progress");
    }
}
