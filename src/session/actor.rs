//! The core's task: one loop over requests, the running turn's events and the todo list, so
//! the session's state has one owner and needs no locks. Slow work (store queries, `!`
//! commands, compaction, the file list) runs on tasks of its own and publishes its answer.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::CoreOptions;
use super::hub::Hub;
use super::memories::Memories;
use super::protocol::{Closing, Request, Update};
use super::views::{ClipboardImage, McpServer, SessionHit, clipboard_failure};
use crate::assemble::{Assembly, ProviderFactory, SavingSession};
use crate::engine::{ApprovalRequest, Event, EventKind, Failure, FailureKind};
use crate::mcp::McpManager;
use crate::memory::SqliteSession;

/// Files listed for `@` completion.
pub const MENTION_FILES: usize = 20_000;
/// How long closing waits for an interrupted run to store what it has.
const CLOSE_PATIENCE: Duration = Duration::from_secs(2);

pub(super) struct Parts {
    pub assembly: Assembly,
    pub providers: ProviderFactory,
    pub workdir: PathBuf,
    pub queue: Vec<String>,
    pub options: CoreOptions,
    /// The model catalogue: whether the model takes images.
    pub catalogue: crate::provider::catalogue::Catalogue,
    /// MCP servers' forms waiting for a front end's answer.
    pub forms: Arc<super::elicitation::Elicitations>,
}

pub(crate) struct Core {
    pub(super) assembly: Assembly,
    pub(super) hub: Arc<Hub>,
    pub(super) workdir: PathBuf,
    pub(super) options: CoreOptions,
    providers: ProviderFactory,
    catalogue: crate::provider::catalogue::Catalogue,
    /// The session the engine works in now (`/new` and `/resume` change it).
    pub(super) session_id: String,
    /// The current session as the engine writes it, to ask at the end what was not saved.
    pub(super) saving: Arc<SavingSession<SqliteSession>>,
    /// Cancels the running turn and the work started beside it; replaced once used.
    cancel: CancellationToken,
    run: Option<mpsc::Receiver<Event>>,
    /// Approvals of the running turn not yet answered, by id.
    approvals: HashMap<String, ApprovalRequest>,
    forms: Arc<super::elicitation::Elicitations>,
    pub(super) queue: Vec<String>,
    /// `/compact` asked while a turn ran: it runs once the turn has ended (issue 32 point 7).
    compact_after_run: bool,
}

/// The next event of the running turn, or never when none is going.
async fn next_event(run: &mut Option<mpsc::Receiver<Event>>) -> Option<Event> {
    match run {
        Some(rx) => rx.recv().await,
        None => std::future::pending().await,
    }
}

impl Core {
    pub(super) fn start(parts: Parts, hub: Arc<Hub>, requests: mpsc::UnboundedReceiver<Request>) {
        let core = Core {
            session_id: parts.assembly.session.id.clone(),
            saving: Arc::clone(&parts.assembly.saving),
            assembly: parts.assembly,
            hub,
            workdir: parts.workdir,
            options: parts.options,
            providers: parts.providers,
            catalogue: parts.catalogue,
            cancel: CancellationToken::new(),
            run: None,
            approvals: HashMap::new(),
            forms: parts.forms,
            queue: parts.queue,
            compact_after_run: false,
        };
        tokio::spawn(core.serve(requests));
    }

