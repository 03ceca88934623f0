//! The conversation on screen: entries that keep their source text (so a resize re-flows them)
//! and cache their laid-out lines per width. A streaming answer renders its completed blocks
//! once and only its open tail anew; drawing walks back from the bottom and lays out only what
//! the viewport shows, so the cost of a frame does not grow with the transcript.

mod tasks;
mod window;

use std::collections::HashMap;
use std::time::{Duration, Instant};

use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};

use super::markdown;
use super::task_view::TaskView;
use super::tool_view::{self, ToolStatus};
use super::wrap::wrap;
use crate::schema::{Message, Role, ToolCall, ToolResult};

/// A prompt taller than this is shown folded to its first `FOLDED_PROMPT` lines.
const LONG_PROMPT: usize = 12;
const FOLDED_PROMPT: usize = 4;

/// "1 more line", "3 more lines".
pub fn more_lines(n: usize) -> String {
    format!("{n} more line{}", if n == 1 { "" } else { "s" })
}

/// How a notice line reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tone {
    /// Compaction, retries: one dim line.
    Quiet,
    Warning,
    Error,
}

#[derive(Debug, Clone)]
pub enum EntryKind {
    User(String),
    Assistant {
        text: String,
        streaming: bool,
    },
    Thinking {
        text: String,
        streaming: bool,
    },
    Tool {
        call: ToolCall,
        status: ToolStatus,
        output: Option<String>,
        duration: Option<Duration>,
    },
    Notice {
        text: String,
        tone: Tone,
    },
    /// A sub-agent started by a `task` call (`task_view`).
    Task(Box<TaskView>),
}

/// Laid-out lines for one width and fold state.
#[derive(Debug, Default)]
struct Layout {
    width: u16,
    expanded: bool,
    revision: u64,
    lines: Vec<Line<'static>>,
    /// For a streaming answer: how much of the source the `stable` lines cover.
    stable_upto: usize,
    stable: Vec<Line<'static>>,
}

#[derive(Debug)]
pub struct Entry {
    pub kind: EntryKind,
    revision: u64,
    /// The laid-out lines: a cache, filled while a frame is drawn (behind `&self`).
    layout: std::cell::RefCell<Option<Layout>>,
    /// Inline mode: how much of a streaming answer's source is in the scrollback already (its
    /// completed blocks); only the rest is laid out here.
    written: usize,
}

impl Entry {
    pub fn new(kind: EntryKind) -> Self {
        Entry {
            kind,
            revision: 0,
            layout: Default::default(),
            written: 0,
        }
    }

    fn touch(&mut self) {
        self.revision += 1;
    }

