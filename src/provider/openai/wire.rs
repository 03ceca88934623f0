//! The request body written straight from the history: the same JSON `convert_messages` makes,
//! without building a `serde_json::Value` copy of the whole conversation for every call (at a
//! long session's end that copy was megabytes, made twice per turn, and the allocator kept
//! its high-water mark).

use serde::ser::{SerializeMap, SerializeSeq};
use serde::{Serialize, Serializer};
use serde_json::{Map, Value};

use super::{convert_message, wire_arguments, wire_call};
use crate::schema::{Message, Role};

/// The envelope's fields (model, tools, options) and the messages.
#[derive(Serialize)]
pub(super) struct Body<'a> {
    #[serde(flatten)]
    pub envelope: &'a Map<String, Value>,
    pub messages: Messages<'a>,
}

pub(super) struct Messages<'a>(pub &'a [Message]);

impl Serialize for Messages<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(Some(self.0.len()))?;
        for message in self.0 {
            seq.serialize_element(&Wire(message))?;
        }
        seq.end()
    }
}

/// Room for the body `envelope` and `messages` make: a little more than its length, so it is
/// written into one allocation. Grown by doubling instead, a long session's body (megabytes)
/// is copied through a chain of ever larger buffers for every call, and the allocator keeps the
/// freed ones. Text is counted with a sixteenth more for escapes (newlines, quotes); images,
/// which are rare, are not counted (their buffer grows as before).
pub(super) fn capacity_hint(envelope: &Map<String, Value>, messages: &[Message]) -> usize {
    // Keys, roles, quotes and commas of one message, and of one tool call.
    const PER_MESSAGE: usize = 64;
    const PER_CALL: usize = 96;
    let envelope = serde_json::to_vec(envelope).map_or(0, |json| json.len());
    let text: usize = messages
        .iter()
        .map(|m| {
            let calls: usize = m
                .tool_calls
                .iter()
                .map(|c| c.id.len() + c.name.len() + wire_arguments(c).len() + PER_CALL)
                .sum();
            m.content.len() + m.tool_call_id.as_ref().map_or(0, String::len) + calls
        })
        .sum();
    envelope + text + text / 16 + messages.len() * PER_MESSAGE + 64
}

/// One message, its keys in the order `json!` gives them (sorted), borrowing its text.
struct Wire<'a>(&'a Message);

impl Serialize for Wire<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let message = self.0;
        match message.role {
            Role::System => {
                let mut map = serializer.serialize_map(Some(2))?;
                map.serialize_entry("content", &message.content)?;
                map.serialize_entry("role", "system")?;
                map.end()
            }
            Role::User => match &message.tool_call_id {
                Some(id) => {
                    let mut map = serializer.serialize_map(Some(3))?;
                    map.serialize_entry("content", &message.content)?;
                    map.serialize_entry("role", "tool")?;
                    map.serialize_entry("tool_call_id", id)?;
                    map.end()
                }
                None if message.images.is_empty() => {
                    let mut map = serializer.serialize_map(Some(2))?;
                    map.serialize_entry("content", &message.content)?;
                    map.serialize_entry("role", "user")?;
                    map.end()
                }
                // Images are rare and small next to their base64: built as before.
                None => convert_message(message).serialize(serializer),
            },
            Role::Assistant => {
                let calls = !message.tool_calls.is_empty();
                let mut map = serializer.serialize_map(Some(if calls { 3 } else { 2 }))?;
                if message.content.is_empty() && calls {
                    map.serialize_entry("content", &())?;
                } else {
                    map.serialize_entry("content", &message.content)?;
                }
                map.serialize_entry("role", "assistant")?;
                if calls {
                    let wire: Vec<Value> = message.tool_calls.iter().map(wire_call).collect();
                    map.serialize_entry("tool_calls", &wire)?;
                }
                map.end()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::schema::ToolCall;

    #[test]
    fn the_written_body_is_the_json_the_value_form_makes() {
        let mut call = Message::assistant("");
        call.tool_calls = vec![ToolCall {
            id: "c1".into(),
            name: "read_file".into(),
            arguments: String::new(),
        }];
        let mut result = Message::user("line 1\n\"quoted\"\ttab");
        result.tool_call_id = Some("c1".into());
        let messages = vec![
            Message::system("be brief"),
            Message::user("hi ✓"),
            call,
            result,
            Message::assistant("done"),
        ];
        let mut envelope = Map::new();
        envelope.insert("model".into(), json!("gpt-4o"));
        envelope.insert("stream".into(), json!(true));
        let written = serde_json::to_vec(&Body {
            envelope: &envelope,
            messages: Messages(&messages),
        })
        .unwrap();
        let mut expected = Value::Object(envelope.clone());
        expected["messages"] = Value::Array(super::super::convert_messages(&messages));
        let parsed: Value = serde_json::from_slice(&written).unwrap();
        assert_eq!(parsed, expected);
        // The body fits the room made for it, with little to spare.
        let hint = capacity_hint(&envelope, &messages);
        assert!(hint >= written.len() && hint < written.len() * 2, "{hint}");
        // Message by message, the same JSON (the key order is `Wire`'s own, the same for every
        // call, so a cached prefix stays the same).
        for message in &messages {
            let written: Value =
                serde_json::from_str(&serde_json::to_string(&Wire(message)).unwrap()).unwrap();
            assert_eq!(written, convert_message(message));
        }
    }
    /// A long history's body is written into the one buffer made for it: no reallocation.
    #[test]
    fn a_long_body_is_written_without_growing_its_buffer() {
        let notes: String = (0..80)
            .map(|i| format!("line {i:03}: \"fields\" split on commas\tand trimmed\n"))
            .collect();
        let mut messages = vec![Message::system("be brief")];
        for i in 0..200 {
            messages.push(Message::user(format!("turn {i}")));
            let mut call = Message::assistant("");
            call.tool_calls = vec![ToolCall {
                id: format!("call_{i}"),
                name: "read_file".into(),
                arguments: r#"{"path":"notes.txt"}"#.into(),
            }];
            messages.push(call);
            let mut result = Message::user(notes.clone());
            result.tool_call_id = Some(format!("call_{i}"));
            messages.push(result);
            messages.push(Message::assistant(format!("ANSWER-{i} read the notes.")));
        }
        let mut envelope = Map::new();
        envelope.insert("model".into(), json!("gpt-4o"));
        let hint = capacity_hint(&envelope, &messages);
        let mut buffer = Vec::with_capacity(hint);
        serde_json::to_writer(
            &mut buffer,
            &Body {
                envelope: &envelope,
                messages: Messages(&messages),
            },
        )
        .unwrap();
        assert_eq!(buffer.capacity(), hint, "the buffer grew");
        // Not much more than needed either.
        assert!(
            hint < buffer.len() + buffer.len() / 8,
            "{hint} for {}",
            buffer.len()
        );
    }
}
