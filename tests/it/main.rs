//! The one integration test binary (linking once is what keeps a 2-core machine fast).

mod exec;
mod providers;
mod sandbox;
mod sessions;
mod support;
mod tools;
mod tui;
mod workflows;
