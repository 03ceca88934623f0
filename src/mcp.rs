//! MCP (Model Context Protocol) servers as first-class tools: `config` reads which servers a
//! folder may start (the user's `$HARNESS9_HOME/mcp.json`, a trusted and approved project's
//! `.mcp.json`), `connection` speaks the protocol through `rmcp` (stdio or Streamable HTTP,
//! both protocol generations), `manager` starts them in the background and keeps their
//! statuses, `tool` turns their tools into `mcp__<server>__<tool>`, and `command` is
//! `harness9 mcp list|add|remove`, which edits the files keeping what it does not understand.

mod client;
pub mod command;
pub mod config;
mod connection;
pub mod edit;
mod error;
mod manager;
mod negotiate;
pub mod oauth;
mod output_schema;
mod shutdown;
pub mod tool;

pub use client::{Elicited, Elicitor};
pub use error::{DefinitionError, McpError, McpErrorKind};
pub use manager::{LoginError, McpManager, PromptInfo, ServerStatus, Status};

/// How long `exec` and `serve` wait, in all, for the servers before the first request.
pub const HEADLESS_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// Reads the configuration of `settings`' folder and starts its servers in the background;
/// a trusted folder's unapproved project servers come back as pending (started anyway with
/// `--trust`). Also returns the notices to show.
pub fn start(
    settings: &crate::config::Settings,
) -> (
    McpManager,
    Vec<crate::config::approved::PendingExtension>,
    Vec<String>,
) {
    let mut loaded = config::load(
        &settings.workdir,
        &settings.home,
        settings.trusted,
        settings.trust_flag,
    );
    config::editor_servers(&settings.editor_mcp, &mut loaded);
    let mut notices = loaded.notices;
    for pending in &loaded.pending {
        notices.push(format!(
            "the project's MCP server `{}` ({}) is not started: you have not approved it, or it \
             changed since (--trust approves it for exec and serve)",
            pending.name, pending.summary
        ));
    }
    let manager = McpManager::start_with_home(
        loaded.servers,
        loaded.skipped,
        settings.workdir.clone(),
        Some(settings.home.clone()),
    );
    (manager, loaded.pending, notices)
}
