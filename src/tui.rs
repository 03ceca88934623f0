//! The full-screen TUI. It consumes the engine's `Event` stream and answers approvals; it never
//! calls a provider or a tool itself. One loop owns the terminal: a `select!` over input,
//! engine events, the todo list and a frame deadline that exists only while something is dirty
//! or animating, so an idle screen costs nothing. Every frame is one synchronized update.

mod app;
mod dialog_guard;
mod engine_events;
pub mod highlight;
mod keymap;
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
use tokio_util::sync::CancellationToken;

pub use app::{App, AppEvent, Command, Scroll, SessionView};
pub use transcript::{EntryKind, Tone, Transcript};
pub use view::draw;

use crate::assemble::{self, AssembleError, Assembly, SessionChoice};
use crate::config::Settings;
use crate::engine::Event;

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
        Err(AssembleError::Setup(message)) => {
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
    let store = assemble::open_store(&settings)?;
    let assembly = assemble::assemble(&settings, store, choice).await?;
    let messages = match &assembly.engine.session() {
        Some(session) => session.load_transcript().await.unwrap_or_default(),
        None => Vec::new(),
    };
    let mut app = App::new(SessionView {
        session_id: assembly.session.id.clone(),
        provider: settings.provider.kind.to_string(),
        model: settings.provider.model.clone(),
        workdir: settings.workdir.display().to_string(),
        mode: assembly.engine.mode(),
        context_window: settings.context_window,
    });
    app.skills = assembly
        .skills
        .iter()
        .map(|s| (s.name.clone(), s.description.clone()))
        .collect();
    // Unreadable stored state is reported and left in sessions.db until the user changes it.
    let mut load_problems: Vec<String> = assembly.todos.take_load_problem().into_iter().collect();
    let queue = match assembly.store.load_queue(&assembly.session.id).await {
        Ok(queue) => queue,
        Err(error) => {
            load_problems.push(error.to_string());
            Vec::new()
        }
    };
    app.handle_async(AppEvent::SessionLoaded {
        session_id: assembly.session.id.clone(),
        mode: assembly.engine.mode(),
        messages,
        todos: assembly.todos.snapshot(),
        queue,
    });
    app.flash = None;
    for problem in load_problems {
        app.transcript.notice(problem, Tone::Warning);
    }
    app.sandbox = Some(assembly.sandbox.label());
    // What was ignored or changed at start (the folder's .env, an untrusted folder's files, a
    // yolo session resumed in default, a sandbox that cannot be had) stays readable in the
    // transcript.
    let sandbox_notices = assembly.sandbox.notices();
    for notice in settings
        .notices
        .iter()
        .chain(&assembly.notices)
        .chain(sandbox_notices.iter())
    {
        app.transcript.notice(notice.clone(), Tone::Warning);
        app.flash = Some(notice.lines().next().unwrap_or("").to_owned());
    }
    let first_commands = if open_picker {
        app.open_picker()
    } else {
        Vec::new()
    };

    let mut term = match term {
        Some(term) => term,
        None => {
            terminal::install_panic_hook(settings.home.join("logs"));
            enter_terminal()?
        }
    };
    let mut runner = Runner {
        settings: &settings,
        assembly: &assembly,
        session_id: assembly.session.id.clone(),
        cancel: CancellationToken::new(),
        engine_events: None,
        results: mpsc::unbounded_channel(),
    };
    for command in first_commands {
        runner.execute(command).await;
    }
    let outcome = runner.event_loop(&mut term, &mut app, started).await;
    terminal::restore();
    if let Err(error) = &outcome {
        eprintln!("harness9: {error}");
    }
    let _ = assembly.store.flush().await;
    // A session that never got a prompt is not kept (nor offered for resuming).
    let empty = assembly
        .store
        .delete_if_empty(&runner.session_id)
        .await
        .unwrap_or(false);
    if !empty {
        println!(
            "Resume this session with: harness9 --resume {}",
            runner.session_id
        );
    }
    outcome.map_err(|e| AssembleError::Setup(e.to_string()))
}

fn enter_terminal() -> Result<terminal::Term, AssembleError> {
    terminal::enter().map_err(|e| {
        terminal::restore();
        AssembleError::Setup(format!("cannot use this terminal: {e}"))
    })
}

/// The next engine event, or never when no run is going.
async fn next_engine_event(rx: &mut Option<mpsc::Receiver<Event>>) -> Option<Event> {
    match rx {
        Some(rx) => rx.recv().await,
        None => std::future::pending().await,
    }
}

pub(crate) fn draw_frame(term: &mut terminal::Term, app: &mut App) -> std::io::Result<()> {
    crossterm::queue!(term.backend_mut(), BeginSynchronizedUpdate)?;
    term.draw(|frame| view::draw(app, frame))?;
    crossterm::execute!(term.backend_mut(), EndSynchronizedUpdate)?;
    Ok(())
}

