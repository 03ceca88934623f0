//! Editing the prompt as users' shells do (readline keys), Ctrl+C and Esc, the history, pastes
//! and the mouse wheel. The keys a text box takes are mapped here, once, for every text box of
//! the app (the prompt, a denial's reason).

use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers, MouseEvent, MouseEventKind};
use ratatui_textarea::{CursorMove, TextArea};

use super::app::{App, Effect};
use super::keymap::Action;
use crate::session::Request;

/// How long a second Ctrl+C has to quit (and its hint stays).
pub const DOUBLE_PRESS: Duration = Duration::from_secs(1);
/// Lines the mouse wheel scrolls.
const WHEEL_LINES: u16 = 3;
/// The hint a first Ctrl+C leaves on the status line.
pub const QUIT_HINT: &str = "press Ctrl+C again to quit";

/// One key into a text box. The readline keys are mapped explicitly (the text box's own
/// defaults differ: its Ctrl+U is undo); every other key goes to the box as it is.
pub fn edit(text: &mut TextArea<'static>, key: KeyEvent) {
    let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
    let alt = key.modifiers.contains(KeyModifiers::ALT);
    match key.code {
        KeyCode::Char('u') if ctrl => {
            text.delete_line_by_head();
        }
        KeyCode::Char('k') if ctrl => {
            text.delete_line_by_end();
        }
        KeyCode::Char('w') if ctrl => {
            text.delete_word();
        }
        KeyCode::Backspace if alt => {
            text.delete_word();
        }
        KeyCode::Char('d') if alt => {
            text.delete_next_word();
        }
        KeyCode::Char('a') if ctrl => text.move_cursor(CursorMove::Head),
        KeyCode::Char('e') if ctrl => text.move_cursor(CursorMove::End),
        KeyCode::Char('b') if alt => text.move_cursor(CursorMove::WordBack),
        KeyCode::Char('f') if alt => word_end(text),
        KeyCode::Char('b') if ctrl => text.move_cursor(CursorMove::Back),
        KeyCode::Char('f') if ctrl => text.move_cursor(CursorMove::Forward),
        _ => {
            text.input(key);
        }
    }
}

/// Alt+F as readline does it: past the end of the next word (the text box's own word moves
/// stop at the start of the next one).
fn word_end(text: &mut TextArea<'static>) {
    let ratatui_textarea::DataCursor(row, col) = text.cursor();
    let Some(line) = text.lines().get(row) else {
        return;
    };
    let chars: Vec<char> = line.chars().collect();
    if col >= chars.len() {
        text.move_cursor(CursorMove::Forward);
        return;
    }
    let word = |c: &char| c.is_alphanumeric() || *c == '_';
    let mut at = col;
    while at < chars.len() && !word(&chars[at]) {
        at += 1;
    }
    while at < chars.len() && word(&chars[at]) {
        at += 1;
    }
    let (row, at) = (u16::try_from(row), u16::try_from(at));
    if let (Ok(row), Ok(at)) = (row, at) {
        text.move_cursor(CursorMove::Jump(row, at));
    }
}

impl App {
    /// Esc on the conversation: stops the run or the `!` command going on.
    pub(super) fn interrupt(&mut self) -> Vec<Effect> {
        if !self.busy() {
            self.flash_mut().text = None;
            return Vec::new();
        }
        self.flash_mut().text = Some("interrupting…".into());
        self.flash_mut().until = None;
        let mut commands = vec![Effect::Request(Request::Interrupt)];
        if self.plan().auto_continue() {
            self.plan_mut().set_auto_continue(false);
            commands.push(Effect::Request(Request::SetAutoContinue(false)));
        }
        commands
    }

    /// Ctrl+C: interrupts what is going on (as Esc does); on an idle screen it clears the
    /// input, and a second press within `DOUBLE_PRESS` quits. Its hint lives as long.
    pub(super) fn clear_or_quit(&mut self) -> Vec<Effect> {
        let now = self.clock().now();
        if self.busy() {
            self.flash_mut().last_ctrl_c = None;
            return self.interrupt();
        }
        if self
            .flash()
            .last_ctrl_c
            .is_some_and(|at| now.duration_since(at) < DOUBLE_PRESS)
        {
            return self.quit();
        }
        self.flash_mut().last_ctrl_c = Some(now);
        self.set_input("");
        self.input_box_mut().history_index = None;
        self.flash_mut().text = Some(QUIT_HINT.into());
        self.flash_mut().until = Some(now + DOUBLE_PRESS);
        Vec::new()
    }

    /// When something on screen changes by itself next (a hint that goes away); the loop
    /// wakes then, and only then.
    pub fn wake_at(&self) -> Option<Instant> {
        self.flash().until
    }

