//! Plan review, as the TUI does it: when a plan-mode run ends with open items in the todo list,
//! the editor asks the user (`session/request_permission` on a `switch_mode` call) whether to
//! carry the plan out, with edits allowed (`auto-edit`) or asked for (`default`), or to keep
//! planning. Carrying it out switches the mode (`current_mode_update`) and goes on within the
//! same prompt turn; its stop reason comes when that run ends.

use std::sync::Arc;

use agent_client_protocol::Client;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema as acp;

use super::sessions::{Live, TurnEnd};
use super::turn::notify;
use crate::session::{Mode, Request, TodoItem, TodoStatus};

pub const AUTO_EDIT: &str = "plan_auto_edit";
pub const DEFAULT: &str = "plan_default";
pub const KEEP_PLANNING: &str = "plan_keep";

/// What the run is asked to do once the plan is approved (the TUI's words).
const CARRY_OUT: &str = "Carry out the plan in the todo list, item by item: mark each item \
in_progress when you start it and completed when it is done.";

/// Whether a plan waits for review: a plan-mode run ended with open items.
pub fn waiting(mode: Mode, todos: &[TodoItem]) -> bool {
    mode == Mode::Plan && todos.iter().any(|t| t.status != TodoStatus::Completed)
}

fn options() -> Vec<acp::PermissionOption> {
    vec![
        acp::PermissionOption::new(
            AUTO_EDIT,
            "Carry it out, editing without asking (auto-edit)",
            acp::PermissionOptionKind::AllowAlways,
        ),
        acp::PermissionOption::new(
            DEFAULT,
            "Carry it out, asking before edits (default)",
            acp::PermissionOptionKind::AllowOnce,
        ),
        acp::PermissionOption::new(
            KEEP_PLANNING,
            "Keep planning",
            acp::PermissionOptionKind::RejectOnce,
        ),
    ]
}

/// The mode an answer chooses; `None`: keep planning (or an answer we never offered).
pub fn chosen(outcome: &acp::RequestPermissionOutcome) -> Option<Mode> {
    match outcome {
        acp::RequestPermissionOutcome::Selected(selected) => match selected.option_id.0.as_ref() {
            AUTO_EDIT => Some(Mode::AutoEdit),
            DEFAULT => Some(Mode::Default),
            _ => None,
        },
        _ => None,
    }
}

/// Asks about the plan in `todos` and carries out the answer (off the pump).
pub fn review(live: Arc<Live>, cx: ConnectionTo<Client>, todos: Vec<TodoItem>) {
    tokio::spawn(async move {
        let plan: String = todos
            .iter()
            .map(|t| format!("- [{}] {}\n", t.status.as_str(), t.content))
            .collect();
        let call = acp::ToolCallUpdate::new(
            format!("plan-review-{}", crate::session::text::now_ms()),
            acp::ToolCallUpdateFields::new()
                .title("Carry out the plan?".to_owned())
                .kind(acp::ToolKind::SwitchMode)
                .content(vec![acp::ToolCallContent::from(acp::ContentBlock::Text(
                    acp::TextContent::new(plan),
                ))]),
        );
        let asked = acp::RequestPermissionRequest::new(live.id.clone(), call, options());
        let answer = cx.send_request(asked).block_task().await;
        let outcome = match answer {
            Ok(response) => response.outcome,
            Err(error) => {
                tracing::warn!("the plan review could not be asked: {error}");
                live.end_turn(TurnEnd::Stop(acp::StopReason::EndTurn));
                return;
            }
        };
        if matches!(outcome, acp::RequestPermissionOutcome::Cancelled) {
            live.end_turn(TurnEnd::Stop(acp::StopReason::Cancelled));
            return;
        }
        let Some(mode) = chosen(&outcome) else {
            live.end_turn(TurnEnd::Stop(acp::StopReason::EndTurn));
            return;
        };
        live.set_mode(mode);
        notify(
            &cx,
            &live,
            acp::SessionUpdate::CurrentModeUpdate(acp::CurrentModeUpdate::new(mode.as_str())),
        );
        live.handle.send(Request::SetAutoContinue(true));
        live.handle.send(Request::Submit(CARRY_OUT.to_owned()));
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plan_waits_in_plan_mode_with_open_items_only() {
        let open = vec![TodoItem {
            content: "a".into(),
            status: TodoStatus::Pending,
        }];
        let done = vec![TodoItem {
            content: "a".into(),
            status: TodoStatus::Completed,
        }];
        assert!(waiting(Mode::Plan, &open));
        assert!(!waiting(Mode::Plan, &done));
        assert!(!waiting(Mode::Default, &open));
        let pick = |id: &str| {
            acp::RequestPermissionOutcome::Selected(acp::SelectedPermissionOutcome::new(
                id.to_owned(),
            ))
        };
        assert_eq!(chosen(&pick(AUTO_EDIT)), Some(Mode::AutoEdit));
        assert_eq!(chosen(&pick(DEFAULT)), Some(Mode::Default));
        assert_eq!(chosen(&pick(KEEP_PLANNING)), None);
    }
}
