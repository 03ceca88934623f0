//! The status line: mode, model, directory, turn, work in progress, retries, notices, and the
//! token gauge. The mode, the model and the directory's tail always stay (cut to fit); when the
//! line is too narrow the least important of the rest go first, and the gauge shrinks.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use unicode_width::UnicodeWidthStr;

use super::app::App;
use super::tool_view::{format_duration, spinner};
use super::view::DIM;
use super::wrap::truncate;
use crate::session::Mode;

pub fn mode_style(mode: Mode) -> Style {
    let color = match mode {
        Mode::Default => Color::Blue,
        Mode::AutoEdit => Color::Green,
        Mode::Plan => Color::Magenta,
        Mode::Yolo => Color::Red,
    };
    Style::new()
        .fg(Color::Black)
        .bg(color)
        .add_modifier(Modifier::BOLD)
}

/// `~` for the home directory, and the tail of a long path.
fn short_path(path: &str, max: usize) -> String {
    let home = std::env::var("HOME").unwrap_or_default();
    let path = match path.strip_prefix(&home) {
        Some(rest) if !home.is_empty() => format!("~{rest}"),
        _ => path.to_owned(),
    };
    if path.chars().count() <= max {
        return path;
    }
    let tail: String = path
        .chars()
        .rev()
        .take(max.saturating_sub(1))
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    format!("…{tail}")
}

fn gauge(app: &App) -> Vec<Span<'static>> {
    let window = app
        .run()
        .tokens
        .map(|t| t.context_window)
        .filter(|w| *w > 0)
        .unwrap_or(app.session().context_window);
    let used = app
        .run()
        .tokens
        .map(|t| t.input_tokens + t.output_tokens)
        .unwrap_or(0);
    if window == 0 {
        return Vec::new();
    }
    let share = used as f64 / window as f64;
    let color = if share >= 0.8 {
        Color::Red
    } else if share >= 0.5 {
        super::theme::warn()
    } else {
        super::theme::ok()
    };
    let cells = 10usize;
    let filled = ((share * cells as f64).round() as usize).min(cells);
    let estimated = app.run().tokens.is_some_and(|t| t.estimated);
    vec![
        Span::styled("█".repeat(filled), Style::new().fg(color)),
        Span::styled("░".repeat(cells - filled), DIM),
        Span::styled(
            format!(
                " {}{:.0}% {}/{}",
                if estimated { "~" } else { "" },
                share * 100.0,
                compact(used),
                compact(window)
            ),
            Style::new().fg(color),
        ),
    ]
}

fn compact(tokens: u64) -> String {
    if tokens >= 1_000_000 {
        format!("{:.1}M", tokens as f64 / 1e6)
    } else if tokens >= 1000 {
        format!("{}k", tokens / 1000)
    } else {
        tokens.to_string()
    }
}

/// The compact gauge for narrow screens: the share only.
fn short_gauge(app: &App) -> Vec<Span<'static>> {
    let full = gauge(app);
    let Some(numbers) = full.last() else {
        return full;
    };
    let share = numbers.content.split_whitespace().next().unwrap_or("");
    vec![Span::styled(share.to_owned(), numbers.style)]
}

