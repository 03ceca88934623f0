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

/// The todo list of one session.
#[derive(Debug)]
pub struct TodoStore {
    items: Mutex<Vec<TodoItem>>,
    changed: watch::Sender<u64>,
}

impl Default for TodoStore {
    fn default() -> Self {
        TodoStore {
            items: Mutex::new(Vec::new()),
            changed: watch::Sender::new(0),
        }
    }
}

impl TodoStore {
    pub fn new(items: Vec<TodoItem>) -> Self {
        let store = TodoStore::default();
        store.replace(items);
        store
    }

    pub fn snapshot(&self) -> Vec<TodoItem> {
        self.items
            .lock()
            .map(|items| items.clone())
            .unwrap_or_default()
    }

    /// Replaces the whole list and wakes the watchers.
    pub fn replace(&self, items: Vec<TodoItem>) {
        if let Ok(mut current) = self.items.lock() {
            *current = items;
        }
        self.changed.send_modify(|version| *version += 1);
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
