//! The transcript laid out for a screen: the viewport's window of lines (walking back from the
//! bottom, so only what shows is laid out), the whole height, and for inline mode
//! (`--no-alt-screen`) the split into what is finished, written once into the terminal's
//! scrollback, and what still changes, drawn in the live area below it.

use std::time::Instant;

use ratatui::text::Line;

use super::super::tool_view::ToolStatus;
use super::{EntryKind, Transcript};

impl Transcript {
    /// The lines of the viewport: `height` lines ending `offset` lines above the bottom. Only
    /// the entries that reach into the window are laid out. Also returns whether the top of the
    /// transcript was reached (so scrolling up further is pointless).
    pub fn window(
        &self,
        width: u16,
        height: usize,
        offset: usize,
        expanded: bool,
        spinner: usize,
    ) -> (Vec<Line<'static>>, bool) {
        self.window_from(0, width, height, offset, expanded, spinner)
    }

    /// The window of the entries not yet written into the scrollback (inline mode), with the
    /// gap above the first of them when something was written before it.
    pub fn live_window(
        &self,
        width: u16,
        height: usize,
        expanded: bool,
        spinner: usize,
    ) -> Vec<Line<'static>> {
        let first = self.flushed.min(self.entries.len());
        self.window_from(first, width, height, 0, expanded, spinner)
            .0
    }

    /// The height of `live_window` with no limit.
    pub fn live_height(&self, width: u16, expanded: bool, spinner: usize) -> usize {
        let first = self.flushed.min(self.entries.len());
        self.height_from(first, width, expanded, spinner)
    }

    fn window_from(
        &self,
        first: usize,
        width: u16,
        height: usize,
        offset: usize,
        expanded: bool,
        spinner: usize,
    ) -> (Vec<Line<'static>>, bool) {
        let want = height + offset;
        let mut collected: Vec<Line<'static>> = Vec::with_capacity(want);
        let mut reached_top = true;
        let now = self.now.get().unwrap_or_else(Instant::now);
        for (i, entry) in self.entries.iter().enumerate().skip(first).rev() {
            let partial = entry.written > 0;
            let count = entry.with_lines(width, expanded, spinner, now, |lines| {
                // Newest first: this entry's lines in reverse, then the gap above it.
                collected.extend(lines.iter().rev().cloned());
                lines.len()
            });
            if has_gap(i, partial, count) {
                collected.push(Line::default());
            }
            if collected.len() >= want {
                reached_top = i == first && collected.len() <= want;
                break;
            }
        }
        let skip = offset.min(collected.len());
        let window: Vec<Line<'static>> = collected
            .into_iter()
            .skip(skip)
            .take(height)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        (window, reached_top)
    }

    /// Every line of the transcript's height at `width` (lays out everything; for Home).
    pub fn total_height(&self, width: u16, expanded: bool, spinner: usize) -> usize {
        self.height_from(0, width, expanded, spinner)
    }

    fn height_from(&self, first: usize, width: u16, expanded: bool, spinner: usize) -> usize {
        let now = self.now.get().unwrap_or_else(Instant::now);
        self.entries
            .iter()
            .enumerate()
            .skip(first)
            .map(|(i, e)| {
                let partial = e.written > 0;
                let lines = e.with_lines(width, expanded, spinner, now, |lines| lines.len());
                lines + usize::from(has_gap(i, partial, lines))
            })
            .sum()
    }

    /// The lines of the entries that finished since the last call, in order, each with the gap
    /// above it, folded as on screen; they are counted as written and never returned again.
    /// Entries finish in order: a running tool keeps everything after it back, so the
    /// scrollback reads as the conversation did.
    pub fn take_finished(
        &mut self,
        width: u16,
        expanded: bool,
        spinner: usize,
    ) -> Vec<Line<'static>> {
        let first = self.flushed.min(self.entries.len());
        let finished = self.entries[first..]
            .iter()
            .take_while(|e| is_finished(&e.kind))
            .count();
        let mut lines = self.take(first, first + finished, width, expanded, spinner);
        lines.extend(self.take_completed_blocks(width));
        lines
    }

    /// The completed blocks of the streaming answer that is next in order, not written yet
    /// (as Codex does: a long answer goes into the scrollback while it streams).
    fn take_completed_blocks(&mut self, width: u16) -> Vec<Line<'static>> {
        let index = self.flushed;
        let Some(entry) = self.entries.get_mut(index) else {
            return Vec::new();
        };
        let EntryKind::Assistant {
            text,
            streaming: true,
        } = &entry.kind
        else {
            return Vec::new();
        };
        let stable = crate::tui::markdown::stable_prefix(text);
        if stable <= entry.written {
            return Vec::new();
        }
        let mut lines = Vec::new();
        // The gap above the entry, or between its blocks, as on screen.
        if index > 0 || entry.written > 0 {
            lines.push(Line::default());
        }
        lines.extend(crate::tui::markdown::render(
            &text[entry.written..stable],
            width,
        ));
        entry.written = stable;
        // Laid out again from what is left.
        entry.layout = Default::default();
        entry.touch();
        lines
    }

    /// Counts every entry as written (a conversation reloaded after a rewind is the start of
    /// the one already in the scrollback).
    pub fn mark_written(&mut self) {
        self.flushed = self.entries.len();
    }

    /// The lines of every entry not written yet, finished or not (the session is ending).
    pub fn take_rest(&mut self, width: u16, expanded: bool, spinner: usize) -> Vec<Line<'static>> {
        let first = self.flushed.min(self.entries.len());
        self.take(first, self.entries.len(), width, expanded, spinner)
    }

    fn take(
        &mut self,
        first: usize,
        end: usize,
        width: u16,
        expanded: bool,
        spinner: usize,
    ) -> Vec<Line<'static>> {
        let now = self.now.get().unwrap_or_else(Instant::now);
        let mut lines = Vec::new();
        for i in first..end {
            let entry = &self.entries[i];
            let partial = entry.written > 0;
            entry.with_lines(width, expanded, spinner, now, |these| {
                if has_gap(i, partial, these.len()) {
                    lines.push(Line::default());
                }
                lines.extend_from_slice(these);
            });
        }
        self.flushed = end;
        lines
    }
}

