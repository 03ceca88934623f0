//! The screen's state and how it changes: keys, pastes, mouse and engine events go in; the
//! commands the runner must carry out (start a run, interrupt, switch mode, quit) come out. No
//! I/O happens here, so the whole app can be driven in tests.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent};
use ratatui::style::{Color, Style};
use ratatui_textarea::TextArea;

use super::dialog_guard::{Clock, DialogGuard};
use super::keymap::{self, Action, Layer};

use super::transcript::{EntryKind, Tone, Transcript};
use crate::engine::{ApprovalDecision, ApprovalRequest, TokenUpdate};
use crate::planning::{Mode, TodoItem};

/// What the runner must do after an update.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// Start a run with this prompt.
    Submit(String),
    /// Cancel the running turn.
    Interrupt,
    /// Switch the engine (and the stored session) to this mode.
    SetMode(Mode),
    Quit,
    /// Store the queued prompts.
    QueueChanged(Vec<String>),
    NewSession,
    ResumeSession(String),
    Rename(String),
    Compact,
    SetModel(String),
    /// Put text on the clipboard (OSC 52).
    Copy(String),
    SetMouseCapture(bool),
    /// Run a command the user typed after `!`; `id` names its block.
    RunShell {
        id: String,
        command: String,
    },
    QuerySessions {
        query: String,
        all: bool,
        generation: u64,
    },
    ListFiles,
    /// Keep going by itself while the todo list has open items.
    SetAutoContinue(bool),
    /// Empty the todo list (a discarded plan).
    ClearTodos,
    /// Write the transcript as Markdown to a new `file` in the working directory.
    Export {
        file: String,
        markdown: String,
    },
    /// The user answered the folder trust question: trust it (and remember), or not for now.
    TrustFolder(bool),
    /// The user answered the question about `extension`: approve it, or not for now.
    ApproveExtension(bool),
    /// Start this MCP server again (`/mcp`).
    McpReconnect(String),
    /// Stop this MCP server for the rest of the session (`/mcp`).
    McpDisable(String),
    /// The conversation's prompts (`/rewind`'s list).
    ListPrompts,
    /// The session's background commands (`/ps`).
    ListJobs,
    /// Restore files or the conversation (`/undo`, `/rewind`).
    Restore {
        what: crate::session::Restore,
        conflicts: crate::checkpoint::Conflicts,
    },
    /// Fetch an MCP server's prompt (`/mcp__server__prompt ARGS`) and send it as the prompt.
    McpPrompt {
        command: String,
        args: String,
    },
    /// The memories matching `query` (all when blank), for `/memory`.
    ListMemories {
        query: String,
        generation: u64,
    },
    /// Edit memory `id`'s content, or forget it (`None`); then list as `ListMemories`.
    ChangeMemory {
        id: i64,
        content: Option<String>,
        query: String,
        generation: u64,
    },
    /// Read a stored session's conversation (a sub-agent's, for its transcript view).
    ReadSession(String),
}

/// Answers the runner brings back from work done off the UI task.
#[derive(Debug)]
pub enum AppEvent {
    Sessions {
        generation: u64,
        hits: Vec<crate::memory::SearchHit>,
    },
    Files(Vec<String>),
    ShellDone {
        id: String,
        result: crate::schema::ToolResult,
        duration: Duration,
    },
    Compacted(Result<Option<crate::engine::CompactionInfo>, String>),
    /// Another session is now the current one.
    SessionLoaded {
        session_id: String,
        mode: Mode,
        messages: Vec<crate::schema::Message>,
        todos: Vec<TodoItem>,
        queue: Vec<String>,
    },
    Flash(String),
    /// The loaded session's sub-agents' sessions by task call id (after `SessionLoaded`).
    ChildSessions(Vec<(String, String)>),
    /// A stored session's conversation, as `Command::ReadSession` asked (or why it could not be
    /// read).
    SessionRead {
        session_id: String,
        messages: Result<Vec<crate::schema::Message>, String>,
    },
    /// `/rewind`'s list.
    Prompts(Vec<crate::checkpoint::PromptPoint>),
    /// What `/undo` or `/rewind` did, or must ask.
    Restored(std::sync::Arc<crate::session::Restored>),
    /// Something asked of the session failed (what kind decides where it is shown).
    Failed(crate::engine::Failure),
    /// The files the prompt just sent carries, with the bytes attached of each.
    Attached(Vec<(String, usize)>),
    /// An answer to `Command::ListMemories` or `Command::ChangeMemory`.
    Memories {
        generation: u64,
        memories: Vec<crate::memory::long_term::MemoryRecord>,
    },
    /// The MCP servers as they stand, and what went wrong with them since the last time.
    Mcp {
        servers: Vec<super::mcp_panel::McpView>,
        notices: Vec<String>,
    },
    /// A server's prompt the user asked for: its text (sent as the prompt), or why not.
    McpPrompt {
        command: String,
        result: Result<String, String>,
    },
}

