//! The workflows on top of the conversation: slash commands, the session picker, `@` and `/`
//! completion, `!` shell commands, queued prompts and copying (the answers the runner brings back
//! are `answers`). Same rule as `app.rs`: state changes in, effects out.

use crossterm::event::{KeyCode, KeyEvent};

use super::app::{App, Effect, Scroll};
use super::keymap::Action;
use super::picker::Picker;
use super::slash::{self, Completion};
use super::transcript::EntryKind;
use crate::schema::ToolCall;
use crate::session::Mode;
use crate::session::Request;

/// Entries shown in a completion popup.
pub const POPUP_ROWS: usize = 8;

impl App {
    /// The completion popup for what is being typed: commands after `/`, files after `@`.
    pub fn popup(&self) -> Vec<Completion> {
        if self.layer() != super::keymap::Focus::Main || self.input_box().popup_closed {
            return Vec::new();
        }
        let text = self.input_text();
        if text.starts_with('/') {
            let mut list = slash::completions(&text, &self.facts().skills);
            list.extend(super::mcp_panel::prompt_completions(self, &text));
            return list;
        }
        if let Some(query) = mention_query(&text) {
            // MCP resources (`@server:uri`) first, then the working directory's files.
            let mut list = super::mcp_panel::resource_completions(self, query);
            if let Some(files) = &self.input_box().files {
                list.extend(
                    crate::session::text::rank(query, files, POPUP_ROWS)
                        .into_iter()
                        .map(super::mentions::completion),
                );
            }
            return list;
        }
        Vec::new()
    }

    /// Keys the popup takes while it is open.
    pub(super) fn popup_action(&self, key: KeyEvent) -> Option<Action> {
        let popup = self.popup();
        if popup.is_empty() {
            return None;
        }
        let exact = popup.iter().any(|c| c.insert == self.input_text());
        match key.code {
            KeyCode::Up => Some(Action::PopupUp),
            KeyCode::Down => Some(Action::PopupDown),
            KeyCode::Tab if key.modifiers.is_empty() => Some(Action::PopupComplete),
            KeyCode::Enter if key.modifiers.is_empty() && !exact => Some(Action::PopupAccept),
            KeyCode::Esc => Some(Action::PopupClose),
            _ => None,
        }
    }

    /// Handles the workflow actions; `None` leaves the action to the core.
    pub(super) fn apply_workflow(&mut self, action: Action) -> Option<Vec<Effect>> {
        let commands = match action {
            Action::OpenPicker => self.open_picker(),
            Action::CopyLast => self.copy(""),
            Action::PasteImage => vec![Effect::Request(Request::PasteImage)],
            // Inline, the mouse stays the terminal's (its scrollback, its selection).
            Action::ToggleMouse if self.screen_mut().inline => Vec::new(),
            Action::ToggleMouse => {
                self.screen_mut().mouse_captured = !self.screen().mouse_captured;
                self.flash_mut().text = Some(if self.screen().mouse_captured {
                    "mouse: wheel scrolls (F2 lets the terminal select text)".into()
                } else {
                    "mouse: the terminal selects text (F2 for wheel scrolling)".into()
                });
                vec![Effect::SetMouseCapture(self.screen().mouse_captured)]
            }
            Action::EditQueued => {
                let Some(last) = self.queue_mut().pop_last() else {
                    return Some(Vec::new());
                };
                self.set_input(&last);
                self.flash_mut().text =
                    Some("editing a queued prompt: Enter queues it again, Ctrl+C drops it".into());
                vec![self.queue().told()]
            }
            Action::PopupUp => {
                self.input_box_mut().popup_selected =
                    self.input_box().popup_selected.saturating_sub(1);
                Vec::new()
            }
            Action::PopupDown => {
                self.input_box_mut().popup_selected =
                    (self.input_box().popup_selected + 1).min(self.popup().len().saturating_sub(1));
                Vec::new()
            }
            Action::PopupComplete => self.accept_completion(false),
            Action::PopupAccept => self.accept_completion(true),
            Action::PopupClose => {
                self.input_box_mut().popup_closed = true;
                Vec::new()
            }
            Action::Edit(key) => {
                // The first `@` loads the file list for completion, once.
                let commands = if key.code == KeyCode::Char('@') && self.input_box().files.is_none()
                {
                    self.input_box_mut().files = Some(Vec::new());
                    vec![Effect::Request(Request::ListFiles { generation: 0 })]
                } else {
                    Vec::new()
                };
                self.input_box_mut().popup_selected = 0;
                if commands.is_empty() {
                    return None;
                }
                self.input_box_mut().input.input(key);
                commands
            }
            _ => return None,
        };
        Some(commands)
    }

