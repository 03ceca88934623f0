//! What a tool can do to the world: the kind every tool declares, by which the permission check,
//! plan mode and a sub-agent's tool list judge it without knowing the tool.

/// What a tool can do to the world, which decides when it needs approval.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ToolKind {
    /// Looks, never touches: runs in every mode.
    ReadOnly,
    /// Writes files.
    Edit,
    /// Runs arbitrary commands.
    Dangerous,
    /// Updates the plan (the todo list); allowed in plan mode.
    Planning,
    /// Reads from the network (`web_fetch`, `web_search`): asks per domain (or once per
    /// session for a search) unless a rule allows it; allowed in plan mode, where it still asks.
    Network,
}

impl ToolKind {
    /// Whether plan mode lets a tool of this kind run.
    pub fn allowed_in_plan(self) -> bool {
        matches!(
            self,
            ToolKind::ReadOnly | ToolKind::Planning | ToolKind::Network
        )
    }
}