    /// `read` of the lines of this entry at `width`, from the cache when nothing changed.
    pub fn with_lines<R>(
        &self,
        width: u16,
        expanded: bool,
        spinner: usize,
        now: Instant,
        read: impl FnOnce(&[Line<'static>]) -> R,
    ) -> R {
        // A running tool's spinner (and a running task's clock) changes every frame; their
        // blocks are small, so they are not cached.
        let animated = match &self.kind {
            EntryKind::Tool { status, .. } => *status == ToolStatus::Running,
            EntryKind::Task(task) => task.is_running(),
            _ => false,
        };
        let mut layout = self.layout.borrow_mut();
        let layout = layout.get_or_insert_with(Layout::default);
        let fresh = layout.width == width
            && layout.expanded == expanded
            && layout.revision == self.revision
            && !layout.lines.is_empty()
            && !animated;
        if !fresh {
            if layout.width != width {
                layout.stable.clear();
                layout.stable_upto = 0;
            }
            layout.width = width;
            layout.expanded = expanded;
            layout.revision = self.revision;
            layout.lines = render(
                &self.kind,
                width,
                expanded,
                spinner,
                now,
                layout,
                self.written,
            );
        }
        read(&layout.lines)
    }
}

fn render(
    kind: &EntryKind,
    width: u16,
    expanded: bool,
    spinner: usize,
    now: Instant,
    layout: &mut Layout,
    written: usize,
) -> Vec<Line<'static>> {
    match kind {
        EntryKind::User(text) => {
            let style = Style::new().add_modifier(Modifier::BOLD);
            let spans: Vec<Span<'static>> = vec![Span::styled(text.trim_end().to_owned(), style)];
            let first = [Span::styled(
                "› ",
                Style::new()
                    .fg(super::theme::accent())
                    .add_modifier(Modifier::BOLD),
            )];
            let all = wrap(&spans, width, &first, &[Span::raw("  ")]);
            // A long paste stays collapsed, as it was in the input; Ctrl+O shows it whole.
            if expanded || all.len() <= LONG_PROMPT {
                return all;
            }
            let hidden = all.len() - FOLDED_PROMPT;
            let mut lines: Vec<Line<'static>> = all.into_iter().take(FOLDED_PROMPT).collect();
            lines.push(Line::styled(
                format!("  … {} (Ctrl+O to expand)", more_lines(hidden)),
                Style::new().fg(Color::DarkGray),
            ));
            lines
        }
        EntryKind::Assistant { text, streaming } => {
            // Completed blocks are rendered once and kept; only the open tail is redone. What
            // is in the scrollback already (inline) is not laid out again.
            let from = written.min(text.len());
            let stable = if *streaming {
                markdown::stable_prefix(text)
            } else {
                text.len()
            }
            .max(from);
            if stable < layout.stable_upto || layout.stable_upto < from {
                layout.stable.clear();
                layout.stable_upto = from;
            }
            if stable > layout.stable_upto {
                let chunk = &text[layout.stable_upto..stable];
                if !layout.stable.is_empty() {
                    layout.stable.push(Line::default());
                }
                layout.stable.extend(markdown::render(chunk, width));
                layout.stable_upto = stable;
            }
            let mut lines = layout.stable.clone();
            let tail = &text[stable..];
            if !tail.trim().is_empty() {
                if !lines.is_empty() {
                    lines.push(Line::default());
                }
                lines.extend(markdown::render(tail, width));
            }
            if lines.is_empty() && *streaming {
                lines.push(Line::styled(
                    tool_view::spinner(spinner),
                    Style::new().fg(super::theme::accent()),
                ));
            }
            lines
        }
        EntryKind::Thinking { text, streaming } => {
            let style = Style::new()
                .fg(Color::DarkGray)
                .add_modifier(Modifier::ITALIC);
            let first = [Span::styled("✻ ", style)];
            let rest = [Span::raw("  ")];
            let all = wrap(
                &[Span::styled(text.trim().to_owned(), style)],
                width,
                &first,
                &rest,
            );
            if expanded || *streaming || all.len() <= 2 {
                return all;
            }
            let hidden = all.len() - 1;
            let mut lines: Vec<Line<'static>> = all.into_iter().take(1).collect();
            lines.push(Line::styled(
                format!("  … {} of thinking (Ctrl+O to expand)", more_lines(hidden)),
                Style::new().fg(Color::DarkGray),
            ));
            lines
        }
        EntryKind::Tool {
            call,
            status,
            output,
            duration,
        } => tool_view::render(
            call,
            *status,
            output.as_deref(),
            *duration,
            expanded,
            width,
            spinner,
        ),
        EntryKind::Task(task) => task.render(expanded, width, spinner, now),
        EntryKind::Notice { text, tone } => {
            let (mark, style) = match tone {
                Tone::Quiet => ("⋯ ", Style::new().fg(Color::DarkGray)),
                Tone::Warning => ("⏹ ", Style::new().fg(super::theme::warn())),
                Tone::Error => ("✗ ", Style::new().fg(Color::Red)),
            };
            wrap(
                &[Span::styled(text.clone(), style)],
                width,
                &[Span::styled(mark, style)],
                &[Span::raw("  ")],
            )
        }
    }
}

/// The entries of a conversation.
#[derive(Debug, Default)]
pub struct Transcript {
    entries: Vec<Entry>,
    /// The task blocks by their call's id (entries are only appended, or all cleared).
    tasks: HashMap<String, usize>,
    /// The time running blocks count their time to (`set_now`, by the frame that draws them:
    /// the frame's clock, not the transcript's state).
    now: std::cell::Cell<Option<Instant>>,
    /// How many entries were written into the terminal's scrollback (inline mode, `window`).
    flushed: usize,
}

impl Transcript {
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    pub fn clear(&mut self) {
        self.entries.clear();
        self.tasks.clear();
        self.flushed = 0;
    }

