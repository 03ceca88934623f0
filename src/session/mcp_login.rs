//! `/mcp`'s "log in" and "log out" for an HTTP server, carried out by the core: the login waits
//! for the browser (minutes), so it runs on a task of its own; where to log in and how it ended
//! are notices for every front end, a refusal (not an HTTP server, no such server) a failure.

use std::sync::Arc;

use super::hub::Hub;
use super::protocol::Update;
use crate::engine::{Event, EventKind, Failure, FailureKind};
use crate::mcp::{LoginError, McpManager};

fn notice(hub: &Hub, text: String) {
    hub.publish(Update::Engine(Event {
        turn: 0,
        kind: EventKind::Notice(text),
    }));
}

fn failed(hub: &Hub, error: &LoginError) {
    let kind = match error {
        LoginError::NotFound(_) => FailureKind::NotFound,
        LoginError::OAuth { .. } => FailureKind::Auth,
        LoginError::NotHttp(_) | LoginError::NoHome | LoginError::Forget { .. } => {
            FailureKind::Config
        }
    };
    hub.publish(Update::Failed(Failure::new(kind, error.to_string())));
}

/// Logs in to server `name` off the core's loop.
pub(super) fn log_in(hub: &Arc<Hub>, mcp: &McpManager, name: String) {
    let hub = Arc::clone(hub);
    let mcp = mcp.clone();
    tokio::spawn(async move {
        let say_hub = Arc::clone(&hub);
        let say = move |text: String| notice(&say_hub, text);
        match mcp.log_in(&name, &say).await {
            Ok(text) => notice(&hub, text),
            Err(error) => failed(&hub, &error),
        }
    });
}

/// Forgets server `name`'s tokens.
pub(super) fn log_out(hub: &Hub, mcp: &McpManager, name: &str) {
    match mcp.log_out(name) {
        Ok(text) => notice(hub, text),
        Err(error) => failed(hub, &error),
    }
}
