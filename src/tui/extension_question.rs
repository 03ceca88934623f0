//! The question about a trusted project's own extensions (CONTRACT "Folder trust"), asked at
//! start before the session opens: each pending one (the hooks of a settings file, an MCP server
//! of `.mcp.json`) is a layer of its own showing what it would run, and the user approves it
//! (remembered by a hash of its definition, so a changed one is asked about again) or not for
//! now. The answer is a command for the runner, which remembers it off the UI task; one-key
//! answers wait out the dialogs' 250 ms guard as the trust question's do.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};

use super::app::Effect;
use super::compositor::{Layer, Outcome, Shared};
use super::keymap::{Action, Focus};
use super::overlays::{boxed, centered, choice_lines};
use super::wrap::{truncate, wrap};
use crate::session::setup::{ExtensionKind, PendingExtension};

/// The question about one extension.
pub(super) struct ExtensionQuestion {
    extension: PendingExtension,
}

impl ExtensionQuestion {
    pub fn new(extension: PendingExtension) -> Self {
        ExtensionQuestion { extension }
    }
}

impl Layer for ExtensionQuestion {
    fn focus(&self) -> Focus {
        Focus::Extension
    }

    fn update(&mut self, action: Action, _: &Shared) -> Outcome {
        match action {
            Action::ApproveExtension(yes) => Outcome::close(vec![Effect::ApproveExtension(yes)]),
            // Ctrl+C (quitting), the page keys and the wheel are the app's.
            action if action.is_the_conversations() => Outcome::pass(),
            _ => Outcome::done(),
        }
    }

    fn draw(&self, _: &Shared, frame: &mut Frame, area: Rect) {
        draw(&self.extension, frame, area);
    }

    fn hints(&self) -> std::borrow::Cow<'static, str> {
        " a approves · n or Esc leaves it off for now ".into()
    }

    fn dialog(&self) -> Option<String> {
        Some(format!(
            "extension:{}:{}",
            self.extension.name, self.extension.hash
        ))
    }
}

fn kind_name(kind: ExtensionKind) -> &'static str {
    match kind {
        ExtensionKind::Hooks => "the hooks of",
        ExtensionKind::McpServer => "the MCP server",
        ExtensionKind::BaseUrl => "your API key's server from .env,",
    }
}

/// The question: which extension, what it would run, and the two answers.
fn draw(extension: &PendingExtension, frame: &mut Frame, area: Rect) {
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
    lines.extend(choice_lines(
        [
            (
                "a",
                "approve (remembered; asked again if its definition changes)".to_owned(),
            ),
            (
                "n",
                "not now (Esc): it does not run; asked again next time".to_owned(),
            ),
        ],
        inner,
        key,
    ));
    let height = (lines.len() as u16 + 2).min(area.height);
    let rect = centered(area, width, height);
    let title = Span::styled(
        " Approve this project's extension? ",
        Style::new().add_modifier(Modifier::BOLD),
    );
    boxed(frame, rect, title, Style::new().fg(Color::Yellow), lines);
}
