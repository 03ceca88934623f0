//! Language servers, so the agent sees what the compiler sees: `spec` decides which servers a
//! folder may use (detected from the project's files when their program is on PATH, and the
//! `lsp` settings), `client` speaks the protocol to one running server through `async-lsp`,
//! `servers` starts them lazily in the background (one per server and workspace root,
//! restarted with backoff after a crash, shut down with the session), `diagnostics` turns what
//! they publish into the lines an edit's result ends with, and `tool` is the read-only `lsp`
//! tool. In an untrusted folder none starts: some run the project's code.

mod answers;
mod client;
pub mod diagnostics;
mod error;
pub mod list;
pub mod servers;
pub mod spec;
pub mod tool;

pub use error::LspError;
pub use servers::{Baseline, ServerState, ServerView, Servers};