    async fn serve(mut self, mut requests: mpsc::UnboundedReceiver<Request>) {
        let todos = Arc::clone(&self.assembly.todos);
        let mut todo_changes = todos.watch();
        // Front ends learn of the MCP servers from here only; the first look is at once (when
        // any are configured: a session without them says nothing of them).
        let mut mcp_changes = self.assembly.mcp.subscribe();
        // A background job's end is a notice for every front end, with the list refreshed.
        let mut job_ends = self.assembly.jobs.watch_ends();
        if !self.assembly.mcp.statuses().is_empty() {
            self.publish_mcp();
        }
        loop {
            tokio::select! {
                request = requests.recv() => {
                    // A front end that went without saying so still ends the session.
                    let (request, reason) = match request {
                        Some(request) => (request, "exit"),
                        None => (Request::Close { discard_if_empty: false }, "other"),
                    };
                    if let Request::Close { discard_if_empty } = request {
                        self.close(discard_if_empty, reason).await;
                        return;
                    }
                    self.handle(request).await;
                }
                event = next_event(&mut self.run) => {
                    if let Some(next) = self.on_event(event) {
                        self.start_run(next).await;
                    }
                }
                Ok(()) = todo_changes.changed() => {
                    self.hub.publish(Update::Todos(todos.snapshot()));
                }
                Ok(()) = mcp_changes.changed() => self.publish_mcp(),
                Ok(()) = job_ends.changed() => self.publish_job_ends(),
            }
        }
    }

    /// The MCP servers' statuses and the notices gathered since the last look.
    fn publish_mcp(&self) {
        let mcp = &self.assembly.mcp;
        // `statuses` notices a server that stopped; its notice goes with this look.
        let servers = Arc::new(mcp.statuses().iter().map(McpServer::from).collect());
        let notices = mcp.take_notices();
        self.hub.publish(Update::Mcp { servers, notices });
    }

    pub(super) fn running(&self) -> bool {
        self.run.is_some()
    }

    /// `/compact`: off the loop, its result published when it is done.
    fn compact(&self) {
        let engine = Arc::clone(&self.assembly.engine);
        let hub = Arc::clone(&self.hub);
        let cancel = self.cancel.child_token();
        tokio::spawn(async move {
            let result = engine.compact_now(&cancel).await;
            hub.publish(Update::Compacted(result.map_err(|e| Failure::from(&e))));
        });
    }

