//! An MCP server's tool as one of ours: named `mcp__<server>__<tool>` within the providers'
//! name rules, its input schema normalised so that both providers accept it, its result joined
//! into one text for the model and capped like `bash`'s output. Every MCP tool asks before it
//! runs unless a rule allows it (`ToolKind::Dangerous`); plan mode offers only the tools whose
//! annotations say read-only, and they still ask (an annotation is the server's claim, not a
//! proof). A call stops when the run is interrupted or times out, and the server is told
//! (`notifications/cancelled`).

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use super::connection::Connection;
use crate::schema::ToolKind;
use crate::tools::{Tool, ToolContext, ToolError};

/// The providers' limit on a tool name (OpenAI: 64; Anthropic allows more).
pub const MAX_NAME_LEN: usize = 64;

/// Output kept from one result: `bash`'s limit.
const OUTPUT_LIMIT: usize = 30 * 1024;

/// The name a server's part of tool names takes: letters, digits, `-` and single `_` (a `__`
/// would make `mcp__a__b__c` ambiguous), at most 24 characters.
pub fn server_part(server: &str) -> String {
    let mut out = String::new();
    for c in server.chars() {
        let c = if c.is_ascii_alphanumeric() || c == '-' {
            c
        } else {
            '_'
        };
        if c == '_' && (out.is_empty() || out.ends_with('_')) {
            continue;
        }
        out.push(c);
    }
    let mut out: String = out.trim_end_matches('_').chars().take(24).collect();
    while out.ends_with('_') {
        out.pop();
    }
    if out.is_empty() {
        out.push_str("server");
    }
    out
}

/// `mcp__<server>__<tool>` in `[A-Za-z0-9_-]`, at most 64 characters; a tool name that had to be
/// cut keeps a short hash of the original, so two long names stay apart.
pub fn tool_name(server: &str, tool: &str) -> String {
    let prefix = format!("mcp__{}__", server_part(server));
    let cleaned: String = tool
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let name = format!("{prefix}{cleaned}");
    if name.len() <= MAX_NAME_LEN && cleaned == tool && !tool.is_empty() {
        return name;
    }
    let hash: String = Sha256::digest(tool.as_bytes())
        .iter()
        .take(4)
        .map(|b| format!("{b:02x}"))
        .collect();
    let room = MAX_NAME_LEN - prefix.len() - hash.len() - 1;
    let kept: String = cleaned.chars().take(room).collect();
    format!("{prefix}{kept}_{hash}")
}

/// The server's schema as both providers accept it: an object schema with `properties`, no
/// combinators or references at the top (OpenAI refuses them there), `$schema` dropped.
pub fn normalise_schema(schema: &Map<String, Value>) -> Value {
    let mut out = schema.clone();
    for key in [
        "$schema", "$id", "oneOf", "anyOf", "allOf", "not", "enum", "const",
    ] {
        out.remove(key);
    }
    out.insert("type".into(), Value::String("object".into()));
    if !out.get("properties").is_some_and(Value::is_object) {
        out.insert("properties".into(), Value::Object(Map::new()));
    }
    if out.get("required").is_some_and(|r| !r.is_array()) {
        out.remove("required");
    }
    Value::Object(out)
}

/// One tool of a connected server.
pub struct McpTool {
    name: String,
    /// The server's own name for it.
    remote: String,
    server: String,
    description: String,
    schema: Value,
    read_only: bool,
    /// What its `structuredContent` must look like, when it says.
    output_schema: Option<Arc<Map<String, Value>>>,
    connection: Arc<Connection>,
}

impl McpTool {
    pub fn new(
        server: &str,
        name: String,
        tool: &rmcp::model::Tool,
        connection: Arc<Connection>,
    ) -> Self {
        let text = tool.description.as_deref().unwrap_or("").trim();
        let description = if text.is_empty() {
            format!("The `{}` tool of the MCP server `{server}`.", tool.name)
        } else {
            format!("{text} (MCP server `{server}`)")
        };
        McpTool {
            name,
            remote: tool.name.to_string(),
            server: server.to_owned(),
            description,
            schema: normalise_schema(&tool.input_schema),
            read_only: tool
                .annotations
                .as_ref()
                .and_then(|a| a.read_only_hint)
                .unwrap_or(false),
            output_schema: tool.output_schema.clone(),
            connection,
        }
    }

