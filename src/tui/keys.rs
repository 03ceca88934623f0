//! What a key does to the app: the layer on top takes it first (a panel, a dialog, the plan
//! review), then the keymap's action for the layer; Enter submits (a command, a `!` shell line,
//! or a prompt sent now or queued behind the run), and an approval's answer goes back to the
//! engine.

use std::time::Instant;

use crossterm::event::{KeyCode, KeyEvent};

use super::app::{App, Effect, Scroll};
use super::compositor::Outcome;
use super::keymap::{self, Action, Focus};
use super::transcript::{EntryKind, Tone};
use crate::session::Request;

impl App {
    pub fn handle_key(&mut self, key: KeyEvent) -> Vec<Effect> {
        // An opened layer with nothing drawn over it takes the key first.
        if self.stack_focused() {
            if let Some((mode, dialog)) = self
                .stack()
                .top()
                .map(|top| (top.mode(), top.dialog().is_some()))
            {
                let action = keymap::action(mode, key, true);
                // Another key between two Ctrl+C's: the second does not quit.
                if !matches!(action, Action::ClearOrQuit | Action::Ignore) {
                    self.flash_mut().last_ctrl_c = None;
                }
                // A one-key dialog takes its answers only once it has been on screen a moment.
                if dialog && !self.dialog_takes(action) {
                    return Vec::new();
                }
            }
            let outcome = self.with_stack(|stack, shared| stack.handle_key(key, shared));
            if let Some(outcome) = outcome {
                return self.take_outcome(outcome);
            }
        }
        let browsing = self.input_box().history_index.is_some();
        let mut action = keymap::action(self.layer(), key, self.input_is_empty());
        if self.layer() == Focus::Main {
            if let Some(popup_action) = self.popup_action(key) {
                action = popup_action;
            } else if browsing && matches!(key.code, KeyCode::Up | KeyCode::Down) {
                action = if key.code == KeyCode::Up {
                    Action::HistoryPrev
                } else {
                    Action::HistoryNext
                };
            } else if action == Action::HistoryPrev && !self.queue().is_empty() {
                action = Action::EditQueued;
            }
        }
        if !matches!(action, Action::ClearOrQuit | Action::Ignore) {
            self.flash_mut().last_ctrl_c = None;
        }
        if !self.dialog_takes(action) {
            return Vec::new();
        }
        self.apply(action)
    }

    /// What an opened layer wanted after taking a key: its requests, and its word for the
    /// status line. What the requests change on screen changes here as they go: a prompt is
    /// shown and started as a typed one is, a mode and auto-continue are shown as set.
    pub(super) fn take_outcome(&mut self, outcome: Outcome) -> Vec<Effect> {
        let mut effects = Vec::new();
        for effect in outcome.commands {
            match effect {
                Effect::Request(Request::Submit(prompt)) => effects.extend(self.start_run(prompt)),
                Effect::Request(Request::SetMode(mode)) => {
                    self.session_mut().mode = mode;
                    effects.push(effect);
                }
                Effect::Request(Request::SetAutoContinue(on)) => {
                    self.plan_mut().set_auto_continue(on);
                    effects.push(effect);
                }
                effect => effects.push(effect),
            }
        }
        if outcome.flash.is_some() {
            self.flash_mut().text = outcome.flash;
        }
        effects
    }