    async fn handle(&mut self, request: Request) {
        let engine = Arc::clone(&self.assembly.engine);
        let store = self.assembly.store.clone();
        let hub = Arc::clone(&self.hub);
        match request {
            Request::Submit(prompt) if self.running() => {
                self.queue.push(prompt);
                self.queue_changed();
            }
            Request::Submit(prompt) => self.start_run(prompt).await,
            Request::Interrupt => {
                self.cancel.cancel();
                self.cancel = CancellationToken::new();
            }
            Request::SetMode(mode) => {
                engine.set_plan_mode(mode);
                let id = self.session_id.clone();
                tokio::spawn(async move {
                    if let Err(error) = store.set_mode(&id, mode.as_str()).await {
                        let failure = Failure::from(&error).context("cannot store the mode");
                        hub.publish(Update::Failed(failure));
                    }
                });
            }
            Request::SetModel(model) => match (self.providers)(&model) {
                Ok(provider) => engine.set_provider(provider),
                Err(error) => hub.publish(Update::Failed(Failure::new(
                    FailureKind::Config,
                    format!("cannot switch the model: {error}"),
                ))),
            },
            Request::SetAutoContinue(on) => engine.set_auto_continue(on),
            Request::SetQueue(queue) => {
                self.queue = queue;
                self.queue_changed();
            }
            Request::ClearTodos => self.assembly.todos.replace(Vec::new()),
            Request::NewSession => self.new_session().await,
            Request::Resume(id) => self.switch_to(id).await,
            Request::Rename(name) => {
                let id = self.session_id.clone();
                tokio::spawn(async move {
                    hub.publish(match store.set_name(&id, &name).await {
                        Ok(()) => Update::Renamed(name),
                        Err(error) => Update::Failed(Failure::from(&error)),
                    });
                });
            }
            // Behind a running turn it waits for the turn's end: the history is whole then.
            Request::Compact if self.running() => self.compact_after_run = true,
            Request::Compact => self.compact(),
            Request::RunShell { id, command } => {
                let cancel = self.cancel.child_token();
                tokio::spawn(async move {
                    let started = Instant::now();
                    let result = engine.run_user_shell(&command, cancel).await;
                    hub.publish(Update::ShellDone {
                        id,
                        result,
                        duration: started.elapsed(),
                    });
                });
            }
            Request::AnswerApproval { id, decision } => {
                let answered = self
                    .approvals
                    .remove(&id)
                    .is_some_and(|request| request.respond(decision));
                if !answered {
                    hub.publish(Update::Failed(Failure::new(
                        FailureKind::NotFound,
                        format!("no approval {id} is waiting (it was answered, or its turn ended)"),
                    )));
                }
            }
            Request::AnswerElicitation { id, answer } => {
                if let Err(failure) = self.forms.answer(&id, answer) {
                    hub.publish(Update::Failed(failure));
                }
            }
            Request::ListSessions {
                query,
                all,
                generation,
            } => {
                let workdir = self.workdir.display().to_string();
                tokio::spawn(async move {
                    let scope = (!all).then_some(workdir.as_str());
                    // The newest 500 when nothing is typed; the best 200 matches otherwise.
                    let limit = if query.trim().is_empty() { 500 } else { 200 };
                    let hits = match store.find(&query, scope, limit).await {
                        Ok(hits) => hits.into_iter().map(SessionHit::from).collect(),
                        Err(error) => {
                            let failure =
                                Failure::from(&error).context("cannot search the sessions");
                            hub.publish(Update::Failed(failure));
                            Vec::new()
                        }
                    };
                    hub.publish(Update::Sessions { generation, hits });
                });
            }
            Request::ReadSession { session_id } => {
                tokio::spawn(async move {
                    let messages = store.load_all(&session_id).await.map_err(|error| {
                        Failure::from(&error)
                            .context(&format!("cannot read the conversation of {session_id}"))
                    });
                    hub.publish(Update::SessionRead {
                        session_id,
                        messages,
                    });
                });
            }
            Request::ListFiles { generation } => {
                let workdir = self.workdir.clone();
                tokio::task::spawn_blocking(move || {
                    let files = crate::context::mentions::list_files(&workdir, MENTION_FILES);
                    hub.publish(Update::Files {
                        generation,
                        files: Arc::new(files),
                    });
                });
            }
            Request::ListMemories { query, generation } => {
                let memories = self.memories();
                tokio::spawn(async move { memories.list(&query, generation).await });
            }
            Request::ChangeMemory {
                id,
                content,
                query,
                generation,
            } => {
                let memories = self.memories();
                tokio::spawn(async move { memories.change(id, content, &query, generation).await });
            }
            Request::McpReconnect(name) => self.mcp_server(&name, McpManager::reconnect),
            Request::McpDisable(name) => self.mcp_server(&name, McpManager::disable),
            Request::McpLogin(name) => {
                super::mcp_login::log_in(&self.hub, &self.assembly.mcp, name)
            }
            Request::McpLogout(name) => {
                super::mcp_login::log_out(&self.hub, &self.assembly.mcp, &name)
            }
            Request::McpPrompt { command, args } => {
                // A slow server delays only its own answer, never the core's other requests.
                let mcp = self.assembly.mcp.clone();
                tokio::spawn(async move {
                    // An MCP server is the prompt's provider; what it could not give is shown.
                    let result = mcp
                        .get_prompt(&command, &args)
                        .await
                        .map_err(|e| Failure::new(FailureKind::Provider, e.to_string()));
                    hub.publish(Update::McpPrompt { command, result });
                });
            }
            Request::PasteImage => {
                let home = self.assembly.engine.rules().home().to_path_buf();
                tokio::spawn(async move {
                    let image = crate::context::clipboard::read_image(&home).await;
                    hub.publish(Update::PastedImage(
                        image
                            .map(ClipboardImage::from)
                            .map_err(|e| clipboard_failure(&e)),
                    ));
                });
            }
            Request::ListPrompts => self.list_prompts(),
            Request::Export {
                file,
                markdown,
                overwrite,
            } => super::export::start(
                Arc::clone(&self.hub),
                self.workdir.clone(),
                file,
                markdown,
                overwrite,
            ),
            Request::ListJobs => self.publish_jobs(),
            Request::Job { id, action } => self.job(&id, action),
            Request::Worktrees(action) => super::worktrees::start(
                Arc::clone(&self.hub),
                self.assembly.engine.rules().home().to_path_buf(),
                self.workdir.clone(),
                action,
            ),
            Request::ConfirmRules => {
                let confirmed = self.assembly.engine.rules().confirm_pending();
                let notice = if confirmed.is_empty() {
                    "no allow rule waits for confirmation".to_owned()
                } else {
                    format!(
                        "confirmed the allow rules added while the session ran: {}",
                        confirmed.join(", ")
                    )
                };
                self.hub.publish(Update::Engine(crate::engine::Event {
                    turn: 0,
                    kind: crate::engine::EventKind::Notice(notice),
                }));
            }
            Request::Restore { what, conflicts } => self.restore(what, conflicts).await,
            // Handled by the loop.
            Request::Close { .. } => {}
        }
    }

