//! The question about a trusted project's own extensions (CONTRACT "Folder trust"), asked at
//! start before the session opens: each pending one (the hooks of a settings file, an MCP server
//! of `.mcp.json`) is shown with what it would run, and the user approves it (remembered by
//! a hash of its definition in `config::approved`, so a changed one is asked about again) or
//! not for now. It uses the app's own layer, keys and 250 ms guard, as the trust question does.

use crossterm::event::{Event as TermEvent, EventStream};
use futures_util::StreamExt;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};

use super::app::{App, Command, SessionView};
use super::overlays::{boxed, centered};
use super::terminal::Term;
use super::wrap::{truncate, wrap};
use crate::config::Settings;
use crate::config::approved::{self, ExtensionKind, PendingExtension};

/// The project extensions of a trusted folder that wait for the user's approval.
pub(super) fn pending(settings: &Settings) -> Vec<PendingExtension> {
    if !settings.trusted {
        return Vec::new();
    }
    let mut pending = crate::hooks::settings::load(&crate::hooks::HookSources {
        home: &settings.home,
        workdir: &settings.workdir,
        trusted: true,
        approve_all: false,
    })
    .pending;
    // The project's MCP servers (`.mcp.json`) join the same question.
    pending
        .extend(crate::mcp::config::load(&settings.workdir, &settings.home, true, false).pending);
    pending
}

/// Asks about each of `pending` in turn and remembers the approvals. `Some(problems)` when
/// done (an approval that could not be written runs for no session: said in a notice), `None`
/// when the user quit.
pub(super) async fn ask(
    term: &mut Term,
    settings: &Settings,
    pending: Vec<PendingExtension>,
) -> std::io::Result<Option<Vec<String>>> {
    let mut app = App::new(SessionView {
        session_id: String::new(),
        provider: settings.provider.kind.to_string(),
        model: settings.provider.model.clone(),
        workdir: settings.workdir.display().to_string(),
        mode: settings.mode,
        context_window: settings.context_window,
    });
    let mut input = EventStream::new();
    let mut problems = Vec::new();
    for extension in pending {
        app.extension = Some(extension.clone());
        let approve = loop {
            super::draw_frame(term, &mut app)?;
            let key = match input.next().await {
                Some(Ok(TermEvent::Key(key))) => key,
                Some(Ok(_)) => continue,
                Some(Err(error)) => return Err(error),
                None => return Ok(None),
            };
            let commands = app.handle_key(key);
            if commands.iter().any(|c| matches!(c, Command::Quit)) {
                return Ok(None);
            }
            if let Some(yes) = commands.iter().find_map(|c| match c {
                Command::ApproveExtension(yes) => Some(*yes),
                _ => None,
            }) {
                break yes;
            }
        };
        if approve
            && let Err(error) = approved::approve(
                &settings.home,
                &settings.workdir,
                extension.kind,
                &extension.name,
                &extension.hash,
            )
        {
            problems.push(format!(
                "the approval of {} could not be remembered, so it does not run: {error}",
                extension.name
            ));
        }
    }
    Ok(Some(problems))
}

fn kind_name(kind: ExtensionKind) -> &'static str {
    match kind {
        ExtensionKind::Hooks => "the hooks of",
        ExtensionKind::McpServer => "the MCP server",
    }
}

/// The question: which extension, what it would run, and the two answers.
pub(super) fn draw(extension: &PendingExtension, frame: &mut Frame, area: Rect) {
    let width = area.width.saturating_sub(4).clamp(20, 100);
    let inner = width.saturating_sub(4);
    let key = Style::new().fg(Color::Cyan).add_modifier(Modifier::BOLD);
    let mut lines = wrap(
        &[Span::raw(format!(
            "This project wants to run {} {}. It runs on this machine with your rights, \
             outside the sandbox. Approve it only if you trust what it runs:",
            kind_name(extension.kind),
            extension.name
        ))],
        inner,
        &[],
        &[],
    );
    lines.push(Line::default());
    let shown = area.height.saturating_sub(12) as usize;
    for line in extension.summary.lines().take(shown.max(1)) {
        lines.push(Line::styled(
            truncate(line, inner as usize),
            Style::new().add_modifier(Modifier::BOLD),
        ));
    }
    lines.push(Line::default());
    for (k, what) in [
        (
            "a",
            "approve (remembered; asked again if its definition changes)",
        ),
        ("n", "not now (Esc): it does not run; asked again next time"),
    ] {
        lines.extend(wrap(
            &[Span::raw(what)],
            inner,
            &[Span::styled(format!(" {k}  "), key)],
            &[Span::raw("    ")],
        ));
    }
    let height = (lines.len() as u16 + 2).min(area.height);
    let rect = centered(area, width, height);
    let title = Span::styled(
        " Approve this project's extension? ",
        Style::new().add_modifier(Modifier::BOLD),
    );
    boxed(frame, rect, title, Style::new().fg(Color::Yellow), lines);
}
