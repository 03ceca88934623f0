//! An MCP server's form (`elicitation/create`) as a dialog over the conversation: the server's
//! message, then its fields (`elicitation_fields`), one chosen at a time. Enter accepts (once
//! every required field is filled and numbers read as numbers), Ctrl+D declines, Esc or Ctrl+C
//! cancels; the answer goes to the session core (`Request::AnswerElicitation`), which hands it
//! to the server. The core opens it with `Update::Elicitation`.

use std::sync::Arc;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};

use super::app::Effect;
use super::compositor::{Layer, Outcome, Shared};
use super::elicitation_fields::{Field, answer, fields};
use super::keymap::{Action, Focus};
use super::overlays::{boxed, centered};
use super::view::DIM;
use super::wrap::{truncate, wrap};
use crate::session::{ElicitationAsk, Elicited, Request};
use crate::terminal_text::sanitize;

/// The keys of the form: what `keymap::action` gives in `Focus::Elicitation` (Ctrl+C and the
/// page keys are taken before).
pub(super) fn action(key: KeyEvent) -> Action {
    let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
    match key.code {
        KeyCode::Esc => Action::Close,
        KeyCode::Enter => Action::Submit,
        KeyCode::Char('d') if ctrl => Action::Deny,
        KeyCode::Up | KeyCode::BackTab => Action::Prev,
        KeyCode::Down | KeyCode::Tab => Action::Next,
        _ => Action::Edit(key),
    }
}

/// A server's form waiting for the user.
pub(super) struct ElicitationForm {
    ask: Arc<ElicitationAsk>,
    fields: Vec<Field>,
    selected: usize,
    /// Why Enter did not accept (a required field left empty, a number that is none).
    problem: Option<String>,
}

impl ElicitationForm {
    pub fn new(ask: Arc<ElicitationAsk>) -> Self {
        ElicitationForm {
            fields: fields(&ask.schema),
            ask,
            selected: 0,
            problem: None,
        }
    }

    /// Closes the form with `answer` sent to the server.
    fn answered(&self, answer: Elicited) -> Outcome {
        Outcome::close(vec![Effect::Request(Request::AnswerElicitation {
            id: self.ask.id.clone(),
            answer,
        })])
    }

    /// A key for the chosen field.
    fn edit(&mut self, key: KeyEvent) {
        let Some(field) = self.fields.get_mut(self.selected) else {
            return;
        };
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        match key.code {
            KeyCode::Left if !field.typed() => field.step(false),
            KeyCode::Right | KeyCode::Char(' ') if !field.typed() => field.step(true),
            KeyCode::Backspace if field.typed() => {
                field.text.pop();
            }
            KeyCode::Char('u') if ctrl && field.typed() => field.text.clear(),
            KeyCode::Char(c) if !ctrl && field.typed() => field.text.push(c),
            _ => return,
        }
        self.problem = None;
    }
}

impl Layer for ElicitationForm {
    fn focus(&self) -> Focus {
        Focus::Elicitation
    }

    fn update(&mut self, action: Action, _: &Shared) -> Outcome {
        match action {
            Action::Submit => match answer(&self.fields) {
                Ok(values) => return self.answered(Elicited::Accept(values)),
                Err(problem) => self.problem = Some(problem.to_string()),
            },
            Action::Deny => {
                return self
                    .answered(Elicited::Decline)
                    .flash("declined the server's form");
            }
            Action::Close | Action::ClearOrQuit => {
                return self
                    .answered(Elicited::Cancel)
                    .flash("cancelled the server's form");
            }
            Action::Prev | Action::Next => {
                self.selected = action
                    .chosen(self.selected, self.fields.len())
                    .unwrap_or(self.selected)
            }
            Action::Edit(key) => self.edit(key),
            // The wheel and the page keys scroll the conversation under the form.
            _ if action.is_the_conversations() => return Outcome::pass(),
            _ => {}
        }
        Outcome::done()
    }

    fn draw(&self, _: &Shared, frame: &mut Frame, area: Rect) {
        draw(self, frame, area);
    }

    fn hints(&self) -> std::borrow::Cow<'static, str> {
        " Enter accepts · Ctrl+D declines · Esc cancels · ↑↓ fields · ←→ Space choose ".into()
    }

    // A paste fills the chosen text field (one line: a field holds no newlines), never the prompt.
    fn paste(&mut self, text: &str) -> bool {
        if let Some(field) = self.fields.get_mut(self.selected)
            && field.typed()
        {
            field
                .text
                .extend(text.chars().map(|c| if c == '\n' { ' ' } else { c }));
            self.problem = None;
        }
        true
    }

    // Keys typed for the prompt just as the form opens do not fill it in or answer it.
    fn dialog(&self) -> Option<String> {
        Some(format!("form:{}", self.ask.id))
    }
}

fn draw(form: &ElicitationForm, frame: &mut Frame, area: Rect) {
    let width = area.width.saturating_sub(4).min(90);
    let text = width.saturating_sub(4);
    // The server's words: no escape sequences reach the terminal.
    let message = Span::raw(sanitize(&form.ask.message));
    let mut lines = wrap(&[message], text, &[], &[]);
    lines.push(Line::default());
    if form.fields.is_empty() {
        lines.push(Line::styled("(the form has no fields)", DIM));
    }
    for (index, field) in form.fields.iter().enumerate() {
        lines.push(field_line(field, index == form.selected, text as usize));
        if let Some(description) = &field.description {
            let room = (text as usize).saturating_sub(4);
            lines.push(Line::styled(
                format!("    {}", truncate(&sanitize(description), room)),
                DIM,
            ));
        }
    }
    if let Some(problem) = &form.problem {
        lines.push(Line::default());
        lines.push(Line::styled(sanitize(problem), Style::new().fg(Color::Red)));
    }
    lines.push(Line::default());
    lines.push(Line::styled(
        "Enter accept · Ctrl+D decline · Esc cancel · ↑↓ Tab fields · ←→ Space choose",
        DIM,
    ));
    let height = (lines.len() as u16 + 2).min(area.height);
    let title = format!(" MCP server `{}` asks ", sanitize(&form.ask.server));
    boxed(
        frame,
        centered(area, width, height),
        Span::styled(title, Style::new().add_modifier(Modifier::BOLD)),
        Style::new().fg(Color::Yellow),
        lines,
    );
}

/// `› Label*: value▏`, the value's end kept in view when it is long.
fn field_line(field: &Field, selected: bool, width: usize) -> Line<'static> {
    let marker = if selected { "› " } else { "  " };
    let star = if field.required { "*" } else { "" };
    let head = format!("{marker}{}{star}: ", sanitize(&field.label));
    let head_style = match selected {
        true => Style::new().add_modifier(Modifier::BOLD),
        false => Style::new(),
    };
    let room = width.saturating_sub(head.chars().count() + 1);
    let value = sanitize(&field.shown());
    let count = value.chars().count();
    let mut shown = match count > room {
        true => {
            let tail: String = value.chars().skip(count + 1 - room.max(1)).collect();
            format!("…{tail}")
        }
        false => value,
    };
    if selected && field.typed() {
        shown.push('▏');
    }
    Line::from(vec![
        Span::styled(head, head_style),
        Span::styled(shown, Style::new().fg(Color::Cyan)),
    ])
}
