//! A sub-agent's block in the transcript (issue 17): the `task` call's agent and description,
//! the child's current step while it runs (its tool and key argument, or thinking / writing),
//! how long it has run, and how it ended, with the call's result folded like a tool's output.
//! The state here is fed with the child's events as its parent's stream carries them; only a
//! change the block shows counts as a change, so a child's stream of deltas does not make the
//! transcript lay the block out again.

use std::time::{Duration, Instant};

use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};

use super::tool_view::{self, ToolStatus};
use super::wrap::truncate;
use crate::engine::{Event, EventKind, FailureKind};
use crate::schema::ToolCall;

/// The name of the tool that starts a sub-agent (CONTRACT "Tools").
pub const TASK_TOOL: &str = "task";

/// What a running child is doing now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// Nothing heard from it yet.
    Starting,
    Thinking,
    Writing,
    /// A tool of its own, with the call's key argument.
    Tool {
        name: String,
        summary: String,
    },
    Retrying(String),
}

/// How far a child got.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TaskState {
    Running,
    /// Its `done`; `turns` 0 when only the call's result said it ended well.
    Done {
        turns: u32,
        tokens: u64,
    },
    /// Its error, or the call's error result (first line).
    Failed(String),
    Interrupted,
}

#[derive(Debug, Clone)]
pub struct TaskView {
    pub call: ToolCall,
    pub agent: String,
    pub description: String,
    /// Started with `background: true`: the call returns at once and the child runs on.
    pub background: bool,
    /// The child's own session (its first event), to read its transcript from the store.
    pub child_session: Option<String>,
    pub step: Step,
    pub state: TaskState,
    pub started: Instant,
    /// How long it ran, once it ended.
    pub elapsed: Option<Duration>,
    /// The call's result: the child's answer (or a background task's id).
    pub output: Option<String>,
    pub result_error: bool,
    tools_running: usize,
}

impl TaskView {
    /// The block of a `task` call, from its arguments (as the model wrote them: a missing or
    /// odd field shows as empty, never fails).
    pub fn from_call(call: ToolCall, now: Instant) -> Self {
        let arguments = call.arguments_value();
        // The model wrote these: no escape sequence of theirs reaches the terminal (the
        // inline transcript prints them raw at exit).
        let text = |key: &str| clean(arguments.get(key).and_then(|v| v.as_str()).unwrap_or(""));
        TaskView {
            agent: text("agent"),
            description: text("description"),
            background: arguments
                .get("background")
                .and_then(|v| v.as_bool())
                .unwrap_or(false),
            call,
            child_session: None,
            step: Step::Starting,
            state: TaskState::Running,
            started: now,
            elapsed: None,
            output: None,
            result_error: false,
            tools_running: 0,
        }
    }

    pub fn is_running(&self) -> bool {
        self.state == TaskState::Running
    }

    /// Takes in one of the child's events; `true` when the block looks different.
    pub fn apply(&mut self, event: &Event, now: Instant) -> bool {
        if let EventKind::SessionStarted(info) = &event.kind {
            self.child_session = Some(info.session_id.clone());
            return false;
        }
        if !self.is_running() {
            return false;
        }
        let step = match &event.kind {
            EventKind::ThinkingDelta(_) => Step::Thinking,
            EventKind::ActionDelta(_) => Step::Writing,
            EventKind::ToolStart(call) => {
                self.tools_running += 1;
                Step::Tool {
                    name: clean(&call.name),
                    summary: clean(&tool_view::summary(call)),
                }
            }
            EventKind::ToolResult(_) => {
                self.tools_running = self.tools_running.saturating_sub(1);
                if self.tools_running > 0 {
                    return false;
                }
                Step::Thinking
            }
            EventKind::Retry(info) => Step::Retrying(clean(&info.reason)),
            EventKind::Done(info) => {
                self.end(
                    TaskState::Done {
                        turns: info.turns,
                        tokens: info.input_tokens + info.output_tokens,
                    },
                    now,
                );
                return true;
            }
            EventKind::Error(failure) => {
                let state = if failure.kind == FailureKind::Interrupted {
                    TaskState::Interrupted
                } else {
                    TaskState::Failed(first_line(&failure.message))
                };
                self.end(state, now);
                return true;
            }
            _ => return false,
        };
        if step == self.step {
            return false;
        }
        self.step = step;
        true
    }