/// Facts about the session for the status line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionView {
    pub session_id: String,
    pub provider: String,
    pub model: String,
    pub workdir: String,
    pub mode: Mode,
    pub context_window: u64,
}

/// Where the transcript view is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scroll {
    /// Pinned to the bottom: new output stays in view.
    Follow,
    /// Reading older text: `top` is the first visible line, counted from the top, so output
    /// arriving below never moves the view.
    Anchored { top: usize },
}

pub struct App {
    pub session: SessionView,
    pub transcript: Transcript,
    pub input: TextArea<'static>,
    pub(super) history: Vec<String>,
    pub(super) history_index: Option<usize>,
    pub approvals: VecDeque<ApprovalRequest>,
    pub deny_reason: Option<TextArea<'static>>,
    pub help: bool,
    pub show_todos: bool,
    pub todos: Vec<TodoItem>,
    pub scroll: Scroll,
    /// Lines to move the view by at the next draw (negative is up), and a jump to the top.
    pub pending_scroll: i64,
    pub pending_top: bool,
    pub expanded: bool,
    pub running: bool,
    pub working_since: Option<Instant>,
    pub turn: u32,
    pub tokens: Option<TokenUpdate>,
    /// The provider's counts added up since this screen opened, and their cost.
    pub spend: Spend,
    /// The same by model, in the order first used (`/cost` lists it when there is more than one).
    pub spend_by_model: Vec<(String, Spend)>,
    /// Each sub-agent's model, by task id (from its nested `SessionStarted`), for `/cost`.
    pub child_models: std::collections::HashMap<String, String>,
    pub retry: Option<String>,
    /// The command hook that runs now (its event and command).
    pub hook_running: Option<String>,
    pub flash: Option<String>,
    /// When the flash goes away by itself (the Ctrl+C hint lives for its second).
    pub(super) flash_until: Option<Instant>,
    pub(super) last_ctrl_c: Option<Instant>,
    /// `!` commands running now, by block id; Esc stops them as it stops a run.
    pub shells: Vec<String>,
    /// The completion popup was closed with Esc (until the input changes).
    pub(super) popup_closed: bool,
    /// How far the help or approval overlay is scrolled when it does not fit.
    pub overlay_scroll: u16,
    /// When the model was last heard from in this run (deltas, tools, any event).
    pub(super) last_heard: Option<Instant>,
    /// Retries seen since the model last answered: numbers the next attempt.
    pub(super) retry_streak: u32,
    /// Tools of the run started and not finished (the model is not what is waited for).
    pub(super) tools_running: usize,
    /// The session's name, once known (`/rename`).
    pub session_name: Option<String>,
    pub spinner: usize,
    pub should_quit: bool,
    /// The transcript viewport's height at the last draw (a page).
    pub viewport: u16,
    /// Prompts typed while the agent worked, sent in order when a turn ends.
    pub queue: Vec<String>,
    pub picker: Option<super::picker::Picker>,
    /// The highlighted entry of the completion popup.
    pub popup_selected: usize,
    /// The working directory's files, for `@` completion (loaded on the first `@`).
    pub files: Option<Vec<String>>,
    /// Long pastes shown collapsed in the input: placeholder → the whole text.
    pub pastes: Vec<(String, String)>,
    pub mouse_captured: bool,
    /// Skills as (name, description), offered as slash commands.
    pub skills: Vec<(String, String)>,
    /// The configured command hooks, one line each (`/hooks`).
    pub hooks: Vec<String>,
    /// The catalogue's models for the provider, with their context windows (`/model`).
    pub models: Vec<(String, Option<u64>)>,
    shell_count: usize,
    /// A plan-mode run ended: review the plan once the todo list is in.
    pub review_pending: bool,
    /// Feedback typed after choosing "keep planning".
    pub review_feedback: Option<TextArea<'static>>,
    pub auto_continue: bool,
    /// The folder whose trust is being asked (CONTRACT "Folder trust"), while it is.
    pub trust: Option<String>,
    /// The project extension being asked about at start, while it is.
    pub extension: Option<crate::config::approved::PendingExtension>,
    /// The time keys are read at (tests set it).
    pub clock: Clock,
    /// How long the dialog on top has been on screen.
    pub(super) dialogs: DialogGuard,
    /// The commands' sandbox for the status line (`sandbox: workspace-write`), once known.
    pub sandbox: Option<String>,
    /// The session's MCP servers, as last seen (`/mcp`, the status line).
    pub mcp: Vec<super::mcp_panel::McpView>,
    /// `/mcp` is open, with this server selected.
    pub mcp_panel: Option<usize>,
    /// `/memory` is open.
    pub memory_panel: Option<super::memory_panel::MemoryPanel>,
    /// A sub-agent's transcript, while it is open.
    pub child_view: Option<super::subagents::ChildView>,
    /// `/rewind`'s list, while it is open.
    pub rewind: Option<super::rewind::RewindList>,
    /// A restore asking about files changed since its checkpoint.
    pub restore_question: Option<super::rewind::RestoreQuestion>,
    /// The session's background commands (`/ps`, the status line).
    pub jobs: super::jobs::JobsView,
}

