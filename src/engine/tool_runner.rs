//! The tool phase of a turn (design §4.4): each call is checked by the registry, passed through
//! the tool-call chain's before-steps (`hooks::ToolChain`: span, hooks, the permission decision),
//! asked about when needed (one approval at a time, in the model's order), then run on a task of
//! its own: concurrently, bounded by a semaphore, each with its own timeout, and handed back
//! through the chain's after-steps. A panic, a timeout or a cancellation still yields a result
//! for every call, and the results come back in the model's order whatever order the tools
//! finish in.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::{Semaphore, mpsc};
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use super::AgentEngine;
use super::emitter::Emitter;
use super::event::{ApprovalDecision, ApprovalRequest, Event, EventKind, ToolOutcome};
use super::subagent::{AGENT_LINK, AgentLink, ChildMessage, ChildUsage};
use super::timed_run;
use crate::hooks::{ChainCall, Gate, HookEvent, Passed};
use crate::permission;
use crate::permission::always_allow;
use crate::planning::Mode;
use crate::schema::{ToolCall, ToolResult};
use crate::tools::ToolContext;

/// Sub-agents' messages buffered before a child waits for its parent to take them.
const CHILD_CHANNEL_CAPACITY: usize = 256;

/// What a finished tool task hands back.
struct Finished {
    index: usize,
    result: ToolResult,
    duration: Duration,
    /// What the chain's after-steps had to say (hook messages).
    notices: Vec<String>,
}

