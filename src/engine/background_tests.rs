//! Background sub-agents (`task` with `background: true`) through the real loop: the call
//! returns before the child ends, its answer comes with the parent's next model call, its
//! events are nested `Subagent` events with the call's id, its usage is the parent's, and
//! cancelling the parent's run stops it.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::subagent_tests::{FnProvider, Request, agent_of, calls, parent_engine, prompt_of};
use super::tests::{call, drain, weather};
use super::*;
use crate::schema::{Message, Role, ToolCall};

fn background_call(id: &str, prompt: &str) -> ToolCall {
    call(
        id,
        "task",
        &serde_json::json!({
            "agent": "explore", "description": "slow search", "prompt": prompt, "background": true
        })
        .to_string(),
    )
}

fn user_texts(messages: &[Message]) -> Vec<String> {
    messages
        .iter()
        .filter(|m| m.role == Role::User)
        .map(|m| m.content.clone())
        .collect()
}

#[tokio::test]
async fn a_background_task_returns_at_once_and_its_answer_comes_with_the_next_turn() {
    let parent_requests: Arc<Mutex<Vec<Vec<Message>>>> = Arc::default();
    // The child answers only once the parent's second model call (after the task call's
    // result) lets it: a call that waited for the child would never get there.
    let gate = Arc::new(tokio::sync::Notify::new());
    let (parents_in, gate_in) = (Arc::clone(&parent_requests), Arc::clone(&gate));
    let provider = FnProvider::new(move |request: Request| {
        let (parents, gate) = (Arc::clone(&parents_in), Arc::clone(&gate_in));
        async move {
            if agent_of(&request).is_some() {
                tokio::time::timeout(Duration::from_secs(10), gate.notified())
                    .await
                    .expect("the parent's next call comes while the child runs");
                return Ok(Message::assistant(format!(
                    "child found {}",
                    prompt_of(&request)
                )));
            }
            let n = {
                let mut parents = parents.lock().unwrap();
                parents.push(request.messages.clone());
                parents.len()
            };
            Ok(match n {
                1 => calls("", vec![background_call("b1", "the slow thing")]),
                2 => {
                    gate.notify_one();
                    Message::assistant("started it; waiting")
                }
                _ => Message::assistant("the child said it"),
            })
        }
    });
    let engine = Arc::new(parent_engine(&provider, vec![weather()], Vec::new(), None).build());
    let events = drain(engine.run_stream("go".into(), CancellationToken::new())).await;

    let requests = parent_requests.lock().unwrap().clone();
    assert_eq!(requests.len(), 3, "{requests:#?}");
    let result = requests[1]
        .iter()
        .find(|m| m.is_tool_result())
        .expect("the task call's result");
    assert!(
        result.content.contains("background as task `b1`"),
        "{}",
        result.content
    );
    assert!(
        !user_texts(&requests[1])
            .iter()
            .any(|t| t.contains("child found"))
    );
    let delivered = user_texts(&requests[2]);
    let last = delivered.last().unwrap();
    assert!(last.contains("[background task b1 finished"), "{last}");
    assert!(last.contains("child found the slow thing"), "{last}");
    // Its events were the parent's, nested with the call's id.
    assert!(events.iter().any(|e| matches!(
        &e.kind,
        EventKind::Subagent(nested) if nested.task_id == "b1"
            && matches!(nested.event.kind, EventKind::Done(_))
    )));
    // Three parent calls and the child's one, 100 input tokens each.
    let EventKind::Done(done) = &events.last().unwrap().kind else {
        panic!("{:?}", events.last());
    };
    assert_eq!(done.input_tokens, 400);
}

#[tokio::test]
async fn cancelling_the_parent_stops_its_background_children() {
    let (started_tx, mut started_rx) = tokio::sync::mpsc::unbounded_channel::<()>();
    let (cancelled_tx, mut cancelled_rx) = tokio::sync::mpsc::unbounded_channel::<String>();
    let parent_calls = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let provider = FnProvider::new(move |request: Request| {
        let (started, cancelled, parent_calls) = (
            started_tx.clone(),
            cancelled_tx.clone(),
            Arc::clone(&parent_calls),
        );
        async move {
            if agent_of(&request).is_none() {
                let n = parent_calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                return Ok(if n == 0 {
                    calls("", vec![background_call("b1", "job forever")])
                } else {
                    Message::assistant("waiting for it")
                });
            }
            let _ = started.send(());
            request.cancel.cancelled().await;
            let _ = cancelled.send(prompt_of(&request));
            Err(ProviderError::cancelled())
        }
    });
    let engine = Arc::new(parent_engine(&provider, vec![weather()], Vec::new(), None).build());
    let cancel = CancellationToken::new();
    let rx = engine.run_stream("go".into(), cancel.clone());
    started_rx.recv().await.unwrap();
    cancel.cancel();
    let events = drain(rx).await;
    let EventKind::Error(failure) = &events.last().unwrap().kind else {
        panic!("{:?}", events.last());
    };
    assert_eq!(failure.kind, FailureKind::Interrupted);
    let job = tokio::time::timeout(Duration::from_secs(10), cancelled_rx.recv())
        .await
        .expect("the background child's call is cancelled");
    assert_eq!(job.as_deref(), Some("job forever"));
}

/// A run that ends while a background child runs (here its model fails) leaves the child to
/// the session; the session's end (its engine dropped) stops it.
#[tokio::test]
async fn closing_the_session_stops_its_background_children() {
    let (started_tx, mut started_rx) = tokio::sync::mpsc::unbounded_channel::<()>();
    let (cancelled_tx, mut cancelled_rx) = tokio::sync::mpsc::unbounded_channel::<()>();
    let parent_calls = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let provider = FnProvider::new(move |request: Request| {
        let (started, cancelled, parent_calls) = (
            started_tx.clone(),
            cancelled_tx.clone(),
            Arc::clone(&parent_calls),
        );
        async move {
            if agent_of(&request).is_none() {
                if parent_calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 0 {
                    return Ok(calls("", vec![background_call("b1", "job forever")]));
                }
                return Err(ProviderError::new(
                    crate::schema::ProviderErrorKind::InvalidRequest,
                    "refused",
                ));
            }
            let _ = started.send(());
            request.cancel.cancelled().await;
            let _ = cancelled.send(());
            Err(ProviderError::cancelled())
        }
    });
    let engine = Arc::new(parent_engine(&provider, vec![weather()], Vec::new(), None).build());
    let events = drain(engine.run_stream("go".into(), CancellationToken::new())).await;
    assert!(matches!(events.last().unwrap().kind, EventKind::Error(_)));
    started_rx.recv().await.unwrap();
    assert!(
        cancelled_rx.try_recv().is_err(),
        "the child outlives the run"
    );
    drop(engine);
    tokio::time::timeout(Duration::from_secs(10), cancelled_rx.recv())
        .await
        .expect("the child is stopped when its engine goes");
}
