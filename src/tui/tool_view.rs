//! How a tool call looks in the transcript: one header line (name, key argument, status,
//! duration) and its output folded to a few lines; diffs coloured. Wording comes from one
//! descriptor table, not from string literals scattered through the screen code.

use std::time::Duration;

use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use serde_json::Value;

use super::wrap::{truncate, wrap};
use crate::schema::ToolCall;

/// How one tool is described on screen.
pub struct Descriptor {
    pub name: &'static str,
    /// Shown while it runs and when done: "Running", "Ran".
    pub running: &'static str,
    pub done: &'static str,
    /// The argument that says what the call is about.
    pub key_argument: &'static str,
}

pub const DESCRIPTORS: &[Descriptor] = &[
    Descriptor {
        name: "bash",
        running: "Running",
        done: "Ran",
        key_argument: "command",
    },
    Descriptor {
        name: "read_file",
        running: "Reading",
        done: "Read",
        key_argument: "path",
    },
    Descriptor {
        name: "write_file",
        running: "Writing",
        done: "Wrote",
        key_argument: "path",
    },
    Descriptor {
        name: "edit_file",
        running: "Editing",
        done: "Edited",
        key_argument: "path",
    },
    Descriptor {
        name: "list_dir",
        running: "Listing",
        done: "Listed",
        key_argument: "path",
    },
    Descriptor {
        name: "glob",
        running: "Finding",
        done: "Found",
        key_argument: "pattern",
    },
    Descriptor {
        name: "grep",
        running: "Searching",
        done: "Searched",
        key_argument: "pattern",
    },
    Descriptor {
        name: "todo_write",
        running: "Planning",
        done: "Planned",
        key_argument: "todos",
    },
    Descriptor {
        name: "use_skill",
        running: "Loading skill",
        done: "Loaded skill",
        key_argument: "name",
    },
];

/// The state of a call on screen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolStatus {
    Running,
    Ok,
    Error,
    /// Never finished: the run was interrupted or the process died.
    Interrupted,
}

/// Output lines shown while folded.
pub const FOLDED_LINES: usize = 4;

const SPINNER: &[&str] = &["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

pub fn spinner(frame: usize) -> &'static str {
    SPINNER[frame % SPINNER.len()]
}

/// The key argument of a call in a few words: the command, the path, the pattern.
pub fn summary(call: &ToolCall) -> String {
    let arguments = call.arguments_value();
    let key = DESCRIPTORS
        .iter()
        .find(|d| d.name == call.name)
        .map(|d| d.key_argument);
    match (key, &arguments) {
        (Some("todos"), _) => {
            let n = arguments["todos"].as_array().map_or(0, Vec::len);
            format!("{n} item{}", if n == 1 { "" } else { "s" })
        }
        (Some(key), Value::Object(map)) => match map.get(key) {
            Some(Value::String(s)) => s.replace('\n', " ⏎ "),
            Some(other) => other.to_string(),
            None if call.name == "list_dir" => ".".into(),
            None => String::new(),
        },
        _ => match arguments {
            Value::String(raw) => raw,
            other => other.to_string(),
        },
    }
}

/// The lines of one tool block.
pub fn render(
    call: &ToolCall,
    status: ToolStatus,
    output: Option<&str>,
    duration: Option<Duration>,
    expanded: bool,
    width: u16,
    spinner_frame: usize,
) -> Vec<Line<'static>> {
    let descriptor = DESCRIPTORS.iter().find(|d| d.name == call.name);
    let verb = match (descriptor, status) {
        (Some(d), ToolStatus::Running) => d.running,
        (Some(d), _) => d.done,
        (None, _) => "",
    };
    let (mark, mark_style) = match status {
        ToolStatus::Running => (
            spinner(spinner_frame),
            Style::new().fg(super::theme::accent()),
        ),
        ToolStatus::Ok => ("✓", Style::new().fg(super::theme::ok())),
        ToolStatus::Error => ("✗", Style::new().fg(Color::Red)),
        ToolStatus::Interrupted => ("⏹", Style::new().fg(super::theme::warn())),
    };
    let name_style = Style::new().add_modifier(Modifier::BOLD);
    let mut header = vec![
        Span::styled(format!("{mark} "), mark_style),
        Span::styled(call.name.clone(), name_style),
    ];
    if !verb.is_empty() && status == ToolStatus::Running {
        header.push(Span::styled(
            format!(" {verb}…"),
            Style::new().fg(Color::DarkGray),
        ));
    }
    let tail = match (status, duration) {
        (ToolStatus::Interrupted, _) => "  interrupted".to_owned(),
        (_, Some(d)) if status != ToolStatus::Running => format!("  {}", format_duration(d)),
        _ => String::new(),
    };
    let used: usize = 2 + call.name.chars().count() + tail.chars().count() + 2;
    let room = (width as usize).saturating_sub(used).max(8);
    header.push(Span::raw(format!("  {}", truncate(&summary(call), room))));
    header.push(Span::styled(tail, Style::new().fg(Color::DarkGray)));
    let mut lines = vec![Line::from(header)];
    match output {
        Some(output) if status == ToolStatus::Running => lines.extend(live_tail(output, width)),
        Some(output) => lines.extend(body(&call.name, status, output, expanded, width)),
        None => {}
    }
    lines
}

