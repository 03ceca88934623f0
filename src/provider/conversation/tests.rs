use super::check::every_protocol;
use super::*;
use crate::schema::ToolCall;

fn calling(ids: &[&str]) -> Message {
    let mut message = Message::assistant("");
    message.tool_calls = ids
        .iter()
        .map(|id| ToolCall {
            id: (*id).into(),
            name: "bash".into(),
            arguments: "{}".into(),
        })
        .collect();
    message
}

fn result(id: &str, output: &str) -> Message {
    Message {
        tool_call_id: Some(id.into()),
        ..Message::user(output)
    }
}

#[test]
fn a_history_that_keeps_the_rules_is_sent_as_it_is() {
    let messages = [
        Message::system("sys"),
        Message::user("the task"),
        calling(&["c1", "c2"]),
        result("c2", "two"),
        result("c1", "one"),
        Message::assistant("done"),
    ];
    assert!(matches!(repaired(&messages), Cow::Borrowed(_)));
    every_protocol(&messages, &[]).unwrap();
}

#[test]
fn a_conversation_opening_with_the_assistant_gets_the_task_restated_in_front() {
    // What a token-budget cut stored before the fix: the task gone, a tool loop's tail left.
    let messages = [
        Message::system("sys"),
        calling(&["c3"]),
        result("c3", "three"),
        Message::user("and then the tests"),
    ];
    let sent = repaired(&messages);
    assert_eq!(sent[1].role, Role::User);
    assert!(
        sent[1]
            .content
            .ends_with("The user's request:\nand then the tests")
    );
    assert_eq!(sent[2..], messages[1..]);
    every_protocol(&messages, &[]).unwrap();
}

#[test]
fn an_unanswered_call_gets_a_result_saying_so_and_a_stray_result_is_kept_as_text() {
    let messages = [
        Message::system("sys"),
        Message::user("the task"),
        calling(&["c1", "c2"]),
        result("c1", "one"),
        result("gone", "output of a call compacted away"),
        Message::assistant("next"),
        result("c9", "another stray"),
    ];
    let sent = repaired(&messages);
    let shape: Vec<(Role, Option<&str>, &str)> = sent
        .iter()
        .map(|m| {
            (
                m.role,
                m.tool_call_id.as_deref(),
                &m.content[..m.content.len().min(22)],
            )
        })
        .collect();
    assert_eq!(
        shape,
        [
            (Role::System, None, "sys"),
            (Role::User, None, "the task"),
            (Role::Assistant, None, ""),
            (Role::User, Some("c1"), "one"),
            (Role::User, Some("c2"), "no result: the history"),
            (Role::User, None, "[The result of tool ca"),
            (Role::Assistant, None, "next"),
            (Role::User, None, "[The result of tool ca"),
        ]
    );
    assert!(sent[5].content.ends_with("output of a call compacted away"));
    every_protocol(&messages, &[]).unwrap();
}

#[test]
fn each_checker_catches_what_its_server_refuses() {
    use super::check::{anthropic, openai_chat, responses};
    let bodies = |messages: &[Message]| {
        let convert = |messages: &[Message]| {
            (
                serde_json::json!({"messages": crate::provider::anthropic::convert_messages(messages).1}),
                serde_json::json!({"messages": crate::provider::openai::convert_messages(messages)}),
                serde_json::json!({"input": crate::provider::responses::convert_input(messages).1}),
            )
        };
        convert(messages)
    };
    // Unrepaired histories, converted without the guard.
    let leading = [
        Message::system("s"),
        Message::assistant("hi"),
        Message::user("u"),
    ];
    let (a, o, r) = bodies(&leading);
    assert!(anthropic(&a).is_err() && openai_chat(&o).is_err() && responses(&r).is_err());
    let orphan = [Message::user("u"), calling(&["c1"]), Message::user("next")];
    let (a, o, r) = bodies(&orphan);
    assert!(anthropic(&a).is_err() && openai_chat(&o).is_err() && responses(&r).is_err());
    let stray = [Message::user("u"), result("c1", "x")];
    let (a, o, r) = bodies(&stray);
    assert!(anthropic(&a).is_err() && openai_chat(&o).is_err() && responses(&r).is_err());
}
