//! `/mcp`: the session's MCP servers as a layer over the transcript: each server, its status
//! and its tools; `r` reconnects the selected one, `d` disables it for the session, `l` logs in
//! to it (an HTTP server that needs authorization; the core runs the flow) and `o` forgets its
//! tokens, Esc closes. The app keeps a snapshot of the statuses (`McpView`), refreshed whenever the
//! session core reports a change (`Update::Mcp`); the panel itself only reads it and answers
//! with commands, which go to the core as requests (the TUI never touches the servers). A
//! server's prompt is fetched by the core too, and sent when it arrives: a slow server never
//! holds up the screen.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};

use super::app::{App, Effect};
use super::compositor::{Layer, Outcome, Shared};
use super::keymap::{Action, Focus};
use super::overlays::{boxed, centered};
use super::slash::Completion;
use super::transcript::Tone;
use super::view::DIM;
use super::wrap::truncate;
use crate::session::Request;
use crate::session::{McpServer, McpStatus};
use crate::terminal_text::sanitize;

/// One server as the panel and the status line show it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpView {
    pub name: String,
    pub scope: &'static str,
    pub status: String,
    pub connected: bool,
    pub tools: Vec<String>,
    /// Its prompts: (`mcp__server__prompt`, description, argument names).
    pub prompts: Vec<(String, String, Vec<String>)>,
    /// Its resources' URIs (`@server:uri` attaches one).
    pub resources: Vec<String>,
}

impl McpView {
    pub fn from_status(status: &McpServer) -> Self {
        McpView {
            // A server's name and reason come from files and servers: no escape sequences.
            name: sanitize(&status.name),
            scope: status.scope,
            status: sanitize(&status.status.to_string()),
            connected: status.status == McpStatus::Connected,
            tools: status.tools.clone(),
            prompts: status
                .prompts
                .iter()
                .map(|p| {
                    (
                        p.command.clone(),
                        sanitize(&p.description),
                        p.arguments.clone(),
                    )
                })
                .collect(),
            resources: status.resources.iter().map(|uri| sanitize(uri)).collect(),
        }
    }
}

/// The status line's part: connected of configured, or nothing without servers.
pub fn status_text(app: &App) -> Option<String> {
    if app.mcp().is_empty() {
        return None;
    }
    let connected = app.mcp().iter().filter(|s| s.connected).count();
    Some(format!(" · mcp {connected}/{}", app.mcp().len()))
}

/// Whether `/name` is a connected server's prompt.
pub fn is_prompt(app: &App, name: &str) -> bool {
    let Some(command) = name.strip_prefix('/') else {
        return false;
    };
    app.mcp()
        .iter()
        .flat_map(|s| &s.prompts)
        .any(|(c, _, _)| c == command)
}

/// The servers' prompts whose command starts with what was typed.
pub fn prompt_completions(app: &App, input: &str) -> Vec<Completion> {
    if input.contains(char::is_whitespace) {
        return Vec::new();
    }
    app.mcp()
        .iter()
        .flat_map(|s| &s.prompts)
        .filter(|(command, _, _)| format!("/{command}").starts_with(input))
        .map(|(command, description, arguments)| Completion {
            insert: format!("/{command}"),
            label: arguments.iter().fold(format!("/{command}"), |label, a| {
                format!("{label} {}", a.to_uppercase())
            }),
            help: format!("MCP prompt: {description}"),
        })
        .collect()
}

/// The servers' resources whose `server:uri` starts with what follows the `@`, at most 8.
pub fn resource_completions(app: &App, query: &str) -> Vec<Completion> {
    app.mcp()
        .iter()
        .flat_map(|s| {
            s.resources
                .iter()
                .map(move |uri| format!("{}:{uri}", s.name))
        })
        .filter(|mention| !query.is_empty() && mention.starts_with(query))
        .take(8)
        .map(|mention| Completion {
            insert: format!("@{mention} "),
            label: mention,
            help: "MCP resource".into(),
        })
        .collect()
}

/// `/mcp__server__prompt ARGS`: asks the session for the prompt's text. The screen goes on
/// meanwhile; the text is sent when it arrives (`prompt_fetched`).
pub fn fetch_prompt(app: &mut App, typed: &str, args: &str) -> Vec<Effect> {
    let command = typed.trim_start_matches('/').to_owned();
    app.flash_mut().text = Some(format!("fetching /{command} from its server…"));
    vec![Effect::Request(Request::McpPrompt {
        command,
        args: args.to_owned(),
    })]
}

/// A fetched prompt: sent as the user's prompt (or queued behind a running turn); a failure
/// is a notice.
pub fn prompt_fetched(
    app: &mut App,
    command: &str,
    result: Result<String, crate::session::Failure>,
) -> Vec<Effect> {
    app.flash_mut().text = None;
    match result {
        Ok(text) => app.send_or_queue(text),
        Err(error) => {
            let notice = sanitize(&format!("/{command}: {}", error.message));
            app.flash_mut().text = Some(notice.clone());
            app.transcript_mut().notice(notice, Tone::Warning);
            Vec::new()
        }
    }
}

