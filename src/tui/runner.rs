//! The TUI's side of the session core: the app's requests go out as they are and the core's
//! updates go into the app as they are; only the terminal's own effects (the clipboard, the
//! mouse, quitting) and the start's answers are carried out here (the core writes files). The
//! one loop that owns the terminal, from the first frame (the start's questions, the session
//! opening) to the end.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crossterm::event::{Event as TermEvent, EventStream};
use futures_util::StreamExt;
use tokio::sync::mpsc;

use super::app::{App, Effect};
use super::startup::Startup;
use super::{draw_frame, terminal};
use crate::session::AssembleError;
use crate::session::launch::Display;
use crate::session::{Closing, Request, SessionHandle, Update};

mod opened;

/// The shortest time between two frames (60 per second at most).
const FRAME: Duration = Duration::from_millis(16);
/// How often the spinner moves while the agent works.
const TICK: Duration = Duration::from_millis(100);
/// Engine events applied before a draw, so a fast stream cannot starve the screen.
const DRAIN: usize = 256;

/// The TUI's side of the session core: the app's requests go out, the core's updates come in.
/// Before the session is open, the start's questions are answered here (`startup`).
pub(super) struct Runner {
    /// The session, once it is open.
    session: Option<Live>,
    /// From the first frame to the opened session.
    startup: Startup,
    /// What the terminal sent while the session was being opened: taken once it is, as if it
    /// came then (keys typed meanwhile waited in the terminal before the loop owned it).
    held: Vec<TermEvent>,
    /// How the session ended, once it has.
    closing: Option<Arc<Closing>>,
    /// What the opened session is shown with.
    display: Display,
    /// Show the session picker once the session is open (`--resume` without an id).
    open_picker: bool,
    /// The MCP servers' process groups are killed when the TUI ends, however it ends.
    mcp_guard: Option<Box<dyn std::any::Any>>,
    /// Bell and OSC 9 when an approval waits or a run ends unseen.
    notify: super::notify::Notify,
}

/// The open session's two ends.
struct Live {
    handle: SessionHandle,
    updates: mpsc::UnboundedReceiver<Update>,
}

impl Runner {
    pub(super) fn new(startup: Startup, display: Display, open_picker: bool) -> Self {
        let mut notify = super::notify::Notify::default();
        notify.bell = display.bell;
        notify.osc9 = display.notify;
        Runner {
            session: None,
            startup,
            held: Vec::new(),
            closing: None,
            display,
            open_picker,
            mcp_guard: None,
            notify,
        }
    }

    /// Whether a session was opened (and so shown).
    pub(super) fn opened(&self) -> bool {
        self.session.is_some()
    }

    pub(super) async fn event_loop(
        &mut self,
        term: &mut terminal::Term,
        app: &mut App,
    ) -> Result<(), AssembleError> {
        let setup = |e: std::io::Error| AssembleError::Setup(e.to_string());
        let mut input = EventStream::new();
        let mut term_signal =
            tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
                .map_err(setup)?;
        let mut hangup = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup())
            .map_err(setup)?;

        draw_frame(term, app).map_err(setup)?;
        let mut last_draw = Instant::now();
        let mut last_tick = Instant::now();
        let mut dirty = false;