    /// The time a draw shows running blocks at.
    pub fn set_now(&self, now: Instant) {
        self.now.set(Some(now));
    }

    pub fn push(&mut self, kind: EntryKind) {
        self.finish_streaming();
        self.entries.push(Entry::new(kind));
    }

    pub fn notice(&mut self, text: impl Into<String>, tone: Tone) {
        self.push(EntryKind::Notice {
            text: text.into(),
            tone,
        });
    }

    /// Appends to the streaming answer, starting one when needed.
    pub fn append_text(&mut self, delta: &str) {
        self.append_streaming(delta, false);
    }

    /// Appends to the streaming thinking, starting it when needed.
    pub fn append_thinking(&mut self, delta: &str) {
        self.append_streaming(delta, true);
    }

    fn append_streaming(&mut self, delta: &str, thinking: bool) {
        if let Some(entry) = self.entries.last_mut() {
            let open = match &mut entry.kind {
                EntryKind::Thinking {
                    text,
                    streaming: true,
                } if thinking => Some(text),
                EntryKind::Assistant {
                    text,
                    streaming: true,
                } if !thinking => Some(text),
                _ => None,
            };
            if let Some(text) = open {
                text.push_str(delta);
                entry.touch();
                return;
            }
        }
        let text = delta.to_owned();
        self.push(if thinking {
            EntryKind::Thinking {
                text,
                streaming: true,
            }
        } else {
            EntryKind::Assistant {
                text,
                streaming: true,
            }
        });
    }

    /// Marks streaming entries complete.
    pub fn finish_streaming(&mut self) {
        for entry in self.entries.iter_mut().rev().take(2) {
            match &mut entry.kind {
                EntryKind::Assistant { streaming, .. } | EntryKind::Thinking { streaming, .. }
                    if *streaming =>
                {
                    *streaming = false;
                    entry.touch();
                }
                _ => {}
            }
        }
    }

    /// Drops the partial output of a turn that is being restarted.
    pub fn discard_streaming(&mut self) {
        let mut cut = false;
        while self.entries.last().is_some_and(|e| {
            matches!(
                e.kind,
                EntryKind::Assistant {
                    streaming: true,
                    ..
                } | EntryKind::Thinking {
                    streaming: true,
                    ..
                }
            )
        }) {
            cut |= self.entries.pop().is_some_and(|e| e.written > 0);
        }
        // Inline, its first blocks are in the scrollback already: say they were cut off.
        if cut {
            self.notice(
                "the answer above was cut off; it is asked for again",
                Tone::Quiet,
            );
        }
    }

    pub fn tool_started(&mut self, call: ToolCall) {
        if call.name == super::task_view::TASK_TOOL {
            let now = self.now.get().unwrap_or_else(Instant::now);
            return self.task_started(call, now);
        }
        self.push(EntryKind::Tool {
            call,
            status: ToolStatus::Running,
            output: None,
            duration: None,
        });
    }

    /// What a running call printed (`tool_output`): kept as its output until its result
    /// replaces it, the block showing the last lines as they come.
    pub fn tool_output(&mut self, tool_call_id: &str, chunk: &str) {
        /// The most kept of a running call's output: the block shows only its end.
        const KEPT: usize = 16 * 1024;
        for entry in self.entries.iter_mut().rev() {
            if let EntryKind::Tool {
                call,
                status: ToolStatus::Running,
                output,
                ..
            } = &mut entry.kind
                && call.id == tool_call_id
            {
                let text = output.get_or_insert_with(String::new);
                text.push_str(chunk);
                if text.len() > KEPT {
                    let mut from = text.len() - KEPT;
                    while !text.is_char_boundary(from) {
                        from += 1;
                    }
                    text.drain(..from);
                }
                entry.touch();
                return;
            }
        }
    }

