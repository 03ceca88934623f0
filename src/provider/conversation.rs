//! The conversation rules every protocol's request keeps, applied once before any of them builds
//! its body: after the system prompt the conversation opens with the user's turn, every tool call
//! of an assistant message is answered by its result right after it, and every tool result
//! answers a call right before it. Compaction keeps these rules itself (`Compaction::cut`); this
//! is the last guard for a history that breaks them anyway (a session stored before that fix, an
//! interrupted turn), and it repairs by a rule rather than by dropping what the model needs.

use std::borrow::Cow;

use crate::schema::{Message, Role};

/// The text of the result given to a call whose own result is not in the history.
pub(crate) const NO_RESULT: &str = "no result: the history was compacted";

/// `messages` as every protocol may send them: borrowed as they are when they keep the rules
/// (the usual case, no copy), repaired otherwise.
pub(crate) fn repaired(messages: &[Message]) -> Cow<'_, [Message]> {
    if keeps_rules(messages) {
        Cow::Borrowed(messages)
    } else {
        Cow::Owned(repair(messages))
    }
}

/// A turn the user wrote (or a summary standing for it) that every protocol will send: Anthropic
/// leaves out a user message with neither text nor images.
fn is_user_turn(message: &Message) -> bool {
    message.role == Role::User
        && !message.is_tool_result()
        && (!message.content.is_empty() || !message.images.is_empty())
}

/// The index of the first message after the leading system prompt(s).
fn conversation_start(messages: &[Message]) -> usize {
    messages
        .iter()
        .position(|m| m.role != Role::System)
        .unwrap_or(messages.len())
}

/// The end of the run of tool results that starts at `from`.
fn results_end(messages: &[Message], from: usize) -> usize {
    messages[from..]
        .iter()
        .position(|m| !m.is_tool_result())
        .map_or(messages.len(), |n| from + n)
}

/// Whether `messages` keep the rules as they are (what the engine itself always sends).
pub(crate) fn keeps_rules(messages: &[Message]) -> bool {
    let start = conversation_start(messages);
    if messages.get(start).is_some_and(|m| !is_user_turn(m)) {
        return false;
    }
    let mut at = start;
    while at < messages.len() {
        let message = &messages[at];
        if message.is_tool_result() {
            // Results are consumed with their call below: one met here answers nothing.
            return false;
        }
        at += 1;
        if message.role != Role::Assistant || message.tool_calls.is_empty() {
            continue;
        }
        let end = results_end(messages, at);
        let results = &messages[at..end];
        let answered = |id: &str| {
            results
                .iter()
                .filter(|r| r.tool_call_id.as_deref() == Some(id))
                .count()
                == 1
        };
        let known = |r: &Message| {
            message
                .tool_calls
                .iter()
                .any(|c| r.tool_call_id.as_deref() == Some(c.id.as_str()))
        };
        if results.len() != message.tool_calls.len()
            || !message.tool_calls.iter().all(|c| answered(&c.id))
            || !results.iter().all(known)
        {
            return false;
        }
        at = end;
    }
    true
}

fn repair(messages: &[Message]) -> Vec<Message> {
    let start = conversation_start(messages);
    let mut out: Vec<Message> = messages[..start].to_vec();
    out.reserve(messages.len() - start + 2);
    if messages.get(start).is_some_and(|m| !is_user_turn(m)) {
        out.push(restated_task(&messages[start..]));
    }
    let mut at = start;
    while at < messages.len() {
        let message = &messages[at];
        at += 1;
        if message.is_tool_result() {
            out.push(unanswering(message));
            continue;
        }
        out.push(message.clone());
        if message.role != Role::Assistant || message.tool_calls.is_empty() {
            continue;
        }
        let end = results_end(messages, at);
        let mut strays = Vec::new();
        let mut answered: Vec<&str> = Vec::new();
        for result in &messages[at..end] {
            let id = result.tool_call_id.as_deref().unwrap_or_default();
            let calls = message.tool_calls.iter().any(|c| c.id == id);
            if calls && !answered.contains(&id) {
                answered.push(id);
                out.push(result.clone());
            } else {
                strays.push(unanswering(result));
            }
        }
        for call in &message.tool_calls {
            if !answered.contains(&call.id.as_str()) {
                out.push(Message {
                    tool_call_id: Some(call.id.clone()),
                    is_error: true,
                    ..Message::user(NO_RESULT)
                });
            }
        }
        // After the results: Anthropic wants a message's tool results before its text.
        out.extend(strays);
        at = end;
    }
    out
}

/// The user's turn put in front of a conversation that opens with anything else: the first
/// request of the user's that follows, restated, so the model still has the task.
fn restated_task(conversation: &[Message]) -> Message {
    let mut text =
        String::from("[The earlier conversation was left out to fit the context window.]");
    let mut turn = Message::user(String::new());
    if let Some(request) = conversation.iter().find(|m| is_user_turn(m)) {
        text.push_str("\n\nThe user's request:\n");
        text.push_str(&request.content);
        turn.images = request.images.clone();
    }
    turn.content = text;
    turn
}

/// A tool result whose call is not right before it, kept as the user's text so its content
/// still reaches the model.
fn unanswering(result: &Message) -> Message {
    let id = result.tool_call_id.as_deref().unwrap_or_default();
    Message::user(format!(
        "[The result of tool call {id}, whose call was left out of the history:]\n{}",
        result.content
    ))
}

#[cfg(test)]
pub(crate) mod check;

#[cfg(test)]
mod tests;
