//! What a connection calls back into its manager with: its tool list changed, its server
//! exited, it has a notice; and the client side every connection of the manager shares.

use std::sync::Arc;

use super::McpManager;
use crate::mcp::client::{Handler, OnNotice};
use crate::mcp::connection::OnChange;

impl McpManager {
    /// The handler for server `index`'s connection of this `generation`, and its exit callback.
    /// Weak: the connection holds these callbacks, and the manager holds the connection.
    pub(super) fn callbacks(
        &self,
        server: &str,
        index: usize,
        generation: u64,
    ) -> (Handler, OnChange) {
        let on_change: OnChange = {
            let inner = Arc::downgrade(&self.inner);
            Arc::new(move || {
                if let Some(inner) = inner.upgrade() {
                    McpManager { inner }.refresh(index, generation);
                }
            })
        };
        let on_exit: OnChange = {
            let inner = Arc::downgrade(&self.inner);
            Arc::new(move || {
                if let Some(inner) = inner.upgrade() {
                    McpManager { inner }.stopped(index, generation);
                }
            })
        };
        let on_notice: OnNotice = {
            let inner = Arc::downgrade(&self.inner);
            Arc::new(move |text| {
                if let Some(inner) = inner.upgrade() {
                    let manager = McpManager { inner };
                    manager.notice(text);
                    // Front ends look at the notices when something changes.
                    manager.bump();
                }
            })
        };
        let handler = Handler {
            server: server.to_owned(),
            on_tools_changed: on_change,
            on_notice,
            side: Arc::clone(&self.inner.side),
            progress: Arc::default(),
        };
        (handler, on_exit)
    }
}
