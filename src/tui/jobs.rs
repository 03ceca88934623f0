//! Background commands on screen: a line above the input per running one (its command and last
//! line of output), a count on the status line, and `/ps` listing every one of the session with
//! its state (running, or how and when it ended), command and last lines. The list comes from
//! the session core (`Request::ListJobs`), refreshed after every tool result and run. `/ps N`
//! shows one job's whole output and `/ps stop N` stops it (`Request::Job`).

use ratatui::style::Style;
use ratatui::text::{Line, Span};

use super::app::{App, Effect};
use super::transcript::Tone;
use crate::session::JobSummary;
use crate::session::{JobAction, Request};
use crate::terminal_text::sanitize;

/// The session's background commands, as last heard.
#[derive(Debug, Clone, Default)]
pub struct JobsView {
    pub list: Vec<JobSummary>,
    /// `/ps` asked: the next list is shown in the transcript.
    pub show_next: bool,
}

impl JobsView {
    pub fn running(&self) -> usize {
        self.list.iter().filter(|j| j.running).count()
    }
}

impl App {
    /// `/ps`: asks for the list (shown when it comes); `/ps N` for one job's whole output,
    /// `/ps stop N` to stop it (the session core answers both with a notice).
    pub(super) fn ps(&mut self, rest: &str) -> Vec<Effect> {
        let words: Vec<&str> = rest.split_whitespace().collect();
        let (id, action) = match words.as_slice() {
            [] => {
                self.jobs_mut().show_next = true;
                return vec![Effect::Request(Request::ListJobs)];
            }
            [id] => (*id, JobAction::Output),
            ["stop" | "kill", id] => (*id, JobAction::Stop),
            _ => {
                self.transcript_mut().notice(
                    "usage: /ps (list), /ps N (job N's whole output), /ps stop N (stop it)"
                        .to_owned(),
                    Tone::Warning,
                );
                return Vec::new();
            }
        };
        vec![Effect::Request(Request::Job {
            id: id.to_owned(),
            action,
        })]
    }

    pub(super) fn on_jobs(&mut self, list: Vec<JobSummary>) {
        self.jobs_mut().list = list;
        if !std::mem::take(&mut self.jobs_mut().show_next) {
            return;
        }
        let text = ps_text(&self.jobs().list);
        self.transcript_mut().notice(text, Tone::Quiet);
    }
}

/// `/ps`'s text: one block per command.
pub fn ps_text(list: &[JobSummary]) -> String {
    if list.is_empty() {
        return "no background commands in this session".into();
    }
    let mut out = String::from("background commands:");
    for job in list {
        out.push_str(&format!(
            "\n[{}] {}  {}",
            job.id,
            job_state(job),
            sanitize(&job.command)
        ));
        for line in job.tail.lines().filter(|l| !l.trim().is_empty()) {
            out.push_str(&format!("\n    {}", sanitize(line)));
        }
    }
    out
}

/// A job's real state: running for how long, or how it ended, when (the clock, UTC) and after
/// how long a run.
fn job_state(job: &JobSummary) -> String {
    let ran = job.elapsed.as_secs();
    let Some(end) = job.ended else {
        return format!("running {ran}s");
    };
    let how = match end.status {
        Some(code) => format!("exited with status {code}"),
        None => "stopped".to_owned(),
    };
    // `2026-12-05T12:53:10Z`: the time of day is what tells when it died.
    let stamp = humantime::format_rfc3339_seconds(end.at).to_string();
    let clock = stamp.get(11..19).unwrap_or(&stamp);
    format!("{how} at {clock} UTC after {ran}s")
}

/// The status line's part: running background commands, when any.
pub fn status_text(app: &App) -> Option<String> {
    match app.jobs().running() {
        0 => None,
        1 => Some(" · 1 background command (/ps)".into()),
        n => Some(format!(" · {n} background commands (/ps)")),
    }
}

/// One line per running background command, above the input (at most three, then a count):
/// its id, command and last line of output as last heard.
pub fn running_lines(app: &App) -> Vec<Line<'static>> {
    const SHOWN: usize = 3;
    let running: Vec<&JobSummary> = app.jobs().list.iter().filter(|j| j.running).collect();
    let mut lines: Vec<Line<'static>> = running
        .iter()
        .take(SHOWN)
        .map(|job| {
            let last = job
                .tail
                .lines()
                .rev()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("");
            Line::from(vec![
                Span::styled(
                    format!("  ⚙ [{}] ", job.id),
                    Style::new().fg(super::theme::accent()),
                ),
                Span::raw(super::wrap::truncate(&sanitize(&job.command), 60)),
                Span::styled(
                    format!("  {}", super::wrap::truncate(&sanitize(last), 60)),
                    super::view::DIM,
                ),
            ])
        })
        .collect();
    if running.len() > SHOWN {
        lines.push(Line::styled(
            format!("  … and {} more running (/ps)", running.len() - SHOWN),
            super::view::DIM,
        ));
    }
    lines
}
