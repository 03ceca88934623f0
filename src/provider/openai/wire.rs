//! The request body written straight from the history: the same JSON `convert_messages` makes,
//! without building a `serde_json::Value` copy of the whole conversation for every call (at a
//! long session's end that copy was megabytes, made twice per turn, and the allocator kept
//! its high-water mark).

use serde::ser::{SerializeMap, SerializeSeq};
use serde::{Serialize, Serializer};
use serde_json::{Map, Value, json};

use super::{convert_message, wire_arguments};
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
                    let wire: Vec<Value> = message
                        .tool_calls
                        .iter()
                        .map(|call| {
                            json!({
                                "id": call.id,
                                "type": "function",
                                "function": {"name": call.name, "arguments": wire_arguments(call)},
                            })
                        })
                        .collect();
                    map.serialize_entry("tool_calls", &wire)?;
                }
                map.end()
            }
        }
    }
}

#[cfg(test)]
mod tests {
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
        let mut expected = Value::Object(envelope);
        expected["messages"] = Value::Array(super::super::convert_messages(&messages));
        let written: Value = serde_json::from_slice(&written).unwrap();
        assert_eq!(written, expected);
        // Byte for byte, message by message (a cached prefix stays the same).
        for message in &messages {
            assert_eq!(
                serde_json::to_string(&Wire(message)).unwrap(),
                convert_message(message).to_string()
            );
        }
    }
}