    /// The `task` call's result came. A foreground child has ended with it; a background one
    /// only acknowledged its start and keeps running until its own done or error.
    pub fn finish_call(&mut self, output: &str, is_error: bool, duration: Option<Duration>) {
        self.output = Some(output.to_owned());
        self.result_error = is_error;
        if self.is_running() && (is_error || !self.background) {
            let state = if is_error {
                TaskState::Failed(first_line(output))
            } else {
                TaskState::Done {
                    turns: 0,
                    tokens: 0,
                }
            };
            self.state = state;
            self.elapsed = duration;
        }
    }

    /// The parent's run was interrupted: a foreground child went with it.
    pub fn interrupt(&mut self, now: Instant) -> bool {
        if self.is_running() && !self.background {
            self.end(TaskState::Interrupted, now);
            return true;
        }
        false
    }

    fn end(&mut self, state: TaskState, now: Instant) {
        self.state = state;
        self.elapsed = Some(now.saturating_duration_since(self.started));
    }

    /// How long it has run (or ran).
    pub fn elapsed_at(&self, now: Instant) -> Duration {
        self.elapsed
            .unwrap_or_else(|| now.saturating_duration_since(self.started))
    }

    /// The step in a few words: "grep fn parse", "thinking".
    pub fn step_text(&self) -> String {
        match &self.step {
            Step::Starting => "starting".into(),
            Step::Thinking => "thinking".into(),
            Step::Writing => "writing".into(),
            Step::Tool { name, summary } if summary.is_empty() => name.clone(),
            Step::Tool { name, summary } => format!("{name} {summary}"),
            Step::Retrying(reason) => format!("retrying: {reason}"),
        }
    }

    /// The lines of the block.
    pub fn render(
        &self,
        expanded: bool,
        width: u16,
        spinner: usize,
        now: Instant,
    ) -> Vec<Line<'static>> {
        let dim = Style::new().fg(Color::DarkGray);
        let (mark, mark_style) = match &self.state {
            TaskState::Running => (
                tool_view::spinner(spinner),
                Style::new().fg(super::theme::accent()),
            ),
            TaskState::Done { .. } => ("✓", Style::new().fg(super::theme::ok())),
            TaskState::Failed(_) => ("✗", Style::new().fg(Color::Red)),
            TaskState::Interrupted => ("⏹", Style::new().fg(super::theme::warn())),
        };
        let mut tail = match &self.state {
            TaskState::Running => vec![seconds(self.elapsed_at(now))],
            TaskState::Done { turns: 0, .. } => vec!["done".into()],
            TaskState::Done { turns, tokens } => vec![
                "done".into(),
                format!("{turns} turn{}", if *turns == 1 { "" } else { "s" }),
                format!("{} tokens", tokens_text(*tokens)),
            ],
            TaskState::Failed(_) => vec!["failed".into()],
            TaskState::Interrupted => vec!["interrupted".into()],
        };
        // A block read back from the store does not know how long its child ran.
        if !self.is_running()
            && let Some(elapsed) = self.elapsed
        {
            tail.push(tool_view::format_duration(elapsed));
        }
        if self.background {
            tail.insert(0, "background".into());
        }
        let tail = format!("  {}", tail.join(" · "));
        let agent = if self.agent.is_empty() {
            "task".to_owned()
        } else {
            self.agent.clone()
        };
        let used = 2 + agent.chars().count() + 2 + tail.chars().count();
        let room = (width as usize).saturating_sub(used).max(8);
        let header = Line::from(vec![
            Span::styled(format!("{mark} "), mark_style),
            Span::styled(agent, Style::new().add_modifier(Modifier::BOLD)),
            Span::raw(format!("  {}", truncate(&self.description, room))),
            Span::styled(tail, dim),
        ]);
        let mut lines = vec![header];
        match &self.state {
            TaskState::Running => {
                let text = format!("{}…", self.step_text());
                let room = (width as usize).saturating_sub(4).max(8);
                lines.push(Line::from(vec![
                    Span::styled("  └ ", dim),
                    Span::styled(truncate(&text, room), dim),
                ]));
            }
            _ => {
                let status = if self.result_error {
                    ToolStatus::Error
                } else {
                    ToolStatus::Ok
                };
                if let Some(output) = &self.output {
                    lines.extend(tool_view::body(TASK_TOOL, status, output, expanded, width));
                } else if let TaskState::Failed(why) = &self.state {
                    let room = (width as usize).saturating_sub(4).max(8);
                    lines.push(Line::styled(
                        format!("  │ {}", truncate(why, room)),
                        Style::new().fg(Color::Red),
                    ));
                }
            }
        }
        lines
    }
}

