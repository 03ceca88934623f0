//! The folder trust question (CONTRACT "Folder trust"), the first layer of a folder whose trust
//! is not decided: `t` trusts it (remembered), `n` or Esc does not for now. Its answer is a
//! command for the runner, which settles it off the UI task before the session opens.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

use super::app::Effect;
use super::compositor::{Layer, Outcome, Shared};
use super::keymap::{Action, Focus};
use super::overlays::{boxed, centered, choice_lines};
use super::wrap::{truncate, wrap};

/// The question about the folder `workdir`.
pub(super) struct TrustQuestion {
    workdir: String,
}

impl TrustQuestion {
    pub fn new(workdir: String) -> Self {
        TrustQuestion { workdir }
    }
}

impl Layer for TrustQuestion {
    fn focus(&self) -> Focus {
        Focus::Trust
    }

    fn update(&mut self, action: Action, _: &Shared) -> Outcome {
        match action {
            Action::TrustFolder(trusted) => Outcome::close(vec![Effect::TrustFolder(trusted)]),
            // Ctrl+C (quitting), the page keys and the wheel are the app's.
            action if action.is_the_conversations() => Outcome::pass(),
            _ => Outcome::done(),
        }
    }

    fn draw(&self, _: &Shared, frame: &mut Frame, area: Rect) {
        draw(&self.workdir, frame, area);
    }

    fn hints(&self) -> std::borrow::Cow<'static, str> {
        " t trusts this folder · n or Esc does not ".into()
    }

    fn dialog(&self) -> Option<String> {
        Some("trust".into())
    }
}

/// The folder trust question (CONTRACT "Folder trust"): what trusting lets the folder do.
fn draw(workdir: &str, frame: &mut Frame, area: Rect) {
    let width = area.width.saturating_sub(4).clamp(20, 90);
    let inner_width = width.saturating_sub(4);
    let key = Style::new()
        .fg(super::theme::accent())
        .add_modifier(Modifier::BOLD);
    let mut lines = vec![
        Line::styled(
            truncate(workdir, inner_width as usize),
            Style::new().add_modifier(Modifier::BOLD),
        ),
        Line::default(),
    ];
    lines.extend(wrap(
        &[Span::raw(
            "A trusted folder's own files may widen what harness9 does: the allow rules of its \
             .harness9/settings*.json, its hooks and .mcp.json servers, and the base URLs in \
             its .env. Until you trust it they are ignored (its deny and ask rules apply).",
        )],
        inner_width,
        &[],
        &[],
    ));
    lines.push(Line::default());
    lines.extend(choice_lines(
        [
            (
                "t",
                "trust this folder (remembered in $HARNESS9_HOME/trusted.json)".to_owned(),
            ),
            (
                "n",
                "do not trust it for now (Esc): asked again next time".to_owned(),
            ),
        ],
        inner_width,
        key,
    ));
    let height = (lines.len() as u16 + 2).min(area.height);
    let rect = centered(area, width, height);
    let title = Span::styled(
        " Trust this folder? ",
        Style::new().add_modifier(Modifier::BOLD),
    );
    boxed(
        frame,
        rect,
        title,
        Style::new().fg(super::theme::warn()),
        lines,
    );
}
