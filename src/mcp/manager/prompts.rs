//! A server's prompts as the TUI's slash commands: listed when it connects, fetched with the
//! user's words as their arguments.

use super::{FETCH_TIMEOUT, McpManager, PromptInfo};
use crate::mcp::error::McpError;
use crate::mcp::tool::tool_name;

impl McpManager {
    /// The text of prompt `command` (`mcp__server__prompt`) with `args`: words given in order
    /// to its arguments, the last one taking the rest of the line.
    pub async fn get_prompt(&self, command: &str, args: &str) -> Result<String, McpError> {
        let found = self.entries().iter().find_map(|entry| {
            let prompt = entry.prompts.iter().find(|p| p.command == command)?;
            Some((prompt.clone(), entry.connection.clone()?))
        });
        let Some((prompt, connection)) = found else {
            return Err(McpError::NoSuchPrompt {
                command: command.to_owned(),
            });
        };
        let mut arguments = serde_json::Map::new();
        let mut rest = args.trim();
        for (index, name) in prompt.arguments.iter().enumerate() {
            if rest.is_empty() {
                break;
            }
            let value = if index + 1 == prompt.arguments.len() {
                std::mem::take(&mut rest)
            } else {
                let (word, after) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
                rest = after.trim_start();
                word
            };
            arguments.insert(name.clone(), serde_json::Value::String(value.to_owned()));
        }
        let wire = tokio::time::timeout(
            FETCH_TIMEOUT,
            connection.get_prompt(&prompt.remote, arguments),
        )
        .await
        .map_err(|_| McpError::Timeout {
            limit: FETCH_TIMEOUT,
        })??;
        Ok(prompt_text(&wire))
    }
}

/// A server's prompts as slash commands, named like its tools.
pub(super) fn prompt_infos(server: &str, prompts: &[rmcp::model::Prompt]) -> Vec<PromptInfo> {
    prompts
        .iter()
        .map(|prompt| PromptInfo {
            command: tool_name(server, &prompt.name),
            remote: prompt.name.clone(),
            description: prompt.description.clone().unwrap_or_default(),
            arguments: prompt
                .arguments
                .iter()
                .flatten()
                .map(|a| a.name.clone())
                .collect(),
        })
        .collect()
}

/// A prompt's messages as one text for the model: each message's text (an embedded text
/// resource included), in order.
fn prompt_text(wire: &serde_json::Value) -> String {
    let mut parts = Vec::new();
    for message in wire["messages"].as_array().into_iter().flatten() {
        let content = &message["content"];
        match content["type"].as_str() {
            Some("text") => parts.push(content["text"].as_str().unwrap_or("").to_owned()),
            Some("resource") => {
                if let Some(text) = content["resource"]["text"].as_str() {
                    parts.push(text.to_owned());
                }
            }
            _ => parts.push(format!(
                "[{} content]",
                content["type"].as_str().unwrap_or("other")
            )),
        }
    }
    parts.join("\n\n")
}
