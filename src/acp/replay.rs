//! `session/load`: the stored conversation told again as the updates that made it (the user's
//! prompts, the answers and thoughts, every tool call with its result), so the editor shows the
//! session as it was.

use std::collections::HashMap;
use std::path::Path;

use agent_client_protocol::v1::schema as acp;

use crate::schema::{Message, Role, ToolCall, ToolResult};
use crate::session::text::split_attachments;

fn chunk(text: &str) -> acp::ContentChunk {
    acp::ContentChunk::new(acp::ContentBlock::Text(acp::TextContent::new(text)))
}

/// The updates that show `messages`, oldest first.
pub fn updates(messages: &[Message], workdir: &Path) -> Vec<acp::SessionUpdate> {
    let mut out = Vec::new();
    let mut calls: HashMap<&str, &ToolCall> = HashMap::new();
    for message in messages {
        match message.role {
            Role::System => {}
            Role::User if message.is_tool_result() => {
                let id = message.tool_call_id.as_deref().unwrap_or_default();
                let result = ToolResult {
                    tool_call_id: id.to_owned(),
                    output: message.content.clone(),
                    is_error: message.is_error,
                };
                let name = calls.get(id).map(|c| c.name.as_str()).unwrap_or_default();
                // A replayed command shows its output as text: its terminal is long gone.
                out.push(acp::SessionUpdate::ToolCallUpdate(super::tools::finished(
                    &result, name, id, false,
                )));
            }
            Role::User => {
                // What the user typed; the files the core attached are the model's, not theirs.
                let (typed, _) = split_attachments(&message.content);
                if !typed.is_empty() {
                    out.push(acp::SessionUpdate::UserMessageChunk(chunk(typed)));
                }
            }
            Role::Assistant => {
                let thinking = message.thinking_text();
                if !thinking.is_empty() {
                    out.push(acp::SessionUpdate::AgentThoughtChunk(chunk(&thinking)));
                }
                if !message.content.is_empty() {
                    out.push(acp::SessionUpdate::AgentMessageChunk(chunk(
                        &message.content,
                    )));
                }
                for call in &message.tool_calls {
                    calls.insert(&call.id, call);
                    out.push(acp::SessionUpdate::ToolCall(
                        super::tools::started(call, workdir, &call.id)
                            .status(acp::ToolCallStatus::Pending),
                    ));
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_conversation_is_replayed_prompt_answer_call_and_result() {
        let mut answer = Message::assistant("I will look");
        answer.tool_calls.push(ToolCall {
            id: "c1".into(),
            name: "read_file".into(),
            arguments: r#"{"path":"a.txt"}"#.into(),
        });
        let messages = vec![
            Message::system("you are"),
            Message::user(format!(
                "read a.txt{}\n<file path=\"x\">x</file>",
                crate::session::text::ATTACHMENTS_MARKER
            )),
            answer,
            Message::tool_result(&ToolResult::ok("c1", "hello")),
        ];
        let json: Vec<serde_json::Value> = updates(&messages, Path::new("/r"))
            .iter()
            .map(|u| serde_json::to_value(u).unwrap())
            .collect();
        let kinds: Vec<&str> = json
            .iter()
            .map(|u| u["sessionUpdate"].as_str().unwrap())
            .collect();
        assert_eq!(
            kinds,
            [
                "user_message_chunk",
                "agent_message_chunk",
                "tool_call",
                "tool_call_update"
            ]
        );
        assert_eq!(json[0]["content"]["text"], "read a.txt");
        assert_eq!(json[2]["title"], "Read a.txt");
        assert_eq!(json[3]["status"], "completed");
    }
}
