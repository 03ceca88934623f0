//! The full-screen TUI, a client of the session core (`crate::session`): it draws and maps keys,
//! sends the session core its `Request`s and takes in its `Update`s as they are. It
//! never touches the store, a provider, a tool or the working directory's files itself (a
//! `/export` the user asked for is written by the core, never over an existing one). The first frame
//! is drawn before anything that can wait (logs, store, session). One loop owns the terminal
//! (`runner`) from that frame on: the start's questions (folder trust, a project's extensions)
//! are layers of it (`startup`), the session opens behind them; then a `select!` over input, the
//! session's updates and a deadline that exists only while something is dirty, animating or
//! about to time out, so an idle screen costs nothing.
//! Every frame is one synchronized update. With `--no-alt-screen` the same app runs inline in
//! the main screen (`inline`): finished entries go into the terminal's scrollback.

mod answers;
mod app;
mod approval;
mod approval_view;
mod child_view;
mod commands;
mod compositor;
mod dialog_guard;
mod dialogs;
mod editing;
mod elicitation_fields;
mod elicitation_form;
mod engine_events;
mod extension_question;
mod flash;
mod frame;
mod help;
pub mod highlight;
mod inline;
mod input_box;
mod jobs;
mod keymap;
mod keys;
mod layer_scroll;
mod layers;
pub mod markdown;
mod mcp_panel;
mod memory_panel;
mod mentions;
mod notify;
mod overlays;
mod picker;
mod plan_review;
mod plan_state;
mod progress_line;
mod queue;
mod restore_question;
mod rewind;
mod run_state;
mod runner;
mod screen_state;
mod slash;
mod spending;
mod startup;
mod status_line;
mod subagents;
mod task_view;
mod terminal;
pub mod theme;
mod tool_view;
mod transcript;
mod transcript_view;
mod trust_question;
mod view;
mod workflows;
mod wrap;

use std::time::Instant;

use crossterm::terminal::{BeginSynchronizedUpdate, EndSynchronizedUpdate};

pub use app::{App, Effect, Scroll, SessionView};
pub use transcript::{EntryKind, Tone, Transcript};
/// A whole frame of the app (settled, drawn, taken in): what a test or a bench draws with.
pub use view::render as draw;

use crate::session;
use crate::session::launch::{Display, Launch, Theme};
use crate::session::{AssembleError, SessionChoice};
use runner::Runner;
use startup::Startup;

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

/// Runs the TUI in the working directory of `launch`. With `open_picker`, the session
/// picker is shown first (`harness9 --resume` without an id). A folder whose trust is not
/// decided is asked about first; if the user trusts it, its settings are resolved again.
pub async fn run(
    launch: Launch,
    choice: SessionChoice,
    open_picker: bool,
    display: Display,
) -> Result<(), AssembleError> {
    let outcome = run_screen(launch, choice, open_picker, display).await;
    // Whatever way it ended, the terminal is the user's again.
    terminal::restore();
    outcome
}

async fn run_screen(
    launch: Launch,
    choice: SessionChoice,
    open_picker: bool,
    display: Display,
) -> Result<(), AssembleError> {
    let started = Instant::now();
    // The first frame comes before anything that can wait: the logs, the store and its
    // migrations, the session; keys typed meanwhile wait for it.
    let mut app = App::new(SessionView {
        session_id: String::new(),
        provider: launch.provider(),
        model: launch.model().to_owned(),
        workdir: launch.workdir(),
        mode: launch.mode(),
        context_window: launch.context_window(),
    });
    let term = first_frame(launch.home(), &display, &mut app, started)?;
    let _logs = session::launch::file_logs(launch.home());
    tracing::info!(
        "[tui] first frame | after_ms={}",
        started.elapsed().as_millis()
    );
    highlight::warm_up();
    // A folder whose trust is not decided is asked about first, then a trusted project's
    // extensions; the session opens after the answers.
    let startup = Startup::local(launch, choice, &mut app);
    show(app, startup, open_picker, term, display).await
}

