//! `Compaction::cut`, the one place a history is cut without a summary.

use super::SUMMARY_MARKER;
use super::compact::Compaction;
use crate::schema::{Message, Role, ToolCall};

fn calling(id: &str) -> Message {
    let mut message = Message::assistant("");
    message.tool_calls = vec![ToolCall {
        id: id.into(),
        name: "bash".into(),
        arguments: "{}".into(),
    }];
    message
}

fn result(id: &str) -> Message {
    Message {
        tool_call_id: Some(id.into()),
        ..Message::user("output")
    }
}

/// System, the task, then three calls with their results.
fn tool_loop(first: Message) -> Vec<Message> {
    let mut messages = vec![Message::system("sys"), first];
    for id in ["c1", "c2", "c3"] {
        messages.extend([calling(id), result(id)]);
    }
    messages
}

#[test]
fn a_cut_inside_a_tool_loop_carries_the_task_and_keeps_calls_with_results() {
    let messages = tool_loop(Message::user("the task"));
    // Wanted at c2's result: moved back to its call.
    let step = Compaction::cut(&messages, 5);
    assert_eq!(step.keep_from, 4);
    let kept = step.apply(&messages);
    assert_eq!(kept[1].role, Role::User);
    assert!(kept[1].content.starts_with(SUMMARY_MARKER));
    assert!(
        kept[1].content.ends_with("\nthe task"),
        "{}",
        kept[1].content
    );
    assert_eq!(kept[2..], messages[4..]);
}

#[test]
fn a_cut_that_drops_a_summary_carries_it() {
    let summary = Message::user(format!("{SUMMARY_MARKER}\nwhat happened so far"));
    let mut messages = tool_loop(summary);
    messages.push(Message::user("now the docs"));
    messages.push(Message::assistant("on it"));
    let step = Compaction::cut(&messages, messages.len() - 2);
    let kept = step.apply(&messages);
    assert_eq!(
        kept[1].content,
        format!("{SUMMARY_MARKER}\nwhat happened so far")
    );
    assert_eq!(kept[2].content, "now the docs");
}

#[test]
fn a_cut_at_a_request_of_the_users_carries_nothing() {
    let mut messages = tool_loop(Message::user("the task"));
    messages.push(Message::user("next request"));
    let step = Compaction::cut(&messages, messages.len() - 1);
    assert_eq!(step.summary, None);
    assert_eq!(step.apply(&messages)[1].content, "next request");
}
