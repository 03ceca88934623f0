//! Approvals as `session/request_permission`: the editor asks the user with the options the TUI
//! offers, and the answer goes back to the core. A `cancelled` outcome (the editor answers so
//! after `session/cancel`) is the interruption it is, never a denial the model would be told.

use std::sync::Arc;

use agent_client_protocol::Client;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema as acp;

use super::sessions::Live;
use crate::engine::{ApprovalDecision, ApprovalRequest};
use crate::session::Request;

pub const ALLOW_ONCE: &str = "allow_once";
pub const ALLOW_SESSION: &str = "allow_session";
pub const ALLOW_RULE: &str = "allow_rule";
pub const DENY: &str = "deny";

/// The options of one approval: the TUI's, told apart by their ids.
pub fn options(request: &ApprovalRequest) -> Vec<acp::PermissionOption> {
    let mut options = vec![acp::PermissionOption::new(
        ALLOW_ONCE,
        "Allow once",
        acp::PermissionOptionKind::AllowOnce,
    )];
    // Not offered where the session would not remember it (leaving the sandbox, ...).
    if request.always_offered {
        options.push(acp::PermissionOption::new(
            ALLOW_SESSION,
            "Allow for this session",
            acp::PermissionOptionKind::AllowAlways,
        ));
    }
    if let Some(rule) = &request.suggested_rule {
        options.push(acp::PermissionOption::new(
            ALLOW_RULE,
            format!("Always allow: writes the rule {rule}"),
            acp::PermissionOptionKind::AllowAlways,
        ));
    }
    options.push(acp::PermissionOption::new(
        DENY,
        "Deny",
        acp::PermissionOptionKind::RejectOnce,
    ));
    options
}

/// What the editor's answer means for the core: a decision, or `None` for an interruption.
pub fn decision(outcome: &acp::RequestPermissionOutcome) -> Option<ApprovalDecision> {
    match outcome {
        acp::RequestPermissionOutcome::Selected(selected) => {
            Some(match selected.option_id.0.as_ref() {
                ALLOW_ONCE => ApprovalDecision::AllowOnce,
                ALLOW_SESSION => ApprovalDecision::AllowAlways,
                ALLOW_RULE => ApprovalDecision::AllowRule,
                // Anything else (a reject option, an id we never offered) refuses.
                _ => ApprovalDecision::Deny { reason: None },
            })
        }
        acp::RequestPermissionOutcome::Cancelled => None,
        // A later protocol's outcome this one does not know: refused, never allowed.
        _ => Some(ApprovalDecision::Deny { reason: None }),
    }
}

/// Asks the editor about `request` (off the pump, so the stream goes on meanwhile) and answers
/// the core.
pub fn ask(live: Arc<Live>, cx: ConnectionTo<Client>, request: ApprovalRequest) {
    tokio::spawn(async move {
        let mut tool_call = super::tools::asked(&request.tool_call, &live.workdir);
        // The engine made a preview, so the file was judged readable: the diff is of the
        // editor's buffer when it holds the files (kept for the call's `tool_call` too).
        if request.preview.is_some()
            && request.agent.is_none()
            && let Some(diff) = buffer_diff(&live, &request.tool_call).await
        {
            live.keep_buffer_diff(&request.tool_call.id, diff.clone());
            tool_call.fields.content = Some(vec![acp::ToolCallContent::Diff(diff)]);
        }
        if let Some(agent) = &request.agent
            && let Some(title) = tool_call.fields.title.take()
        {
            tool_call.fields.title = Some(format!("{agent}: {title}"));
        }
        let asked =
            acp::RequestPermissionRequest::new(live.id.clone(), tool_call, options(&request));
        let answer = cx.send_request(asked).block_task().await;
        let id = request.id.clone();
        match answer {
            Ok(response) => match decision(&response.outcome) {
                Some(decision) => {
                    live.handle.send(Request::AnswerApproval { id, decision });
                }
                None => live.cancel(),
            },
            Err(error) => {
                // The editor could not ask (or is gone): the call does not run, and the model
                // is told why rather than waiting for an answer that cannot come.
                tracing::warn!("session/request_permission failed: {error}");
                live.handle.send(Request::AnswerApproval {
                    id,
                    decision: ApprovalDecision::Deny {
                        reason: Some(format!("the editor could not ask the user: {error}")),
                    },
                });
            }
        }
    });
}

/// An edit's whole change as the editor's buffer has it (old and new text); `None` without
/// the editor's files, or when its text does not match there.
async fn buffer_diff(live: &Live, call: &crate::schema::ToolCall) -> Option<acp::Diff> {
    let files = live.files.as_ref()?;
    let arguments = call.arguments_value();
    let raw = arguments.get("path")?.as_str()?;
    let path = crate::files::paths::resolve(&live.workdir, raw);
    let before = files.read_text(&path).await.ok()?;
    let after = crate::tools::preview::applied(&call.name, &arguments, &before)?;
    Some(acp::Diff::new(path, after).old_text(before))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_option_maps_to_its_decision_and_cancelled_to_none() {
        let selected = |id: &str| {
            acp::RequestPermissionOutcome::Selected(acp::SelectedPermissionOutcome::new(
                id.to_owned(),
            ))
        };
        assert_eq!(
            decision(&selected(ALLOW_ONCE)),
            Some(ApprovalDecision::AllowOnce)
        );
        assert_eq!(
            decision(&selected(ALLOW_SESSION)),
            Some(ApprovalDecision::AllowAlways)
        );
        assert_eq!(
            decision(&selected(ALLOW_RULE)),
            Some(ApprovalDecision::AllowRule)
        );
        assert_eq!(
            decision(&selected(DENY)),
            Some(ApprovalDecision::Deny { reason: None })
        );
        assert_eq!(
            decision(&selected("made-up")),
            Some(ApprovalDecision::Deny { reason: None })
        );
        assert_eq!(decision(&acp::RequestPermissionOutcome::Cancelled), None);
    }
}
