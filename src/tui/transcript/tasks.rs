//! The transcript's task blocks: one per `task` call, found by the call's id (an index, so a
//! child's events cost the same however long the transcript is), fed with the child's events,
//! and laid out again only when what the block shows has changed.

use std::time::{Duration, Instant};

use super::{Entry, EntryKind, Transcript};
use crate::engine::Event;
use crate::schema::{ToolCall, ToolResult};
use crate::tui::task_view::{TASK_TOOL, TaskView};

impl Transcript {
    /// A `task` call's block, its clock started at `now`.
    pub fn task_started(&mut self, call: ToolCall, now: Instant) {
        let id = call.id.clone();
        self.push(EntryKind::Task(Box::new(TaskView::from_call(call, now))));
        self.tasks.insert(id, self.entries.len() - 1);
    }

    /// One of a child's events, into the block of its `task` call. A child whose call this
    /// screen never saw start (a watcher that came in late) gets a block of its own.
    pub fn task_event(&mut self, task_id: &str, agent: &str, event: &Event, now: Instant) {
        if !self.tasks.contains_key(task_id) {
            let arguments = serde_json::json!({ "agent": agent }).to_string();
            let call = ToolCall {
                id: task_id.to_owned(),
                name: TASK_TOOL.to_owned(),
                arguments,
            };
            self.task_started(call, now);
        }
        if let Some(entry) = self.task_entry(task_id)
            && let EntryKind::Task(task) = &mut entry.kind
            && task.apply(event, now)
        {
            entry.touch();
        }
    }

    /// The `task` call's result into its block; `false` when `result` is not a task's.
    pub(super) fn task_finished(
        &mut self,
        result: &ToolResult,
        duration: Option<Duration>,
    ) -> bool {
        let Some(entry) = self.task_entry(&result.tool_call_id) else {
            return false;
        };
        if let EntryKind::Task(task) = &mut entry.kind {
            task.finish_call(&result.output, result.is_error, duration);
            entry.touch();
        }
        true
    }

    /// A task block read back from the store learns its child's session (the store's link).
    pub fn link_child_session(&mut self, task_id: &str, session_id: String) {
        if let Some(entry) = self.task_entry(task_id)
            && let EntryKind::Task(task) = &mut entry.kind
            && task.child_session.is_none()
        {
            task.child_session = Some(session_id);
            entry.touch();
        }
    }

    fn task_entry(&mut self, task_id: &str) -> Option<&mut Entry> {
        let index = *self.tasks.get(task_id)?;
        self.entries.get_mut(index)
    }

    /// The block of the task `task_id`.
    pub fn task(&self, task_id: &str) -> Option<&TaskView> {
        let index = *self.tasks.get(task_id)?;
        match &self.entries.get(index)?.kind {
            EntryKind::Task(task) => Some(task),
            _ => None,
        }
    }

    /// Every task block, oldest first.
    pub fn tasks(&self) -> impl Iterator<Item = &TaskView> {
        self.entries.iter().filter_map(|e| match &e.kind {
            EntryKind::Task(task) => Some(task.as_ref()),
            _ => None,
        })
    }

    /// Whether a child is still at work (without walking the transcript).
    pub fn any_task_running(&self) -> bool {
        self.tasks.values().any(|&index| {
            matches!(self.entries.get(index), Some(Entry { kind: EntryKind::Task(task), .. }) if task.is_running())
        })
    }

    /// The newest task block since the last prompt: the one `Ctrl+O` opens.
    pub fn current_task(&self) -> Option<&TaskView> {
        for entry in self.entries.iter().rev() {
            match &entry.kind {
                EntryKind::Task(task) => return Some(task),
                EntryKind::User(_) => return None,
                _ => {}
            }
        }
        None
    }

    /// How often the block of `task_id` changed (tests: a child's stream must not re-lay it).
    #[cfg(test)]
    pub fn task_revision(&self, task_id: &str) -> Option<u64> {
        let index = *self.tasks.get(task_id)?;
        self.entries.get(index).map(|e| e.revision)
    }
}