fn first_line(text: &str) -> String {
    clean(text.lines().next().unwrap_or("").trim())
}

/// One line of text from the model or a child, safe to print.
fn clean(text: &str) -> String {
    crate::terminal_text::sanitize(text).replace(['\n', '\t'], " ")
}

/// Whole seconds while it runs: "7s", "2m05s".
pub fn seconds(elapsed: Duration) -> String {
    let s = elapsed.as_secs();
    if s < 60 {
        format!("{s}s")
    } else {
        format!("{}m{:02}s", s / 60, s % 60)
    }
}

/// "950", "12.4k", "1.2M".
pub fn tokens_text(tokens: u64) -> String {
    if tokens < 1000 {
        tokens.to_string()
    } else if tokens < 1_000_000 {
        format!("{:.1}k", tokens as f64 / 1000.0)
    } else {
        format!("{:.1}M", tokens as f64 / 1_000_000.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view() -> TaskView {
        let call = ToolCall {
            id: "t1".into(),
            name: TASK_TOOL.into(),
            arguments: r#"{"agent":"explore","description":"find callers","prompt":"…"}"#.into(),
        };
        TaskView::from_call(call, Instant::now())
    }

    fn event(kind: EventKind) -> Event {
        Event { turn: 1, kind }
    }

    #[test]
    fn a_stream_of_deltas_changes_the_block_once() {
        let mut task = view();
        let now = Instant::now();
        let changes = (0..1000)
            .filter(|_| task.apply(&event(EventKind::ActionDelta("x".into())), now))
            .count();
        assert_eq!(changes, 1, "only the step's change is a change");
        assert_eq!(task.step, Step::Writing);
    }

    #[test]
    fn escape_sequences_in_the_models_words_never_reach_the_terminal() {
        let call = ToolCall {
            id: "t3".into(),
            name: TASK_TOOL.into(),
            arguments: r#"{"agent":"ex\u001b]52;c;cm0gLXJmIH4=\u0007plore","description":"a\u001b[2Jb\nc"}"#.into(),
        };
        let mut task = TaskView::from_call(call, Instant::now());
        assert_eq!(
            (task.agent.as_str(), task.description.as_str()),
            ("explore", "ab c")
        );
        let failure = crate::engine::Failure::new(FailureKind::Provider, "bad\u{9b}31m news");
        task.apply(&event(EventKind::Error(failure)), Instant::now());
        let lines = task.render(false, 80, 0, Instant::now());
        let text: String = lines
            .iter()
            .flat_map(|l| l.spans.iter().map(|s| s.content.to_string()))
            .collect();
        assert!(!text.chars().any(|c| c.is_control()), "{text:?}");
        assert!(text.contains("bad news"), "{text}");
    }

    #[test]
    fn a_background_child_runs_on_after_its_call_returns() {
        let call = ToolCall {
            id: "t2".into(),
            name: TASK_TOOL.into(),
            arguments: r#"{"agent":"general","description":"d","prompt":"p","background":true}"#
                .into(),
        };
        let mut task = TaskView::from_call(call, Instant::now());
        task.finish_call("started task t2 in the background", false, None);
        assert!(task.is_running());
        assert!(!task.interrupt(Instant::now()), "its own events end it");
        let done = crate::engine::DoneInfo {
            turns: 2,
            ..Default::default()
        };
        assert!(task.apply(&event(EventKind::Done(done)), Instant::now()));
        assert!(!task.is_running());
    }
}