        loop {
            let now = Instant::now();
            if dirty && now.duration_since(last_draw) >= FRAME {
                draw_frame(term, app).map_err(setup)?;
                last_draw = now;
                dirty = false;
            }
            // A deadline only while there is something to draw or animate: idle means no
            // wake-ups.
            let frame_due = dirty.then_some(last_draw + FRAME);
            let tick_due = app.is_animating().then_some(last_tick + TICK);
            // A hint that times out (the second Ctrl+C's) wakes the loop once, at its end.
            let deadline = [frame_due, tick_due, app.wake_at()]
                .into_iter()
                .flatten()
                .min();
            let mut effects = Vec::new();
            tokio::select! {
                event = input.next() => match event {
                    Some(Ok(event)) => {
                        effects = self.take_input(app, event);
                        dirty = true;
                    }
                    // The terminal went away: leave as if asked to quit.
                    Some(Err(_)) | None => effects.push(Effect::Quit),
                },
                update = recv(&mut self.session) => match update {
                    Some(update) => {
                        effects.extend(self.apply(app, update));
                        // A fast stream cannot starve the screen: a bounded batch per frame.
                        for _ in 0..DRAIN {
                            let Some(live) = &mut self.session else { break };
                            match live.updates.try_recv() {
                                Ok(update) => effects.extend(self.apply(app, update)),
                                Err(_) => break,
                            }
                        }
                        dirty = true;
                    }
                    // The core is gone: nothing more can happen in this session.
                    None => effects.push(Effect::Quit),
                },
                done = self.startup.progress() => {
                    if let Some(opened) = self.startup.finish(done, app)? {
                        effects = self.show(app, opened);
                        for event in std::mem::take(&mut self.held) {
                            effects.extend(self.take_input(app, event));
                        }
                    }
                    dirty = true;
                },
                _ = term_signal.recv() => effects.push(Effect::Quit),
                _ = hangup.recv() => effects.push(Effect::Quit),
                _ = sleep_until(deadline), if deadline.is_some() => {
                    if app.is_animating() && Instant::now() >= last_tick + TICK {
                        app.tick();
                        last_tick = Instant::now();
                    }
                    app.expire(Instant::now());
                    dirty = true;
                }
            }
            if self.closing.is_some() {
                return Ok(());
            }
            for effect in effects {
                if self.execute(app, effect).await {
                    return Ok(());
                }
            }
        }
    }

    /// One event of the terminal into the app; what the app asks in return. While the session
    /// is being opened, what would go to it waits (`held`).
    fn take_input(&mut self, app: &mut App, event: TermEvent) -> Vec<Effect> {
        match event {
            TermEvent::FocusGained => self.notify.focused = true,
            TermEvent::FocusLost => self.notify.focused = false,
            TermEvent::Key(_) | TermEvent::Paste(_) | TermEvent::Mouse(_)
                if self.startup.holds_input() =>
            {
                self.held.push(event)
            }
            // Before the session, only the start's questions (and quitting) take keys.
            TermEvent::Key(key) => return app.handle_key(key),
            TermEvent::Paste(text) if self.session.is_some() => return app.handle_paste(&text),
            TermEvent::Mouse(mouse) if self.session.is_some() => app.handle_mouse(mouse),
            _ => {}
        }
        Vec::new()
    }

    /// An update of the session, as the app takes it; what the app asks in return. The runner
    /// keeps only what is its own: the notification of an event seen, the session's end.
    fn apply(&mut self, app: &mut App, update: Update) -> Vec<Effect> {
        match &update {
            Update::Engine(event) => {
                let ran = app.run().working_since.map(|since| since.elapsed());
                if let Some(text) = self.notify.decide(&event.kind, ran) {
                    let mut stdout = std::io::stdout();
                    let _ =
                        std::io::Write::write_all(&mut stdout, self.notify.bytes(&text).as_bytes());
                    let _ = std::io::Write::flush(&mut stdout);
                }
            }
            Update::Closed(closing) => self.closing = Some(Arc::clone(closing)),
            _ => {}
        }
        app.take_update(update)
    }

    /// Carries out one effect; `true` means quit.
    async fn execute(&mut self, app: &mut App, effect: Effect) -> bool {
        if self.startup.answer(&effect, app) {
            return false;
        }
        let request = match effect {
            Effect::Request(request) => request,
            Effect::Copy(text) => {
                use base64::Engine as _;
                let encoded = base64::engine::general_purpose::STANDARD.encode(text.as_bytes());
                let mut stdout = std::io::stdout();
                let _ = std::io::Write::write_all(
                    &mut stdout,
                    format!("\x1b]52;c;{encoded}\x07").as_bytes(),
                );
                let _ = std::io::Write::flush(&mut stdout);
                return false;
            }
            Effect::SetMouseCapture(on) => {
                let mut stdout = std::io::stdout();
                let _ = if on {
                    crossterm::execute!(stdout, crossterm::event::EnableMouseCapture)
                } else {
                    crossterm::execute!(stdout, crossterm::event::DisableMouseCapture)
                };
                return false;
            }
            // Answers of the start (`startup`), taken above.
            Effect::TrustFolder(_) | Effect::ApproveExtension(_) => return false,
            Effect::Quit => {
                self.close().await;
                return true;
            }
        };
        match &self.session {
            // A core that is gone has closed already; the loop then quits on its own.
            Some(live) => {
                live.handle.send(request);
            }
            // Before the session, the app asks nothing of it (keys typed for it wait).
            None => tracing::debug!("[tui] no session yet | dropped={request:?}"),
        }
        false
    }

    /// Closes the session (the run stores what it has; an empty session is not kept) and
    /// waits until it is closed.
    pub(super) async fn close(&mut self) -> Option<Arc<Closing>> {
        if self.closing.is_none()
            && let Some(live) = &mut self.session
        {
            live.handle.send(Request::Close {
                discard_if_empty: true,
            });
            while let Some(update) = live.updates.recv().await {
                if let Update::Closed(closing) = update {
                    self.closing = Some(closing);
                    break;
                }
            }
        }
        self.closing.clone()
    }
}

/// The open session's next update; never, before it is open.
async fn recv(session: &mut Option<Live>) -> Option<Update> {
    match session {
        Some(live) => live.updates.recv().await,
        None => std::future::pending().await,
    }
}

async fn sleep_until(deadline: Option<Instant>) {
    match deadline {
        Some(at) => tokio::time::sleep_until(at.into()).await,
        None => std::future::pending().await,
    }
}