/// Enters the terminal, picks the theme and draws the welcome screen with its input line.
fn first_frame(
    home: &std::path::Path,
    display: &Display,
    app: &mut App,
    started: Instant,
) -> Result<terminal::Term, AssembleError> {
    terminal::install_panic_hook(home.join("logs"));
    let mut term = terminal::enter(display.alt_screen).map_err(|e| {
        terminal::restore();
        AssembleError::Setup(format!("cannot use this terminal: {e}"))
    })?;
    let colorfgbg = std::env::var("COLORFGBG").ok();
    let known = display
        .theme
        .or(colorfgbg.as_deref().and_then(theme::from_colorfgbg));
    theme::set(known.unwrap_or(Theme::Dark));
    let drawn = |term: &mut terminal::Term, app: &mut App| {
        draw_frame(term, app).map_err(|e| AssembleError::Setup(e.to_string()))
    };
    drawn(&mut term, app)?;
    tracing::debug!(
        "[tui] welcome drawn | after_ms={}",
        started.elapsed().as_millis()
    );
    // Asked only when nothing said it, and after the first frame: a terminal that does not
    // answer costs a wait here, never before the screen is up.
    if known.is_none() {
        let (asked, typed) = theme::query_background();
        if let Some(asked) = asked {
            theme::set(asked);
        }
        // Text typed while the answer was read goes to the input, as it would have.
        app.input_box_mut().input.insert_str(&typed);
        if asked.is_some_and(|t| t != Theme::Dark) || !typed.is_empty() {
            drawn(&mut term, app)?;
        }
    }
    Ok(term)
}

/// `harness9 attach`: the TUI over a session of the `serve` instance at `url` (`session::remote`):
/// `session_id`, or a new one.
pub async fn attach(
    home: &std::path::Path,
    token: Option<&str>,
    url: &str,
    session_id: Option<&str>,
    display: Display,
) -> Result<(), AssembleError> {
    let started = Instant::now();
    let token = session::remote::read_token(token, home).map_err(|e| {
        AssembleError::Setup(format!(
            "no token for {}: set HARNESS9_SERVE_TOKEN, or start harness9 serve first \
             (it writes {}): {e}",
            url,
            home.join(session::remote::TOKEN_FILE).display()
        ))
    })?;
    let mut app = App::new(SessionView {
        session_id: String::new(),
        provider: String::new(),
        model: url.to_owned(),
        workdir: String::new(),
        mode: crate::session::Mode::Default,
        context_window: 0,
    });
    let term = first_frame(home, &display, &mut app, started)?;
    let _logs = session::launch::file_logs(home);
    highlight::warm_up();
    let (url, session_id) = (url.to_owned(), session_id.map(str::to_owned));
    let startup = Startup::opening(Box::pin(async move {
        session::remote::open(&url, &token, session_id.as_deref()).await
    }));
    let outcome = show(app, startup, false, term, display).await;
    terminal::restore();
    outcome
}

/// Runs the one loop from the first frame: the start's questions, then the opened session
/// until the user leaves it.
async fn show(
    mut app: App,
    startup: Startup,
    open_picker: bool,
    mut term: terminal::Term,
    display: Display,
) -> Result<(), AssembleError> {
    let mut runner = Runner::new(startup, display, open_picker);
    let outcome = runner.event_loop(&mut term, &mut app).await;
    // Left before a session was shown (a question answered with quitting, a session that
    // could not be opened): nothing to finish or to resume.
    if !runner.opened() {
        return outcome;
    }
    // Inline, what the live area still held joins the conversation in the scrollback.
    if let Err(error) = inline::finish(&mut term, &mut app) {
        tracing::warn!("[tui] inline finish | error={error}");
    }
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
        let key = app.session_name().as_deref().unwrap_or(&closing.session_id);
        println!("Resume this session with: harness9 --resume {key}");
    }
    outcome
}

pub(crate) fn draw_frame(term: &mut terminal::Term, app: &mut App) -> std::io::Result<()> {
    if term.inline.is_some() {
        return inline::draw(term, app);
    }
    crossterm::queue!(term.backend_mut(), BeginSynchronizedUpdate)?;
    term.draw(|frame| view::render(app, frame))?;
    crossterm::execute!(term.backend_mut(), EndSynchronizedUpdate)?;
    Ok(())
}

#[cfg(test)]
mod tests;