/// Whether entry `i` has a blank line above it: every entry but the very first, and the rest
/// of an answer whose first blocks were written (unless nothing is left of it).
fn has_gap(i: usize, partial: bool, lines: usize) -> bool {
    if partial { lines > 0 } else { i > 0 }
}

/// Whether an entry will not change any more (so it can leave the live area).
fn is_finished(kind: &EntryKind) -> bool {
    match kind {
        EntryKind::User(_) | EntryKind::Notice { .. } => true,
        EntryKind::Assistant { streaming, .. } | EntryKind::Thinking { streaming, .. } => {
            !streaming
        }
        EntryKind::Tool { status, .. } => *status != ToolStatus::Running,
        EntryKind::Task(task) => !task.is_running(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::{ToolCall, ToolResult};

    fn text(lines: &[Line<'static>]) -> Vec<String> {
        lines
            .iter()
            .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
            .collect()
    }

    fn call(id: &str) -> ToolCall {
        ToolCall {
            id: id.into(),
            name: "read_file".into(),
            arguments: format!(r#"{{"path": "{id}.rs"}}"#),
        }
    }

    fn done(id: &str) -> ToolResult {
        ToolResult {
            tool_call_id: id.into(),
            output: "fine".into(),
            is_error: false,
        }
    }

    #[test]
    fn finished_entries_are_taken_in_order_and_once() {
        let mut transcript = Transcript::default();
        transcript.push(EntryKind::User("fix it".into()));
        transcript.append_text("Looking");
        // The prompt is finished; the streaming answer is not.
        assert_eq!(text(&transcript.take_finished(80, false, 0)), ["› fix it"]);
        assert!(transcript.take_finished(80, false, 0).is_empty());
        assert_eq!(
            text(&transcript.live_window(80, 10, false, 0)),
            ["", "Looking"]
        );
        transcript.finish_streaming();
        assert_eq!(
            text(&transcript.take_finished(80, false, 0)),
            ["", "Looking"]
        );
        assert!(transcript.take_finished(80, false, 0).is_empty());
        assert_eq!(transcript.live_height(80, false, 0), 0);
    }

    #[test]
    fn a_streaming_answer_leaves_its_completed_blocks_once() {
        let mut transcript = Transcript::default();
        transcript.push(EntryKind::User("explain".into()));
        transcript.append_text("First part.\n\nSecond");
        let taken = text(&transcript.take_finished(80, false, 0));
        assert_eq!(taken, ["› explain", "", "First part."]);
        assert_eq!(
            text(&transcript.live_window(80, 10, false, 0)),
            ["", "Second"]
        );
        assert_eq!(transcript.live_height(80, false, 0), 2);
        transcript.append_text(" part.\n\nThird");
        assert_eq!(
            text(&transcript.take_finished(80, false, 0)),
            ["", "Second part."]
        );
        assert!(transcript.take_finished(80, false, 0).is_empty());
        transcript.append_text(" part.");
        transcript.finish_streaming();
        assert_eq!(
            text(&transcript.take_finished(80, false, 0)),
            ["", "Third part."]
        );
        assert_eq!(transcript.live_height(80, false, 0), 0);
    }

    #[test]
    fn a_retried_answer_whose_start_was_written_says_it_was_cut_off() {
        let mut transcript = Transcript::default();
        transcript.push(EntryKind::User("explain".into()));
        transcript.append_text("First part.\n\nSecond");
        assert_eq!(transcript.take_finished(80, false, 0).len(), 3);
        transcript.discard_streaming();
        let said = text(&transcript.take_finished(80, false, 0));
        assert_eq!(said.len(), 2, "{said:?}");
        assert!(said[1].contains("cut off"), "{said:?}");
        // Nothing was written: nothing to say.
        transcript.append_text("Again");
        transcript.discard_streaming();
        assert!(transcript.take_finished(80, false, 0).is_empty());
    }

    #[test]
    fn a_running_tool_holds_back_what_comes_after_it() {
        let mut transcript = Transcript::default();
        transcript.push(EntryKind::User("read both".into()));
        transcript.tool_started(call("a"));
        transcript.tool_started(call("b"));
        transcript.tool_finished(&done("b"), None);
        assert_eq!(transcript.take_finished(80, false, 0).len(), 1);
        // b finished first, but a comes before it: neither leaves until a has.
        assert!(transcript.take_finished(80, false, 0).is_empty());
        transcript.tool_finished(&done("a"), None);
        let lines = text(&transcript.take_finished(80, false, 0));
        let a = lines.iter().position(|l| l.contains("a.rs")).unwrap();
        let b = lines.iter().position(|l| l.contains("b.rs")).unwrap();
        assert!(a < b, "{lines:?}");
        assert!(transcript.take_finished(80, false, 0).is_empty());
    }

    #[test]
    fn a_cleared_transcript_starts_over_and_the_rest_is_taken_at_the_end() {
        let mut transcript = Transcript::default();
        transcript.push(EntryKind::User("one".into()));
        assert_eq!(transcript.take_finished(80, false, 0).len(), 1);
        transcript.clear();
        transcript.push(EntryKind::User("two".into()));
        transcript.tool_started(call("a"));
        // The first entry of a new transcript has no gap above it.
        assert_eq!(text(&transcript.take_finished(80, false, 0)), ["› two"]);
        let rest = text(&transcript.take_rest(80, false, 0));
        assert!(rest[0].is_empty() && rest[1].contains("a.rs"), "{rest:?}");
        assert!(transcript.take_rest(80, false, 0).is_empty());
    }
}
