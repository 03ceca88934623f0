//! The conversation rules read off each protocol's request body, as its server applies them
//! (test only): one checker per protocol, and `every_protocol` that builds all three bodies from
//! the history the engine sends and checks each.

use serde_json::Value;

use super::super::anthropic::Anthropic;
use super::super::openai::OpenAiChat;
use super::super::protocol::{Call, Protocol};
use super::super::responses::Responses;
use super::super::{ApiKey, ProviderConfig, ProviderKind};
use crate::schema::{Message, ToolDefinition};

/// A conversation rule a request body breaks: the protocol whose server refuses it, and how.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{protocol}: {rule}")]
pub(crate) struct RuleBroken {
    pub protocol: &'static str,
    pub rule: String,
}

/// The bodies the three protocols would send for `messages`, each checked against its rules.
pub(crate) fn every_protocol(
    messages: &[Message],
    tools: &[ToolDefinition],
) -> Result<(), RuleBroken> {
    let [a, chat, r] = bodies(messages, tools);
    anthropic(&a)?;
    openai_chat(&chat)?;
    responses(&r)
}

/// Anthropic's rules (`anthropic_rules`) as a `RuleBroken`.
pub(crate) fn anthropic(body: &Value) -> Result<(), RuleBroken> {
    anthropic_rules(body).map_err(|rule| RuleBroken {
        protocol: "anthropic",
        rule,
    })
}

/// OpenAI chat's rules (`openai_chat_rules`) as a `RuleBroken`.
pub(crate) fn openai_chat(body: &Value) -> Result<(), RuleBroken> {
    openai_chat_rules(body).map_err(|rule| RuleBroken {
        protocol: "openai chat",
        rule,
    })
}

/// The Responses API's rules (`responses_rules`) as a `RuleBroken`.
pub(crate) fn responses(body: &Value) -> Result<(), RuleBroken> {
    responses_rules(body).map_err(|rule| RuleBroken {
        protocol: "responses",
        rule,
    })
}

/// The bodies Anthropic, OpenAI chat and Responses send for `messages`, in that order.
pub(crate) fn bodies(messages: &[Message], tools: &[ToolDefinition]) -> [Value; 3] {
    [
        body::<Anthropic>(ProviderKind::Anthropic, messages, tools),
        body::<OpenAiChat>(ProviderKind::OpenAi, messages, tools),
        body::<Responses>(ProviderKind::Responses, messages, tools),
    ]
}

/// The body protocol `P` sends for `messages`, read back from the bytes it writes.
fn body<P: Protocol>(kind: ProviderKind, messages: &[Message], tools: &[ToolDefinition]) -> Value {
    let config = ProviderConfig::new(kind, ApiKey::new("k"), "http://127.0.0.1:9");
    let bytes = P::body_bytes(Call {
        config: &config,
        messages,
        tools,
        stream: true,
    });
    serde_json::from_slice(&bytes).unwrap_or(Value::Null)
}

fn array<'a>(value: &'a Value, key: &str) -> Result<&'a Vec<Value>, String> {
    value[key]
        .as_array()
        .ok_or_else(|| format!("no `{key}` array"))
}

fn ids<'a>(blocks: &'a [Value], kind: &str, key: &str) -> Vec<&'a str> {
    blocks
        .iter()
        .filter(|b| b["type"] == kind)
        .filter_map(|b| b[key].as_str())
        .collect()
}

/// Anthropic: the user's turn first, roles alternating, every `tool_use` answered by a
/// `tool_result` in the next (user) message, results before text there, none answering nothing.
fn anthropic_rules(body: &Value) -> Result<(), String> {
    let messages = array(body, "messages")?;
    let first = messages.first().ok_or("no message")?;
    if first["role"] != "user" {
        return Err(format!("the first message is not the user's: {first}"));
    }
    let mut previous_uses: Vec<&str> = Vec::new();
    for (i, message) in messages.iter().enumerate() {
        let blocks = array(message, "content")?;
        if i > 0 && messages[i - 1]["role"] == message["role"] {
            return Err(format!("message {i} has the role of the one before"));
        }
        let results = ids(blocks, "tool_result", "tool_use_id");
        if let Some(id) = results.iter().find(|id| !previous_uses.contains(id)) {
            return Err(format!("message {i} answers {id}, not called right before"));
        }
        if let Some(id) = previous_uses.iter().find(|id| !results.contains(id)) {
            return Err(format!("tool_use {id} is not answered in message {i}"));
        }
        let text_at = blocks.iter().position(|b| b["type"] != "tool_result");
        let last_result = blocks.iter().rposition(|b| b["type"] == "tool_result");
        if let (Some(text), Some(result)) = (text_at, last_result)
            && text < result
        {
            return Err(format!("message {i} has text before a tool_result"));
        }
        previous_uses = ids(blocks, "tool_use", "id");
        if message["role"] == "user" && !previous_uses.is_empty() {
            return Err(format!("the user's message {i} has a tool_use"));
        }
    }
    match previous_uses.first() {
        Some(id) => Err(format!("tool_use {id} is never answered")),
        None => Ok(()),
    }
}

/// OpenAI chat: the user's turn first after the system prompt, every assistant tool call answered
/// by a `tool` message in the run right after it, no `tool` message outside such a run.
fn openai_chat_rules(body: &Value) -> Result<(), String> {
    let messages = array(body, "messages")?;
    let start = messages
        .iter()
        .position(|m| m["role"] != "system")
        .ok_or("no message besides the system prompt")?;
    if messages[start]["role"] != "user" {
        return Err(format!("the conversation opens with {}", messages[start]));
    }
    let mut open: Vec<&str> = Vec::new();
    for (i, message) in messages.iter().enumerate().skip(start) {
        if message["role"] == "tool" {
            let id = message["tool_call_id"].as_str().unwrap_or_default();
            let Some(at) = open.iter().position(|c| *c == id) else {
                return Err(format!(
                    "tool message {i} answers {id}, not called right before"
                ));
            };
            open.remove(at);
            continue;
        }
        if let Some(id) = open.first() {
            return Err(format!("tool call {id} is not answered before message {i}"));
        }
        if message["role"] == "assistant"
            && let Some(calls) = message["tool_calls"].as_array()
        {
            open = calls.iter().filter_map(|c| c["id"].as_str()).collect();
        }
    }
    match open.first() {
        Some(id) => Err(format!("tool call {id} is never answered")),
        None => Ok(()),
    }
}

/// Responses: the user's message first, every `function_call` with its `function_call_output`
/// after it, no output without its call before it.
fn responses_rules(body: &Value) -> Result<(), String> {
    let input = array(body, "input")?;
    let first = input.first().ok_or("no input item")?;
    if first["type"] != "message" || first["role"] != "user" {
        return Err(format!(
            "the first input item is not the user's message: {first}"
        ));
    }
    let mut called: Vec<&str> = Vec::new();
    let mut answered: Vec<&str> = Vec::new();
    for (i, item) in input.iter().enumerate() {
        let id = item["call_id"].as_str().unwrap_or_default();
        if item["type"] == "function_call" {
            called.push(id);
        } else if item["type"] == "function_call_output" {
            if !called.contains(&id) {
                return Err(format!("item {i} answers {id}, never called before"));
            }
            answered.push(id);
        }
    }
    match called.iter().find(|id| !answered.contains(id)) {
        Some(id) => Err(format!("function_call {id} has no function_call_output")),
        None => Ok(()),
    }
}