    /// The notices of the background jobs that ended, then the list as it now stands.
    fn publish_job_ends(&self) {
        for notice in self.assembly.jobs.take_ends() {
            self.hub.publish(Update::Engine(Event {
                turn: 0,
                kind: EventKind::Notice(notice),
            }));
        }
        self.publish_jobs();
    }

    /// `/ps N` or `/ps stop N`: the answer as a notice, or why there is none.
    fn job(&self, id: &str, action: super::protocol::JobAction) {
        let jobs = &self.assembly.jobs;
        let answer = match action {
            super::protocol::JobAction::Output => jobs.whole_output(id),
            super::protocol::JobAction::Stop => jobs.stop(id),
        };
        match answer {
            Ok(text) => self.hub.publish(Update::Engine(Event {
                turn: 0,
                kind: EventKind::Notice(text),
            })),
            Err(error) => self.hub.publish(Update::Failed(Failure::new(
                FailureKind::NotFound,
                error.to_string(),
            ))),
        }
    }

    /// The session's background commands, for every front end.
    fn publish_jobs(&self) {
        let jobs = self.assembly.jobs.list().into_iter().map(Into::into);
        self.hub.publish(Update::Jobs(jobs.collect()));
    }

    fn memories(&self) -> Memories {
        Memories {
            store: self.assembly.store.clone(),
            workdir: self.workdir.display().to_string(),
            home: self.assembly.engine.rules().home().to_path_buf(),
            hub: Arc::clone(&self.hub),
        }
    }

    /// Reconnects or disables MCP server `name`; its new status comes as an `Update::Mcp`.
    fn mcp_server(&self, name: &str, act: fn(&McpManager, &str) -> bool) {
        if !act(&self.assembly.mcp, name) {
            self.hub.publish(Update::Failed(Failure::new(
                FailureKind::NotFound,
                format!("no MCP server is named {name}"),
            )));
        }
    }

    /// Reads the files the prompt mentions (off the async threads) and starts the run.
    async fn start_run(&mut self, prompt: String) {
        let engine = Arc::clone(&self.assembly.engine);
        let workdir = self.workdir.clone();
        let rules = Arc::clone(engine.rules());
        let text = prompt.clone();
        let attached = tokio::task::spawn_blocking(move || {
            let home = rules.home().to_path_buf();
            crate::context::mentions::attach_with_images(
                &text,
                &workdir,
                &|path| crate::permission::read_denied(&rules, &workdir, path),
                Some(&home),
            )
        })
        .await;
        let prompt = match attached {
            Ok(attached) => {
                let model = engine.provider().model().to_owned();
                if !attached.images.is_empty()
                    && let Some(refusal) = self.catalogue.refuses_images(&model)
                {
                    // Before the request: the run ends here, and every front end sees why.
                    let failure = Failure::new(FailureKind::Config, refusal);
                    self.hub.publish(Update::Engine(Event {
                        turn: 0,
                        kind: EventKind::Error(failure),
                    }));
                    return;
                }
                if !attached.images.is_empty() {
                    self.hub.publish(Update::Images(attached.images.clone()));
                }
                engine.attach_images(attached.images);
                if !attached.files.is_empty() {
                    self.hub.publish(Update::Attached(attached.files));
                }
                attached.text
            }
            Err(_) => prompt,
        };
        // `@server:uri`: the MCP resources the prompt names.
        let prompt = self.assembly.mcp.attach_resources(prompt).await;
        self.assembly
            .checkpoints
            .begin(&self.session_id, &prompt)
            .await;
        self.assembly.checkpoints.warm();
        self.run = Some(engine.run_stream(prompt, self.cancel.clone()));
    }

