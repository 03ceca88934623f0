//! The agent engine: one ReAct loop (design §2, §4) behind `run` (blocking) and `run_stream`
//! (events on a channel). Both drive the same `run_loop` through an emitter, so there is exactly
//! one copy of the loop. Mode and session can be changed while a run is going; the loop reads
//! the mode at the start of each turn and the session at the start of each run.

mod background;
mod builder;
mod compaction;
mod continuation;
mod emitter;
pub mod event;
mod event_wire;
mod failure;
mod hook_events;
mod model_call;
mod provider_search;
mod run_loop;
mod saving;
pub mod subagent;
mod timed_run;
mod tool_runner;

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

pub use event::{
    ApprovalDecision, ApprovalRequest, CompactionInfo, DoneInfo, Event, EventKind, RetryInfo,
    SessionInfo, SubagentEvent, TokenUpdate, ToolOutcome, ToolOutput, ToolProgress,
};
pub use failure::{Failure, FailureKind};
pub use provider_search::WebSearch;

use crate::context::{BasePrompt, PromptBuilder};
use crate::memory::{Compactor, MemoryError, Session};
use crate::observe::{EngineObserver, NoopObserver};
use crate::planning::{Mode, TodoStore};
use crate::provider::{LlmProvider, RetryPolicy};
use crate::schema::{ProviderError, Usage};
use crate::tools::Registry;

/// Events buffered between the loop and a slow consumer before the loop waits.
const EVENT_CHANNEL_CAPACITY: usize = 1024;

/// Why a run stopped without finishing its task.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error(
        "reached the maximum of {0} turns without finishing; raise --max-turns or split the task"
    )]
    MaxTurns(u32),
    #[error("interrupted")]
    Cancelled,
    #[error("{0}")]
    Provider(#[from] ProviderError),
    #[error(
        "the model refused the prompt as too long even after compacting it to about {tokens} \
         tokens ({message}); start a fresh context (/clear, or a new session), or set a smaller \
         --context-window so compaction starts earlier"
    )]
    ContextTooLong { tokens: u64, message: String },
    #[error(transparent)]
    Memory(#[from] MemoryError),
}

/// What a finished run did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunSummary {
    pub turns: u32,
    /// Summed over every model call of the run.
    pub usage: Usage,
    /// The text of the last assistant message.
    pub final_text: String,
}

/// Tunables of the engine, each with the default of design §5.5.
#[derive(Clone)]
pub struct EngineOptions {
    /// 0 = unlimited.
    pub max_turns: u32,
    /// `None` = no timeout.
    pub tool_timeout: Option<Duration>,
    /// 0 = unlimited.
    pub max_concurrent_tools: usize,
    /// Tokens; drives the gauge and compaction. 0 = unknown (no compaction).
    pub context_window: u64,
    /// Compact when the estimated prompt passes this share of the window.
    pub compaction_threshold: f64,
    pub compactor: Option<Arc<dyn Compactor>>,
    pub prompt_builder: Option<Arc<dyn PromptBuilder>>,
    pub observer: Arc<dyn EngineObserver>,
    /// Every `n` turns, `text` is added to the copy of the history sent to the model.
    pub memory_nudge: Option<(u32, String)>,
    /// How a turn whose stream broke mid-answer is restarted.
    pub turn_retry: RetryPolicy,
    /// The sub-agent this engine runs (`None`: the main agent); its end is `SubagentStop`.
    pub subagent: Option<String>,
}

impl Default for EngineOptions {
    fn default() -> Self {
        EngineOptions {
            max_turns: 50,
            tool_timeout: Some(Duration::from_secs(60)),
            max_concurrent_tools: 0,
            context_window: 0,
            compaction_threshold: 0.8,
            compactor: None,
            prompt_builder: None,
            observer: Arc::new(NoopObserver),
            memory_nudge: None,
            turn_retry: RetryPolicy::default(),
            subagent: None,
        }
    }
}

/// What can change between turns.
struct Live {
    session: Option<Arc<dyn Session>>,
    mode: Mode,
}

