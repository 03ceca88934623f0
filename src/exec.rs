//! The headless front end, `harness9 exec`: one task, then exit; a client of the session core
//! (`crate::session`) like the TUI. Text mode streams the answer onto stdout as it arrives (a
//! flush per delta) with notices, retries, refusals, errors and the closing line on stderr (the
//! `[engine]` log only with `-v` or `RUST_LOG`); `--json` prints one CONTRACT
//! event per line on stdout and nothing else. What was ignored at start (a malformed settings
//! file) is said before the run in both modes. Nobody can answer an approval here, so such
//! calls are refused with the flag that would allow them. SIGINT and SIGTERM cancel the run
//! cleanly (exit 130). Text mode strips terminal control sequences from everything it prints; a
//! run whose turns could not all be saved exits 1 and says what was lost.

use std::io::{Read, Write};

use crate::assemble::{AssembleError, SessionChoice};
use crate::config::{ExecArgs, Settings};
use crate::engine::{ApprovalDecision, Event, EventKind, Failure, FailureKind};
use crate::session::{self, CoreOptions, Opened, Request, SessionHandle, Update};
use crate::terminal_text::sanitize;

/// How a run ended, as an exit status (CONTRACT.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Done = 0,
    Failed = 1,
    Usage = 2,
    Interrupted = 130,
}

/// Why an `exec` has no prompt to send (a usage error: exit status 2).
#[derive(Debug, thiserror::Error)]
pub enum PromptError {
    #[error("could not read the prompt from standard input: {0}")]
    Stdin(#[source] std::io::Error),
    #[error("the prompt is empty: say what harness9 should do")]
    Empty,
}

/// The prompt of an `exec`: the argument, or standard input for `-`.
pub fn read_prompt(arg: &str) -> Result<String, PromptError> {
    let prompt = if arg == "-" {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .map_err(PromptError::Stdin)?;
        text
    } else {
        arg.to_owned()
    };
    if prompt.trim().is_empty() {
        return Err(PromptError::Empty);
    }
    Ok(prompt)
}

/// Runs `harness9 exec`: a client of the session core that sends one prompt and prints what
/// comes back.
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
    let opened = match session::open(
        &settings,
        choice,
        CoreOptions {
            wait_for_mcp: Some(crate::mcp::HEADLESS_WAIT),
            ..CoreOptions::default()
        },
    )
    .await
    {
        Ok(opened) => opened,
        Err(error) => {
            // Nothing reached the model: a run that cannot be stored does not start.
            report_error(args.json, error.kind(), &error.to_string());
            return match error {
                AssembleError::Session(_) => Outcome::Usage,
                AssembleError::Setup(_) | AssembleError::Storage(_) => Outcome::Failed,
            };
        }
    };
    let Opened {
        handle,
        mut updates,
        loaded,
        notices,
        mcp,
        ..
    } = opened;
    // The servers' process groups are killed when the run ends, however it ends.
    let _mcp_guard = mcp.shutdown_guard();
    // Nobody can answer a server's question here; under yolo one with defaults takes them.
    mcp.accept_elicitation_defaults(settings.mode == crate::planning::Mode::Yolo);
    // What was ignored or cannot be read is said before the run, in both modes.
    let problems = loaded.problems.iter().map(|p| p.message.clone());
    for notice in notices.into_iter().chain(loaded.notices).chain(problems) {
        report_notice(args.json, &notice);
    }
    interrupt_on_signals(handle.clone());
    handle.send(Request::Submit(prompt));
    let mut printer = Printer {
        json: args.json,
        line_open: false,
        asked: Vec::new(),
    };
    let mut outcome = Outcome::Failed;
    let mut closing = None;
    let mut answer = LastAnswer::default();
    while let Some(update) = updates.recv().await {
        match update {
            Update::Engine(event) => {
                answer.follow(&event);
                let ended = match &event.kind {
                    EventKind::ApprovalRequired(request) => {
                        // Nobody is here to answer: refused, naming the flag that allows it.
                        handle.send(Request::AnswerApproval {
                            id: request.id.clone(),
                            decision: ApprovalDecision::NoApprover,
                        });
                        false
                    }
                    EventKind::Done(_) => {
                        outcome = Outcome::Done;
                        if let Some(path) = &args.output_last_message
                            && let Err(error) = std::fs::write(path, &answer.text)
                        {
                            report_error(
                                args.json,
                                FailureKind::Config,
                                &format!("cannot write the answer to {}: {error}", path.display()),
                            );
                            outcome = Outcome::Failed;
                        }
                        true
                    }
                    EventKind::Error(failure) if failure.kind == FailureKind::Interrupted => {
                        outcome = Outcome::Interrupted;
                        true
                    }
                    EventKind::Error(_) => {
                        outcome = Outcome::Failed;
                        true
                    }
                    _ => false,
                };
                printer.show(&event);
                if ended {
                    handle.send(Request::Close {
                        discard_if_empty: false,
                    });
                }
            }
            Update::Failed(failure) => report_notice(args.json, &failure.message),
            // What the servers said mid-run (a declined elicitation, a server that stopped).
            Update::Mcp { notices, .. } => {
                for notice in notices {
                    report_notice(args.json, &notice);
                }
            }
            Update::Closed(closed) => {
                closing = Some(closed);
                break;
            }
            _ => {}
        }
    }
    printer.end_line();
    let Some(closing) = closing else {
        report_error(
            args.json,
            FailureKind::Provider,
            "the session ended before the run did",
        );
        return Outcome::Failed;
    };
    // Every write (the last turn, the todo list) is on disk before the process ends.
    if let Some(error) = &closing.flush_error {
        eprintln!("harness9: {}", sanitize(&error.message));
    }
    if !closing.unsaved.is_empty() {
        report_error(
            args.json,
            FailureKind::Storage,
            &lost_turns(&closing.unsaved, &closing.session_id),
        );
        if outcome == Outcome::Done {
            outcome = Outcome::Failed;
        }
    } else if !args.json {
        eprintln!(
            "harness9: session {} (continue it with: harness9 exec --session {} PROMPT)",
            closing.session_id, closing.session_id
        );
    }
    outcome
}