impl AgentEngine {
    pub(crate) async fn run_tools(
        &self,
        turn: u32,
        mode: Mode,
        calls: &[ToolCall],
        cancel: &CancellationToken,
        em: &mut dyn Emitter,
        children: &mut ChildUsage,
    ) -> Vec<ToolResult> {
        let mut results: Vec<Option<ToolResult>> = vec![None; calls.len()];
        // Sub-agents started by `task` calls report here while they run.
        let (child_tx, mut child_rx) = mpsc::channel::<ChildMessage>(CHILD_CHANNEL_CAPACITY);
        // Progress the running calls report, shown as it comes.
        let (progress_tx, mut progress_rx) = mpsc::unbounded_channel::<EventKind>();
        // What each running call printed so far (its `tool_output`), for a call the user
        // interrupts: the model and the transcript get it (issue 32 point 3).
        let mut printed = PrintedSoFar::default();
        let semaphore = (self.options.max_concurrent_tools > 0)
            .then(|| Arc::new(Semaphore::new(self.options.max_concurrent_tools)));
        let mut tasks = JoinSet::new();
        let mut task_index = HashMap::new();

        for (index, call) in calls.iter().enumerate() {
            if cancel.is_cancelled() {
                break;
            }
            let (tool, arguments) = match self.registry.prepare(call, mode) {
                Ok(prepared) => prepared,
                Err(error) => {
                    let result = ToolResult::error(&call.id, error.0);
                    self.report_immediate(turn, call, &result, em).await;
                    results[index] = Some(result);
                    continue;
                }
            };
            let granted = self
                .allowed
                .lock()
                .map(|set| set.clone())
                .unwrap_or_default();
            let mut chain_call = ChainCall {
                tool: Arc::clone(&tool),
                id: call.id.clone(),
                arguments,
                mode,
                workdir: self.workdir.clone(),
                session_id: self
                    .session()
                    .map(|s| s.id().to_owned())
                    .unwrap_or_default(),
                granted,
                hook_allowed: false,
                rewritten: false,
                span: tracing::Span::none(),
                notices: Vec::new(),
                cancel: cancel.clone(),
            };
            let running = self
                .hooks
                .running_label(HookEvent::PreToolUse, Some(&call.name));
            if let Some(label) = &running {
                self.hook_running(turn, Some(label.clone()), em).await;
            }
            let (gate, passed) = self.chain.before(&mut chain_call).await;
            if running.is_some() {
                self.hook_running(turn, None, em).await;
            }
            let problems = self.rules.take_problems();
            for notice in std::mem::take(&mut chain_call.notices)
                .into_iter()
                .chain(problems)
            {
                em.emit(Event {
                    turn,
                    kind: EventKind::Notice(notice),
                })
                .await;
            }
            // What runs is what the chain let through: a hook may have rewritten the arguments.
            let shown = if chain_call.rewritten {
                ToolCall {
                    arguments: chain_call.arguments.to_string(),
                    ..call.clone()
                }
            } else {
                call.clone()
            };
            let call = &shown;
            let arguments = &chain_call.arguments;
            let refused = match gate {
                Gate::Run => None,
                Gate::Deny { reason } => Some(reason),
                Gate::Ask { reason, scope } => {
                    let flag = permission::headless_flag(tool.as_ref(), arguments, &self.workdir);
                    let suggested =
                        permission::suggested_rule(tool.as_ref(), arguments, &self.workdir);
                    let reason = match tool.approval_note(arguments, mode) {
                        Some(note) => format!("{reason}. {note}"),
                        None => reason,
                    };
                    let (mut request, answer) = ApprovalRequest::new(
                        call.clone(),
                        reason,
                        scope.description.clone(),
                        flag,
                        suggested.clone(),
                    );
                    request.preview = self.edit_preview(call, arguments).await;
                    request.always_offered = scope.remembered();
                    self.notification_hooks(
                        format!("harness9 needs your permission to use {}", call.name),
                        cancel,
                    );
                    match em.approve(turn, request, answer, cancel).await {
                        ApprovalDecision::AllowOnce => None,
                        ApprovalDecision::AllowAlways => {
                            if let Ok(mut set) = self.allowed.lock() {
                                set.insert(scope.key);
                            }
                            None
                        }
                        ApprovalDecision::AllowRule => {
                            let text = self.write_rule(suggested.as_deref());
                            em.emit(Event {
                                turn,
                                kind: EventKind::Notice(text),
                            })
                            .await;
                            None
                        }
                        decision @ (ApprovalDecision::Deny { .. }
                        | ApprovalDecision::NoApprover
                        | ApprovalDecision::Interrupted) => {
                            let text = denial_text(&call.name, decision, flag);
                            tracing::warn!(
                                "{} approval denied | name={} id={} | {text}",
                                em.prefix(),
                                call.name,
                                call.id
                            );
                            Some(text)
                        }
                    }
                }
            };
            if let Some(reason) = refused {
                // The stages that saw the call see its refusal, in reverse.
                let mut result = ToolResult::error(&call.id, reason);
                self.chain
                    .after(passed, &mut chain_call, &mut result, false)
                    .await;
                self.report_immediate(turn, call, &result, em).await;
                results[index] = Some(result);
                continue;
            }
            if !cancel.is_cancelled() {
                em.emit(Event {
                    turn,
                    kind: EventKind::ToolStart(call.clone()),
                })
                .await;
                tracing::info!(
                    "{} tool start | name={} id={}",
                    em.prefix(),
                    call.name,
                    call.id
                );
                // A spawned task does not inherit the current span: it runs in the one the
                // chain opened for it.
                let span = chain_call.span.clone();
                let link = AgentLink {
                    call_id: call.id.clone(),
                    parent_session: self.session().map(|s| s.id().to_owned()),
                    provider: self.provider(),
                    sink: child_tx.clone(),
                    background: Arc::clone(&self.background),
                    // Only `task` starts a child that needs them.
                    grants: if call.name == crate::schema::TASK_TOOL {
                        self.allowed
                            .lock()
                            .map(|set| set.clone())
                            .unwrap_or_default()
                    } else {
                        Default::default()
                    },
                };
                let handle = tasks.spawn(
                    self.tool_task(
                        index,
                        chain_call,
                        passed,
                        (semaphore.clone(), progress_tx.clone()),
                        link,
                    )
                    .instrument(span),
                );
                task_index.insert(handle.id(), (index, Instant::now()));
            }
        }

        loop {
            // A child's messages first: those a finished child sent before it ended come out
            // before its call's result.
            let joined = tokio::select! {
                biased;
                _ = cancel.cancelled() => break,
                Some(message) = child_rx.recv() => {
                    match message {
                        ChildMessage::Event(nested) => {
                            children.count(&nested.event);
                            em.emit(Event { turn, kind: EventKind::Subagent(nested) }).await;
                        }
                        ChildMessage::Approval(request) => em.forward_approval(turn, request).await,
                    }
                    continue;
                }
                Some(kind) = progress_rx.recv() => {
                    printed.note(&kind);
                    em.emit(Event { turn, kind }).await;
                    continue;
                }
                joined = tasks.join_next_with_id() => joined,
            };
            let Some(joined) = joined else { break };
            let finished = match joined {
                Ok((_, finished)) => finished,
                Err(error) => {
                    // The tool panicked (or was aborted): its call still gets a result.
                    let Some(&(index, started)) = task_index.get(&error.id()) else {
                        continue;
                    };
                    Finished {
                        index,
                        result: ToolResult::error(
                            &calls[index].id,
                            format!(
                                "`{}` crashed while running; this is a bug in the tool, not in \
                                 your call. Try another way to reach the same goal.",
                                calls[index].name
                            ),
                        ),
                        duration: started.elapsed(),
                        notices: Vec::new(),
                    }
                }
            };
            self.report_finished(turn, &calls[finished.index], &finished, em)
                .await;
            results[finished.index] = Some(finished.result);
        }

        // Interrupted: stop what still runs (dropping a tool's future kills its processes) and
        // give every unanswered call a result, so the history stays valid.
        tasks.abort_all();
        while let Ok(kind) = progress_rx.try_recv() {
            printed.note(&kind);
            em.emit(Event { turn, kind }).await;
        }
        let mut out = Vec::with_capacity(calls.len());
        for (index, slot) in results.into_iter().enumerate() {
            match slot {
                Some(result) => out.push(result),
                None => {
                    let call = &calls[index];
                    let duration = task_index
                        .values()
                        .find(|(i, _)| *i == index)
                        .map(|(_, started)| started.elapsed())
                        .unwrap_or_default();
                    let finished = Finished {
                        index,
                        result: ToolResult::error(&call.id, printed.interrupted(&call.id)),
                        duration,
                        notices: Vec::new(),
                    };
                    self.report_finished(turn, call, &finished, em).await;
                    out.push(finished.result);
                }
            }
        }
        out
    }

