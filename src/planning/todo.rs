//! The session's todo list: replaced whole by `todo_write`, read by the TUI and the engine.
//! Readers get snapshots; a watch channel tells the screen when the list changed.

use std::sync::Mutex;

use serde::{Deserialize, Serialize};
use tokio::sync::watch;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TodoStatus {
    Pending,
    InProgress,
    Completed,
}

impl TodoStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            TodoStatus::Pending => "pending",
            TodoStatus::InProgress => "in_progress",
            TodoStatus::Completed => "completed",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TodoItem {
    pub content: String,
    pub status: TodoStatus,
}

/// Called with the new list whenever it is replaced (persistence).
pub type TodoSink = Box<dyn Fn(&[TodoItem]) + Send + Sync>;

/// The todo list of one session.
pub struct TodoStore {
    items: Mutex<Vec<TodoItem>>,
    changed: watch::Sender<u64>,
    sink: Mutex<Option<TodoSink>>,
    /// Why the stored list could not be restored, until someone reports it to the user.
    load_problem: Mutex<Option<String>>,
}

impl std::fmt::Debug for TodoStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TodoStore")
            .field("items", &self.snapshot())
            .finish()
    }
}

impl Default for TodoStore {
    fn default() -> Self {
        TodoStore {
            items: Mutex::new(Vec::new()),
            changed: watch::Sender::new(0),
            sink: Mutex::new(None),
            load_problem: Mutex::new(None),
        }
    }
}

impl TodoStore {
    pub fn new(items: Vec<TodoItem>) -> Self {
        let store = TodoStore::default();
        store.load(items);
        store
    }

    pub fn snapshot(&self) -> Vec<TodoItem> {
        self.items
            .lock()
            .map(|items| items.clone())
            .unwrap_or_default()
    }

    /// Replaces the whole list, hands it to the sink and wakes the watchers.
    pub fn replace(&self, items: Vec<TodoItem>) {
        if let Ok(sink) = self.sink.lock()
            && let Some(sink) = sink.as_ref()
        {
            sink(&items);
        }
        self.load(items);
    }

    /// Replaces the list without telling the sink (restoring a stored list).
    pub fn load(&self, items: Vec<TodoItem>) {
        if let Ok(mut current) = self.items.lock() {
            *current = items;
        }
        self.changed.send_modify(|version| *version += 1);
    }

    /// Notes that the stored list could not be restored (the list stays as it is).
    pub fn set_load_problem(&self, problem: Option<String>) {
        if let Ok(mut slot) = self.load_problem.lock() {
            *slot = problem;
        }
    }

    /// The load problem, taken: it is reported once, by whoever shows it first.
    pub fn take_load_problem(&self) -> Option<String> {
        self.load_problem
            .lock()
            .ok()
            .and_then(|mut slot| slot.take())
    }

    /// Where every later replacement is sent (the session store).
    pub fn set_sink(&self, sink: TodoSink) {
        if let Ok(mut slot) = self.sink.lock() {
            *slot = Some(sink);
        }
    }

    /// A receiver that changes whenever the list does.
    pub fn watch(&self) -> watch::Receiver<u64> {
        self.changed.subscribe()
    }

    pub fn count(&self, status: TodoStatus) -> usize {
        self.snapshot()
            .iter()
            .filter(|i| i.status == status)
            .count()
    }
}
