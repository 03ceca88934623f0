//! MCP servers' forms (`elicitation/create`) asked through the session core, as approvals are:
//! a front end that can ask its user (the TUI) opens the core with
//! `CoreOptions::ask_elicitations`; the core then stands as the servers' `Elicitor`, publishes
//! each form as `Update::Elicitation` and hands the server the answer a front end sends back
//! with `Request::AnswerElicitation` (the first answer wins). A form still open when the session
//! closes is declined, with the notice `exec` gives.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};

use tokio::sync::oneshot;

use super::hub::Hub;
use super::protocol::Update;
use crate::engine::{Failure, FailureKind};
use crate::mcp::{Elicited, Elicitor};

/// One server's form, for a front end to ask.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ElicitationAsk {
    /// What the answer names (`Request::AnswerElicitation`).
    pub id: String,
    /// The server asking.
    pub server: String,
    /// What it asks, in its own words.
    pub message: String,
    /// Its `requestedSchema`: an object of flat fields (string, number, integer, boolean,
    /// enum), with titles, defaults and the required ones.
    pub schema: serde_json::Value,
}

/// The forms asked and not yet answered.
#[derive(Default)]
pub(super) struct Elicitations {
    next: AtomicU64,
    waiting: Mutex<HashMap<String, oneshot::Sender<Elicited>>>,
}

impl Elicitations {
    /// Hands the answer to form `id` to its server; a form answered already (or never asked)
    /// is a failure for the front end.
    pub fn answer(&self, id: &str, answer: Elicited) -> Result<(), Failure> {
        let sender = self.waiting.lock().ok().and_then(|mut w| w.remove(id));
        match sender.map(|sender| sender.send(answer)) {
            Some(Ok(())) => Ok(()),
            _ => Err(Failure::new(
                FailureKind::NotFound,
                format!("no MCP form {id} is waiting (it was answered, or its server gave up)"),
            )),
        }
    }

    /// Every form still open is declined (the session closes).
    pub fn drop_all(&self) {
        if let Ok(mut waiting) = self.waiting.lock() {
            waiting.clear();
        }
    }
}

/// The servers' `Elicitor` while a front end that asks is watching.
pub(super) struct CoreElicitor {
    /// Weak: the core owns the hub; a form asked after it closed is declined.
    hub: Weak<Hub>,
    forms: Arc<Elicitations>,
}

impl CoreElicitor {
    pub fn new(hub: &Arc<Hub>, forms: &Arc<Elicitations>) -> Self {
        CoreElicitor {
            hub: Arc::downgrade(hub),
            forms: Arc::clone(forms),
        }
    }
}

#[async_trait::async_trait]
impl Elicitor for CoreElicitor {
    async fn ask(
        &self,
        server: &str,
        message: &str,
        schema: &serde_json::Value,
    ) -> Option<Elicited> {
        let hub = self.hub.upgrade()?;
        let id = format!(
            "form-{}",
            self.forms.next.fetch_add(1, Ordering::SeqCst) + 1
        );
        let (sender, answer) = oneshot::channel();
        self.forms.waiting.lock().ok()?.insert(id.clone(), sender);
        hub.publish(Update::Elicitation(Arc::new(ElicitationAsk {
            id,
            server: server.to_owned(),
            message: message.to_owned(),
            schema: schema.clone(),
        })));
        drop(hub);
        // No answer (the session closed): declined with a notice by the caller.
        answer.await.ok()
    }
}
