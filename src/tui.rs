//! The full-screen TUI, a client of the session core (`crate::session`): it draws and maps keys,
//! sends the app's commands as requests and turns the core's updates into the app's events. It
//! never touches the store, a provider, a tool or the working directory's files itself. One
//! loop owns the terminal: a `select!` over input, the session's updates and a frame deadline
//! that exists only while something is dirty or animating, so an idle screen costs nothing.
//! Every frame is one synchronized update.

mod app;
mod commands;
mod dialog_guard;
mod editing;
mod engine_events;
pub mod highlight;
mod keymap;
mod layers;
pub mod markdown;
mod overlays;
mod picker;
mod plan_review;
mod slash;
mod status_line;
mod terminal;
mod tool_view;
mod transcript;
mod trust_prompt;
mod view;
mod workflows;
mod wrap;

use std::time::{Duration, Instant};

use crossterm::event::{Event as TermEvent, EventStream};
use crossterm::terminal::{BeginSynchronizedUpdate, EndSynchronizedUpdate};
use futures_util::StreamExt;
use tokio::sync::mpsc;

pub use app::{App, AppEvent, Command, Scroll, SessionView};
pub use transcript::{EntryKind, Tone, Transcript};
pub use view::draw;

use std::sync::Arc;

use crate::assemble::{AssembleError, SessionChoice};
use crate::config::Settings;
use crate::session::{
    self, Closing, CoreOptions, LoadedSession, Opened, Request, SessionHandle, Update,
};

/// The shortest time between two frames (60 per second at most).
const FRAME: Duration = Duration::from_millis(16);
/// How often the spinner moves while the agent works.
const TICK: Duration = Duration::from_millis(100);
/// Engine events applied before a draw, so a fast stream cannot starve the screen.
const DRAIN: usize = 256;

/// The TUI's exit status (CONTRACT.md).
pub fn exit_code(result: Result<(), AssembleError>) -> u8 {
    match result {
        Ok(()) => 0,
        Err(AssembleError::Session(message)) => {
            eprintln!("harness9: {message}");
            2
        }
        Err(AssembleError::Setup(message) | AssembleError::Storage(message)) => {
            eprintln!("harness9: {message}");
            1
        }
    }
}

/// Settings resolved again for a folder the user just trusted.
pub type TrustedSettings = Box<dyn FnOnce() -> Result<Settings, crate::config::ConfigError> + Send>;

/// Runs the TUI in the working directory of `settings`. With `open_picker`, the session
/// picker is shown first (`harness9 --resume` without an id). A folder whose trust is not
/// decided is asked about first; if the user trusts it, `trusted` gives the settings to use.
pub async fn run(
    settings: Settings,
    choice: SessionChoice,
    open_picker: bool,
    trusted: TrustedSettings,
) -> Result<(), AssembleError> {
    let outcome = run_screen(settings, choice, open_picker, trusted).await;
    // Whatever way it ended, the terminal is the user's again.
    terminal::restore();
    outcome
}

async fn run_screen(
    mut settings: Settings,
    choice: SessionChoice,
    open_picker: bool,
    trusted: TrustedSettings,
) -> Result<(), AssembleError> {
    let started = Instant::now();
    let _logs = terminal::init_file_logging(&settings.home);
    highlight::warm_up();
    let mut term = None;
    if !settings.trust_decided {
        terminal::install_panic_hook(settings.home.join("logs"));
        let mut screen = enter_terminal()?;
        match trust_prompt::ask(&mut screen, &settings).await {
            Ok(Some(true)) => {
                settings = trusted().map_err(|e| AssembleError::Session(e.to_string()))?;
                if let Err(error) =
                    crate::config::trust::remember(&settings.home, &settings.workdir)
                {
                    settings
                        .notices
                        .push(format!("this folder is trusted for this run only: {error}"));
                }
            }
            Ok(Some(false)) => {}
            Ok(None) => return Ok(()),
            Err(error) => return Err(AssembleError::Setup(error.to_string())),
        }
        term = Some(screen);
    }
    let options = CoreOptions {
        // The app shows and edits the queue and sends the next prompt itself.
        drive_queue: false,
        load_transcript: true,
    };
    let opened = session::open(&settings, choice, options).await?;
    show(opened, &settings.home, open_picker, term, started).await
}

