//! How the engine's events change the screen: deltas into the streaming entries, tool blocks,
//! approvals queued, retries and compactions as quiet lines, the end of a run (and the next
//! queued prompt), failures with what the user can do about them, chosen by their kind.

use super::app::{App, Effect};
use super::approval::Approval;
use super::plan_review::PlanReview;
use super::plan_state::ListCame;
use super::transcript::Tone;
use crate::engine::{ApprovalRequest, Event, EventKind, FailureKind};
use crate::session::Request;
use crate::session::{Mode, TodoItem};

impl App {
    /// Takes in one engine event; when a run ends well, the next queued prompt goes out.
    pub fn handle_engine(&mut self, event: Event) -> Vec<Effect> {
        let done = matches!(event.kind, EventKind::Done(_));
        let failed = matches!(event.kind, EventKind::Error(_));
        self.apply_engine_event(event);
        let mut commands = Vec::new();
        if failed && self.plan().auto_continue() {
            // Nothing carries on by itself after an error; the status line says so.
            self.plan_mut().set_auto_continue(false);
            commands.push(Effect::Request(Request::SetAutoContinue(false)));
            self.flash_mut().text = Some("auto-continue off: the run ended with an error".into());
        }
        if done && self.plan().auto_continue() {
            // The plan is carried out (or stopped): later prompts do not continue by themselves.
            self.plan_mut().set_auto_continue(false);
            commands.push(Effect::Request(Request::SetAutoContinue(false)));
            if self
                .flash()
                .text
                .as_deref()
                .is_some_and(|f| f.starts_with("auto-continue:"))
            {
                self.flash_mut().text = None;
            }
        }
        if done && let Some(started) = self.start_next_queued() {
            commands.extend(started);
        }
        commands
    }

    fn apply_engine_event(&mut self, event: Event) {
        if event.turn > 0 {
            self.run_mut().turn = event.turn;
        }
        self.run_mut().last_heard = Some(self.clock().now());
        if matches!(
            event.kind,
            EventKind::ToolStart(_)
                | EventKind::ToolResult(_)
                | EventKind::Done(_)
                | EventKind::Error(_)
        ) {
            // A model call that got as far as a tool call (or the end) closes the failure
            // streak its retries were numbered in.
            self.run_mut().retry_streak = 0;
        }
        match event.kind {
            EventKind::SessionStarted(info) => {
                self.session_mut().mode = info.mode;
                self.session_mut().model = info.model;
            }
            EventKind::TokenUpdate(update) => {
                // The model the call went to: the session's, which `/model` changes.
                let model = self.session().model.clone();
                self.spending_mut().count(&model, &update);
                self.run_mut().tokens = Some(update);
            }
            EventKind::ThinkingDelta(delta) => {
                self.run_mut().retry = None;
                self.transcript_mut().append_thinking(&delta);
            }
            EventKind::ActionDelta(delta) => {
                self.run_mut().retry = None;
                self.transcript_mut().append_text(&delta);
            }
            EventKind::ToolStart(call) if call.name == super::task_view::TASK_TOOL => {
                self.run_mut().tools_running += 1;
                let now = self.clock().now();
                self.transcript_mut().task_started(call, now)
            }
            EventKind::ToolStart(call) => {
                self.run_mut().tools_running += 1;
                self.transcript_mut().tool_started(call)
            }
            EventKind::ApprovalRequired(request) => self.ask_approval(request),
            EventKind::ToolResult(outcome) => {
                self.run_mut().tools_running = self.run().tools_running.saturating_sub(1);
                self.transcript_mut()
                    .tool_finished(&outcome.result, Some(outcome.duration))
            }
            EventKind::Compaction(info) => self.transcript_mut().notice(
                format!(
                    "compacted the conversation: {} → {} tokens ({})",
                    info.before_tokens, info.after_tokens, info.strategy
                ),
                Tone::Quiet,
            ),
            EventKind::Retry(info) => {
                self.transcript_mut().discard_streaming();
                // The provider's retries and the restart of a cut stream count separately;
                // the user sees one count per failure streak.
                self.run_mut().retry_streak += 1;
                let attempt = info.attempt.max(self.run().retry_streak + 1);
                let of = if attempt <= info.max_attempts {
                    format!("attempt {attempt}/{}", info.max_attempts)
                } else {
                    format!("attempt {attempt}")
                };
                self.transcript_mut().notice(
                    format!(
                        "retrying in {:.1}s ({of}): {}",
                        info.delay.as_secs_f64(),
                        info.reason
                    ),
                    Tone::Quiet,
                );
                self.run_mut().retry = Some(info.reason);
            }
            EventKind::HookRunning(label) => self.run_mut().hook_running = label,
            // A line of the running call's live tail (`progress_line`).
            EventKind::ToolProgress(progress) => self.transcript_mut().tool_output(
                &progress.tool_call_id,
                &super::progress_line::line(&progress),
            ),
            EventKind::ToolOutput(output) => self
                .transcript_mut()
                .tool_output(&output.tool_call_id, &output.chunk),
            // A child's events go to its task block, never into the parent's own entries.
            EventKind::Subagent(event) => self.subagent_event(event),
            EventKind::Notice(text) => {
                self.flash_mut().text = Some(text.lines().next().unwrap_or("").to_owned());
                self.transcript_mut().notice(text, Tone::Quiet);
            }
            EventKind::Done(_) => {
                let plan_run = self.session().mode == Mode::Plan;
                self.finish_run();
                // Only the list this run wrote is its plan; it may still be on its way.
                if plan_run && self.plan_mut().plan_run_ended() {
                    self.review_plan();
                }
            }
            EventKind::Error(failure) => {
                self.transcript_mut().finish_streaming();
                self.transcript_mut().interrupt_running();
                if failure.kind == FailureKind::Interrupted {
                    let queued = if self.queue().is_empty() {
                        String::new()
                    } else {
                        format!(
                            " · {} queued prompt(s) kept: Enter on an empty input sends the next",
                            self.queue().len()
                        )
                    };
                    self.transcript_mut().notice(
                        format!(
                            "interrupted · type a new prompt, or Up to edit the last one{queued}"
                        ),
                        Tone::Warning,
                    );
                } else {
                    let hint = next_step(failure.kind);
                    self.transcript_mut()
                        .notice(format!("{}\n{hint}", failure.message), Tone::Error);
                }
                self.finish_run();
            }
        }
    }

