//! The status line: mode, model, directory, turn, work in progress, retries, notices, and the
//! token gauge; when it is too narrow the least important parts go first.

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
use crate::planning::Mode;

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
        .tokens
        .map(|t| t.context_window)
        .filter(|w| *w > 0)
        .unwrap_or(app.session.context_window);
    let used = app
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
        Color::Yellow
    } else {
        Color::Green
    };
    let cells = 10usize;
    let filled = ((share * cells as f64).round() as usize).min(cells);
    let estimated = app.tokens.is_some_and(|t| t.estimated);
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

pub(super) fn draw_status(app: &App, frame: &mut Frame, area: Rect) {
    // Segments in display order with a priority: when the line is too narrow, the lowest
    // priorities go first, so the mode, the work in progress and a retry reason always show.
    let mut segments: Vec<(u8, Vec<Span<'static>>)> = vec![
        (
            9,
            vec![
                Span::styled(
                    format!(" {} ", app.session.mode),
                    mode_style(app.session.mode),
                ),
                Span::raw(" "),
            ],
        ),
        (
            3,
            vec![Span::styled(
                format!("{}/", app.session.provider),
                Style::new().fg(Color::Cyan),
            )],
        ),
        (
            5,
            vec![Span::styled(
                app.session.model.clone(),
                Style::new().fg(Color::Cyan),
            )],
        ),
        (
            1,
            vec![
                Span::styled(" · ", DIM),
                Span::raw(short_path(&app.session.workdir, 30)),
            ],
        ),
    ];
    if app.turn > 0 {
        segments.push((2, vec![Span::styled(format!(" · turn {}", app.turn), DIM)]));
    }
    if let Some(since) = app.working_since {
        let elapsed = format_duration(std::time::Duration::from_secs(since.elapsed().as_secs()));
        segments.push((
            8,
            vec![Span::styled(
                format!(" · {} {elapsed}", spinner(app.spinner)),
                Style::new().fg(Color::Cyan),
            )],
        ));
    }
    if let Some(hook) = &app.hook_running {
        segments.push((
            8,
            vec![Span::styled(
                format!(" · running {hook}"),
                Style::new().fg(Color::Cyan),
            )],
        ));
    }
    if let Some(reason) = &app.retry {
        segments.push((
            7,
            vec![Span::styled(
                format!(" · retrying: {reason}"),
                Style::new().fg(Color::Yellow),
            )],
        ));
    }
    if let Some(mcp) = super::mcp_panel::status_text(app) {
        segments.push((4, vec![Span::styled(mcp, DIM)]));
    }
    if let Some(sandbox) = &app.sandbox {
        segments.push((4, vec![Span::styled(format!(" · {sandbox}"), DIM)]));
    }
    if app.auto_continue {
        segments.push((
            7,
            vec![Span::styled(
                " · auto-continue (Esc stops)",
                Style::new().fg(Color::Magenta),
            )],
        ));
    }
    if !app.mouse_captured {
        segments.push((
            7,
            vec![Span::styled(
                " · mouse: select (F2)",
                Style::new().fg(Color::Magenta),
            )],
        ));
    }
    if let Some(flash) = &app.flash {
        segments.push((
            6,
            vec![Span::styled(
                format!(" · {flash}"),
                Style::new().fg(Color::Yellow),
            )],
        ));
    }
    let right = gauge(app);
    let right_width: usize = right.iter().map(|s| s.content.width()).sum::<usize>() + 1;
    let room = (area.width as usize).saturating_sub(right_width + 1);
    let width_of = |segments: &[(u8, Vec<Span<'static>>)]| -> usize {
        segments
            .iter()
            .flat_map(|(_, spans)| spans)
            .map(|s| s.content.width())
            .sum()
    };
    while width_of(&segments) > room && segments.len() > 1 {
        let Some((lowest, _)) = segments.iter().enumerate().min_by_key(|(_, (p, _))| *p) else {
            break;
        };
        segments.remove(lowest);
    }
    let mut used = 0;
    let mut spans = Vec::new();
    for span in segments.into_iter().flat_map(|(_, spans)| spans) {
        let w = span.content.width();
        if used + w > room {
            spans.push(Span::styled(
                truncate(&span.content, room.saturating_sub(used)),
                span.style,
            ));
            used = room;
            break;
        }
        used += w;
        spans.push(span);
    }
    spans.push(Span::raw(" ".repeat(room.saturating_sub(used) + 1)));
    spans.extend(right);
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
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
        app.sandbox = Some("sandbox: workspace-write".into());
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
