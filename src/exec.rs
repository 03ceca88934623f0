//! The headless front end, `harness9 exec`: one task, then exit. Text mode prints the answer on
//! stdout and `[engine]` lines on stderr; `--json` prints one CONTRACT event per line on stdout
//! and nothing else. Nobody can answer an approval here, so such calls are refused with the flag
//! that would allow them. SIGINT and SIGTERM cancel the run cleanly (exit 130).

use std::io::{Read, Write};
use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use crate::assemble::{self, AssembleError, SessionChoice};
use crate::config::{ExecArgs, Settings};
use crate::engine::{AgentEngine, ApprovalDecision, EngineError, EventKind};

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
            eprintln!("harness9: {error}");
            return match error {
                AssembleError::Session(_) => Outcome::Usage,
                AssembleError::Setup(_) => Outcome::Failed,
            };
        }
    };
    // Said once, before the run (stderr: stdout is the answer or the JSON events).
    for notice in assembly.sandbox.notices() {
        eprintln!("harness9: notice: {notice}");
    }
    let cancel = CancellationToken::new();
    cancel_on_signals(cancel.clone());
    let outcome = if args.json {
        run_json(&assembly.engine, prompt, cancel).await
    } else {
        run_text(&assembly.engine, &prompt, cancel).await
    };
    // Every write (the last turn, the todo list) is on disk before the process ends.
    if let Err(error) = assembly.store.flush().await {
        eprintln!("harness9: {error}");
    }
    if !args.json {
        eprintln!(
            "harness9: session {} (continue it with: harness9 exec --session {} PROMPT)",
            assembly.session.id, assembly.session.id
        );
    }
    outcome
}

async fn run_text(engine: &AgentEngine, prompt: &str, cancel: CancellationToken) -> Outcome {
    let print = |text: &str| {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{text}");
        let _ = out.flush();
    };
    match engine.run(prompt, cancel.clone(), &print).await {
        Ok(_) => Outcome::Done,
        Err(EngineError::Cancelled) => {
            eprintln!("harness9: interrupted");
            Outcome::Interrupted
        }
        Err(error) => {
            eprintln!("harness9: {error}");
            Outcome::Failed
        }
    }
}

async fn run_json(engine: &Arc<AgentEngine>, prompt: String, cancel: CancellationToken) -> Outcome {
    let mut events = engine.run_stream(prompt, cancel.clone());
    let mut outcome = Outcome::Failed;
    while let Some(event) = events.recv().await {
        let line = event.to_json().to_string();
        {
            let mut out = std::io::stdout().lock();
            let _ = writeln!(out, "{line}");
            let _ = out.flush();
        }
        match &event.kind {
            EventKind::ApprovalRequired(request) => {
                request.respond(ApprovalDecision::NoApprover);
            }
            EventKind::Done(_) => outcome = Outcome::Done,
            EventKind::Error(_) if cancel.is_cancelled() => outcome = Outcome::Interrupted,
            EventKind::Error(message) => {
                eprintln!("harness9: {message}");
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
