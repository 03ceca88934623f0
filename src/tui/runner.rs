//! The TUI's side of the session core: the app's commands go out as requests (only the
//! terminal's own, the clipboard and the mouse, are carried out here; the core writes files) and
//! updates come back in as the app's events; the loop that owns the terminal.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crossterm::event::{Event as TermEvent, EventStream};
use futures_util::StreamExt;
use tokio::sync::mpsc;

use super::app::{App, AppEvent, Command};
use super::{draw_frame, mcp_panel, terminal};
use crate::session::{Closing, ExportError, Request, SessionHandle, Update};

/// The shortest time between two frames (60 per second at most).
const FRAME: Duration = Duration::from_millis(16);
/// How often the spinner moves while the agent works.
const TICK: Duration = Duration::from_millis(100);
/// Engine events applied before a draw, so a fast stream cannot starve the screen.
const DRAIN: usize = 256;

/// The TUI's side of the session core: the app's commands go out as requests (only the
/// terminal's own, the clipboard and the mouse, are carried out here) and updates come back in
/// as the app's events.
pub(super) struct Runner {
    handle: SessionHandle,
    updates: mpsc::UnboundedReceiver<Update>,
    /// The session shown now (`/new` and the picker change it).
    session_id: String,
    /// How the session ended, once it has.
    closing: Option<Arc<Closing>>,
    /// Bell and OSC 9 when an approval waits or a run ends unseen.
    pub(super) notify: super::notify::Notify,
}

impl Runner {
    pub(super) fn new(
        handle: SessionHandle,
        updates: mpsc::UnboundedReceiver<Update>,
        session_id: String,
    ) -> Self {
        Runner {
            handle,
            updates,
            session_id,
            closing: None,
            notify: super::notify::Notify::default(),
        }
    }

    pub(super) async fn event_loop(
        &mut self,
        term: &mut terminal::Term,
        app: &mut App,
    ) -> std::io::Result<()> {
        let mut input = EventStream::new();
        let mut term_signal =
            tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
        let mut hangup = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup())?;

        draw_frame(term, app)?;
        tracing::info!("[tui] session shown");
        let mut last_draw = Instant::now();
        let mut last_tick = Instant::now();
        let mut dirty = false;