/// `harness9 attach`: the TUI over a session of a `serve` instance (`session::remote`).
pub async fn attach(
    home: &std::path::Path,
    token: Option<&str>,
    args: &crate::config::AttachArgs,
) -> Result<(), AssembleError> {
    let started = Instant::now();
    let _logs = terminal::init_file_logging(home);
    highlight::warm_up();
    let token = crate::serve::read_token(token, home).map_err(|e| {
        AssembleError::Setup(format!(
            "no token for {}: set HARNESS9_SERVE_TOKEN, or start harness9 serve first \
             (it writes {}): {e}",
            args.url,
            home.join(crate::serve::TOKEN_FILE).display()
        ))
    })?;
    let opened = session::remote::open(&args.url, &token, args.session.as_deref()).await?;
    let outcome = show(opened, home, false, None, started).await;
    terminal::restore();
    outcome
}

/// Shows an opened session until the user leaves it.
async fn show(
    opened: Opened,
    home: &std::path::Path,
    open_picker: bool,
    term: Option<terminal::Term>,
    started: Instant,
) -> Result<(), AssembleError> {
    let Opened {
        handle,
        updates,
        facts,
        loaded,
        notices,
    } = opened;
    let mut app = App::new(SessionView {
        session_id: loaded.session_id.clone(),
        provider: facts.provider,
        model: facts.model,
        workdir: facts.workdir,
        mode: loaded.mode,
        context_window: facts.context_window,
    });
    app.skills = facts.skills;
    let LoadedSession {
        session_id,
        mode,
        messages,
        todos,
        queue,
        problems,
        ..
    } = loaded;
    app.handle_async(AppEvent::SessionLoaded {
        session_id: session_id.clone(),
        mode,
        messages,
        todos,
        queue,
    });
    app.flash = None;
    // Unreadable stored state is reported and left in sessions.db until the user changes it.
    for problem in problems {
        app.transcript.notice(problem.message, Tone::Warning);
    }
    app.sandbox = Some(facts.sandbox);
    // What was ignored or changed at start (the folder's .env, an untrusted folder's files, a
    // malformed settings file, a yolo session resumed in default, a sandbox that cannot be had)
    // stays readable in the transcript.
    for notice in notices {
        app.flash = Some(notice.lines().next().unwrap_or("").to_owned());
        app.transcript.notice(notice, Tone::Warning);
    }
    let first_commands = if open_picker {
        app.open_picker()
    } else {
        Vec::new()
    };

    let entered = match term {
        Some(term) => Ok(term),
        None => {
            terminal::install_panic_hook(home.join("logs"));
            enter_terminal()
        }
    };
    let mut runner = Runner::new(handle, updates, session_id);
    let mut term = match entered {
        Ok(term) => term,
        Err(error) => {
            // The session was opened: it is closed as on any exit (an empty one is not kept).
            runner.close().await;
            return Err(error);
        }
    };
    for command in first_commands {
        runner.execute(&mut app, command).await;
    }
    let outcome = runner.event_loop(&mut term, &mut app, started).await;
    terminal::restore();
    if let Err(error) = &outcome {
        eprintln!("harness9: {error}");
    }
    let closing = runner.close().await;
    // A session that never got a prompt is not kept (nor offered for resuming).
    if let Some(closing) = closing
        && closing.kept
    {
        // A named session is resumed by its name.
        let key = app.session_name.as_deref().unwrap_or(&closing.session_id);
        println!("Resume this session with: harness9 --resume {key}");
    }
    outcome.map_err(|e| AssembleError::Setup(e.to_string()))
}