/// Carries out the app's commands: runs, session switches, store queries, the clipboard.
struct Runner<'a> {
    settings: &'a Settings,
    assembly: &'a Assembly,
    /// The session the engine works in now (`/new` and the picker change it).
    session_id: String,
    cancel: CancellationToken,
    engine_events: Option<mpsc::Receiver<Event>>,
    results: (
        mpsc::UnboundedSender<AppEvent>,
        mpsc::UnboundedReceiver<AppEvent>,
    ),
}

impl Runner<'_> {
    async fn event_loop(
        &mut self,
        term: &mut terminal::Term,
        app: &mut App,
        started: Instant,
    ) -> std::io::Result<()> {
        let mut input = EventStream::new();
        let mut todos = self.assembly.todos.watch();
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
            let deadline = match (frame_due, tick_due) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
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
                event = next_engine_event(&mut self.engine_events) => match event {
                    Some(event) => {
                        commands.extend(app.handle_engine(event));
                        if let Some(rx) = &mut self.engine_events {
                            for _ in 0..DRAIN {
                                match rx.try_recv() {
                                    Ok(event) => commands.extend(app.handle_engine(event)),
                                    Err(_) => break,
                                }
                            }
                        }
                        dirty = true;
                    }
                    None => {
                        self.engine_events = None;
                        dirty = true;
                    }
                },
                Some(result) = self.results.1.recv() => {
                    commands = app.handle_async(result);
                    dirty = true;
                }
                Ok(()) = todos.changed() => {
                    app.todos = self.assembly.todos.snapshot();
                    dirty = true;
                }
                _ = term_signal.recv() => commands.push(Command::Quit),
                _ = hangup.recv() => commands.push(Command::Quit),
                _ = sleep_until(deadline), if deadline.is_some() => {
                    if app.is_animating() && Instant::now() >= last_tick + TICK {
                        app.tick();
                        last_tick = Instant::now();
                    }
                    dirty = true;
                }
            }
            for command in commands {
                if self.execute(command).await {
                    return Ok(());
                }
            }
        }
    }

    /// Carries out one command; `true` means quit.
    async fn execute(&mut self, command: Command) -> bool {
        let engine = &self.assembly.engine;
        let store = &self.assembly.store;
        let send = self.results.0.clone();
        match command {
            Command::Submit(prompt) => {
                self.cancel = CancellationToken::new();
                let prompt = crate::context::mentions::attach(
                    &prompt,
                    &self.settings.workdir,
                    engine.rules(),
                );
                self.engine_events = Some(engine.run_stream(prompt, self.cancel.clone()));
            }
            Command::Interrupt => self.cancel.cancel(),
            Command::SetMode(mode) => {
                engine.set_plan_mode(mode);
                let (store, id) = (store.clone(), self.session_id.clone());
                tokio::spawn(async move { store.set_mode(&id, mode.as_str()).await });
            }
            Command::QueueChanged(queue) => store.save_queue(&self.session_id, &queue),
            Command::NewSession => {
                let created = store
                    .create(crate::memory::NewSession {
                        workdir: self.settings.workdir.display().to_string(),
                        provider: self.settings.provider.kind.to_string(),
                        model: engine.provider().model().to_owned(),
                        mode: engine.mode().to_string(),
                    })
                    .await;
                match created {
                    Ok(record) => self.switch_session(record.id).await,
                    Err(e) => {
                        let _ = send.send(AppEvent::Flash(format!("cannot start a session: {e}")));
                    }
                }
            }
            Command::ResumeSession(id) => self.switch_session(id).await,
            Command::Rename(name) => {
                let (store, id) = (store.clone(), self.session_id.clone());
                tokio::spawn(async move {
                    let text = match store.set_name(&id, &name).await {
                        Ok(()) => format!("renamed: harness9 --resume {name} comes back here"),
                        Err(e) => e.to_string(),
                    };
                    let _ = send.send(AppEvent::Flash(text));
                });
            }
            Command::Compact => {
                let engine = std::sync::Arc::clone(engine);
                let cancel = self.cancel.child_token();
                tokio::spawn(async move {
                    let result = engine.compact_now(&cancel).await.map_err(|e| e.to_string());
                    let _ = send.send(AppEvent::Compacted(result));
                });
            }
            Command::SetModel(model) => {
                let mut config = self.settings.provider.clone();
                config.model = model;
                match config.build() {
                    Ok(provider) => engine.set_provider(provider),
                    Err(e) => {
                        let _ = send.send(AppEvent::Flash(format!("cannot switch the model: {e}")));
                    }
                }
            }
            Command::Copy(text) => {
                use base64::Engine as _;
                let encoded = base64::engine::general_purpose::STANDARD.encode(text.as_bytes());
                let mut stdout = std::io::stdout();
                let _ = std::io::Write::write_all(
                    &mut stdout,
                    format!("\x1b]52;c;{encoded}\x07").as_bytes(),
                );
                let _ = std::io::Write::flush(&mut stdout);
            }
            Command::SetMouseCapture(on) => {
                let mut stdout = std::io::stdout();
                let _ = if on {
                    crossterm::execute!(stdout, crossterm::event::EnableMouseCapture)
                } else {
                    crossterm::execute!(stdout, crossterm::event::DisableMouseCapture)
                };
            }
            Command::RunShell { id, command } => {
                let engine = std::sync::Arc::clone(engine);
                let cancel = self.cancel.child_token();
                tokio::spawn(async move {
                    let started = Instant::now();
                    let result = engine.run_user_shell(&command, cancel).await;
                    let _ = send.send(AppEvent::ShellDone {
                        id,
                        result,
                        duration: started.elapsed(),
                    });
                });
            }
            Command::QuerySessions {
                query,
                all,
                generation,
            } => self.query_sessions(query, all, generation),
            Command::SetAutoContinue(on) => engine.set_auto_continue(on),
            Command::ClearTodos => self.assembly.todos.replace(Vec::new()),
            // Trust is asked before the session starts (`trust_prompt::ask`), never in a run.
            Command::TrustFolder(_) => {}
            Command::ListFiles => {
                let workdir = self.settings.workdir.clone();
                tokio::task::spawn_blocking(move || {
                    let files =
                        crate::context::mentions::list_files(&workdir, workflows::MENTION_FILES);
                    let _ = send.send(AppEvent::Files(files));
                });
            }
            Command::Quit => {
                self.cancel.cancel();
                // Let the run store what it has (the loop saves on cancellation).
                if let Some(mut rx) = self.engine_events.take() {
                    let _ = tokio::time::timeout(Duration::from_secs(2), async {
                        while rx.recv().await.is_some() {}
                    })
                    .await;
                }
                return true;
            }
        }
        false
    }

    /// Runs a picker query off the UI task; the answer carries its generation.
    fn query_sessions(&self, query: String, all: bool, generation: u64) {
        let store = self.assembly.store.clone();
        let workdir = self.settings.workdir.display().to_string();
        let send = self.results.0.clone();
        tokio::spawn(async move {
            let scope = (!all).then_some(workdir.as_str());
            // The newest 500 when nothing is typed; the best 200 matches otherwise.
            let limit = if query.trim().is_empty() { 500 } else { 200 };
            let hits = store.find(&query, scope, limit).await;
            let _ = send.send(AppEvent::Sessions {
                generation,
                hits: hits.unwrap_or_default(),
            });
        });
    }

    /// Points the engine, the todo list and the screen at another stored session.
    async fn switch_session(&mut self, id: String) {
        let store = &self.assembly.store;
        let send = self.results.0.clone();
        let record = match store.get(&id).await {
            Ok(Some(record)) => record,
            _ => {
                let _ = send.send(AppEvent::Flash(format!("session {id} is gone")));
                return;
            }
        };
        // The session being left goes if it never got a prompt (as it would on exit).
        if self.session_id != record.id {
            let _ = store.delete_if_empty(&self.session_id).await;
        }
        let engine = &self.assembly.engine;
        engine.set_session(Some(std::sync::Arc::new(
            crate::memory::SqliteSession::new(store.clone(), record.id.clone()),
        )));
        let (mode, yolo_notice) = assemble::resumed_mode(&record.mode);
        engine.set_plan_mode(mode);
        let mut problems = Vec::new();
        let todos = store.load_todos(&record.id).await.unwrap_or_else(|error| {
            problems.push(error.to_string());
            Vec::new()
        });
        self.assembly.todos.load(todos.clone());
        let (sink_store, sink_id) = (store.clone(), record.id.clone());
        self.assembly.todos.set_sink(Box::new(move |items| {
            sink_store.save_todos(&sink_id, items)
        }));
        let messages = store.load_all(&record.id).await.unwrap_or_default();
        let queue = store.load_queue(&record.id).await.unwrap_or_else(|error| {
            problems.push(error.to_string());
            Vec::new()
        });
        self.session_id = record.id.clone();
        let _ = send.send(AppEvent::SessionLoaded {
            session_id: record.id,
            mode,
            messages,
            todos,
            queue,
        });
        problems.extend(yolo_notice);
        // Left in sessions.db as stored; the user is told why the list or queue is empty.
        if !problems.is_empty() {
            let _ = send.send(AppEvent::Flash(problems.join("; ")));
        }
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