        loop {
            let now = Instant::now();
            if dirty && now.duration_since(last_draw) >= FRAME {
                draw_frame(term, app)?;
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
            let mut commands = Vec::new();
            tokio::select! {
                event = input.next() => match event {
                    Some(Ok(event)) => {
                        match event {
                            TermEvent::Key(key) => commands = app.handle_key(key),
                            TermEvent::Paste(text) => commands = app.handle_paste(&text),
                            TermEvent::Mouse(mouse) => app.handle_mouse(mouse),
                            TermEvent::FocusGained => self.notify.focused = true,
                            TermEvent::FocusLost => self.notify.focused = false,
                            _ => {}
                        }
                        dirty = true;
                    }
                    // The terminal went away: leave as if asked to quit.
                    Some(Err(_)) | None => commands.push(Command::Quit),
                },
                update = self.updates.recv() => match update {
                    Some(update) => {
                        commands.extend(self.apply(app, update));
                        // A fast stream cannot starve the screen: a bounded batch per frame.
                        for _ in 0..DRAIN {
                            match self.updates.try_recv() {
                                Ok(update) => commands.extend(self.apply(app, update)),
                                Err(_) => break,
                            }
                        }
                        dirty = true;
                    }
                    // The core is gone: nothing more can happen in this session.
                    None => commands.push(Command::Quit),
                },
                _ = term_signal.recv() => commands.push(Command::Quit),
                _ = hangup.recv() => commands.push(Command::Quit),
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
            for command in commands {
                if self.execute(command).await {
                    return Ok(());
                }
            }
        }
    }

    /// An update of the session, as the app takes it; what the app asks in return.
    fn apply(&mut self, app: &mut App, update: Update) -> Vec<Command> {
        let event = match update {
            Update::Engine(event) => {
                let ran = app.working_since.map(|since| since.elapsed());
                if let Some(text) = self.notify.decide(&event.kind, ran) {
                    let mut stdout = std::io::stdout();
                    let _ =
                        std::io::Write::write_all(&mut stdout, self.notify.bytes(&text).as_bytes());
                    let _ = std::io::Write::flush(&mut stdout);
                }
                return app.handle_engine(event);
            }
            Update::Loaded(loaded) => {
                let loaded = Arc::unwrap_or_clone(loaded);
                // The session shown, loaded again (a rewind of the conversation): inline, its
                // conversation up to there is in the scrollback already.
                let again = loaded.session_id == self.session_id;
                // A named session is resumed by its name, however it got it.
                app.session_name = loaded.name.clone();
                self.session_id = loaded.session_id.clone();
                let mut commands = app.handle_async(AppEvent::SessionLoaded {
                    session_id: loaded.session_id,
                    mode: loaded.mode,
                    messages: loaded.messages,
                    todos: loaded.todos,
                    queue: loaded.queue,
                });
                commands.extend(app.handle_async(AppEvent::ChildSessions(loaded.child_sessions)));
                if again && app.inline {
                    app.transcript.mark_written();
                }
                // Left in sessions.db as stored; the user is told why the list or queue is
                // empty.
                let mut said: Vec<String> = Vec::new();
                for problem in loaded.problems {
                    said.push(problem.message.clone());
                    commands.extend(app.handle_async(AppEvent::Failed(problem)));
                }
                said.extend(loaded.notices);
                if !said.is_empty() {
                    commands.extend(app.handle_async(AppEvent::Flash(said.join("; "))));
                }
                return commands;
            }
            Update::Todos(todos) => {
                app.todos = todos;
                return Vec::new();
            }
            // The app keeps the queue and sends the next prompt itself.
            Update::Queue(_) | Update::RunStarted { .. } => return Vec::new(),
            Update::Sessions { generation, hits } => AppEvent::Sessions { generation, hits },
            Update::Files { files, .. } => AppEvent::Files(Arc::unwrap_or_clone(files)),
            Update::ShellDone {
                id,
                result,
                duration,
            } => AppEvent::ShellDone {
                id,
                result,
                duration,
            },
            Update::Compacted(result) => AppEvent::Compacted(result.map_err(|f| f.message)),
            Update::SessionRead {
                session_id,
                messages,
            } => AppEvent::SessionRead {
                session_id,
                messages: messages.map_err(|f| f.message),
            },
            Update::Renamed(name) => {
                app.session_name = Some(name.clone());
                AppEvent::Flash(format!("renamed: harness9 --resume {name} comes back here"))
            }
            Update::Failed(failure) => AppEvent::Failed(failure),
            Update::Attached(files) => AppEvent::Attached(files),
            Update::Images(images) => AppEvent::Images(images),
            Update::PastedImage(image) => AppEvent::PastedImage(image.map_err(|f| f.message)),
            Update::Memories {
                generation,
                memories,
            } => AppEvent::Memories {
                generation,
                memories,
            },
            Update::Mcp { servers, notices } => AppEvent::Mcp {
                servers: servers
                    .iter()
                    .map(mcp_panel::McpView::from_status)
                    .collect(),
                notices,
            },
            Update::McpPrompt { command, result } => AppEvent::McpPrompt {
                command,
                result: result.map_err(|f| f.message),
            },
            Update::Prompts(prompts) => AppEvent::Prompts(prompts),
            Update::Exported { file, result } => AppEvent::Flash(match result {
                Ok(path) => format!("exported the transcript to {}", path.display()),
                Err(ExportError::Exists) => {
                    format!("{file} exists: /export NAME writes another file")
                }
                Err(ExportError::Write(error)) => format!("cannot write {file}: {error}"),
            }),
            Update::Jobs(list) => {
                app.on_jobs(list);
                return Vec::new();
            }
            Update::Restored(restored) => AppEvent::Restored(restored),
            Update::Closed(closing) => {
                self.closing = Some(closing);
                return Vec::new();
            }
        };
        app.handle_async(event)
    }

    /// Carries out one command; `true` means quit.
    pub(super) async fn execute(&mut self, command: Command) -> bool {
        let request = match command {
            Command::Submit(prompt) => Request::Submit(prompt),
            Command::Interrupt => Request::Interrupt,
            Command::SetMode(mode) => Request::SetMode(mode),
            Command::QueueChanged(queue) => Request::SetQueue(queue),
            Command::NewSession => Request::NewSession,
            Command::ResumeSession(id) => Request::Resume(id),
            Command::Rename(name) => Request::Rename(name),
            Command::Compact => Request::Compact,
            Command::SetModel(model) => Request::SetModel(model),
            Command::RunShell { id, command } => Request::RunShell { id, command },
            Command::QuerySessions {
                query,
                all,
                generation,
            } => Request::ListSessions {
                query,
                all,
                generation,
            },
            Command::SetAutoContinue(on) => Request::SetAutoContinue(on),
            Command::ClearTodos => Request::ClearTodos,
            Command::ListPrompts => Request::ListPrompts,
            Command::ListJobs => Request::ListJobs,
            Command::PasteImage => Request::PasteImage,
            Command::Restore { what, conflicts } => Request::Restore { what, conflicts },
            // The core writes the file, off this task.
            Command::Export { file, markdown } => Request::Export { file, markdown },
            Command::ListFiles => Request::ListFiles { generation: 0 },
            Command::ReadSession(session_id) => Request::ReadSession { session_id },
            Command::Copy(text) => {
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
            Command::SetMouseCapture(on) => {
                let mut stdout = std::io::stdout();
                let _ = if on {
                    crossterm::execute!(stdout, crossterm::event::EnableMouseCapture)
                } else {
                    crossterm::execute!(stdout, crossterm::event::DisableMouseCapture)
                };
                return false;
            }
            // Trust is asked before the session starts (`trust_prompt::ask`), never in a run.
            Command::TrustFolder(_) | Command::ApproveExtension(_) => return false,
            Command::McpReconnect(name) => Request::McpReconnect(name),
            Command::McpDisable(name) => Request::McpDisable(name),
            Command::McpPrompt { command, args } => Request::McpPrompt { command, args },
            Command::ListMemories { query, generation } => {
                Request::ListMemories { query, generation }
            }
            Command::ChangeMemory {
                id,
                content,
                query,
                generation,
            } => Request::ChangeMemory {
                id,
                content,
                query,
                generation,
            },
            Command::Quit => {
                self.close().await;
                return true;
            }
        };
        // A core that is gone has closed already; the loop then quits on its own.
        self.handle.send(request);
        false
    }

    /// Closes the session (the run stores what it has; an empty session is not kept) and
    /// waits until it is closed.
    pub(super) async fn close(&mut self) -> Option<Arc<Closing>> {
        if self.closing.is_none() {
            self.handle.send(Request::Close {
                discard_if_empty: true,
            });
            while let Some(update) = self.updates.recv().await {
                if let Update::Closed(closing) = update {
                    self.closing = Some(closing);
                    break;
                }
            }
        }
        self.closing.clone()
    }
}

async fn sleep_until(deadline: Option<Instant>) {
    match deadline {
        Some(at) => tokio::time::sleep_until(at.into()).await,
        None => std::future::pending().await,
    }
}