    /// Puts the chosen completion in the input; with `run`, a command that takes no argument
    /// is run as Enter would (Tab only ever completes).
    fn accept_completion(&mut self, run: bool) -> Vec<Effect> {
        let popup = self.popup();
        let Some(choice) = popup
            .get(
                self.input_box()
                    .popup_selected
                    .min(popup.len().saturating_sub(1)),
            )
            .cloned()
        else {
            return Vec::new();
        };
        self.input_box_mut().popup_selected = 0;
        let text = self.input_text();
        if text.starts_with('/') {
            let takes_args = slash::COMMANDS
                .iter()
                .any(|c| c.name == choice.insert && !c.args.is_empty())
                || self
                    .facts()
                    .skills
                    .iter()
                    .any(|(n, _)| format!("/{n}") == choice.insert);
            if takes_args {
                self.set_input(&format!("{} ", choice.insert));
                return Vec::new();
            }
            self.set_input(&choice.insert);
            if !run {
                return Vec::new();
            }
            return self.handle_key(KeyEvent::from(KeyCode::Enter));
        }
        let cut = text.rfind('@').unwrap_or(text.len());
        self.set_input(&format!("{}{}", &text[..cut], choice.insert));
        Vec::new()
    }

    /// `/commands` and `!shell` input; `None` for a prompt for the model.
    pub(super) fn special_input(&mut self, text: &str) -> Option<Vec<Effect>> {
        if let Some(command) = text.strip_prefix('!') {
            let command = command.trim();
            if command.is_empty() {
                self.flash_mut().text = Some("type a command after ! to run it here".into());
                return Some(Vec::new());
            }
            let id = self.next_shell_id();
            self.shells_mut().push(id.clone());
            self.run_mut()
                .working_since
                .get_or_insert_with(std::time::Instant::now);
            self.transcript_mut().push(EntryKind::User(text.to_owned()));
            self.transcript_mut().tool_started(ToolCall {
                id: id.clone(),
                name: "bash".into(),
                arguments: serde_json::json!({ "command": command }).to_string(),
            });
            self.view_mut().scroll = Scroll::Follow;
            return Some(vec![Effect::Request(Request::RunShell {
                id,
                command: command.to_owned(),
            })]);
        }
        if !text.starts_with('/') || text.starts_with("//") {
            return None;
        }
        let (name, rest) = match text.split_once(char::is_whitespace) {
            Some((name, rest)) => (name, rest.trim()),
            None => (text.trim(), ""),
        };
        if let Some(commands) = self.session_command(name, rest) {
            return Some(commands);
        }
        let commands = match name {
            "/help" => {
                self.open_layer(super::help::Help::default());
                Vec::new()
            }
            "/new" => vec![Effect::Request(Request::NewSession)],
            "/resume" => self.open_picker(),
            "/rename" if rest.is_empty() => {
                self.flash_mut().text = Some("usage: /rename NAME".into());
                Vec::new()
            }
            "/rename" => vec![Effect::Request(Request::Rename(rest.to_owned()))],
            "/compact" if self.run_mut().running => {
                self.flash_mut().text = Some("compacting once this turn ends…".into());
                vec![Effect::Request(Request::Compact)]
            }
            "/compact" => {
                self.flash_mut().text = Some("compacting…".into());
                vec![Effect::Request(Request::Compact)]
            }
            "/mode" if rest.is_empty() => {
                self.flash_mut().text = Some(format!(
                    "mode: {} (default, auto-edit, plan, yolo)",
                    self.session().mode
                ));
                Vec::new()
            }
            "/mode" => match Mode::parse(rest) {
                Some(mode) => {
                    self.session_mut().mode = mode;
                    self.mode_switched();
                    vec![Effect::Request(Request::SetMode(mode))]
                }
                None => {
                    self.flash_mut().text = Some(format!(
                        "no mode `{rest}`: default, auto-edit, plan or yolo"
                    ));
                    Vec::new()
                }
            },
            "/model" if rest.is_empty() => {
                let mut text = format!("model: {} (/model NAME switches)", self.session().model);
                if !self.facts().models.is_empty() {
                    text.push_str(
                        "\nknown models of this provider (a name starting with one matches):",
                    );
                    for (name, window) in &self.facts().models {
                        let window = window
                            .map(|w| format!(", {} tokens", crate::session::text::window_size(w)))
                            .unwrap_or_default();
                        text.push_str(&format!("\n  {name}{window}"));
                    }
                }
                self.flash_mut().text = Some(format!("model: {}", self.session().model));
                self.transcript_mut()
                    .notice(text, super::transcript::Tone::Quiet);
                Vec::new()
            }
            "/model" => {
                self.session_mut().model = rest.to_owned();
                self.flash_mut().text = Some(format!("model: {rest} (from the next turn)"));
                vec![Effect::Request(Request::SetModel(rest.to_owned()))]
            }
            "/mcp" => {
                self.open_layer(super::mcp_panel::McpPanel::default());
                Vec::new()
            }
            "/memory" => {
                let (panel, commands) = super::memory_panel::MemoryPanel::open();
                self.open_layer(panel);
                commands
            }
            "/todos" => {
                self.plan_mut().toggle_todos();
                Vec::new()
            }
            "/hooks" => {
                let text = if self.facts().hooks.is_empty() {
                    "no hooks are configured (settings.json \"hooks\"; see: harness9 help hooks)"
                        .to_owned()
                } else {
                    format!("hooks:\n{}", self.facts().hooks.join("\n"))
                };
                self.transcript_mut()
                    .notice(text, super::transcript::Tone::Quiet);
                Vec::new()
            }
            "/copy" => self.copy(rest),
            "/quit" | "/exit" => {
                self.screen_mut().should_quit = true;
                let mut commands = Vec::new();
                if self.run().running {
                    commands.push(Effect::Request(Request::Interrupt));
                }
                commands.push(Effect::Quit);
                commands
            }
            other if super::mcp_panel::is_prompt(self, other) => {
                super::mcp_panel::fetch_prompt(self, other, rest)
            }
            other => {
                let skill = other.trim_start_matches('/');
                if self.facts().skills.iter().any(|(n, _)| n == skill) {
                    let task = if rest.is_empty() {
                        "the task at hand".to_owned()
                    } else {
                        rest.to_owned()
                    };
                    let prompt = format!(
                        "Use the `{skill}` skill: call use_skill with name \"{skill}\", then follow it for this task: {task}"
                    );
                    if self.busy() {
                        return Some(vec![self.queue_mut().push(prompt)]);
                    }
                    // The transcript shows what the user typed; the model gets the request.
                    return Some(self.start_run_shown(text.to_owned(), prompt));
                }
                self.flash_mut().text = Some(match slash::nearest(other, &self.facts().skills) {
                    Some(near) => {
                        format!("unknown command {other}: did you mean {near}? (/help lists them)")
                    }
                    None => format!("unknown command {other} (/help lists them)"),
                });
                Vec::new()
            }
        };
        Some(commands)
    }