/// The orchestrator: a provider, a registry and a working directory.
pub struct AgentEngine {
    provider: RwLock<Arc<dyn LlmProvider>>,
    registry: Arc<Registry>,
    workdir: PathBuf,
    options: EngineOptions,
    prompt: Arc<dyn PromptBuilder>,
    todos: Arc<TodoStore>,
    live: RwLock<Live>,
    /// Scopes the user allowed "for the rest of this session".
    allowed: Mutex<HashSet<String>>,
    /// Output of commands the user ran (`!cmd`), handed to the model with the next prompt.
    user_context: Mutex<Vec<String>>,
    /// Images the user attached (`@shot.png`), sent with the next prompt.
    pending_images: Mutex<Vec<crate::schema::ImageRef>>,
    /// What a run could not save (the store failed to its end), kept for the session's next
    /// run in this process to save first.
    unsaved: Mutex<Option<saving::Unsaved>>,
    rules: Arc<crate::permission::rules::PermissionRules>,
    /// Keep going by itself while the todo list has open items (plan review's choice).
    auto_continue: std::sync::atomic::AtomicBool,
    /// The user's command hooks (read at start).
    hooks: Arc<crate::hooks::Hooks>,
    /// Every tool call goes through it: observability, output bound, hooks, permission.
    chain: crate::hooks::ToolChain,
    /// Sessions whose `SessionStart` hooks have run in this process.
    started_sessions: Mutex<HashSet<String>>,
    /// `Notification` hooks still running (they run beside the dialog; a session's end waits
    /// for them, bounded).
    notifications: Mutex<tokio::task::JoinSet<()>>,
    /// Sub-agents started with `background: true`, still running or not yet reported.
    background: Arc<background::BackgroundTasks>,
    /// The language servers an edit's result asks for the diagnostics it introduced.
    language_servers: Option<crate::lsp::Servers>,
    /// The editor's file I/O (ACP's fs methods), when the front end has an editor that offers it.
    editor_files: RwLock<Option<Arc<dyn crate::tools::EditorFiles>>>,
    /// The session core's checkpoints, told of the files harness9 writes itself (a rule).
    checkpoints: Option<Arc<crate::checkpoint::Checkpoints>>,
    /// The editor's terminal for `bash` (ACP), when the front end has one the user chose.
    editor_terminal: RwLock<Option<Arc<dyn crate::tools::EditorTerminal>>>,
}

/// Builds an `AgentEngine`; every option has its design default.
pub struct AgentEngineBuilder {
    provider: Arc<dyn LlmProvider>,
    registry: Arc<Registry>,
    workdir: PathBuf,
    options: EngineOptions,
    session: Option<Arc<dyn Session>>,
    mode: Mode,
    todos: Option<Arc<TodoStore>>,
    rules: Option<Arc<crate::permission::rules::PermissionRules>>,
    auto_continue: bool,
    hooks: Option<Arc<crate::hooks::Hooks>>,
    checkpoints: Option<Arc<crate::checkpoint::Checkpoints>>,
    language_servers: Option<crate::lsp::Servers>,
}

/// The tool-call chain: the span first (it covers everything after), then the output bound
/// (its after-step sees what the hooks added), the command hooks when any is configured for
/// tools, and the permission decision, so it judges the arguments the hooks left; then the
/// checkpoint, which keeps what a call will change only once nothing refused it.
fn tool_chain(
    hooks: &Arc<crate::hooks::Hooks>,
    rules: &Arc<crate::permission::rules::PermissionRules>,
    checkpoints: Option<&Arc<crate::checkpoint::Checkpoints>>,
) -> crate::hooks::ToolChain {
    use crate::hooks::{CommandStage, HookEvent, ObserveStage, OutputBound, PermissionStage};
    let mut stages: Vec<Arc<dyn crate::hooks::ToolHook>> =
        vec![Arc::new(ObserveStage), Arc::new(OutputBound)];
    let tool_hooks = hooks
        .all()
        .iter()
        .any(|h| matches!(h.event, HookEvent::PreToolUse | HookEvent::PostToolUse));
    if tool_hooks {
        stages.push(Arc::new(CommandStage {
            hooks: Arc::clone(hooks),
        }));
    }
    let created = checkpoints.map(|checkpoints| {
        let checkpoints = Arc::clone(checkpoints);
        Arc::new(move |path: &std::path::Path| checkpoints.created_in_session(path))
            as Arc<crate::permission::CreatedInSession>
    });
    stages.push(Arc::new(PermissionStage {
        rules: Arc::clone(rules),
        created,
    }));
    if let Some(checkpoints) = checkpoints {
        stages.push(Arc::new(crate::checkpoint::CheckpointStage {
            checkpoints: Arc::clone(checkpoints),
        }));
    }
    crate::hooks::ToolChain::new(stages)
}

impl AgentEngine {
    pub fn builder(
        provider: Arc<dyn LlmProvider>,
        registry: Arc<Registry>,
        workdir: impl Into<PathBuf>,
    ) -> AgentEngineBuilder {
        AgentEngineBuilder {
            provider,
            registry,
            workdir: workdir.into(),
            options: EngineOptions::default(),
            session: None,
            mode: Mode::default(),
            todos: None,
            rules: None,
            auto_continue: false,
            hooks: None,
            checkpoints: None,
            language_servers: None,
        }
    }

    /// Turns auto-continue on or off from the next run on.
    pub fn set_auto_continue(&self, on: bool) {
        self.auto_continue
            .store(on, std::sync::atomic::Ordering::SeqCst);
    }

