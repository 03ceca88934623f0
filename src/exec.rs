//! The headless front end, `harness9 exec`: one task, then exit. Text mode prints the answer on
//! stdout and `[engine]` lines on stderr; `--json` prints one CONTRACT event per line on stdout
//! and nothing else. Nobody can answer an approval here, so such calls are refused with the flag
//! that would allow them. SIGINT and SIGTERM cancel the run cleanly (exit 130). Text mode
//! strips terminal control sequences from everything it prints; a run whose turns could not all
//! be saved exits 1 and says what was lost.

use std::io::{Read, Write};
use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use crate::assemble::{self, AssembleError, SessionChoice};
use crate::config::{ExecArgs, Settings};
use crate::engine::{AgentEngine, ApprovalDecision, EngineError, Event, EventKind};
use crate::terminal_text::sanitize;

/// How a run ended, as an exit status (CONTRACT.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Done = 0,
    Failed = 1,
    Usage = 2,
    Interrupted = 130,
}

/// The prompt of an `exec`: the argument, or standard input for `-`.
pub fn read_prompt(arg: &str) -> Result<String, String> {
    let prompt = if arg == "-" {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .map_err(|e| format!("could not read the prompt from standard input: {e}"))?;
        text
    } else {
        arg.to_owned()
    };
    if prompt.trim().is_empty() {
        return Err("the prompt is empty: say what harness9 should do".into());
    }
    Ok(prompt)
}

/// Runs `harness9 exec`.
pub async fn run(settings: Settings, args: ExecArgs) -> Outcome {
    let prompt = match read_prompt(&args.prompt) {
        Ok(prompt) => prompt,
        Err(message) => {
            eprintln!("harness9: {message}");
            return Outcome::Usage;
        }
    };
    let choice = match (&args.session, args.continue_session) {
        (Some(key), _) => SessionChoice::Resume(key.clone()),
        (None, true) => SessionChoice::Continue,
        (None, false) => SessionChoice::New,
    };
    let assembled = match assemble::open_store(&settings) {
        Ok(store) => assemble::assemble(&settings, store, choice).await,
        Err(error) => Err(error),
    };
    let assembly = match assembled {
        Ok(assembly) => assembly,
        Err(error) => {
            // Nothing reached the model: a run that cannot be stored does not start.
            report_error(args.json, &error.to_string());
            return match error {
                AssembleError::Session(_) => Outcome::Usage,
                AssembleError::Setup(_) => Outcome::Failed,
            };
        }
    };
    let sandbox_notices = assembly.sandbox.notices();
    for notice in settings
        .notices
        .iter()
        .chain(&assembly.notices)
        .chain(sandbox_notices.iter())
    {
        if args.json {
            print_event(&Event {
                turn: 0,
                kind: EventKind::Notice(notice.clone()),
            });
        } else {
            eprintln!("harness9: {}", sanitize(notice));
        }
    }
    let cancel = CancellationToken::new();
    cancel_on_signals(cancel.clone());
    let mut outcome = if args.json {
        run_json(&assembly.engine, prompt, cancel).await
    } else {
        run_text(&assembly.engine, &prompt, cancel).await
    };
    // Every write (the last turn, the todo list) is on disk before the process ends.
    if let Err(error) = assembly.store.flush().await {
        eprintln!("harness9: {}", sanitize(&error.to_string()));
    }
    let unsaved = assembly.saving.unsaved();
    if !unsaved.is_empty() {
        report_error(args.json, &lost_turns(&unsaved, &assembly.session.id));
        if outcome == Outcome::Done {
            outcome = Outcome::Failed;
        }
    } else if !args.json {
        eprintln!(
            "harness9: session {} (continue it with: harness9 exec --session {} PROMPT)",
            assembly.session.id, assembly.session.id
        );
    }
    outcome
}

/// What a run lost to a store that would not take its writes.
fn lost_turns(unsaved: &crate::assemble::Unsaved, session_id: &str) -> String {
    let mut lost = Vec::new();
    if unsaved.messages > 0 {
        lost.push(format!(
            "the last {} message(s) of this run (the prompt, answers or tool results)",
            unsaved.messages
        ));
    }
    if unsaved.compaction {
        lost.push("a compaction of the conversation".to_owned());
    }
    format!(
        "could not save {} to sessions.db of session {session_id}: they are lost{}",
        lost.join(" and "),
        unsaved
            .error
            .as_deref()
            .map(|e| format!(" ({e})"))
            .unwrap_or_default()
    )
}

/// A failure outside the engine's own events: on stderr, and as the `error` event that ends a
/// `--json` run.
fn report_error(json: bool, message: &str) {
    eprintln!("harness9: {}", sanitize(message));
    if json {
        print_event(&Event {
            turn: 0,
            kind: EventKind::Error(message.to_owned()),
        });
    }
}

fn print_event(event: &Event) {
    let line = event.to_json().to_string();
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}

async fn run_text(engine: &AgentEngine, prompt: &str, cancel: CancellationToken) -> Outcome {
    // The answer is the model's text, shown raw: it must not drive the terminal.
    let print = |text: &str| {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{}", sanitize(text));
        let _ = out.flush();
    };
    match engine.run(prompt, cancel.clone(), &print).await {
        Ok(_) => Outcome::Done,
        Err(EngineError::Cancelled) => {
            eprintln!("harness9: interrupted");
            Outcome::Interrupted
        }
        Err(error) => {
            eprintln!("harness9: {}", sanitize(&error.to_string()));
            Outcome::Failed
        }
    }
}

async fn run_json(engine: &Arc<AgentEngine>, prompt: String, cancel: CancellationToken) -> Outcome {
    let mut events = engine.run_stream(prompt, cancel.clone());
    let mut outcome = Outcome::Failed;
    while let Some(event) = events.recv().await {
        print_event(&event);
        match &event.kind {
            EventKind::ApprovalRequired(request) => {
                request.respond(ApprovalDecision::NoApprover);
            }
            EventKind::Done(_) => outcome = Outcome::Done,
            EventKind::Error(_) if cancel.is_cancelled() => outcome = Outcome::Interrupted,
            EventKind::Error(message) => {
                eprintln!("harness9: {}", sanitize(message));
                outcome = Outcome::Failed;
            }
            _ => {}
        }
    }
    outcome
}

/// Ctrl+C (SIGINT) and SIGTERM cancel the run; the loop then ends it cleanly.
fn cancel_on_signals(cancel: CancellationToken) {
    tokio::spawn(async move {
        let mut term =
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(signal) => signal,
                Err(_) => {
                    let _ = tokio::signal::ctrl_c().await;
                    cancel.cancel();
                    return;
                }
            };
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
        }
        cancel.cancel();
    });
}