/// The parts after the mode, model and directory, each with a priority: when the line is too
/// narrow the lowest go first. A front end feature adds its part here (a running hook, a count
/// of servers) with the priority it deserves.
fn optional_segments(app: &App) -> Vec<(u8, Vec<Span<'static>>)> {
    let mut segments: Vec<(u8, Vec<Span<'static>>)> = Vec::new();
    if app.run().turn > 0 {
        segments.push((
            2,
            vec![Span::styled(format!(" · turn {}", app.run().turn), DIM)],
        ));
    }
    if let Some(since) = app.run().working_since {
        let elapsed = format_duration(std::time::Duration::from_secs(since.elapsed().as_secs()));
        segments.push((
            8,
            vec![Span::styled(
                format!(" · {} {elapsed}", spinner(app.screen().spinner)),
                Style::new().fg(super::theme::accent()),
            )],
        ));
    }
    if let Some(waited) = app.waiting_for_model() {
        segments.push((
            8,
            vec![Span::styled(
                format!(" · waiting for the model {}s", waited.as_secs()),
                Style::new().fg(super::theme::warn()),
            )],
        ));
    }
    if let Some(hook) = &app.run().hook_running {
        segments.push((
            8,
            vec![Span::styled(
                format!(" · running {hook}"),
                Style::new().fg(Color::Cyan),
            )],
        ));
    }
    if let Some(reason) = &app.run().retry {
        segments.push((
            7,
            vec![Span::styled(
                format!(" · retrying: {reason}"),
                Style::new().fg(super::theme::warn()),
            )],
        ));
    }
    if app.spending().total().priced {
        segments.push((
            5,
            vec![Span::styled(
                format!(" · {}", app.spending().total().dollars()),
                DIM,
            )],
        ));
    }
    if let Some(jobs) = super::jobs::status_text(app) {
        segments.push((6, vec![Span::styled(jobs, Style::new().fg(Color::Cyan))]));
    }
    if let Some(mcp) = super::mcp_panel::status_text(app) {
        segments.push((4, vec![Span::styled(mcp, DIM)]));
    }
    if let Some(sandbox) = &app.facts().sandbox {
        segments.push((4, vec![Span::styled(format!(" · {sandbox}"), DIM)]));
    }
    if app.plan().auto_continue() {
        segments.push((
            7,
            vec![Span::styled(
                " · auto-continue (Esc stops)",
                Style::new().fg(Color::Magenta),
            )],
        ));
    }
    if !app.screen().mouse_captured && !app.screen().inline {
        segments.push((
            7,
            vec![Span::styled(
                " · mouse: select (F2)",
                Style::new().fg(Color::Magenta),
            )],
        ));
    }
    if let Some(flash) = &app.flash().text {
        segments.push((
            6,
            vec![Span::styled(
                format!(" · {flash}"),
                Style::new().fg(super::theme::warn()),
            )],
        ));
    }
    segments
}

fn spans_width(spans: &[Span<'_>]) -> usize {
    spans.iter().map(|s| s.content.width()).sum()
}

/// The status line at `width` cells. The mode, the model and the working directory's tail are
/// always there (cut, never dropped); everything else takes the room that is left.
pub fn status_line(app: &App, width: u16) -> Line<'static> {
    let width = width as usize;
    let mode = vec![
        Span::styled(
            format!(" {} ", app.session().mode),
            mode_style(app.session().mode),
        ),
        Span::raw(" "),
    ];
    let model_room = (width / 5).max(10);
    let model = truncate(&app.session().model, model_room);
    let dir_room = (width / 6).max(8);
    let dir = short_path(&app.session().workdir, dir_room);
    let essentials = spans_width(&mode) + model.width() + 3 + dir.width();
    let segments = optional_segments(app);
    // What is going on now (work, retries, notices) comes before the gauge's bar: the gauge
    // is whole when there is room for both, the share alone when not, none on a tiny line.
    let urgent: usize = segments
        .iter()
        .filter(|(p, _)| *p >= 6)
        .map(|(_, s)| spans_width(s))
        .sum();
    let mut right = gauge(app);
    if essentials + urgent + spans_width(&right) + 2 > width {
        right = short_gauge(app);
    }
    if essentials + urgent.min(12) + spans_width(&right) + 2 > width {
        right.clear();
    }
    let right_width = spans_width(&right) + usize::from(!right.is_empty());
    let room = width.saturating_sub(right_width);

    let mut left = mode;
    let provider = Span::styled(
        format!("{}/", app.session().provider),
        Style::new().fg(super::theme::accent()),
    );
    let mut segments = segments;
    let fixed = essentials;
    // The provider ranks as a part of priority 3: it stays when the parts above it fit with it.
    let above: usize = segments
        .iter()
        .filter(|(p, _)| *p > 3)
        .map(|(_, s)| spans_width(s))
        .sum();
    if fixed + provider.content.width() + above <= room {
        left.push(provider);
    }
    left.push(Span::styled(model, Style::new().fg(super::theme::accent())));
    left.push(Span::styled(" · ", DIM));
    left.push(Span::raw(dir));
    let used_fixed = spans_width(&left);
    // The least important go first; what is going on now is cut rather than dropped.
    while used_fixed + segments_width(&segments) > room {
        let Some((lowest, _)) = segments
            .iter()
            .enumerate()
            .filter(|(_, (p, _))| *p < 6)
            .min_by_key(|(_, (p, _))| *p)
        else {
            break;
        };
        segments.remove(lowest);
    }
    let mut spans = Vec::new();
    let mut used = 0;
    for span in left
        .into_iter()
        .chain(segments.into_iter().flat_map(|(_, s)| s))
    {
        let w = span.content.width();
        if used + w > room {
            let cut = truncate(&span.content, room.saturating_sub(used));
            used += cut.width();
            spans.push(Span::styled(cut, span.style));
            break;
        }
        used += w;
        spans.push(span);
    }
    spans.push(Span::raw(" ".repeat(
        room.saturating_sub(used) + usize::from(!right.is_empty()),
    )));
    spans.extend(right);
    Line::from(spans)
}

fn segments_width(segments: &[(u8, Vec<Span<'static>>)]) -> usize {
    segments.iter().map(|(_, s)| spans_width(s)).sum()
}

pub(super) fn draw_status(app: &App, frame: &mut Frame, area: Rect) {
    frame.render_widget(Paragraph::new(status_line(app, area.width)), area);
}

#[cfg(test)]
mod sandbox_tests {
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;

    use super::super::app::{App, SessionView};
    use super::*;

    #[test]
    fn the_status_line_names_the_sandbox() {
        let mut app = App::new(SessionView {
            session_id: "s".into(),
            provider: "openai".into(),
            model: "m".into(),
            workdir: "/w".into(),
            mode: Mode::AutoEdit,
            context_window: 1000,
        });
        app.facts_mut().sandbox = Some("sandbox: workspace-write".into());
        let mut terminal = Terminal::new(TestBackend::new(120, 1)).unwrap();
        terminal
            .draw(|frame| draw_status(&app, frame, frame.area()))
            .unwrap();
        let line: String = (0..120)
            .map(|x| terminal.backend().buffer()[(x, 0)].symbol().to_owned())
            .collect();
        assert!(line.contains("sandbox: workspace-write"), "{line}");
    }
}
