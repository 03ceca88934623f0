//! A sub-agent starts with what the user allowed its parent for the session, and what the user
//! allows the child stays the child's (issue 33 point 3).

use tokio_util::sync::CancellationToken;

use super::subagent_tests::{FnProvider, Request, agent_of, calls, parent_engine, task_call};
use super::tests::{call, fake_bash};
use super::*;
use crate::schema::Message;

fn results_so_far(request: &Request) -> usize {
    request
        .messages
        .iter()
        .filter(|m| m.is_tool_result())
        .count()
}

#[tokio::test]
async fn a_child_inherits_the_parents_session_grants_and_its_own_do_not_flow_back() {
    let provider = FnProvider::new(move |request: Request| async move {
        Ok(match agent_of(&request) {
            None => match results_so_far(&request) {
                0 => calls("", vec![call("c1", "bash", r#"{"command":"make deploy"}"#)]),
                1 => calls("", vec![task_call("t1", "general", "deploy and build")]),
                2 => calls("", vec![call("c2", "bash", r#"{"command":"cargo build"}"#)]),
                _ => Message::assistant("all done"),
            },
            Some(_) if results_so_far(&request) == 0 => calls(
                "",
                vec![
                    call("k1", "bash", r#"{"command":"make deploy"}"#),
                    call("k2", "bash", r#"{"command":"cargo build"}"#),
                ],
            ),
            Some(_) => Message::assistant("child done"),
        })
    });
    let engine =
        std::sync::Arc::new(parent_engine(&provider, vec![fake_bash()], Vec::new(), None).build());
    let mut rx = engine.run_stream("go".into(), CancellationToken::new());
    let mut asked = Vec::new();
    while let Some(event) = rx.recv().await {
        if let EventKind::ApprovalRequired(request) = &event.kind {
            asked.push(request.id.clone());
            let decision = match request.id.as_str() {
                // "For the rest of this session", the parent's and the child's.
                "c1" | "t1/k2" => ApprovalDecision::AllowAlways,
                _ => ApprovalDecision::AllowOnce,
            };
            assert!(request.respond(decision));
        }
    }
    assert_eq!(
        asked,
        vec!["c1", "t1/k2", "c2"],
        "the child runs `make deploy` on the parent's grant; its own grant for `cargo build` \
         does not reach the parent"
    );
}
