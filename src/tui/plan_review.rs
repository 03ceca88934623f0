//! The plan review as a layer: when a plan-mode run ends with the todo list it wrote (this
//! run's, never an older one), the plan is shown and the user chooses how it is carried out
//! (auto-continue in default or auto-edit mode, step by step), sends feedback to keep planning
//! in a text box the layer owns, or discards it. Its answers are requests: the mode, whether
//! runs continue by themselves, and the prompt, which the app shows and starts as a typed one.

use std::borrow::Cow;

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui_textarea::TextArea;

use super::app::{Effect, new_input};
use super::compositor::{Layer, Outcome, Shared};
use super::keymap::{Action, Focus};
use super::overlays::{choice_lines, reply_lines};
use super::wrap::wrap;
use crate::session::Request;
use crate::session::{Mode, TodoItem, TodoStatus};

const CARRY_OUT: &str = "Carry out the plan in the todo list, item by item: mark each item \
in_progress when you start it and completed when it is done.";
const FIRST_STEP: &str = "Carry out only the first open item of the plan, mark it completed, \
then stop and report what you did.";

/// A plan waiting for the user's choice.
pub(super) struct PlanReview {
    /// The todo list the plan-mode run wrote.
    todos: Vec<TodoItem>,
    /// Feedback typed after choosing "keep planning", while it is typed.
    feedback: Option<TextArea<'static>>,
}

impl PlanReview {
    /// The review of `todos`, when there is anything left to do in them.
    pub fn of(todos: &[TodoItem]) -> Option<Self> {
        open_items(todos).then(|| PlanReview {
            todos: todos.to_vec(),
            feedback: None,
        })
    }

    /// The list changed while the review is open (it came in after the run's end).
    pub fn set_todos(&mut self, todos: &[TodoItem]) {
        self.todos = todos.to_vec();
    }

    /// Runs the plan: in `mode`, continuing by itself or not, starting with `prompt`.
    fn run(mode: Mode, auto_continue: bool, prompt: &str) -> Outcome {
        Outcome::close(vec![
            Effect::Request(Request::SetMode(mode)),
            Effect::Request(Request::SetAutoContinue(auto_continue)),
            Effect::Request(Request::Submit(prompt.into())),
        ])
    }
}

/// Whether `todos` has an item not done.
pub(super) fn open_items(todos: &[TodoItem]) -> bool {
    todos.iter().any(|t| t.status != TodoStatus::Completed)
}

impl Layer for PlanReview {
    fn focus(&self) -> Focus {
        Focus::PlanReview
    }

    fn mode(&self) -> Focus {
        if self.feedback.is_some() {
            Focus::PlanFeedback
        } else {
            Focus::PlanReview
        }
    }

    fn update(&mut self, action: Action, _: &Shared) -> Outcome {
        // Ctrl+C, the page keys and the wheel are the conversation's under the review.
        if action.is_the_conversations() {
            return Outcome::pass();
        }
        match action {
            Action::PlanAuto(auto_edit) => {
                let mode = if auto_edit {
                    Mode::AutoEdit
                } else {
                    Mode::Default
                };
                PlanReview::run(mode, true, CARRY_OUT)
            }
            Action::PlanStep => PlanReview::run(Mode::Default, false, FIRST_STEP),
            Action::PlanKeep => {
                let mut input = new_input();
                input.set_placeholder_text(
                    "What should change in the plan? Enter sends, Esc goes back",
                );
                self.feedback = Some(input);
                Outcome::done()
            }
            Action::PlanDiscard => Outcome::close(vec![Effect::Request(Request::ClearTodos)])
                .flash("plan discarded; still in plan mode"),
            // The feedback typed: sent as the next plan-mode prompt (nothing typed: back).
            Action::Submit => {
                let text = self
                    .feedback
                    .take()
                    .map(|feedback| feedback.lines().join("\n"))
                    .unwrap_or_default();
                if text.trim().is_empty() {
                    return Outcome::done();
                }
                Outcome::close(vec![Effect::Request(Request::Submit(text))])
            }
            Action::Close => {
                self.feedback = None;
                Outcome::done()
            }
            Action::Edit(key) => {
                if let Some(feedback) = &mut self.feedback {
                    super::editing::edit(feedback, key);
                }
                Outcome::done()
            }
            _ => Outcome::done(),
        }
    }

    fn draw(&self, _: &Shared, frame: &mut Frame, area: Rect) {
        draw(self, frame, area);
    }

    fn hints(&self) -> Cow<'static, str> {
        " answer the plan review above ".into()
    }

    fn paste(&mut self, text: &str) -> bool {
        match &mut self.feedback {
            Some(feedback) => {
                feedback.insert_str(text);
                true
            }
            None => false,
        }
    }
}

fn draw(review: &PlanReview, frame: &mut Frame, area: Rect) {
    let width = area.width.saturating_sub(4).clamp(30, 90);
    let inner_width = width.saturating_sub(4);
    let accent = Style::new()
        .fg(super::theme::accent())
        .add_modifier(Modifier::BOLD);
    let mut lines = Vec::new();
    for todo in &review.todos {
        let mark = match todo.status {
            TodoStatus::Completed => "✓ ",
            TodoStatus::InProgress => "▶ ",
            TodoStatus::Pending => "○ ",
        };
        lines.extend(wrap(
            &[Span::raw(todo.content.clone())],
            inner_width,
            &[Span::styled(mark, accent)],
            &[Span::raw("  ")],
        ));
    }
    lines.push(Line::default());
    lines.extend(choice_lines(
        [
            (
                "a",
                format!(
                    "run it, continuing by itself until the list is done, in default mode ({})",
                    crate::session::Mode::Default.behaviour()
                ),
            ),
            (
                "e",
                format!(
                    "run it, continuing by itself, in auto-edit mode ({})",
                    crate::session::Mode::AutoEdit.behaviour()
                ),
            ),
            ("s", "run it step by step: one item, then stop".to_owned()),
            (
                "k",
                "keep planning: tell the model what to change".to_owned(),
            ),
            ("x", "discard the plan (Esc)".to_owned()),
        ],
        inner_width,
        accent,
    ));
    if let Some(feedback) = &review.feedback {
        lines.extend(reply_lines(
            "What should change? (Enter sends, Esc goes back)",
            feedback.lines(),
            accent,
        ));
    }
    let height = (lines.len() as u16 + 2).min(area.height);
    let rect = Rect::new(
        area.x + (area.width - width.min(area.width)) / 2,
        area.y + area.height.saturating_sub(height) / 2,
        width.min(area.width),
        height,
    );
    let title = Span::styled(
        " The plan is ready ",
        Style::new().add_modifier(Modifier::BOLD),
    );
    super::overlays::boxed(frame, rect, title, Style::new().fg(Color::Magenta), lines);
}