/// A running command's last `FOLDED_LINES` lines, as it prints them (issue 32 point 3).
fn live_tail(output: &str, width: u16) -> Vec<Line<'static>> {
    let clean = expand_tabs(&crate::terminal_text::sanitize(output));
    let all: Vec<&str> = clean.trim_end_matches('\n').lines().collect();
    let room = (width as usize).saturating_sub(4).max(8);
    all[all.len().saturating_sub(FOLDED_LINES)..]
        .iter()
        .map(|line| {
            Line::styled(
                format!("  │ {}", truncate(line, room)),
                Style::new().fg(Color::DarkGray),
            )
        })
        .collect()
}

/// The output of a call of the tool `name` under its header: folded to a few lines unless
/// `expanded`, a diff with its line numbers.
pub fn body(
    name: &str,
    status: ToolStatus,
    output: &str,
    expanded: bool,
    width: u16,
) -> Vec<Line<'static>> {
    if output.trim().is_empty() {
        return Vec::new();
    }
    let clean = expand_tabs(&crate::terminal_text::sanitize(output));
    // What the language servers said of the change: one short line under the block, the
    // diagnostics themselves once expanded.
    let (clean, diagnostics) = match clean.find(DIAGNOSTICS_START) {
        Some(at) => (
            format!("{}\n", clean[..at].trim_end()),
            Some(clean[at..].trim().to_owned()),
        ),
        None => (clean, None),
    };
    let mut lines = body_of(name, status, &clean, expanded, width);
    if let Some(report) = diagnostics {
        lines.extend(diagnostics_lines(&report, expanded, width));
    }
    lines
}

/// How a language server's report in a tool's result begins (`lsp::diagnostics::report`).
const DIAGNOSTICS_START: &str = "The language server (";

/// The servers' report: folded, "N new errors, M new warnings"; expanded, every line of it
/// but the fences around the data.
fn diagnostics_lines(report: &str, expanded: bool, width: u16) -> Vec<Line<'static>> {
    let (mut errors, mut warnings) = (0, 0);
    for summary in report.lines().filter(|l| l.starts_with(DIAGNOSTICS_START)) {
        let count = |after: &str| {
            summary
                .split_once(after)
                .and_then(|(_, rest)| rest.split_whitespace().next()?.parse::<usize>().ok())
                .unwrap_or(0)
        };
        errors += count(" reports ");
        warnings += count(" error(s) and ");
    }
    let style = Style::new().fg(if errors > 0 {
        Color::Red
    } else {
        Color::Yellow
    });
    let gutter = [Span::styled("  │ ", Style::new().fg(Color::DarkGray))];
    let plural = |n: usize, what: &str| format!("{n} new {what}{}", if n == 1 { "" } else { "s" });
    let mut said = Vec::new();
    if errors > 0 {
        said.push(plural(errors, "error"));
    }
    if warnings > 0 {
        said.push(plural(warnings, "warning"));
    }
    let head = format!("  ⚠ {} from the language server", said.join(", "));
    if !expanded {
        return vec![Line::styled(format!("{head} (Ctrl+O to expand)"), style)];
    }
    let mut lines = vec![Line::styled(head, style)];
    let shown = report.lines().filter(|l| {
        !l.starts_with(DIAGNOSTICS_START)
            && !l.starts_with("[data from outside")
            && !l.starts_with("[end of data from outside")
            && !l.trim().is_empty()
    });
    for line in shown {
        lines.extend(wrap(
            &[Span::styled(line.to_string(), style)],
            width,
            &gutter,
            &gutter,
        ));
    }
    lines
}

