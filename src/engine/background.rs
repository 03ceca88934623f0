//! Background sub-agents (`task` with `background: true`): the call returns at once and the
//! child runs on, outside the tool phase that started it. Its events and approvals come to the
//! engine through one channel that the parent's run drains (in its tool phases, before each
//! model call, and while it waits for children at its end), nested in `Subagent` events as a
//! foreground child's are; its answer is handed to the model as a message before the parent's
//! next model call. A cancelled run, or the engine's end (the session closing), stops them.

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::subagent::{ChildMessage, ChildUsage};
use crate::tools::ToolError;

/// What a background child sends its parent.
pub(crate) enum BackgroundMessage {
    Child(ChildMessage),
    /// The child ended: its answer (with its totals line), or why it did not finish.
    Finished {
        task_id: String,
        agent: String,
        description: String,
        result: Result<String, ToolError>,
    },
}

/// The engine's background children.
pub(crate) struct BackgroundTasks {
    tx: mpsc::UnboundedSender<BackgroundMessage>,
    rx: tokio::sync::Mutex<mpsc::UnboundedReceiver<BackgroundMessage>>,
    /// Started and not yet reported finished to a run.
    running: AtomicUsize,
    /// The running children's parent token; replaced once fired, so later tasks can start.
    cancel: Mutex<CancellationToken>,
}

impl Default for BackgroundTasks {
    fn default() -> Self {
        let (tx, rx) = mpsc::unbounded_channel();
        BackgroundTasks {
            tx,
            rx: tokio::sync::Mutex::new(rx),
            running: AtomicUsize::new(0),
            cancel: Mutex::new(CancellationToken::new()),
        }
    }
}

impl Drop for BackgroundTasks {
    fn drop(&mut self) {
        self.cancel_all();
    }
}

/// What a background child is given to report with and to be stopped by.
pub(crate) struct BackgroundSlot {
    pub sink: mpsc::UnboundedSender<BackgroundMessage>,
    pub cancel: CancellationToken,
}

/// A background child's answer as the model gets it.
pub(crate) fn delivery(
    task_id: &str,
    agent: &str,
    description: &str,
    result: &Result<String, ToolError>,
) -> String {
    match result {
        Ok(answer) => format!(
            "[background task {task_id} finished: the `{agent}` sub-agent ({description}) \
             answered]\n\n{answer}"
        ),
        Err(error) => format!(
            "[background task {task_id} failed: the `{agent}` sub-agent ({description}) did \
             not finish: {error}]"
        ),
    }
}

impl BackgroundTasks {
    /// Registers a child about to start.
    pub(crate) fn start(&self) -> BackgroundSlot {
        self.running.fetch_add(1, Ordering::SeqCst);
        let cancel = self
            .cancel
            .lock()
            .map(|token| token.child_token())
            .unwrap_or_else(|poisoned| poisoned.into_inner().child_token());
        BackgroundSlot {
            sink: self.tx.clone(),
            cancel,
        }
    }

    pub(crate) fn running(&self) -> usize {
        self.running.load(Ordering::SeqCst)
    }

    /// Stops every running child (a cancelled run, the session's end).
    pub(crate) fn cancel_all(&self) {
        let mut token = self
            .cancel
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        token.cancel();
        *token = CancellationToken::new();
    }

    /// Takes what has come so far, without waiting; or, with `wait`, at least one message
    /// while children run (`None` when `cancel` fired first).
    pub(crate) async fn take(
        &self,
        wait: bool,
        cancel: &CancellationToken,
    ) -> Option<Vec<BackgroundMessage>> {
        let mut rx = self.rx.lock().await;
        let mut out = Vec::new();
        if wait && self.running() > 0 {
            tokio::select! {
                biased;
                _ = cancel.cancelled() => return None,
                message = rx.recv() => out.extend(message),
            }
        }
        while let Ok(message) = rx.try_recv() {
            out.push(message);
        }
        for message in &out {
            if matches!(message, BackgroundMessage::Finished { .. }) {
                self.running.fetch_sub(1, Ordering::SeqCst);
            }
        }
        Some(out)
    }
}

/// What a drain of background messages left for the run: answers to hand to the model, and
/// the children's usage.
#[derive(Default)]
pub(crate) struct Drained {
    pub deliveries: Vec<String>,
    pub usage: ChildUsage,
}

impl super::AgentEngine {
    /// Hands what background children sent to the run: their events (nested) and approvals
    /// to the parent's stream, their usage to the run's totals, their answers to the history as
    /// one message. With `wait`, waits for at least one answer while children run. `false`
    /// when `cancel` fired while waiting.
    pub(super) async fn drain_background(
        &self,
        turn: u32,
        wait: bool,
        cancel: &CancellationToken,
        em: &mut dyn super::emitter::Emitter,
        state: &mut super::run_loop::RunState,
    ) -> bool {
        let mut drained = Drained::default();
        loop {
            let Some(messages) = self.background.take(wait, cancel).await else {
                return false;
            };
            for message in messages {
                match message {
                    BackgroundMessage::Child(ChildMessage::Event(nested)) => {
                        drained.usage.count(&nested.event);
                        em.emit(super::event::Event {
                            turn,
                            kind: super::event::EventKind::Subagent(nested),
                        })
                        .await;
                    }
                    BackgroundMessage::Child(ChildMessage::Approval(request)) => {
                        em.forward_approval(turn, request).await;
                    }
                    BackgroundMessage::Finished {
                        task_id,
                        agent,
                        description,
                        result,
                    } => drained
                        .deliveries
                        .push(delivery(&task_id, &agent, &description, &result)),
                }
            }
            if !wait || !drained.deliveries.is_empty() || self.background.running() == 0 {
                break;
            }
        }
        state.add_children(&drained.usage);
        if !drained.deliveries.is_empty() {
            state.history.push(crate::schema::Message::user(
                drained.deliveries.join("\n\n"),
            ));
        }
        true
    }
}
