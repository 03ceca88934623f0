//! A sub-agent's approval in the app: it arrives as the parent's own `ApprovalRequired` (the
//! existing dialog, saying which agent asks), and the key pressed there answers the child.

use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use super::*;
use crate::engine::subagent_tests::{
    FnProvider, Request, agent_of, calls, echo_bash, has_results, parent_engine, task_call,
};
use crate::schema::Message;

#[tokio::test]
async fn a_childs_approval_shows_in_the_dialog_and_its_answer_reaches_the_child() {
    let provider = FnProvider::new(|request: Request| async move {
        Ok(match (agent_of(&request), has_results(&request)) {
            (None, false) => calls("", vec![task_call("t1", "general", "deploy it")]),
            (None, true) => Message::assistant("deployed"),
            (Some(_), false) => calls(
                "",
                vec![crate::schema::ToolCall {
                    id: "c1".into(),
                    name: "bash".into(),
                    arguments: r#"{"command":"make deploy"}"#.into(),
                }],
            ),
            (Some(_), true) => Message::assistant("done deploying"),
        })
    });
    let engine = Arc::new(parent_engine(&provider, vec![echo_bash()], Vec::new(), None).build());
    let mut app = app();
    let mut rx = engine.run_stream("ship".into(), CancellationToken::new());
    let mut asked = 0;
    let mut child_result = None;
    while let Some(event) = rx.recv().await {
        let approval = matches!(event.kind, EventKind::ApprovalRequired(_));
        if let EventKind::Subagent(nested) = &event.kind
            && let EventKind::ToolResult(outcome) = &nested.event.kind
        {
            child_result = Some(outcome.result.output.clone());
        }
        app.handle_engine(event);
        if approval {
            asked += 1;
            let text = screen(&mut app, 100, 30);
            assert!(text.contains("$ make deploy"), "{text}");
            assert!(
                text.contains("the sub-agent general wants to run bash"),
                "{text}"
            );
            app.handle_key(key(KeyCode::Char('y')));
            assert!(app.approvals_waiting() == 0, "answered");
        }
    }
    assert_eq!(asked, 1);
    assert_eq!(child_result.as_deref(), Some("ran: make deploy"));
}
