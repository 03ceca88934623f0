//! harness9: a terminal coding agent. The library holds every room of the design; `main.rs`
//! only parses the command line and hands over.

pub mod acp;
pub mod agents;
pub mod assemble;
pub mod checkpoint;
pub mod config;
pub mod context;
pub mod detach;
pub mod engine;
pub mod eval;
pub mod exec;
pub mod files;
pub mod hardening;
pub mod heap;
pub mod hooks;
pub mod images;
pub mod mcp;
pub mod memory;
pub mod memory_cmd;
pub mod observe;
pub mod permission;
pub mod planning;
pub mod private_home;
pub mod provider;
pub mod sandbox;
pub mod schema;
pub mod serve;
pub mod session;
pub mod sessions_cmd;
pub mod shell;
pub mod terminal_text;
pub mod tools;
pub mod tui;
pub mod web;
pub mod worktree;
pub mod worktree_cmd;
