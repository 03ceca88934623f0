//! The screen's state and how it changes: keys, pastes, mouse and the session's updates go in;
//! what the app wants done comes out (`Effect`: the session's `Request`s, and the few effects of
//! the terminal itself). No I/O happens here, so the whole app can be driven in tests.

use std::collections::VecDeque;
use std::time::Instant;

use ratatui::style::{Color, Style};
use ratatui_textarea::TextArea;

use super::dialog_guard::{Clock, DialogGuard};

use super::transcript::Transcript;
use crate::engine::{ApprovalRequest, TokenUpdate};
use crate::session::{Mode, Request, TodoItem};

/// What the app wants done after a key, a paste or an update: a request to the session core
/// (sent as it is), or one of the few effects on the terminal and the start that the runner
/// carries out itself and that are no business of the core.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Effect {
    /// Ask the session core.
    Request(Request),
    /// Leave the TUI (the session is closed first).
    Quit,
    /// Put text on the clipboard: OSC 52, written to the terminal the TUI owns.
    Copy(String),
    SetMouseCapture(bool),
    /// The user answered the folder trust question: trust it (and remember), or not for now.
    TrustFolder(bool),
    /// The user answered the question about the extension shown: approve it, or not for now.
    ApproveExtension(bool),
}

impl From<Request> for Effect {
    fn from(request: Request) -> Self {
        Effect::Request(request)
    }
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

/// What the opened session tells the screen besides its `SessionView`.
pub(super) struct Facts {
    /// Skills as (name, description), offered as slash commands.
    pub skills: Vec<(String, String)>,
    /// The configured command hooks, one line each (`/hooks`).
    pub hooks: Vec<String>,
    /// The catalogue's models for the provider, with their context windows (`/model`).
    pub models: Vec<(String, Option<u64>)>,
    /// The commands' sandbox for the status line.
    pub sandbox: String,
    /// Which web search applies, for `/status`.
    pub web_search: String,
    /// Drawn inline in the main screen (`--no-alt-screen`).
    pub inline: bool,
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
    /// How far the approval overlay is scrolled when it does not fit.
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
    /// The highlighted entry of the completion popup.
    pub popup_selected: usize,
    /// The working directory's files, for `@` completion (loaded on the first `@`).
    pub files: Option<Vec<String>>,
    /// Long pastes shown collapsed in the input: placeholder → the whole text.
    pub pastes: Vec<(String, String)>,
    pub mouse_captured: bool,
    /// Drawn inline in the main screen (`--no-alt-screen`): the body shows only what is not in
    /// the scrollback yet (`inline`), and the mouse is the terminal's.
    pub inline: bool,
    /// What the last frame settled or found (`frame.rs`).
    pub(super) frame: super::frame::FrameState,
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
    /// The time keys are read at (tests set it).
    pub clock: Clock,
    /// How long the dialog on top has been on screen.
    pub(super) dialogs: DialogGuard,
    /// The commands' sandbox for the status line (`sandbox: workspace-write`), once known.
    pub sandbox: Option<String>,
    /// Which web search applies (`/status`), once the session is open.
    pub(super) web_search: Option<String>,
    /// The session's MCP servers, as last seen (`/mcp`, the status line).
    pub mcp: Vec<super::mcp_panel::McpView>,
    /// The layers opened over the conversation (`/mcp`, `/memory`, `/rewind`, ...).
    pub(super) stack: super::compositor::Stack,
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
    /// Whether some call's tokens are harness9's estimate (its server sent no usage).
    pub estimated: bool,
}

impl Spend {
    pub fn add(&mut self, update: &TokenUpdate) {
        if !update.counts_toward_totals() {
            return;
        }
        self.estimated |= update.estimated;
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
            popup_selected: 0,
            files: None,
            pastes: Vec::new(),
            mouse_captured: true,
            inline: false,
            frame: Default::default(),
            skills: Vec::new(),
            hooks: Vec::new(),
            models: Vec::new(),
            shell_count: 0,
            review_pending: false,
            review_feedback: None,
            auto_continue: false,
            clock: Clock::system(),
            dialogs: DialogGuard::default(),
            sandbox: None,
            web_search: None,
            mcp: Vec::new(),
            stack: Default::default(),
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

    /// The session is open: the screen shows it from now on.
    pub(super) fn show_session(&mut self, session: SessionView, facts: Facts) {
        self.session = session;
        self.skills = facts.skills;
        self.hooks = facts.hooks;
        self.models = facts.models;
        self.sandbox = Some(facts.sandbox);
        self.web_search = Some(facts.web_search);
        self.inline = facts.inline;
    }

    /// Opens `layer` over whatever is on screen.
    pub(super) fn open_layer(&mut self, layer: impl super::compositor::Layer) {
        self.stack.open(Box::new(layer));
    }

    pub fn tick(&mut self) {
        self.spinner = self.spinner.wrapping_add(1);
    }
}
