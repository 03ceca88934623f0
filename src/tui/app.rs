//! The screen's state and how it changes: keys, pastes, mouse and the session's updates go in;
//! what the app wants done comes out (`Effect`: the session's `Request`s, and the few effects of
//! the terminal itself). No I/O happens here, so the whole app can be driven in tests.

use ratatui::style::{Color, Style};
use ratatui_textarea::TextArea;

use super::dialog_guard::{Clock, DialogGuard};

use super::flash::Flash;
use super::input_box::InputBox;
use super::plan_state::PlanState;
use super::queue::PromptQueue;
use super::run_state::RunState;
use super::screen_state::ScreenState;
pub use super::spending::Spend;
use super::spending::Spending;
use super::transcript::Transcript;
use super::transcript_view::TranscriptView;
use crate::session::{Mode, Request};

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

/// What the opened session tells the screen besides its `SessionView` (empty until it opens).
#[derive(Debug, Default)]
pub(super) struct Facts {
    /// Skills as (name, description), offered as slash commands.
    pub skills: Vec<(String, String)>,
    /// The configured command hooks, one line each (`/hooks`).
    pub hooks: Vec<String>,
    /// The catalogue's models for the provider, with their context windows (`/model`).
    pub models: Vec<(String, Option<u64>)>,
    /// The commands' sandbox for the status line (`sandbox: workspace-write`), once known.
    pub sandbox: Option<String>,
    /// Which web search applies, for `/status`, once known.
    pub web_search: Option<String>,
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
    session: SessionView,
    transcript: Transcript,
    /// What the provider's counts cost, in all and by model (`/cost`, the status line).
    spending: Spending,
    /// The run going on: its turn, tokens, retry, the hook that runs.
    run: RunState,
    /// The text being typed, its history, pastes and completion popup.
    input_box: InputBox,
    /// The one-line message on the status line.
    flash: Flash,
    /// The todo list, the plan's review, auto-continue.
    plan: PlanState,
    /// Where the transcript view is, and whether tool output is expanded.
    view: TranscriptView,
    /// `!` commands running now, by block id; Esc stops them as it stops a run.
    shells: Vec<String>,
    /// The session's name, once known (`/rename`).
    session_name: Option<String>,
    /// Prompts typed while the agent worked, sent in order when a turn ends.
    queue: PromptQueue,
    /// What the opened session told besides its `SessionView` (skills, hooks, models, ...).
    facts: Facts,
    shell_count: usize,
    /// The time keys are read at (tests set it).
    clock: Clock,
    /// How long the dialog on top has been on screen.
    dialogs: DialogGuard,
    /// The session's MCP servers, as last seen (`/mcp`, the status line).
    mcp: Vec<super::mcp_panel::McpView>,
    /// The layers opened over the conversation (`/mcp`, `/memory`, `/rewind`, ...).
    stack: super::compositor::Stack,
    /// The session's background commands (`/ps`, the status line).
    jobs: super::jobs::JobsView,
    /// The spinner, the mouse, inline drawing, the last frame, quitting.
    screen: ScreenState,
}

pub fn new_input() -> TextArea<'static> {
    let mut input = TextArea::default();
    input.set_cursor_line_style(Style::default());
    input.set_placeholder_text("Ask harness9 to do something…   (? for keys)");
    input.set_placeholder_style(Style::new().fg(Color::DarkGray));
    // Long words (a path, a URL) are cut at the edge rather than run past it.
    input.set_wrap_mode(ratatui_textarea::WrapMode::WordOrGlyph);
    input
}