/// What a run lost to a store that would not take its writes.
fn lost_turns(unsaved: &session::Unsaved, session_id: &str) -> String {
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
fn report_error(json: bool, kind: FailureKind, message: &str) {
    eprintln!("harness9: {}", sanitize(message));
    if json {
        print_event(&Event {
            turn: 0,
            kind: EventKind::Error(Failure::new(kind, message)),
        });
    }
}

fn print_event(event: &Event) {
    let line = event.to_json().to_string();
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}

/// The final answer for `-o`: the text of the run's last turn (a retried turn starts again).
#[derive(Default)]
struct LastAnswer {
    turn: u32,
    text: String,
}

impl LastAnswer {
    fn follow(&mut self, event: &Event) {
        // A new turn (even one with no text) replaces the answer.
        if event.turn > self.turn {
            self.turn = event.turn;
            self.text.clear();
        }
        match &event.kind {
            EventKind::ActionDelta(text) => self.text.push_str(text),
            EventKind::Retry(_) => self.text.clear(),
            _ => {}
        }
    }
}

/// Shows a run's events: JSON lines, or the answer streamed onto stdout as it arrives with
/// failures and notices on stderr.
struct Printer {
    json: bool,
    /// Text was printed that did not end a line.
    line_open: bool,
    /// The calls whose refusal its approval request already said (with the flag).
    asked: Vec<String>,
}

impl Printer {
    fn show(&mut self, event: &Event) {
        // Which hook runs is for a status line; what hooks say comes as notices.
        if matches!(event.kind, EventKind::HookRunning(_)) {
            return;
        }
        if self.json {
            print_event(event);
            // stdout stays events only; what a person must act on still reaches stderr: an
            // error, and a call nobody can approve here, with the flag that would allow it.
            match &event.kind {
                EventKind::Error(failure) if failure.kind != FailureKind::Interrupted => {
                    eprintln!("harness9: {}", sanitize(&failure.message));
                }
                EventKind::ApprovalRequired(request) => {
                    eprintln!("harness9: {}", sanitize(&refusal_line(request)));
                }
                _ => {}
            }
            return;
        }
        match &event.kind {
            // The answer is the model's text, shown raw: it must not drive the terminal.
            // `sanitize` leaves no control character, so pieces cannot form a sequence either.
            EventKind::ActionDelta(text) => {
                let text = sanitize(text);
                if text.is_empty() {
                    return;
                }
                let mut out = std::io::stdout().lock();
                let _ = out.write_all(text.as_bytes());
                let _ = out.flush();
                self.line_open = !text.ends_with('\n');
            }
            EventKind::ThinkingDelta(_) => {}
            kind => {
                self.end_line();
                match kind {
                    EventKind::Notice(text) => eprintln!("harness9: {}", sanitize(text)),
                    EventKind::Retry(info) => eprintln!(
                        "harness9: retry {}/{} in {:.1}s: {}",
                        info.attempt,
                        info.max_attempts,
                        info.delay.as_secs_f64(),
                        sanitize(&info.reason)
                    ),
                    EventKind::ApprovalRequired(request) => {
                        self.asked.push(request.tool_call.id.clone());
                        eprintln!("harness9: {}", sanitize(&refusal_line(request)))
                    }
                    EventKind::ToolResult(outcome) => {
                        if let Some(line) = policy_refusal_line(outcome, &self.asked) {
                            eprintln!("harness9: {}", sanitize(&line));
                        }
                    }
                    EventKind::Error(failure) => {
                        eprintln!("harness9: {}", sanitize(&failure.message))
                    }
                    EventKind::Subagent(nested) => {
                        if let Some(line) = subagent_line(nested) {
                            eprintln!("harness9: {}", sanitize(&line));
                        }
                    }
                    _ => {}
                }
            }
        }
    }

    /// Ends the line of an answer, once it has ended.
    fn end_line(&mut self) {
        if self.line_open {
            let mut out = std::io::stdout().lock();
            let _ = out.write_all(b"\n");
            let _ = out.flush();
            self.line_open = false;
        }
    }
}

/// A call refused because nobody can approve it here, and how to let it run.
fn refusal_line(request: &crate::engine::ApprovalRequest) -> String {
    let rule = request
        .suggested_rule
        .as_ref()
        .map(|rule| format!(" or --allow '{rule}'"))
        .unwrap_or_default();
    format!(
        "refused `{}`: {}; nobody can approve it here: run with {}{rule} to allow it",
        request.tool_call.name, request.reason, request.allow_flag
    )
}

/// A call refused before it ran by a rule, the mode or a hook (not an approval nobody could
/// give: that one's line came with its request): which call, and the reason the model was told.
/// Such a result is the only one with no duration, since nothing ran.
fn policy_refusal_line(outcome: &crate::engine::ToolOutcome, asked: &[String]) -> Option<String> {
    let result = &outcome.result;
    if !result.is_error || !outcome.duration.is_zero() || asked.contains(&result.tool_call_id) {
        return None;
    }
    let reason = result.output.lines().next().unwrap_or("").trim();
    Some(format!("refused `{}`: {reason}", outcome.name))
}

/// A sub-agent's progress in text mode, one stderr line per step worth a line (its answer
/// reaches stdout only through the main agent's).
fn subagent_line(nested: &crate::engine::SubagentEvent) -> Option<String> {
    let who = format!("[{} {}]", nested.agent, nested.task_id);
    match &nested.event.kind {
        EventKind::SessionStarted(info) => Some(format!(
            "{who} started (session {}, model {})",
            info.session_id, info.model
        )),
        EventKind::ToolStart(call) => Some(format!("{who} {}", call.name)),
        EventKind::Notice(text) => Some(format!("{who} {text}")),
        EventKind::Done(done) => Some(format!(
            "{who} done: {} turn{}, {} input and {} output tokens",
            done.turns,
            if done.turns == 1 { "" } else { "s" },
            done.input_tokens,
            done.output_tokens
        )),
        EventKind::Error(failure) => Some(format!("{who} failed: {}", failure.message)),
        _ => None,
    }
}

/// Something worth knowing before or beside the run: on stderr, or a `notice` event.
fn report_notice(json: bool, message: &str) {
    if json {
        print_event(&Event {
            turn: 0,
            kind: EventKind::Notice(message.to_owned()),
        });
    } else {
        eprintln!("harness9: {}", sanitize(message));
    }
}

/// Ctrl+C (SIGINT) and SIGTERM interrupt the run; the loop then ends it cleanly.
fn interrupt_on_signals(handle: SessionHandle) {
    tokio::spawn(async move {
        let mut term =
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(signal) => signal,
                Err(_) => {
                    let _ = tokio::signal::ctrl_c().await;
                    handle.send(Request::Interrupt);
                    return;
                }
            };
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
        }
        handle.send(Request::Interrupt);
    });
}
