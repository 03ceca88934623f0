//! The one integration test binary (linking once is what keeps a 2-core machine fast).

mod background;
mod child_rights;
mod eval;
mod exec;
mod exec_rules;
mod hooks;
mod images;
mod mcp;
mod memory;
mod no_terminal;
#[cfg(feature = "otel")]
mod observe;
mod permissions;
mod private_home;
mod providers;
mod reaper;
mod sandbox;
mod scroll_on_clear;
mod serve;
mod serve_client;
mod sessions;
mod stored_state;
mod subagents;
mod support;
mod tools;
mod trust;
mod tui;
mod tui_finish;
mod tui_inline;
mod tui_notify;
mod web;
mod web_charset;
mod web_keyed;
mod workflows;
