//! The one integration test binary (linking once is what keeps a 2-core machine fast).

mod exec;
mod providers;
mod sessions;
mod support;
mod tools;
mod trust;
mod tui;
mod workflows;
