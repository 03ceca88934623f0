//! Ending a connection as the MCP specification says, in bounded time so that harness9's own
//! exit stays quick: a stdio server's stdin is closed and it may exit by itself, then its process
//! group gets SIGTERM, then SIGKILL; a Streamable HTTP session is deleted (`rmcp` sends the
//! DELETE while it closes the transport, which is waited for here).

use std::time::Duration;

use rmcp::service::{RoleClient, RunningService};

use super::client::Handler;

/// How long a server has to finish after its input closed (stdio) or its session is deleted
/// (HTTP) before it is signalled.
pub const CLOSE_GRACE: Duration = Duration::from_millis(1000);
/// How long a stdio server has after SIGTERM before SIGKILL.
pub const TERM_GRACE: Duration = Duration::from_millis(500);

/// Sends `signal` to a child's whole process group (the server and whatever it started).
pub fn signal_group(group: Option<i32>, signal: i32) {
    if let Some(pgid) = group.filter(|&pgid| pgid > 1) {
        // SAFETY: killpg only sends a signal; the group is the one our child leads.
        unsafe {
            libc::killpg(pgid, signal);
        }
    }
}

/// Whether process `pid` is gone or a zombie (it exited; its parent has not collected it).
fn exited(pid: i32) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return true;
    };
    stat.rsplit_once(") ")
        .and_then(|(_, rest)| rest.split(' ').next())
        .is_none_or(|state| state == "Z" || state == "X")
}

/// Waits up to `limit` for the group leader `pid` to exit; whether it did.
async fn wait_exit(pid: i32, limit: Duration) -> bool {
    let deadline = tokio::time::Instant::now() + limit;
    loop {
        if exited(pid) {
            return true;
        }
        if tokio::time::Instant::now() >= deadline {
            return false;
        }
        // A child that is not ours to wait for (`rmcp` holds it): look again shortly.
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Ends `service` (closing a stdio server's input, deleting an HTTP session) and then the stdio
/// server's process group `group`, each step bounded.
pub async fn end(service: Option<RunningService<RoleClient, Handler>>, group: Option<i32>) {
    if let Some(mut service) = service {
        // Cancelling makes `rmcp` close the transport: the child's stdin, or the HTTP session.
        let closed = service.close_with_timeout(CLOSE_GRACE).await;
        if let Ok(None) = closed {
            tracing::warn!(target: "harness9::mcp", "a server did not close within {CLOSE_GRACE:?}");
        }
    }
    let Some(pid) = group.filter(|&pgid| pgid > 1) else {
        return;
    };
    if !wait_exit(pid, Duration::ZERO).await {
        signal_group(group, libc::SIGTERM);
        wait_exit(pid, TERM_GRACE).await;
    }
    // What it started and left behind (its group) goes with it.
    signal_group(group, libc::SIGKILL);
}