    /// Publishes a turn's event; returns the queued prompt to start when the core drives the
    /// queue and the run ended well.
    fn on_event(&mut self, event: Option<Event>) -> Option<String> {
        let Some(event) = event else {
            // The run's task ended without a last event (it cannot, but the loop must not
            // wait on a closed channel).
            self.end_run();
            return None;
        };
        let next = match &event.kind {
            EventKind::ApprovalRequired(request) => {
                self.approvals.insert(request.id.clone(), request.clone());
                None
            }
            EventKind::Done(_) => {
                self.end_run();
                (self.options.drive_queue && !self.queue.is_empty()).then(|| self.queue.remove(0))
            }
            EventKind::Error(_) => {
                self.end_run();
                None
            }
            _ => None,
        };
        let refresh_jobs = matches!(
            event.kind,
            EventKind::ToolResult(_) | EventKind::Done(_) | EventKind::Error(_)
        );
        self.hub.publish(Update::Engine(event));
        if refresh_jobs {
            self.publish_jobs();
        }
        if let Some(prompt) = &next {
            self.queue_changed();
            self.hub.publish(Update::RunStarted {
                prompt: prompt.clone(),
            });
        }
        next
    }

    fn end_run(&mut self) {
        self.run = None;
        self.assembly.checkpoints.end();
        // Approvals of a finished run can no longer be answered.
        self.approvals.clear();
        if std::mem::take(&mut self.compact_after_run) {
            self.compact();
        }
    }

    fn queue_changed(&self) {
        self.assembly
            .store
            .save_queue(&self.session_id, &self.queue);
        self.hub.publish(Update::Queue(self.queue.clone()));
    }

    async fn close(mut self, discard_if_empty: bool, reason: &str) {
        self.cancel.cancel();
        // Forms still open are declined: no front end will answer them now.
        self.forms.drop_all();
        // Let the run store what it has (the loop saves on cancellation).
        if let Some(mut rx) = self.run.take() {
            let _ = tokio::time::timeout(CLOSE_PATIENCE, async {
                while let Some(event) = rx.recv().await {
                    self.hub.publish(Update::Engine(event));
                }
            })
            .await;
        }
        self.session_end_hooks(reason).await;
        // Background commands and MCP servers end with the session, before it says it has
        // closed (every front end, the TUI, exec, serve, gets that without doing anything),
        // and once what the commands did to protected paths is undone.
        self.assembly.jobs.stop_all().await;
        self.assembly.mcp.shut_down_gracefully().await;
        self.assembly.language_servers.shut_down_gracefully().await;
        let store = &self.assembly.store;
        let flush_error = store
            .flush()
            .await
            .err()
            .map(|e| Failure::from(&e).context("cannot write sessions.db"));
        // A session that never got a prompt is not kept (nor offered for resuming).
        let discarded = discard_if_empty
            && store
                .delete_if_empty(&self.session_id)
                .await
                .unwrap_or(false);
        self.hub.publish(Update::Closed(Arc::new(Closing {
            session_id: self.session_id.clone(),
            kept: !discarded,
            unsaved: self.saving.unsaved().into(),
            flush_error,
        })));
    }
}