/// Tokens by kind and their cost, added up from the provider's counts.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Spend {
    /// Prompt tokens not read from or written to a cache.
    pub input: u64,
    pub cache_read: u64,
    pub cache_write: u64,
    pub output: u64,
    pub cost_usd: f64,
    /// Whether a call had a known cost (the model's prices are in the catalogue).
    pub priced: bool,
}

impl Spend {
    pub fn add(&mut self, update: &TokenUpdate) {
        if update.estimated {
            return;
        }
        let cached = update.cache_read_tokens + update.cache_write_tokens;
        self.input += update.input_tokens.saturating_sub(cached);
        self.cache_read += update.cache_read_tokens;
        self.cache_write += update.cache_write_tokens;
        self.output += update.output_tokens;
        if let Some(cost) = update.cost_usd {
            self.cost_usd += cost;
            self.priced = true;
        }
    }

    /// `$0.0123`, or `$1.23` from a dollar on.
    pub fn dollars(&self) -> String {
        if self.cost_usd >= 1.0 {
            format!("${:.2}", self.cost_usd)
        } else {
            format!("${:.4}", self.cost_usd)
        }
    }
}

pub fn new_input() -> TextArea<'static> {
    let mut input = TextArea::default();
    input.set_cursor_line_style(Style::default());
    input.set_placeholder_text("Ask harness9 to do something…   (? for keys)");
    input.set_placeholder_style(Style::new().fg(Color::DarkGray));
    input.set_wrap_mode(ratatui_textarea::WrapMode::Word);
    input
}

impl App {
    pub fn new(session: SessionView) -> Self {
        App {
            session,
            transcript: Transcript::default(),
            input: new_input(),
            history: Vec::new(),
            history_index: None,
            approvals: VecDeque::new(),
            deny_reason: None,
            help: false,
            show_todos: false,
            todos: Vec::new(),
            scroll: Scroll::Follow,
            pending_scroll: 0,
            pending_top: false,
            expanded: false,
            running: false,
            working_since: None,
            turn: 0,
            tokens: None,
            spend: Spend::default(),
            spend_by_model: Vec::new(),
            child_models: Default::default(),
            retry: None,
            hook_running: None,
            flash: None,
            flash_until: None,
            last_ctrl_c: None,
            shells: Vec::new(),
            popup_closed: false,
            overlay_scroll: 0,
            last_heard: None,
            retry_streak: 0,
            tools_running: 0,
            session_name: None,
            spinner: 0,
            should_quit: false,
            viewport: 20,
            queue: Vec::new(),
            picker: None,
            popup_selected: 0,
            files: None,
            pastes: Vec::new(),
            mouse_captured: true,
            skills: Vec::new(),
            hooks: Vec::new(),
            models: Vec::new(),
            shell_count: 0,
            review_pending: false,
            review_feedback: None,
            auto_continue: false,
            trust: None,
            extension: None,
            clock: Clock::system(),
            dialogs: DialogGuard::default(),
            sandbox: None,
            mcp: Vec::new(),
            mcp_panel: None,
            memory_panel: None,
            child_view: None,
            rewind: None,
            restore_question: None,
            jobs: Default::default(),
        }
    }

    pub(super) fn next_shell_id(&mut self) -> String {
        self.shell_count += 1;
        format!("shell-{}", self.shell_count)
    }