fn enter_terminal() -> Result<terminal::Term, AssembleError> {
    terminal::enter().map_err(|e| {
        terminal::restore();
        AssembleError::Setup(format!("cannot use this terminal: {e}"))
    })
}

pub(crate) fn draw_frame(term: &mut terminal::Term, app: &mut App) -> std::io::Result<()> {
    crossterm::queue!(term.backend_mut(), BeginSynchronizedUpdate)?;
    term.draw(|frame| view::draw(app, frame))?;
    crossterm::execute!(term.backend_mut(), EndSynchronizedUpdate)?;
    Ok(())
}

/// The TUI's side of the session core: the app's commands go out as requests (only the
/// terminal's own, the clipboard and the mouse, are carried out here) and updates come back in
/// as the app's events.
struct Runner {
    handle: SessionHandle,
    updates: mpsc::UnboundedReceiver<Update>,
    /// The session shown now (`/new` and the picker change it).
    session_id: String,
    /// How the session ended, once it has.
    closing: Option<Arc<Closing>>,
}

impl Runner {
    fn new(
        handle: SessionHandle,
        updates: mpsc::UnboundedReceiver<Update>,
        session_id: String,
    ) -> Self {
        Runner {
            handle,
            updates,
            session_id,
            closing: None,
        }
    }

    async fn event_loop(
        &mut self,
        term: &mut terminal::Term,
        app: &mut App,
        started: Instant,
    ) -> std::io::Result<()> {
        let mut input = EventStream::new();
        let mut term_signal =
            tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
        let mut hangup = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup())?;

        draw_frame(term, app)?;
        tracing::info!(
            "[tui] first frame | after_ms={}",
            started.elapsed().as_millis()
        );
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
                            TermEvent::Paste(text) => app.handle_paste(&text),
                            TermEvent::Mouse(mouse) => app.handle_mouse(mouse),
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
                if self.execute(app, command).await {
                    return Ok(());
                }
            }
        }
    }

    /// An update of the session, as the app takes it; what the app asks in return.
    fn apply(&mut self, app: &mut App, update: Update) -> Vec<Command> {
        let event = match update {
            Update::Engine(event) => return app.handle_engine(event),
            Update::Loaded(loaded) => {
                let loaded = Arc::unwrap_or_clone(loaded);
                app.session_name = None;
                self.session_id = loaded.session_id.clone();
                let mut commands = app.handle_async(AppEvent::SessionLoaded {
                    session_id: loaded.session_id,
                    mode: loaded.mode,
                    messages: loaded.messages,
                    todos: loaded.todos,
                    queue: loaded.queue,
                });
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
            Update::Renamed(name) => {
                app.session_name = Some(name.clone());
                AppEvent::Flash(format!("renamed: harness9 --resume {name} comes back here"))
            }
            Update::Failed(failure) => AppEvent::Failed(failure),
            Update::Closed(closing) => {
                self.closing = Some(closing);
                return Vec::new();
            }
        };
        app.handle_async(event)
    }

    /// Carries out one command; `true` means quit.
    async fn execute(&mut self, app: &mut App, command: Command) -> bool {
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
            Command::Export { file, markdown } => {
                // The session's directory when it is on this machine (an attached server's
                // may not be), else the current one.
                let workdir = std::path::PathBuf::from(&app.session.workdir);
                let workdir = if workdir.is_dir() {
                    workdir
                } else {
                    std::env::current_dir().unwrap_or_default()
                };
                let said = match commands::write_export(&workdir, &file, &markdown) {
                    Ok(path) => format!("exported the transcript to {}", path.display()),
                    Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => {
                        format!("{file} exists: /export NAME writes another file")
                    }
                    Err(error) => format!("cannot write {file}: {error}"),
                };
                app.handle_async(AppEvent::Flash(said));
                return false;
            }
            Command::ListFiles => Request::ListFiles { generation: 0 },
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
            Command::TrustFolder(_) => return false,
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
    async fn close(&mut self) -> Option<Arc<Closing>> {
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

#[cfg(test)]
mod tests;