    pub fn remote_name(&self) -> &str {
        &self.remote
    }

    pub fn read_only(&self) -> bool {
        self.read_only
    }
}

#[async_trait]
impl Tool for McpTool {
    fn name(&self) -> &str {
        &self.name
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn input_schema(&self) -> Value {
        self.schema.clone()
    }

    fn kind(&self) -> ToolKind {
        ToolKind::Dangerous
    }

    fn offered_in_plan(&self) -> bool {
        self.read_only
    }

    fn plan_mode_refusal(&self, _arguments: &Value) -> Option<String> {
        (!self.read_only).then(|| {
            format!(
                "`{}` is not available in plan mode: its server does not mark it read-only. \
                 Plan with read-only tools; the user will switch modes to carry it out.",
                self.name
            )
        })
    }

    async fn execute(&self, arguments: Value, ctx: &ToolContext) -> Result<String, ToolError> {
        let arguments = match arguments {
            Value::Object(map) => map,
            _ => Map::new(),
        };
        let result = self
            .connection
            .call_tool(
                &self.remote,
                arguments,
                &ctx.cancel,
                crate::tools::progress::current(),
            )
            .await
            .map_err(|e| ToolError::new(format!("the MCP server `{}`: {e}", self.server)))?;
        let (text, is_error) = render_result(&result);
        if !is_error
            && let (Some(schema), Some(structured)) =
                (&self.output_schema, &result.structured_content)
            && let Some(mismatch) = super::output_schema::mismatch(schema, structured)
        {
            let text =
                crate::schema::fence_outside(&format!("MCP server `{}`", self.server), &text);
            return Err(ToolError::new(format!(
                "the MCP server `{}` answered `{}` with structured content that does not match \
                 the tool's output schema ({mismatch}); the result was:\n{text}",
                self.server, self.remote
            )));
        }
        // The server's words are data from outside, fenced (issue 29 point 15).
        let text = crate::schema::fence_outside(&format!("MCP server `{}`", self.server), &text);
        if is_error {
            Err(ToolError::new(text))
        } else {
            Ok(text)
        }
    }
}

/// A result for the model: text joined, structured content as JSON, images, audio and
/// resources named, capped; and whether the server called it an error. Read from the wire
/// shape, so content kinds added later still come out as their JSON.
pub fn render_result(result: &rmcp::model::CallToolResult) -> (String, bool) {
    let wire = serde_json::to_value(result).unwrap_or(Value::Null);
    let mut parts: Vec<String> = Vec::new();
    for block in wire
        .get("content")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let text = |key: &str| block.get(key).and_then(Value::as_str).unwrap_or("");
        parts.push(match text("type") {
            "text" => text("text").to_owned(),
            "image" | "audio" => format!(
                "[{} {}, {} bytes base64]",
                text("type"),
                text("mimeType"),
                text("data").len()
            ),
            "resource_link" => format!("[resource {} ({})]", text("uri"), text("name")),
            "resource" => {
                let resource = block.get("resource").unwrap_or(&Value::Null);
                let field = |key: &str| resource.get(key).and_then(Value::as_str);
                match field("text") {
                    Some(body) => format!("[resource {}]\n{body}", field("uri").unwrap_or("")),
                    None => format!(
                        "[resource {} ({}), binary]",
                        field("uri").unwrap_or(""),
                        field("mimeType").unwrap_or("unknown type")
                    ),
                }
            }
            _ => block.to_string(),
        });
    }
    if let Some(structured) = wire.get("structuredContent")
        && !parts
            .iter()
            .any(|p| serde_json::from_str::<Value>(p).ok().as_ref() == Some(structured))
    {
        parts.push(structured.to_string());
    }
    let joined = parts.join("\n");
    let mut capped = crate::tools::output::HeadTail::new(OUTPUT_LIMIT);
    capped.push(joined.as_bytes());
    let is_error = wire
        .get("isError")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    (capped.finish(), is_error)
}

#[cfg(test)]
mod tests;