    /// Earlier prompts, oldest first (for Up).
    pub fn set_history(&mut self, prompts: Vec<String>) {
        self.history = prompts;
    }

    pub fn input_text(&self) -> String {
        self.input.lines().join("\n")
    }

    pub(super) fn input_is_empty(&self) -> bool {
        self.input.lines().iter().all(|l| l.is_empty())
    }

    pub(super) fn set_input(&mut self, text: &str) {
        self.input = new_input();
        self.input.insert_str(text);
    }

    /// Whether something moves on screen without input (the spinner, a task's clock; a
    /// background task runs on after its turn).
    pub fn is_animating(&self) -> bool {
        self.busy() || self.transcript.any_task_running()
    }

    /// Whether a run or a `!` command is going on (Esc stops it; prompts are queued).
    pub fn busy(&self) -> bool {
        self.running || !self.shells.is_empty()
    }

    pub fn tick(&mut self) {
        self.spinner = self.spinner.wrapping_add(1);
    }

    pub fn handle_key(&mut self, key: KeyEvent) -> Vec<Command> {
        if let Some(commands) = super::mcp_panel::key(self, key) {
            return commands;
        }
        if let Some(commands) = super::memory_panel::key(self, key) {
            return commands;
        }
        if let Some(commands) = super::rewind::key(self, key) {
            return commands;
        }
        if self.layer() == Layer::PlanReview
            && let Some(commands) = self.review_feedback_key(key)
        {
            return commands;
        }
        let browsing = self.history_index.is_some();
        let mut action = keymap::action(self.layer(), key, self.input_is_empty());
        if self.layer() == Layer::Main {
            if let Some(popup_action) = self.popup_action(key) {
                action = popup_action;
            } else if browsing && matches!(key.code, KeyCode::Up | KeyCode::Down) {
                action = if key.code == KeyCode::Up {
                    Action::HistoryPrev
                } else {
                    Action::HistoryNext
                };
            } else if action == Action::HistoryPrev && !self.queue.is_empty() {
                action = Action::EditQueued;
            }
        }
        if !matches!(action, Action::ClearOrQuit | Action::Ignore) {
            self.last_ctrl_c = None;
        }
        if !self.dialog_takes(action) {
            return Vec::new();
        }
        self.apply(action)
    }

    pub(super) fn apply(&mut self, action: Action) -> Vec<Command> {
        if let Some(commands) = self.apply_tasks(action) {
            return commands;
        }
        if let Some(commands) = self.apply_workflow(action) {
            return commands;
        }
        if let Some(commands) = self.apply_review(action) {
            return commands;
        }
        match action {
            Action::Submit => return self.submit(),
            Action::Newline => self.input.insert_newline(),
            Action::Interrupt => return self.interrupt(),
            Action::ClearOrQuit => return self.clear_or_quit(),
            Action::QuitIfEmpty => {
                if self.input_is_empty() {
                    return self.quit();
                }
                self.input.delete_next_char();
            }
            Action::HistoryPrev => self.recall(-1),
            Action::HistoryNext => self.recall(1),
            Action::ScrollUp(n) if self.overlay_scrolls() => {
                self.overlay_scroll = self.overlay_scroll.saturating_sub(n)
            }
            Action::ScrollDown(n) if self.overlay_scrolls() => {
                self.overlay_scroll = self.overlay_scroll.saturating_add(n)
            }
            Action::PageUp if self.overlay_scrolls() => {
                self.overlay_scroll = self.overlay_scroll.saturating_sub(self.viewport / 2)
            }
            Action::PageDown if self.overlay_scrolls() => {
                self.overlay_scroll = self.overlay_scroll.saturating_add(self.viewport / 2)
            }
            Action::ScrollUp(n) => self.pending_scroll -= i64::from(n),
            Action::ScrollDown(n) => self.pending_scroll += i64::from(n),
            Action::PageUp => {
                self.pending_scroll -= i64::from(self.viewport.saturating_sub(2).max(1))
            }
            Action::PageDown => {
                self.pending_scroll += i64::from(self.viewport.saturating_sub(2).max(1))
            }
            Action::Top => self.pending_top = true,
            Action::Bottom => {
                self.scroll = Scroll::Follow;
                self.pending_scroll = 0;
            }
            Action::CycleMode => {
                self.session.mode = self.session.mode.cycle();
                self.flash = Some(format!("mode: {} (from the next turn)", self.session.mode));
                return vec![Command::SetMode(self.session.mode)];
            }
            Action::Help => {
                self.help = true;
                self.overlay_scroll = 0;
            }
            Action::TrustFolder(trusted) => return self.answer_trust(trusted),
            Action::ApproveExtension(yes) => {
                self.extension = None;
                return vec![Command::ApproveExtension(yes)];
            }
            Action::ToggleTodos => self.show_todos = !self.show_todos,
            Action::ToggleExpand => self.expanded = !self.expanded,
            Action::ApproveOnce => self.answer(ApprovalDecision::AllowOnce),
            Action::ApproveAlways => self.answer(ApprovalDecision::AllowAlways),
            Action::ApproveRule => self.answer(ApprovalDecision::AllowRule),
            Action::Deny => self.answer(ApprovalDecision::Deny { reason: None }),
            Action::DenyWithReason => {
                let mut reason = new_input();
                reason.set_placeholder_text("Tell the model what to do instead, then Enter");
                self.deny_reason = Some(reason);
            }
            Action::SendDenyReason => {
                let text = self
                    .deny_reason
                    .take()
                    .map(|r| r.lines().join("\n"))
                    .unwrap_or_default();
                let reason = (!text.trim().is_empty()).then_some(text);
                self.answer(ApprovalDecision::Deny { reason });
            }
            Action::Close => {
                if self.help {
                    self.help = false;
                } else {
                    self.deny_reason = None;
                }
            }
            Action::Edit(key) => match &mut self.deny_reason {
                Some(reason) => super::editing::edit(reason, key),
                None => {
                    super::editing::edit(&mut self.input, key);
                    self.history_index = None;
                    self.popup_closed = false;
                }
            },
            _ => {}
        }
        Vec::new()
    }