    pub(crate) fn open_picker(&mut self) -> Vec<Effect> {
        let (picker, query) = Picker::open();
        self.open_layer(picker);
        vec![query]
    }

    /// The last answer, or its code block `which` (1-based), to the clipboard.
    fn copy(&mut self, which: &str) -> Vec<Effect> {
        let answer = self
            .transcript()
            .entries()
            .iter()
            .rev()
            .find_map(|e| match &e.kind {
                EntryKind::Assistant { text, .. } => Some(text.clone()),
                _ => None,
            });
        let Some(answer) = answer else {
            self.flash_mut().text = Some("there is no answer to copy yet".into());
            return Vec::new();
        };
        let text = match which.trim() {
            "" => answer,
            n => {
                let blocks = slash::code_blocks(&answer);
                match n
                    .parse::<usize>()
                    .ok()
                    .and_then(|i| i.checked_sub(1))
                    .and_then(|i| blocks.get(i))
                {
                    Some(block) => block.clone(),
                    None => {
                        self.flash_mut().text = Some(format!(
                            "the last answer has {} code block(s); /copy N picks one",
                            blocks.len()
                        ));
                        return Vec::new();
                    }
                }
            }
        };
        self.flash_mut().text = Some(format!(
            "copied {} characters to the clipboard",
            text.chars().count()
        ));
        vec![Effect::Copy(text)]
    }
}

/// The text after the last `@` when the input ends in a mention being typed.
fn mention_query(text: &str) -> Option<&str> {
    let last = text.rsplit(char::is_whitespace).next()?;
    let query = last.strip_prefix('@')?;
    (!text.ends_with(char::is_whitespace)).then_some(query)
}

#[cfg(test)]
mod tests;
