//! The full-screen TUI. It consumes the engine's `Event` stream and answers approvals; it never
//! calls a provider or a tool itself. One loop owns the terminal: a `select!` over input,
//! engine events, the todo list and a frame deadline that exists only while something is dirty
//! or animating, so an idle screen costs nothing. Every frame is one synchronized update.

mod app;
pub mod highlight;
mod keymap;
pub mod markdown;
mod terminal;
mod tool_view;
mod transcript;
mod view;
mod wrap;

use std::time::{Duration, Instant};

use crossterm::event::{Event as TermEvent, EventStream};
use crossterm::terminal::{BeginSynchronizedUpdate, EndSynchronizedUpdate};
use futures_util::StreamExt;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

pub use app::{App, Command, Scroll, SessionView};
pub use transcript::{EntryKind, Tone, Transcript};
pub use view::draw;

use crate::assemble::{self, AssembleError, Assembly, SessionChoice};
use crate::config::Settings;
use crate::engine::Event;
use crate::schema::Role;

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

/// Runs the TUI in the working directory of `settings`.
pub async fn run(settings: Settings, choice: SessionChoice) -> Result<(), AssembleError> {
    let started = Instant::now();
    let _logs = terminal::init_file_logging(&settings.home);
    highlight::warm_up();
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
    app.transcript = Transcript::from_messages(&messages);
    app.set_history(
        messages
            .iter()
            .filter(|m| m.role == Role::User && !m.is_tool_result())
            .map(|m| m.content.clone())
            .collect(),
    );
    app.todos = assembly.todos.snapshot();

    terminal::install_panic_hook(settings.home.join("logs"));
    let mut term = terminal::enter().map_err(|e| {
        terminal::restore();
        AssembleError::Setup(format!("cannot use this terminal: {e}"))
    })?;
    let outcome = event_loop(&mut term, &mut app, &assembly, started).await;
    terminal::restore();
    if let Err(error) = &outcome {
        eprintln!("harness9: {error}");
    }
    let _ = assembly.store.flush().await;
    println!(
        "Resume this session with: harness9 --resume {}",
        assembly.session.id
    );
    outcome.map_err(|e| AssembleError::Setup(e.to_string()))
}

/// The next engine event, or never when no run is going.
async fn next_engine_event(rx: &mut Option<mpsc::Receiver<Event>>) -> Option<Event> {
    match rx {
        Some(rx) => rx.recv().await,
        None => std::future::pending().await,
    }
}

fn draw_frame(term: &mut terminal::Term, app: &mut App) -> std::io::Result<()> {
    crossterm::queue!(term.backend_mut(), BeginSynchronizedUpdate)?;
    term.draw(|frame| view::draw(app, frame))?;
    crossterm::execute!(term.backend_mut(), EndSynchronizedUpdate)?;
    Ok(())
}

async fn event_loop(
    term: &mut terminal::Term,
    app: &mut App,
    assembly: &Assembly,
    started: Instant,
) -> std::io::Result<()> {
    let mut input = EventStream::new();
    let mut engine_events: Option<mpsc::Receiver<Event>> = None;
    let mut cancel = CancellationToken::new();
    let mut todos = assembly.todos.watch();
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
        // A deadline only while there is something to draw or animate: idle means no wake-ups.
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
            event = next_engine_event(&mut engine_events) => match event {
                Some(event) => {
                    app.handle_engine(event);
                    if let Some(rx) = &mut engine_events {
                        for _ in 0..DRAIN {
                            match rx.try_recv() {
                                Ok(event) => app.handle_engine(event),
                                Err(_) => break,
                            }
                        }
                    }
                    dirty = true;
                }
                None => {
                    engine_events = None;
                    dirty = true;
                }
            },
            Ok(()) = todos.changed() => {
                app.todos = assembly.todos.snapshot();
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
            match command {
                Command::Submit(prompt) => {
                    cancel = CancellationToken::new();
                    engine_events = Some(assembly.engine.run_stream(prompt, cancel.clone()));
                }
                Command::Interrupt => cancel.cancel(),
                Command::SetMode(mode) => {
                    assembly.engine.set_plan_mode(mode);
                    let (store, id) = (assembly.store.clone(), assembly.session.id.clone());
                    tokio::spawn(async move { store.set_mode(&id, mode.as_str()).await });
                }
                Command::Quit => {
                    cancel.cancel();
                    // Let the run store what it has (the loop saves on cancellation).
                    if let Some(mut rx) = engine_events.take() {
                        let _ = tokio::time::timeout(Duration::from_secs(2), async {
                            while rx.recv().await.is_some() {}
                        })
                        .await;
                    }
                    return Ok(());
                }
            }
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
