//! Plan mode on screen: the todo list (and whether it is shown), whether the list was written
//! by the run going on (only that run's plan is reviewed), and whether the runs that carry it
//! out continue by themselves. Owned by `App`; the review itself is a layer (`plan_review.rs`).

use crate::session::TodoItem;

#[derive(Default)]
pub struct PlanState {
    // Read by `view.rs`'s drawing of the todo panel.
    pub(super) show_todos: bool,
    pub(super) todos: Vec<TodoItem>,
    /// The todo list came in since the last run started: a plan-mode run ending now wrote it.
    written: bool,
    /// A plan-mode run ended before its todo list came in: the list that comes is its plan.
    awaiting: bool,
    auto_continue: bool,
}

/// What a todo list that came in means for the review.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum ListCame {
    /// During a run (or unasked for): nothing to review yet.
    Kept,
    /// The plan a plan-mode run that ended was waiting for.
    Plan,
}

impl PlanState {
    pub fn toggle_todos(&mut self) {
        self.show_todos = !self.show_todos;
    }

    #[cfg(test)]
    pub fn show_todos(&self) -> bool {
        self.show_todos
    }

    pub fn todos(&self) -> &[TodoItem] {
        &self.todos
    }

    /// The session's list as stored (a resumed session's): nothing the user reviews.
    pub fn restore(&mut self, todos: Vec<TodoItem>) {
        self.todos = todos;
        self.written = false;
        self.awaiting = false;
    }

    /// The core's todo list came in (a run wrote it).
    pub fn came(&mut self, todos: Vec<TodoItem>) -> ListCame {
        self.todos = todos;
        if std::mem::take(&mut self.awaiting) {
            return ListCame::Plan;
        }
        self.written = true;
        ListCame::Kept
    }

    /// A run starts: whatever it writes is its own.
    pub fn run_started(&mut self) {
        self.written = false;
        self.awaiting = false;
    }

    /// A plan-mode run ended: whether the list it wrote is in (else the next one that comes is
    /// its plan; a run that writes none leaves nothing to review).
    pub fn plan_run_ended(&mut self) -> bool {
        let written = std::mem::take(&mut self.written);
        self.awaiting = !written;
        written
    }

    /// Whether the runs continue by themselves until the list is done.
    pub fn auto_continue(&self) -> bool {
        self.auto_continue
    }

    pub fn set_auto_continue(&mut self, on: bool) {
        self.auto_continue = on;
    }
}