/// The servers as the session reports them; what went wrong with them goes to the transcript.
pub fn servers_changed(app: &mut App, servers: Vec<McpView>, notices: Vec<String>) {
    *app.mcp_mut() = servers;
    for notice in notices {
        let notice = sanitize(&notice);
        app.flash_mut().text = Some(notice.clone());
        app.transcript_mut().notice(notice, Tone::Warning);
    }
}

/// The `/mcp` layer: which server is chosen (kept within the servers when they change).
#[derive(Debug, Default)]
pub(super) struct McpPanel {
    selected: usize,
}

impl McpPanel {
    /// The chosen server, within `servers` however many there are now.
    fn selected(&self, servers: &[McpView]) -> usize {
        self.selected.min(servers.len().saturating_sub(1))
    }
}

impl Layer for McpPanel {
    fn focus(&self) -> Focus {
        Focus::McpPanel
    }

    fn update(&mut self, action: Action, shared: &Shared) -> Outcome {
        let selected = self.selected(shared.mcp);
        let name = shared.mcp.get(selected).map(|s| s.name.clone());
        match action {
            Action::Close => return Outcome::close(Vec::new()),
            Action::Prev | Action::Next => {
                self.selected = action
                    .chosen(selected, shared.mcp.len())
                    .unwrap_or(selected)
            }
            Action::Reconnect => {
                return Outcome::send(
                    name.map(|value| Effect::Request(Request::McpReconnect(value)))
                        .into_iter()
                        .collect(),
                );
            }
            Action::Disable => {
                return Outcome::send(
                    name.map(|value| Effect::Request(Request::McpDisable(value)))
                        .into_iter()
                        .collect(),
                );
            }
            Action::LogIn(log_in) => {
                let request = match log_in {
                    true => Request::McpLogin,
                    false => Request::McpLogout,
                };
                let flash = match log_in {
                    true => "logging in: the browser opens (the link is in the transcript)",
                    false => "forgetting the server's tokens",
                };
                let requests = name.map(|value| Effect::Request(request(value)));
                return Outcome::send(requests.into_iter().collect()).flash(flash);
            }
            // The wheel scrolls the conversation under the panel.
            Action::ScrollUp(_) | Action::ScrollDown(_) => return Outcome::pass(),
            _ => {}
        }
        Outcome::done()
    }

    fn draw(&self, shared: &Shared, frame: &mut Frame, area: Rect) {
        draw(shared.mcp, self.selected(shared.mcp), frame, area);
    }

    fn hints(&self) -> std::borrow::Cow<'static, str> {
        " ↑↓ choose · r reconnects · d disables · l logs in · o logs out · Esc closes ".into()
    }
}

fn draw(servers: &[McpView], selected: usize, frame: &mut Frame, area: Rect) {
    let width = area.width.saturating_sub(4).min(90);
    let text = width.saturating_sub(4) as usize;
    let mut lines: Vec<Line<'static>> = Vec::new();
    if servers.is_empty() {
        lines.push(Line::raw("No MCP servers are configured."));
        lines.push(Line::styled(
            "harness9 mcp add NAME -- CMD ARGS...  or  --url URL",
            DIM,
        ));
    }
    for (index, server) in servers.iter().enumerate() {
        let marker = if index == selected { "› " } else { "  " };
        let color = if server.connected {
            Color::Green
        } else if server.status == "starting" {
            Color::Yellow
        } else {
            Color::Red
        };
        let head = format!("{marker}{} ({}) ", server.name, server.scope);
        let style = if index == selected {
            Style::new().add_modifier(Modifier::BOLD)
        } else {
            Style::new()
        };
        let room = text.saturating_sub(head.chars().count());
        lines.push(Line::from(vec![
            Span::styled(head, style),
            Span::styled(truncate(&server.status, room), Style::new().fg(color)),
        ]));
        if index == selected && server.status.contains("mcp login") {
            lines.push(Line::styled(
                "    needs authorization: l logs in (your browser opens)",
                Style::new().fg(Color::Yellow),
            ));
        }
        if index == selected {
            for tool in &server.tools {
                lines.push(Line::styled(
                    format!("    {}", truncate(tool, text.saturating_sub(4))),
                    DIM,
                ));
            }
        } else if !server.tools.is_empty() {
            lines.push(Line::styled(
                format!("    {} tools", server.tools.len()),
                DIM,
            ));
        }
    }
    let height = (lines.len() as u16 + 2).min(area.height);
    boxed(
        frame,
        centered(area, width, height),
        Span::raw(
            " MCP servers · ↑↓ select · r reconnect · d disable · l log in · o log out · Esc closes ",
        ),
        Style::new(),
        lines,
    );
}
