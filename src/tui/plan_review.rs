//! Plan review: when a plan-mode run ends with a todo list, the plan is shown and the user
//! chooses how it is carried out (auto-continue in default or auto-edit mode, step by step),
//! sends feedback to keep planning, or discards it.

use crossterm::event::{KeyCode, KeyEvent};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};

use super::app::{App, Effect, new_input};
use super::keymap::Action;
use super::overlays::choice_lines;
use super::wrap::wrap;
use crate::session::Request;
use crate::session::{Mode, TodoStatus};

const CARRY_OUT: &str = "Carry out the plan in the todo list, item by item: mark each item \
in_progress when you start it and completed when it is done.";
const FIRST_STEP: &str = "Carry out only the first open item of the plan, mark it completed, \
then stop and report what you did.";

impl App {
    /// A plan to review: a plan-mode run ended and the todo list has open items.
    pub fn plan_ready(&self) -> bool {
        self.plan().review_pending
            && self
                .plan()
                .todos
                .iter()
                .any(|t| t.status != TodoStatus::Completed)
    }

    /// Keys while the feedback box is open; `None` when it is not.
    pub(super) fn review_feedback_key(&mut self, key: KeyEvent) -> Option<Vec<Effect>> {
        let feedback = self.plan_mut().review_feedback.as_mut()?;
        Some(match key.code {
            KeyCode::Esc => {
                self.plan_mut().review_feedback = None;
                Vec::new()
            }
            KeyCode::Enter if key.modifiers.is_empty() => {
                let text = feedback.lines().join("\n");
                self.plan_mut().review_feedback = None;
                if text.trim().is_empty() {
                    return Some(Vec::new());
                }
                self.plan_mut().review_pending = false;
                self.start_run(text)
            }
            _ => {
                feedback.input(key);
                Vec::new()
            }
        })
    }

    pub(super) fn apply_review(&mut self, action: Action) -> Option<Vec<Effect>> {
        let commands = match action {
            Action::PlanAuto(auto_edit) => {
                let mode = if auto_edit {
                    Mode::AutoEdit
                } else {
                    Mode::Default
                };
                self.plan_mut().review_pending = false;
                self.session_mut().mode = mode;
                self.plan_mut().auto_continue = true;
                let mut commands = vec![
                    Effect::Request(Request::SetMode(mode)),
                    Effect::Request(Request::SetAutoContinue(true)),
                ];
                commands.extend(self.start_run(CARRY_OUT.into()));
                commands
            }
            Action::PlanStep => {
                self.plan_mut().review_pending = false;
                self.session_mut().mode = Mode::Default;
                self.plan_mut().auto_continue = false;
                let mut commands = vec![
                    Effect::Request(Request::SetMode(Mode::Default)),
                    Effect::Request(Request::SetAutoContinue(false)),
                ];
                commands.extend(self.start_run(FIRST_STEP.into()));
                commands
            }
            Action::PlanKeep => {
                let mut input = new_input();
                input.set_placeholder_text(
                    "What should change in the plan? Enter sends, Esc goes back",
                );
                self.plan_mut().review_feedback = Some(input);
                Vec::new()
            }
            Action::PlanDiscard => {
                self.plan_mut().review_pending = false;
                self.flash_mut().text = Some("plan discarded; still in plan mode".into());
                vec![Effect::Request(Request::ClearTodos)]
            }
            _ => return None,
        };
        Some(commands)
    }
}

pub fn draw(app: &App, frame: &mut Frame, area: Rect) {
    let width = area.width.saturating_sub(4).clamp(30, 90);
    let inner_width = width.saturating_sub(4);
    let accent = Style::new()
        .fg(super::theme::accent())
        .add_modifier(Modifier::BOLD);
    let mut lines = Vec::new();
    for todo in &app.plan().todos {
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
    if let Some(feedback) = &app.plan().review_feedback {
        lines.push(Line::default());
        lines.push(Line::styled(
            "What should change? (Enter sends, Esc goes back)",
            Style::new().fg(super::theme::warn()),
        ));
        for line in feedback.lines() {
            lines.push(Line::from(vec![
                Span::styled("> ", accent),
                Span::raw(line.clone()),
            ]));
        }
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