    pub fn auto_continue_enabled(&self) -> bool {
        self.auto_continue.load(std::sync::atomic::Ordering::SeqCst)
    }

    pub fn rules(&self) -> &Arc<crate::permission::rules::PermissionRules> {
        &self.rules
    }

    /// The command hooks this engine runs (`/hooks`).
    pub fn hooks(&self) -> &Arc<crate::hooks::Hooks> {
        &self.hooks
    }

    /// Where this session's tool output past its bound is kept (none without a session).
    pub(crate) fn outputs_dir(&self) -> Option<PathBuf> {
        self.session()
            .map(|session| crate::tools::output::outputs_dir(self.rules.home(), session.id()))
    }

    /// A sub-agent starts with what its parent was allowed for the session (never more: the
    /// grants are the parent's own scope keys, judged by the same permission decision).
    pub(crate) fn inherit_grants(&self, grants: &HashSet<String>) {
        if let Ok(mut allowed) = self.allowed.lock() {
            allowed.extend(grants.iter().cloned());
        }
    }

    /// Switches the stored conversation from the next run on. "Allow always" answers belong to
    /// a session: forgotten for another session, kept when the same one is set again (`/rewind`
    /// reloads the session it branched, issue 32 point 6).
    pub fn set_session(&self, session: Option<Arc<dyn Session>>) {
        let id = |s: &Option<Arc<dyn Session>>| s.as_ref().map(|s| s.id().to_owned());
        let mut same = false;
        if let Ok(mut live) = self.live.write() {
            same = id(&live.session) == id(&session);
            live.session = session;
        }
        if !same && let Ok(mut allowed) = self.allowed.lock() {
            allowed.clear();
        }
    }

    /// Switches the mode from the next turn on (a running turn keeps the mode it started with).
    pub fn set_plan_mode(&self, mode: Mode) {
        if let Ok(mut live) = self.live.write() {
            live.mode = mode;
        }
    }

    pub fn mode(&self) -> Mode {
        self.live.read().map(|l| l.mode).unwrap_or_default()
    }

    pub fn session(&self) -> Option<Arc<dyn Session>> {
        self.live.read().ok().and_then(|l| l.session.clone())
    }

    pub fn todos(&self) -> &Arc<TodoStore> {
        &self.todos
    }

    pub fn workdir(&self) -> &std::path::Path {
        &self.workdir
    }

    /// The provider the next run uses.
    pub fn provider(&self) -> Arc<dyn LlmProvider> {
        match self.provider.read() {
            Ok(provider) => Arc::clone(&provider),
            Err(poisoned) => Arc::clone(&poisoned.into_inner()),
        }
    }

    /// The file tools read and write through `files` (the editor's side, ACP) from now on.
    pub fn set_editor_files(&self, files: Option<Arc<dyn crate::tools::EditorFiles>>) {
        if let Ok(mut slot) = self.editor_files.write() {
            *slot = files;
        }
    }

    pub(crate) fn editor_files(&self) -> Option<Arc<dyn crate::tools::EditorFiles>> {
        self.editor_files.read().ok().and_then(|slot| slot.clone())
    }

    /// `bash` runs foreground commands in `terminal` (the editor's, ACP) from now on.
    pub fn set_editor_terminal(&self, terminal: Option<Arc<dyn crate::tools::EditorTerminal>>) {
        if let Ok(mut slot) = self.editor_terminal.write() {
            *slot = terminal;
        }
    }

    pub(crate) fn editor_terminal(&self) -> Option<Arc<dyn crate::tools::EditorTerminal>> {
        self.editor_terminal
            .read()
            .ok()
            .and_then(|slot| slot.clone())
    }

    /// Switches the provider (another model) from the next run on.
    pub fn set_provider(&self, provider: Arc<dyn LlmProvider>) {
        if let Ok(mut slot) = self.provider.write() {
            *slot = provider;
        }
    }

    /// Runs a command the user typed (`!cmd`): no model, no approval (the user asked for it).
    /// Its output is given to the model with the next prompt.
    pub async fn run_user_shell(
        &self,
        command: &str,
        cancel: CancellationToken,
    ) -> crate::schema::ToolResult {
        let call = crate::schema::ToolCall {
            id: format!("shell-{}", crate::memory::new_session_id()),
            name: "bash".into(),
            // The user typed it: it runs outside the sandbox (CONTRACT.md, Sandbox).
            arguments: serde_json::json!({ "command": command, "sandbox": false }).to_string(),
        };
        let ctx = crate::tools::ToolContext {
            workdir: self.workdir.clone(),
            cancel,
            mode: Mode::Yolo,
            todos: Arc::clone(&self.todos),
            read_guard: Default::default(),
            outputs: self.outputs_dir(),
            editor_files: None,
            editor_terminal: None,
        };
        let result = self.registry.execute(&call, &ctx).await;
        if let Ok(mut pending) = self.user_context.lock() {
            pending.push(format!(
                "<user-shell-command>\n$ {command}\n{}\n</user-shell-command>",
                result.output
            ));
        }
        result
    }