    /// Lets what has timed out by `now` go; whether anything changed.
    pub fn expire(&mut self, now: Instant) -> bool {
        match self.flash().until {
            Some(until) if now >= until => {
                self.flash_mut().until = None;
                self.flash_mut().last_ctrl_c = None;
                // Only the hint goes; a notice that replaced it meanwhile stays.
                if self.flash().text.as_deref() == Some(QUIT_HINT) {
                    self.flash_mut().text = None;
                }
                true
            }
            _ => false,
        }
    }

    pub(super) fn recall(&mut self, step: i64) {
        if self.input_box().history.is_empty() {
            return;
        }
        let last = self.input_box().history.len() - 1;
        let next = match (self.input_box().history_index, step < 0) {
            (None, true) => Some(last),
            (None, false) => None,
            (Some(i), true) => Some(i.saturating_sub(1)),
            (Some(i), false) if i >= last => None,
            (Some(i), false) => Some(i + 1),
        };
        let text = next
            .map(|i| self.input_box().history[i].clone())
            .unwrap_or_default();
        self.set_input(&text);
        self.input_box_mut().history_index = next;
    }
    /// A paste from the terminal. An empty one is what a terminal sends when the clipboard holds
    /// an image and no text: the clipboard is then asked for the image.
    pub fn handle_paste(&mut self, text: &str) -> Vec<Effect> {
        let text = text.replace("\r\n", "\n").replace('\r', "\n");
        // A layer being typed in (a denial's reason) takes the paste.
        if self.stack_focused() && self.stack_mut().paste(&text) {
            return Vec::new();
        }
        if text.is_empty() {
            return vec![Effect::Request(Request::PasteImage)];
        }
        let lines = text.lines().count();
        let page = usize::from(self.view().viewport.max(4));
        if lines > page {
            // A paste longer than the screen is shown as one line and sent whole.
            let placeholder = format!(
                "[pasted {lines} lines #{}]",
                self.input_box().pastes.len() + 1
            );
            self.input_box_mut().input.insert_str(&placeholder);
            self.input_box_mut().pastes.push((placeholder, text));
        } else if let Some(path) = pasted_image(&text) {
            // A file path of an image (a file dragged onto the terminal) attaches it, as
            // `@path` does; the core checks that it is one.
            let mention = format!("@{path} ");
            self.input_box_mut().input.insert_str(mention);
        } else {
            self.input_box_mut().input.insert_str(&text);
        }
        Vec::new()
    }

    /// The clipboard's image, as `Request::PasteImage` asked: shown in the input as
    /// `[image #N WxH]`, sent as a mention of the file the core kept it in (as a pasted image
    /// path is), or why there is none.
    pub(super) fn attach_pasted_image(
        &mut self,
        image: Result<crate::session::ClipboardImage, crate::session::Failure>,
    ) {
        match image {
            Ok(image) => {
                let number = self.input_box().pastes.len() + 1;
                let placeholder = format!("[image #{number} {}x{}]", image.width, image.height);
                self.input_box_mut()
                    .input
                    .insert_str(format!("{placeholder} "));
                self.input_box_mut()
                    .pastes
                    .push((placeholder, format!("@{}", image.path.display())));
            }
            Err(why) => self.flash_mut().text = Some(why.message),
        }
    }

    /// `typed` with its collapsed pastes put back: as the transcript shows it (a clipboard
    /// image stays `[image #1 WxH]` there) and as it is sent (the image's file mentioned). The
    /// pastes are used up.
    pub(super) fn expand_pastes(&mut self, typed: &str) -> (String, String) {
        let (mut shown, mut sent) = (typed.to_owned(), typed.to_owned());
        for (placeholder, whole) in self.input_box_mut().pastes.drain(..) {
            sent = sent.replace(&placeholder, &whole);
            if !placeholder.starts_with("[image #") {
                shown = shown.replace(&placeholder, &whole);
            }
        }
        (shown, sent)
    }

    pub fn handle_mouse(&mut self, mouse: MouseEvent) {
        let action = match mouse.kind {
            MouseEventKind::ScrollUp => Action::ScrollUp(WHEEL_LINES),
            MouseEventKind::ScrollDown => Action::ScrollDown(WHEEL_LINES),
            _ => return,
        };
        // An opened layer on top scrolls itself, or passes the wheel down.
        if self.stack_focused() {
            let outcome = self.with_stack(|stack, shared| stack.handle_action(action, shared));
            if let Some(outcome) = outcome {
                self.take_outcome(outcome);
                return;
            }
        }
        self.apply(action);
    }
}

/// The path in a paste that is one image file's path (quotes a terminal put around it taken
/// off); `None` for anything else, or a path with spaces (a mention cannot hold one).
pub(super) fn pasted_image(text: &str) -> Option<&str> {
    let trimmed = text.trim();
    let path = ['\'', '"']
        .iter()
        .find_map(|q| trimmed.strip_prefix(*q).and_then(|t| t.strip_suffix(*q)))
        .unwrap_or(trimmed);
    (!path.is_empty()
        && !path.chars().any(char::is_whitespace)
        && crate::images::named_like_image(path))
    .then_some(path)
}