    pub(super) fn quit(&mut self) -> Vec<Command> {
        self.should_quit = true;
        let mut commands = Vec::new();
        if self.running {
            commands.push(Command::Interrupt);
        }
        commands.push(Command::Quit);
        commands
    }

    fn submit(&mut self) -> Vec<Command> {
        let typed = self.input_text();
        if typed.trim().is_empty() {
            // Enter on an empty input sends the next queued prompt, if any.
            if !self.busy() && !self.queue.is_empty() {
                let next = self.queue.remove(0);
                let mut commands = self.start_run(next);
                commands.push(Command::QueueChanged(self.queue.clone()));
                return commands;
            }
            return Vec::new();
        }
        let text = self.expand_pastes(&typed);
        self.history.push(text.clone());
        self.history_index = None;
        self.set_input("");
        if let Some(commands) = self.special_input(&text) {
            return commands;
        }
        // The files attached are named with their sizes when the core has read them.
        if let Some(missing) = self.missing_mentions(&text) {
            self.transcript.notice(missing, Tone::Warning);
        }
        if self.busy() {
            self.queue.push(text);
            self.flash = Some("queued: it is sent when the current turn ends (Up edits it)".into());
            return vec![Command::QueueChanged(self.queue.clone())];
        }
        self.start_run(text)
    }

    /// Sends `text` as a prompt now, or queues it while a run is going.
    pub(super) fn send_or_queue(&mut self, text: String) -> Vec<Command> {
        if self.running {
            self.queue.push(text);
            return vec![Command::QueueChanged(self.queue.clone())];
        }
        self.start_run(text)
    }

    /// Shows the prompt and asks the runner to send it.
    pub(super) fn start_run(&mut self, text: String) -> Vec<Command> {
        self.start_run_shown(text.clone(), text)
    }

    /// Sends `prompt` while the transcript shows `shown` (what the user typed: `/init`, a
    /// skill's command, a collapsed paste).
    pub(super) fn start_run_shown(&mut self, shown: String, text: String) -> Vec<Command> {
        self.transcript.push(EntryKind::User(shown));
        self.running = true;
        self.working_since = Some(Instant::now());
        self.last_heard = Some(self.clock.now());
        self.retry = None;
        self.retry_streak = 0;
        self.flash = None;
        self.scroll = Scroll::Follow;
        vec![Command::Submit(text)]
    }

    fn answer(&mut self, decision: ApprovalDecision) {
        self.overlay_scroll = 0;
        if let Some(request) = self.approvals.pop_front() {
            if let ApprovalDecision::Deny {
                reason: Some(reason),
            } = &decision
            {
                self.flash = Some(format!("denied: {reason}"));
            }
            request.respond(decision);
        }
    }
}