/// `body` of the tool's own words (without the servers' report).
fn body_of(
    name: &str,
    status: ToolStatus,
    clean: &str,
    expanded: bool,
    width: u16,
) -> Vec<Line<'static>> {
    let mut lines = Vec::new();
    let body: Vec<&str> = clean.lines().collect();
    let error = status == ToolStatus::Error;
    let gutter = [Span::styled("  │ ", Style::new().fg(Color::DarkGray))];
    let more = |n: usize, what: &str| {
        let lines = if n == 1 { "line" } else { "lines" };
        Line::styled(
            format!("  … {n} {what}{lines} (Ctrl+O to expand)"),
            Style::new().fg(Color::DarkGray),
        )
    };
    // A diff (edit_file, write_file) shows its changed lines with their line numbers.
    if body.iter().any(|l| l.starts_with("@@ ")) {
        if expanded {
            // The tool's own words before the diff ("Edited … 1 replacement.").
            for line in body.iter().take_while(|l| !l.starts_with("--- ")) {
                lines.extend(wrap(
                    &[Span::styled(
                        line.to_string(),
                        line_style(line, false, error),
                    )],
                    width,
                    &gutter,
                    &gutter,
                ));
            }
        }
        let numbered = numbered_diff(&body, !expanded);
        let limit = if expanded {
            usize::MAX
        } else {
            FOLDED_LINES * 2
        };
        for (number, line) in numbered.iter().take(limit) {
            let style = line_style(line, true, error);
            let first = [
                gutter[0].clone(),
                Span::styled(format!("{number:>4} "), Style::new().fg(Color::DarkGray)),
            ];
            let rest = [gutter[0].clone(), Span::raw("     ")];
            lines.extend(wrap(
                &[Span::styled(line.to_string(), style)],
                width,
                &first,
                &rest,
            ));
        }
        if numbered.len() > limit {
            lines.push(more(numbered.len() - limit, "more changed "));
        }
        return lines;
    }
    // A command's end says how it went: folded, `bash` shows its last lines (the exit status
    // is the last); other tools their first.
    let shown = if expanded {
        0..body.len()
    } else if name == "bash" {
        body.len().saturating_sub(FOLDED_LINES)..body.len()
    } else {
        0..body.len().min(FOLDED_LINES)
    };
    if shown.start > 0 {
        lines.push(more(shown.start, "earlier "));
    }
    let hidden_after = body.len() - shown.end;
    for line in &body[shown] {
        let style = line_style(line, false, error);
        lines.extend(wrap(
            &[Span::styled(line.to_string(), style)],
            width,
            &gutter,
            &gutter,
        ));
    }
    if hidden_after > 0 {
        lines.push(more(hidden_after, "more "));
    }
    lines
}

/// Tabs as spaces to the next multiple of 4 (a tab has no width of its own on screen).
pub fn expand_tabs(text: &str) -> String {
    if !text.contains('\t') {
        return text.to_owned();
    }
    let mut out = String::with_capacity(text.len());
    let mut column = 0;
    for c in text.chars() {
        match c {
            '\t' => {
                let spaces = 4 - column % 4;
                out.push_str(&" ".repeat(spaces));
                column += spaces;
            }
            '\n' => {
                out.push(c);
                column = 0;
            }
            _ => {
                out.push(c);
                column += unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
            }
        }
    }
    out
}

/// The lines of a unified diff with the line number each has in its file (the new file's for
/// added and kept lines, the old file's for removed ones); `changed_only` keeps `+` and `-`.
pub fn numbered_diff<'a>(body: &[&'a str], changed_only: bool) -> Vec<(String, &'a str)> {
    let mut out = Vec::new();
    let (mut old, mut new) = (0u64, 0u64);
    let mut in_hunk = false;
    for line in body {
        if let Some(header) = line.strip_prefix("@@ ") {
            // "@@ -a,b +c,d @@"
            let number = |sign: char| {
                header
                    .split_whitespace()
                    .find_map(|part| part.strip_prefix(sign))
                    .and_then(|part| part.split(',').next())
                    .and_then(|n| n.parse::<u64>().ok())
                    .unwrap_or(1)
            };
            (old, new) = (number('-'), number('+'));
            in_hunk = true;
            if !changed_only {
                out.push((String::new(), *line));
            }
            continue;
        }
        if !in_hunk {
            continue;
        }
        if line.starts_with('-') {
            out.push((old.to_string(), *line));
            old += 1;
        } else if line.starts_with('+') {
            out.push((new.to_string(), *line));
            new += 1;
        } else {
            if !changed_only {
                out.push((new.to_string(), *line));
            }
            old += 1;
            new += 1;
        }
    }
    out
}

fn line_style(line: &str, in_diff: bool, error: bool) -> Style {
    if in_diff {
        if line.starts_with("+++") || line.starts_with("---") {
            return Style::new().add_modifier(Modifier::BOLD);
        }
        if line.starts_with('+') {
            return Style::new().fg(super::theme::ok());
        }
        if line.starts_with('-') {
            return Style::new().fg(Color::Red);
        }
        if line.starts_with("@@") {
            return Style::new().fg(super::theme::accent());
        }
    }
    if error {
        Style::new().fg(Color::Red)
    } else {
        Style::new().fg(super::theme::output())
    }
}

pub fn format_duration(duration: Duration) -> String {
    let ms = duration.as_millis();
    if ms < 1000 {
        format!("{ms}ms")
    } else if ms < 60_000 {
        format!("{:.1}s", duration.as_secs_f64())
    } else {
        format!("{}m{:02}s", ms / 60_000, (ms / 1000) % 60)
    }
}
