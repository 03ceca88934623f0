//! Plan mode on screen: the todo list (and whether it is shown), the review of the plan once a
//! plan-mode run ends, and whether the runs that carry it out continue by themselves. Owned by
//! `App`; the review layer (`plan_review.rs`) and the session's updates change it.

use ratatui_textarea::TextArea;

use crate::session::TodoItem;

#[derive(Default)]
pub struct PlanState {
    pub(super) show_todos: bool,
    pub(super) todos: Vec<TodoItem>,
    /// A plan-mode run ended: review the plan once the todo list is in.
    pub(super) review_pending: bool,
    /// Feedback typed after choosing "keep planning".
    pub(super) review_feedback: Option<TextArea<'static>>,
    pub(super) auto_continue: bool,
}