    pub(super) fn finish_run(&mut self) {
        self.run_mut().tools_running = 0;
        self.transcript_mut().finish_streaming();
        self.run_mut().running = false;
        self.run_mut().working_since = None;
        self.run_mut().retry = None;
        self.run_mut().hook_running = None;
        if self.flash().text.as_deref() == Some("interrupting…") {
            self.flash_mut().text = None;
        }
        // Approvals of a finished run can no longer be answered.
        if let Some(approval) = self.stack_mut().find_mut::<Approval>() {
            approval.deny_all();
        }
        self.stack_mut().close::<Approval>();
    }

    /// Opens the review of the todo list, when anything in it is left to do.
    pub(super) fn review_plan(&mut self) {
        if let Some(review) = PlanReview::of(self.plan().todos()) {
            self.stack_mut().close::<PlanReview>();
            self.open_layer(review);
        }
    }

    /// The core's todo list: shown, and reviewed when it is the plan of a plan-mode run that
    /// ended before it came.
    pub(super) fn take_todos(&mut self, todos: Vec<TodoItem>) {
        let came = self.plan_mut().came(todos);
        let todos = self.plan().todos().to_vec();
        if let Some(review) = self.stack_mut().find_mut::<PlanReview>() {
            review.set_todos(&todos);
        }
        if came == ListCame::Plan {
            self.review_plan();
        }
    }

    /// A call waits for the user's answer: behind the ones already asked, or in an approval
    /// opened over the screen.
    fn ask_approval(&mut self, request: ApprovalRequest) {
        match self.stack_mut().find_mut::<Approval>() {
            Some(approval) => approval.push(request),
            None => self.open_layer(Approval::new(request)),
        }
    }
}

impl App {
    /// How long a request has gone unanswered, once that is `WAITING` or more: the model is
    /// being waited for (no tool runs, no approval is open) and has said nothing.
    pub fn waiting_for_model(&self) -> Option<std::time::Duration> {
        if !self.run().running || self.run().tools_running > 0 || self.approvals_waiting() > 0 {
            return None;
        }
        let waited = self.clock().now().duration_since(self.run().last_heard?);
        (waited >= WAITING).then_some(waited)
    }
}

/// How long a silent request runs before the status line says it is waiting.
pub const WAITING: std::time::Duration = std::time::Duration::from_secs(5);

/// What the user can do about a failure of this kind.
pub(super) fn next_step(kind: FailureKind) -> &'static str {
    match kind {
        FailureKind::Auth => {
            "Check ANTHROPIC_API_KEY / OPENAI_API_KEY (in the environment or .env), then send the prompt again."
        }
        FailureKind::MaxTurns => {
            "Send a follow-up prompt to let it continue, or start harness9 with a higher --max-turns."
        }
        FailureKind::Network => {
            "Check the network or OPENAI_BASE_URL / ANTHROPIC_BASE_URL, then send the prompt again."
        }
        FailureKind::Model => {
            "Check the model name (--model or HARNESS9_MODEL), then send the prompt again."
        }
        FailureKind::Storage => {
            "sessions.db did not take the change; check the disk and $HARNESS9_HOME, then send the prompt again."
        }
        _ => "Send the prompt again to retry; the conversation so far is kept.",
    }
}
