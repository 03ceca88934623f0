//! The tool names the core gives a meaning to, known to every layer that judges a call by its
//! name: the `task` tool and the `mcp__<server>__<tool>` names of MCP servers' tools.

/// The `task` tool's name; a sub-agent is never given it (no nested tasks).
pub const TASK_TOOL: &str = "task";

/// Whether `name` is an MCP tool's (`mcp__<server>__<tool>`).
pub fn is_mcp_tool(name: &str) -> bool {
    name.strip_prefix("mcp__")
        .and_then(|rest| rest.split_once("__"))
        .is_some_and(|(server, tool)| !server.is_empty() && !tool.is_empty())
}