    pub(super) fn apply(&mut self, action: Action) -> Vec<Effect> {
        if let Some(commands) = self.apply_tasks(action) {
            return commands;
        }
        if let Some(commands) = self.apply_workflow(action) {
            return commands;
        }
        match action {
            Action::Submit => return self.submit(),
            Action::Newline => self.input_box_mut().input.insert_newline(),
            Action::Interrupt => return self.interrupt(),
            Action::ClearOrQuit => return self.clear_or_quit(),
            Action::QuitIfEmpty => {
                if self.input_is_empty() {
                    return self.quit();
                }
                self.input_box_mut().input.delete_next_char();
            }
            Action::HistoryPrev => self.recall(-1),
            Action::HistoryNext => self.recall(1),
            Action::ScrollUp(n) => self.view_mut().pending_scroll -= i64::from(n),
            Action::ScrollDown(n) => self.view_mut().pending_scroll += i64::from(n),
            Action::PageUp => {
                self.view_mut().pending_scroll -=
                    i64::from(self.view().viewport.saturating_sub(2).max(1))
            }
            Action::PageDown => {
                self.view_mut().pending_scroll +=
                    i64::from(self.view().viewport.saturating_sub(2).max(1))
            }
            Action::Top => self.view_mut().pending_top = true,
            Action::Bottom => {
                self.view_mut().scroll = Scroll::Follow;
                self.view_mut().pending_scroll = 0;
            }
            Action::CycleMode => {
                self.session_mut().mode = self.session_mut().mode.cycle();
                self.mode_switched();
                return vec![Effect::Request(Request::SetMode(self.session().mode))];
            }
            Action::Help => self.open_layer(super::help::Help::default()),
            Action::ToggleTodos => self.plan_mut().toggle_todos(),
            Action::ToggleExpand => self.view_mut().expanded = !self.view().expanded,
            Action::Edit(key) => {
                super::editing::edit(&mut self.input_box_mut().input, key);
                self.input_box_mut().history_index = None;
                self.input_box_mut().popup_closed = false;
            }
            _ => {}
        }
        Vec::new()
    }

    pub(super) fn quit(&mut self) -> Vec<Effect> {
        self.screen_mut().should_quit = true;
        let mut commands = Vec::new();
        if self.run().running {
            commands.push(Effect::Request(Request::Interrupt));
        }
        commands.push(Effect::Quit);
        commands
    }

    fn submit(&mut self) -> Vec<Effect> {
        let typed = self.input_text();
        if typed.trim().is_empty() {
            // Enter on an empty input sends the next queued prompt, if any.
            return self.start_next_queued().unwrap_or_default();
        }
        let (shown, text) = self.expand_pastes(&typed);
        self.input_box_mut().history.push(text.clone());
        self.input_box_mut().history_index = None;
        self.set_input("");
        if let Some(commands) = self.special_input(&text) {
            return commands;
        }
        // The files attached are named with their sizes when the core has read them.
        if let Some(missing) = self.missing_mentions(&text) {
            self.transcript_mut().notice(missing, Tone::Warning);
        }
        if self.busy() {
            let told = self.queue_mut().push(text);
            self.flash_mut().text =
                Some("queued: it is sent when the current turn ends (Up edits it)".into());
            return vec![told];
        }
        self.start_run_shown(shown, text)
    }

    /// Sends `text` as a prompt now, or queues it while a run is going.
    pub(super) fn send_or_queue(&mut self, text: String) -> Vec<Effect> {
        if self.run().running {
            return vec![self.queue_mut().push(text)];
        }
        self.start_run(text)
    }

    /// Shows the prompt and asks the runner to send it.
    pub(super) fn start_run(&mut self, text: String) -> Vec<Effect> {
        self.start_run_shown(text.clone(), text)
    }

    /// Sends `prompt` while the transcript shows `shown` (what the user typed: `/init`, a
    /// skill's command, a collapsed paste).
    pub(super) fn start_run_shown(&mut self, shown: String, text: String) -> Vec<Effect> {
        self.transcript_mut().push(EntryKind::User(shown));
        // A new run: a plan waiting for review is left (the run's own plan is reviewed at its
        // end).
        self.plan_mut().run_started();
        self.stack_mut().close::<super::plan_review::PlanReview>();
        self.run_mut().running = true;
        self.run_mut().working_since = Some(Instant::now());
        self.run_mut().last_heard = Some(self.clock().now());
        self.run_mut().retry = None;
        self.run_mut().retry_streak = 0;
        self.flash_mut().text = None;
        self.view_mut().scroll = Scroll::Follow;
        vec![Effect::Request(Request::Submit(text))]
    }
}
