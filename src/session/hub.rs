//! The fan-out of updates: every watcher has a channel of its own and gets every update, in
//! order. Watchers in this process (the TUI, `exec`) read fast and must not lose a delta, so the
//! channels are unbounded; a watcher over a network will put a bounded buffer of its own in
//! front (and drop a client that falls too far behind) without the core knowing.

use std::sync::Mutex;

use tokio::sync::mpsc;

use super::protocol::Update;

#[derive(Default)]
pub(crate) struct Hub {
    watchers: Mutex<Vec<mpsc::UnboundedSender<Update>>>,
}

impl Hub {
    /// A new watcher: it sees every update from now on.
    pub fn subscribe(&self) -> mpsc::UnboundedReceiver<Update> {
        let (tx, rx) = mpsc::unbounded_channel();
        if let Ok(mut watchers) = self.watchers.lock() {
            watchers.push(tx);
        }
        rx
    }

    /// Sends `update` to every watcher; watchers that went away are forgotten.
    pub fn publish(&self, update: Update) {
        let Ok(mut watchers) = self.watchers.lock() else {
            return;
        };
        watchers.retain(|w| !w.is_closed());
        // The last watcher takes the update itself: one watcher costs no clone.
        if let Some((last, others)) = watchers.split_last() {
            for watcher in others {
                let _ = watcher.send(update.clone());
            }
            let _ = last.send(update);
        }
    }
}