    /// Runs a call the chain let through, then hands its result back through the chain.
    fn tool_task(
        &self,
        index: usize,
        mut call: ChainCall,
        passed: Passed,
        (semaphore, progress_tx): (Option<Arc<Semaphore>>, mpsc::UnboundedSender<EventKind>),
        link: AgentLink,
    ) -> impl std::future::Future<Output = Finished> + Send + 'static {
        let cancel = call.cancel.child_token();
        let ctx = ToolContext {
            workdir: self.workdir.clone(),
            cancel: cancel.clone(),
            mode: call.mode,
            todos: Arc::clone(&self.todos),
            read_guard: permission::read_guard(Arc::clone(&self.rules), self.workdir.clone()),
            outputs: self.outputs_dir(),
            editor_files: self.editor_files(),
            editor_terminal: self.editor_terminal(),
        };
        let timeout = if call.tool.has_own_time_limit() {
            None
        } else {
            self.options.tool_timeout
        };
        let chain = self.chain.clone();
        // An edit's files, for the language servers to say what the edit broke.
        let edited: Vec<std::path::PathBuf> = match &self.language_servers {
            Some(_) if call.tool.kind() == crate::schema::ToolKind::Edit => call
                .tool
                .written_paths(&call.arguments)
                .iter()
                .map(|raw| crate::files::paths::resolve(&self.workdir, raw))
                .collect(),
            _ => Vec::new(),
        };
        let servers = self.language_servers.clone();
        // A command's changed files, found by the checkpoint's walk, for the same diagnostics.
        let command_walk = match (&servers, &self.checkpoints) {
            (Some(_), Some(checkpoints)) if call.tool.name() == "bash" => {
                Some(Arc::clone(checkpoints))
            }
            _ => None,
        };
        async move {
            // The permit is held for the whole run of the tool; its clock starts once it runs.
            let _permit = match &semaphore {
                Some(semaphore) => semaphore.acquire().await.ok(),
                None => None,
            };
            let started = Instant::now();
            let baselines = match &servers {
                Some(servers) => servers.before_edits(&edited).await,
                None => Vec::new(),
            };
            // A tool that reports progress is alive: each report restarts its timeout.
            let work = AGENT_LINK.scope(link, call.tool.execute(call.arguments.clone(), &ctx));
            let outcome = timed_run::run(work, timeout, &cancel, &call.id, &progress_tx).await;
            let mut result = match outcome {
                Ok(mut output) => {
                    if let Some(servers) = &servers
                        && let Some(report) = servers.after_edits(baselines).await
                    {
                        output.push_str("\n\n");
                        output.push_str(&report);
                    }
                    ToolResult::ok(&call.id, output)
                }
                Err(error) => ToolResult::error(&call.id, error.0),
            };
            chain.after(passed, &mut call, &mut result, true).await;
            if let (Some(servers), Some(checkpoints)) = (&servers, command_walk) {
                let changed = checkpoints.take_changed_by(&call.id);
                let baselines = servers.after_commands(&changed).await;
                if let Some(report) = servers.after_edits(baselines).await {
                    result.output.push_str("\n\n");
                    result.output.push_str(&report);
                }
            }
            Finished {
                index,
                result,
                duration: started.elapsed(),
                notices: call.notices,
            }
        }
    }

    /// An edit's diff for its approval (`ApprovalRequest::preview`), read off the async threads.
    async fn edit_preview(&self, call: &ToolCall, arguments: &serde_json::Value) -> Option<String> {
        if !matches!(call.name.as_str(), "edit_file" | "write_file") {
            return None;
        }
        let (name, arguments) = (call.name.clone(), arguments.clone());
        let (workdir, rules) = (self.workdir.clone(), Arc::clone(&self.rules));
        // With the editor's files (ACP), the preview is of its buffer, as the edit will be.
        let editor = self.editor_files();
        tokio::task::spawn_blocking(move || {
            let read_denied =
                |path: &std::path::Path| crate::permission::read_denied(&rules, &workdir, path);
            let editor = editor.as_deref();
            crate::tools::preview::edit_preview_in_editor(
                &name,
                &arguments,
                &workdir,
                read_denied,
                editor,
            )
        })
        .await
        .ok()
        .flatten()
    }

    /// Writes the suggested rule to the project's local settings ("always allow like this");
    /// what happened, for a notice.
    fn write_rule(&self, suggested: Option<&str>) -> String {
        let Some(rule) = suggested else {
            return "no rule fits this call; it was allowed once".to_owned();
        };
        // Accepted before it is written: a rule harness9 writes for the user is no planted one.
        self.rules.accept_local_allow(rule);
        let written = always_allow::add_allow(self.rules.local_file(), rule);
        if let (Ok(path), Some(checkpoints)) = (&written, &self.checkpoints) {
            checkpoints.harness9_wrote(&always_allow::files_written(path));
        }
        match written {
            Ok(path) if self.rules.trusted() => {
                format!("always allowed: wrote `{rule}` to {}", path.display())
            }
            // The file is the folder's: its allow rules count only once the folder is trusted.
            Ok(path) => format!(
                "wrote `{rule}` to {}, but this folder is not trusted, so the rule counts only \
                 once you trust it (--trust); this call was allowed once",
                path.display()
            ),
            Err(e) => format!("could not write the rule `{rule}`: {e}; this call was allowed once"),
        }
    }

    /// A call that never ran (refused, denied, malformed) still shows as a started and
    /// finished tool, so every client sees one block per call.
    async fn report_immediate(
        &self,
        turn: u32,
        call: &ToolCall,
        result: &ToolResult,
        em: &mut dyn Emitter,
    ) {
        em.emit(Event {
            turn,
            kind: EventKind::ToolStart(call.clone()),
        })
        .await;
        let finished = Finished {
            index: 0,
            result: result.clone(),
            duration: Duration::ZERO,
            notices: Vec::new(),
        };
        self.report_finished(turn, call, &finished, em).await;
    }

    async fn report_finished(
        &self,
        turn: u32,
        call: &ToolCall,
        finished: &Finished,
        em: &mut dyn Emitter,
    ) {
        tracing::info!(
            "{} tool done | name={} id={} bytes={} is_error={} duration={}ms",
            em.prefix(),
            call.name,
            call.id,
            finished.result.output.len(),
            finished.result.is_error,
            finished.duration.as_millis()
        );
        for notice in &finished.notices {
            em.emit(Event {
                turn,
                kind: EventKind::Notice(notice.clone()),
            })
            .await;
        }
        em.emit(Event {
            turn,
            kind: EventKind::ToolResult(ToolOutcome {
                name: call.name.clone(),
                result: finished.result.clone(),
                duration: finished.duration,
            }),
        })
        .await;
    }
}