    pub fn tool_finished(&mut self, result: &ToolResult, duration: Option<Duration>) {
        if self.task_finished(result, duration) {
            return;
        }
        for entry in self.entries.iter_mut().rev() {
            if let EntryKind::Tool {
                call,
                status,
                output,
                duration: d,
            } = &mut entry.kind
                && call.id == result.tool_call_id
            {
                *status = if result.is_error {
                    ToolStatus::Error
                } else {
                    ToolStatus::Ok
                };
                *output = Some(result.output.clone());
                *d = duration;
                entry.touch();
                return;
            }
        }
    }

    /// Marks calls that never got a result as interrupted.
    pub fn interrupt_running(&mut self) {
        let now = self.now.get().unwrap_or_else(Instant::now);
        for entry in &mut self.entries {
            let changed = match &mut entry.kind {
                EntryKind::Tool { status, .. } if *status == ToolStatus::Running => {
                    *status = ToolStatus::Interrupted;
                    true
                }
                EntryKind::Task(task) => task.interrupt(now),
                _ => false,
            };
            if changed {
                entry.touch();
            }
        }
    }

    /// The transcript of a stored conversation.
    pub fn from_messages(messages: &[Message]) -> Self {
        Self::from_stored(messages, true)
    }

    /// The transcript of a stored conversation; unless it has `ended` (a sub-agent still at
    /// work), calls without a result are running, not cut off.
    pub fn from_stored(messages: &[Message], ended: bool) -> Self {
        let mut transcript = Transcript::default();
        for message in messages {
            match message.role {
                Role::System => {}
                Role::User if message.is_tool_result() => {
                    let result = ToolResult {
                        tool_call_id: message.tool_call_id.clone().unwrap_or_default(),
                        output: message.content.clone(),
                        is_error: message.is_error,
                    };
                    transcript.tool_finished(&result, None);
                }
                Role::User
                    if message
                        .content
                        .starts_with(crate::session::text::SUMMARY_MARKER) =>
                {
                    transcript.notice("earlier conversation summarised", Tone::Quiet);
                }
                Role::User => {
                    // Show what the user typed; attached files and shell output are for the model.
                    let (typed, files) = crate::session::text::split_attachments(&message.content);
                    let typed = typed
                        .split("\n\n<user-shell-command>")
                        .next()
                        .unwrap_or(typed);
                    transcript.push(EntryKind::User(typed.to_owned()));
                    for image in &message.images {
                        transcript.notice(image_label(image), Tone::Quiet);
                    }
                    if files > 0 {
                        let listed: Vec<String> =
                            super::mentions::stored_attachments(&message.content)
                                .into_iter()
                                .map(|(name, bytes)| {
                                    format!("{name} ({})", super::mentions::size(bytes))
                                })
                                .collect();
                        transcript.notice(format!("attached: {}", listed.join(", ")), Tone::Quiet);
                    }
                }
                Role::Assistant => {
                    let thinking = message.thinking_text();
                    if !thinking.trim().is_empty() {
                        transcript.push(EntryKind::Thinking {
                            text: thinking,
                            streaming: false,
                        });
                    }
                    if !message.content.trim().is_empty() {
                        transcript.push(EntryKind::Assistant {
                            text: message.content.clone(),
                            streaming: false,
                        });
                    }
                    for call in &message.tool_calls {
                        transcript.tool_started(call.clone());
                    }
                }
            }
        }
        if !ended {
            return transcript;
        }
        // Calls stored without a result were cut off by a crash or a kill.
        transcript.interrupt_running();
        // A conversation that ends on the user's side never got its answer: say so.
        if messages.last().is_some_and(|m| m.role == Role::User) {
            transcript.notice(
                "this turn was interrupted before it finished (the process stopped); send a prompt to go on",
                Tone::Warning,
            );
        }
        transcript
    }
}

/// How an attached image shows in the transcript: `[image: name, WxH]`.
pub fn image_label(image: &crate::schema::ImageRef) -> String {
    format!(
        "[image: {}, {}x{}]",
        crate::terminal_text::sanitize(&image.name),
        image.width,
        image.height
    )
}