    /// Images to send with the next prompt (the mentioned ones, already stored).
    pub fn attach_images(&self, images: Vec<crate::schema::ImageRef>) {
        if let Ok(mut pending) = self.pending_images.lock() {
            pending.extend(images);
        }
    }

    /// The images waiting for the next prompt, taken.
    pub(crate) fn take_images(&self) -> Vec<crate::schema::ImageRef> {
        self.pending_images
            .lock()
            .map(|mut pending| std::mem::take(&mut *pending))
            .unwrap_or_default()
    }

    /// The user's shell output waiting for the next prompt, taken.
    pub(crate) fn take_user_context(&self) -> Vec<String> {
        self.user_context
            .lock()
            .map(|mut pending| std::mem::take(&mut *pending))
            .unwrap_or_default()
    }

    pub fn options(&self) -> &EngineOptions {
        &self.options
    }

    /// Compacts the session's history now, whatever its size (`/compact`). `None` when there
    /// was nothing worth compacting or no session or compactor.
    pub async fn compact_now(
        &self,
        cancel: &CancellationToken,
    ) -> Result<Option<CompactionInfo>, EngineError> {
        let (Some(_), Some(session)) = (&self.options.compactor, self.session()) else {
            return Ok(None);
        };
        // Checkpoints are counted over the stored view: messages still waiting to be stored
        // must get there first, or the two would disagree.
        let waiting = self.unsaved.lock().map(|u| u.is_some()).unwrap_or(false);
        if waiting {
            return Err(EngineError::Memory(MemoryError::Store(
                "some messages of this session are not in sessions.db yet; send a prompt so \
                 they are saved, then compact"
                    .into(),
            )));
        }
        // `/compact` has no event stream: what its PreCompact hooks say goes to the log.
        let trigger = serde_json::Map::from_iter([("trigger".to_owned(), "manual".into())]);
        let said = (self.hooks)
            .run(
                crate::hooks::HookEvent::PreCompact,
                None,
                session.id(),
                trigger,
                cancel,
            )
            .await;
        for notice in said.notices {
            tracing::warn!("[hooks] {notice}");
        }
        let mut history = vec![crate::schema::Message::system(
            self.prompt.build(self.mode()),
        )];
        history.extend(session.load_messages().await?);
        let tools = self.registry.available_tools(self.mode());
        Ok(self
            .compact_stored(&mut history, &tools, session.as_ref(), cancel)
            .await?)
    }

    /// Runs one task to its end, waiting for each model answer whole. Assistant text is handed
    /// to `on_text` turn by turn; approvals cannot be answered here, so calls that need one are
    /// refused with a message saying which mode would allow them.
    pub async fn run(
        &self,
        prompt: &str,
        cancel: CancellationToken,
        on_text: &(dyn Fn(&str) + Send + Sync),
    ) -> Result<RunSummary, EngineError> {
        let mut emitter = emitter::BlockingEmitter::new(on_text);
        self.run_loop(prompt, &cancel, &mut emitter).await
    }

    /// Runs one task on a task of its own, streaming its events. The last event is `done` or
    /// `error`; dropping the receiver cancels the run.
    pub fn run_stream(
        self: &Arc<Self>,
        prompt: String,
        cancel: CancellationToken,
    ) -> mpsc::Receiver<Event> {
        let (tx, rx) = mpsc::channel(EVENT_CHANNEL_CAPACITY);
        let engine = Arc::clone(self);
        tokio::spawn(async move {
            let mut emitter = emitter::StreamEmitter::new(tx, cancel.clone());
            let _ = engine.run_loop(&prompt, &cancel, &mut emitter).await;
            // The run's copies of the history are freed now; give their pages back.
            crate::heap::release_free_pages_later();
        });
        rx
    }
}

#[cfg(test)]
mod background_tests;
#[cfg(test)]
mod compaction_rules_tests;
#[cfg(test)]
mod compaction_tests;
#[cfg(test)]
mod concurrency_tests;
#[cfg(test)]
mod interruption_tests;
#[cfg(test)]
mod live_output_tests;
#[cfg(test)]
mod planning_tests;
#[cfg(test)]
mod subagent_grants_tests;
#[cfg(test)]
mod subagent_limits_tests;
#[cfg(test)]
pub(crate) mod subagent_tests;
#[cfg(test)]
mod summary_tests;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod usage_tests;