/// What the model is told about a call that was not approved.
fn denial_text(tool: &str, decision: ApprovalDecision, allow_flag: &str) -> String {
    match decision {
        ApprovalDecision::NoApprover => format!(
            "This `{tool}` call needs the user's approval, and nobody can give it in this \
             headless run, so it was not run. Work without it if you can; the user can rerun \
             with {allow_flag} to allow such calls."
        ),
        ApprovalDecision::Interrupted => format!(
            "This `{tool}` call was not run: the user interrupted the run while it waited for \
             approval. It was neither approved nor denied; ask again if it is still needed."
        ),
        ApprovalDecision::Deny {
            reason: Some(reason),
        } if !reason.trim().is_empty() => {
            format!("The user denied this `{tool}` call. They said: {reason}")
        }
        _ => format!("The user denied this `{tool}` call."),
    }
}

/// The output each running call printed so far, its latest `PrintedSoFar::KEPT` bytes.
#[derive(Default)]
struct PrintedSoFar {
    by_call: std::collections::HashMap<String, String>,
}

impl PrintedSoFar {
    /// What is kept of a call's output: the end, where an interrupted command was.
    const KEPT: usize = 16 * 1024;

    fn note(&mut self, kind: &EventKind) {
        let EventKind::ToolOutput(output) = kind else {
            return;
        };
        let text = self.by_call.entry(output.tool_call_id.clone()).or_default();
        text.push_str(&output.chunk);
        if text.len() > Self::KEPT {
            let mut from = text.len() - Self::KEPT;
            while !text.is_char_boundary(from) {
                from += 1;
            }
            text.replace_range(..from, "…");
        }
    }

    /// The result of a call the user interrupted: what it printed until then, marked so.
    fn interrupted(&self, call_id: &str) -> String {
        const CANCELLED: &str = "cancelled: the user interrupted the run before this call finished";
        match self.by_call.get(call_id).filter(|text| !text.is_empty()) {
            Some(text) => format!(
                "{}\n{CANCELLED}; the output above is what it printed until then.",
                text.trim_end_matches('\n')
            ),
            None => CANCELLED.to_owned(),
        }
    }
}