impl App {
    pub fn new(session: SessionView) -> Self {
        App {
            session,
            transcript: Transcript::default(),
            spending: Spending::default(),
            run: RunState::default(),
            input_box: InputBox::default(),
            flash: Flash::default(),
            screen: ScreenState::default(),
            plan: PlanState::default(),
            view: TranscriptView::default(),
            shells: Vec::new(),
            session_name: None,
            queue: PromptQueue::default(),
            facts: Facts::default(),
            shell_count: 0,
            clock: Clock::system(),
            dialogs: DialogGuard::default(),
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
        self.input_box.history = prompts;
    }

    pub fn input_text(&self) -> String {
        self.input_box.input.lines().join("\n")
    }

    pub(super) fn input_is_empty(&self) -> bool {
        self.input_box.input.lines().iter().all(|l| l.is_empty())
    }

    pub(super) fn set_input(&mut self, text: &str) {
        self.input_box.input = new_input();
        self.input_box.input.insert_str(text);
    }

    /// Whether something moves on screen without input (the spinner, a task's clock; a
    /// background task runs on after its turn).
    pub fn is_animating(&self) -> bool {
        self.busy() || self.transcript.any_task_running()
    }

    /// Whether a run or a `!` command is going on (Esc stops it; prompts are queued).
    pub fn busy(&self) -> bool {
        self.run.running || !self.shells.is_empty()
    }

    /// The session is open: the screen shows it from now on.
    pub(super) fn show_session(&mut self, session: SessionView, facts: Facts) {
        self.session = session;
        self.screen.inline = facts.inline;
        self.facts = facts;
    }

    /// What the opened session told: skills, hooks, models, sandbox, web search.
    pub(super) fn facts(&self) -> &Facts {
        &self.facts
    }

    /// The facts as a test sets them without opening a session.
    #[cfg(test)]
    pub(super) fn facts_mut(&mut self) -> &mut Facts {
        &mut self.facts
    }

    /// The run going on (or the last one), as the status line shows it.
    pub(super) fn run(&self) -> &RunState {
        &self.run
    }

    pub(super) fn run_mut(&mut self) -> &mut RunState {
        &mut self.run
    }

    /// The input box: its text, history, pastes and completion popup.
    pub(super) fn input_box(&self) -> &InputBox {
        &self.input_box
    }

    pub(super) fn input_box_mut(&mut self) -> &mut InputBox {
        &mut self.input_box
    }

    /// The session shown: its id, provider, model, folder, mode.
    pub fn session(&self) -> &SessionView {
        &self.session
    }

    pub(super) fn session_mut(&mut self) -> &mut SessionView {
        &mut self.session
    }

    /// The conversation on screen.
    pub fn transcript(&self) -> &Transcript {
        &self.transcript
    }

    /// The conversation, to add to (the benches fill it directly).
    pub fn transcript_mut(&mut self) -> &mut Transcript {
        &mut self.transcript
    }

    /// `!` commands running now, by block id (tests read them; the app asks `busy()`).
    #[cfg(test)]
    pub(super) fn shells(&self) -> &Vec<String> {
        &self.shells
    }

    pub(super) fn shells_mut(&mut self) -> &mut Vec<String> {
        &mut self.shells
    }

    /// The session's name, once known (`/rename`).
    pub(super) fn session_name(&self) -> &Option<String> {
        &self.session_name
    }

    pub(super) fn session_name_mut(&mut self) -> &mut Option<String> {
        &mut self.session_name
    }

    /// The time keys are read at.
    pub(super) fn clock(&self) -> &Clock {
        &self.clock
    }

    /// The clock, as a test sets it.
    #[cfg(test)]
    pub(super) fn clock_mut(&mut self) -> &mut Clock {
        &mut self.clock
    }

    /// How long the dialog on top has been on screen.
    pub(super) fn dialogs(&self) -> &DialogGuard {
        &self.dialogs
    }

    pub(super) fn dialogs_mut(&mut self) -> &mut DialogGuard {
        &mut self.dialogs
    }

    /// The session's MCP servers, as last seen.
    pub(super) fn mcp(&self) -> &Vec<super::mcp_panel::McpView> {
        &self.mcp
    }

    pub(super) fn mcp_mut(&mut self) -> &mut Vec<super::mcp_panel::McpView> {
        &mut self.mcp
    }

    /// The layers opened over the conversation.
    pub(super) fn stack(&self) -> &super::compositor::Stack {
        &self.stack
    }

    pub(super) fn stack_mut(&mut self) -> &mut super::compositor::Stack {
        &mut self.stack
    }

    /// The session's background commands.
    pub(super) fn jobs(&self) -> &super::jobs::JobsView {
        &self.jobs
    }

    pub(super) fn jobs_mut(&mut self) -> &mut super::jobs::JobsView {
        &mut self.jobs
    }

    /// The spinner, the mouse, inline drawing, the last frame, quitting.
    pub(super) fn screen(&self) -> &ScreenState {
        &self.screen
    }

    pub(super) fn screen_mut(&mut self) -> &mut ScreenState {
        &mut self.screen
    }

    /// The one-line message on the status line.
    pub(super) fn flash(&self) -> &Flash {
        &self.flash
    }

    pub(super) fn flash_mut(&mut self) -> &mut Flash {
        &mut self.flash
    }

    /// How many tool calls wait for the user's answer (the approval layer's).
    pub(super) fn approvals_waiting(&self) -> usize {
        self.stack
            .find::<super::approval::Approval>()
            .map_or(0, |approval| approval.waiting())
    }

    /// Plan mode on screen: todos, the plan's review, auto-continue.
    pub(super) fn plan(&self) -> &PlanState {
        &self.plan
    }

    pub(super) fn plan_mut(&mut self) -> &mut PlanState {
        &mut self.plan
    }

    /// Where the transcript view is (scroll, page height) and whether tool output is expanded.
    pub(super) fn view(&self) -> &TranscriptView {
        &self.view
    }

    pub(super) fn view_mut(&mut self) -> &mut TranscriptView {
        &mut self.view
    }

    /// Whether the agent runs a turn now.
    pub fn running(&self) -> bool {
        self.run.running
    }

    /// Marks a run as going on without starting one (the spinner turns): for benchmarks that
    /// measure the frames of a streaming screen.
    #[doc(hidden)]
    pub fn set_running(&mut self, running: bool) {
        self.run.running = running;
    }

    /// Prompts typed while the agent worked.
    pub(super) fn queue(&self) -> &PromptQueue {
        &self.queue
    }

    pub(super) fn queue_mut(&mut self) -> &mut PromptQueue {
        &mut self.queue
    }

    /// When nothing runs, starts the next queued prompt (and tells the core the queue is
    /// shorter); `None` when there is none or a run is going on.
    pub(super) fn start_next_queued(&mut self) -> Option<Vec<Effect>> {
        if self.busy() {
            return None;
        }
        let next = self.queue.take_next()?;
        let mut effects = self.start_run(next);
        effects.push(self.queue.told());
        Some(effects)
    }

    /// What the provider's counts cost, in all and by model.
    pub(super) fn spending(&self) -> &Spending {
        &self.spending
    }

    pub(super) fn spending_mut(&mut self) -> &mut Spending {
        &mut self.spending
    }

    /// Opens `layer` over whatever is on screen.
    pub(super) fn open_layer(&mut self, layer: impl super::compositor::Layer) {
        self.stack.open(Box::new(layer));
    }

    pub fn tick(&mut self) {
        self.screen.spinner = self.screen.spinner.wrapping_add(1);
    }
}
