//! Sub-agents (the `task` tool's runs): a child `AgentEngine`, built with the same builder as the
//! session's, with its own history, prompt, compaction, tool set and stored session, running the
//! one loop (`run_loop`) under the parent's mode, permission rules, sandbox (the parent's own
//! `bash`) and hooks. So every call a child makes passes the same decision path as the parent's.
//!
//! The child's events go up to the parent's tool phase through an `AgentLink` (a task-local the
//! tool runner sets for the tool it runs), which emits them nested in `Subagent` events; its
//! approvals become the parent's own `ApprovalRequired`, with the agent named and an id of the
//! form `{task call id}/{child call id}`, so every front end answers them as it answers its own.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use super::background::BackgroundMessage;
use super::emitter::{Emitter, GenerateFailure, generate_streamed, log_retry};
use super::event::{ApprovalDecision, ApprovalRequest, Event, EventKind, SubagentEvent};
use super::{AgentEngine, EngineError};
use crate::agents::{AgentCatalog, AgentDefinition, AgentModel};
use crate::memory::{NewSession, Session, SessionStore, SqliteSession, Summarization};
use crate::observe::EngineObserver;
use crate::provider::{Completion, LlmProvider};
use crate::schema::{Message, ProviderError, ToolDefinition, Usage};
use crate::tools::{Registry, SubagentRunner, TaskRequest, ToolContext, ToolError};

/// Messages from a running child to its parent's tool phase, in order.
pub(crate) enum ChildMessage {
    Event(SubagentEvent),
    /// A call of the child that needs the user; answered through the request itself.
    Approval(ApprovalRequest),
}

/// What the tool phase gives the tool it runs: who called it and where a child's events go.
#[derive(Clone)]
pub(crate) struct AgentLink {
    pub call_id: String,
    /// The parent's stored session, when it has one.
    pub parent_session: Option<String>,
    /// The provider of the parent's current model (an agent that inherits the model uses it).
    pub provider: Arc<dyn LlmProvider>,
    pub sink: mpsc::Sender<ChildMessage>,
    /// Where a background child (`background: true`) reports once the call has returned.
    pub background: Arc<super::background::BackgroundTasks>,
    /// What the user allowed the parent "for the rest of this session" when the call was
    /// made: the child starts with it (what the child is allowed does not flow back).
    pub grants: std::collections::HashSet<String>,
}

tokio::task_local! {
    /// Set by the tool runner around each tool's run.
    pub(crate) static AGENT_LINK: AgentLink;
}

/// What children's model calls used, summed in the parent's tool phase.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct ChildUsage {
    pub usage: Usage,
    /// The cost of the calls with known prices.
    pub cost: f64,
    /// Whether every call's cost was known.
    pub priced: bool,
    pub calls: u32,
    /// Some call's server sent no usage: its tokens here are harness9's estimate.
    pub estimated: bool,
}

impl ChildUsage {
    /// Counts a child's event, when it is one model call's tokens (the provider's count, or
    /// harness9's estimate of a call whose server sent none).
    pub(crate) fn count(&mut self, event: &Event) {
        let EventKind::TokenUpdate(update) = &event.kind else {
            return;
        };
        if !update.counts_toward_totals() {
            return;
        }
        self.estimated |= update.estimated;
        let cached = update.cache_read_tokens + update.cache_write_tokens;
        self.usage.input_tokens += update.input_tokens.saturating_sub(cached);
        self.usage.output_tokens += update.output_tokens;
        self.usage.cache_read_tokens += update.cache_read_tokens;
        self.usage.cache_creation_tokens += update.cache_write_tokens;
        self.cost += update.cost_usd.unwrap_or(0.0);
        self.priced = (self.calls == 0 || self.priced) && update.cost_usd.is_some();
        self.calls += 1;
    }
}

/// Builds the provider for a model name (the agent's own `model`, or the small one).
pub type ModelProviders =
    Arc<dyn Fn(&str) -> Result<Arc<dyn LlmProvider>, ProviderError> + Send + Sync>;

/// What every child shares with its parent.
pub struct SubagentBase {
    /// The parent's tools, without `task`; each agent gets a filtered view.
    pub tools: Registry,
    pub providers: ModelProviders,
    /// The model `explore` (and agents saying `haiku`) run on, when one is configured.
    pub small_model: Option<String>,
    pub workdir: PathBuf,
    pub max_turns: u32,
    /// The skills an agent file may name (`skills:`), whose instructions start its prompt.
    pub skills: Arc<crate::context::SkillIndex>,
    pub tool_timeout: Option<Duration>,
    pub max_concurrent_tools: usize,
    pub context_window: u64,
    pub hooks: Arc<crate::hooks::Hooks>,
    pub rules: Arc<crate::permission::rules::PermissionRules>,
    /// Where children's sessions are stored (none in tests that store nothing).
    pub store: Option<SessionStore>,
    pub observer: Arc<dyn EngineObserver>,
    /// The session's checkpoints: a child's changes belong to the parent's prompt, so `/undo`
    /// takes them back with the rest (none in tests that keep none).
    pub checkpoints: Option<Arc<crate::checkpoint::Checkpoints>>,
    /// The session's language servers: a child's edits end with their new diagnostics too.
    pub language_servers: Option<crate::lsp::Servers>,
}

/// Starts sub-agents for the `task` tool.
pub struct SubagentLauncher {
    agents: Arc<AgentCatalog>,
    base: SubagentBase,
}

impl SubagentLauncher {
    pub fn new(agents: Arc<AgentCatalog>, base: SubagentBase) -> Self {
        SubagentLauncher { agents, base }
    }

    /// Registers `task` in `registry` (after every other tool: a child gets the tools
    /// registered before, never `task`).
    pub fn register(registry: &mut Registry, agents: Arc<AgentCatalog>, base: SubagentBase) {
        let tool = crate::tools::TaskTool::new(
            Arc::new(SubagentLauncher::new(Arc::clone(&agents), base)),
            agents.names().into_iter().map(str::to_owned).collect(),
            &agents.summary(),
        );
        let _ = registry.register(Arc::new(tool));
    }

    fn provider(
        &self,
        agent: &AgentDefinition,
        link: &AgentLink,
    ) -> Result<Arc<dyn LlmProvider>, ToolError> {
        let model = match &agent.model {
            AgentModel::Inherit => None,
            AgentModel::Small => self.base.small_model.clone(),
            AgentModel::Named(model) => Some(model.clone()),
        };
        match model {
            None => Ok(Arc::clone(&link.provider)),
            Some(model) if model == link.provider.model() => Ok(Arc::clone(&link.provider)),
            Some(model) => (self.base.providers)(&model).map_err(|e| {
                ToolError::new(format!(
                    "the `{}` agent's model `{model}` cannot be used: {e}",
                    agent.name
                ))
            }),
        }
    }

    /// The child's engine: the session's builder, with the parent's rules, hooks and mode.
    pub(crate) fn child_engine(
        &self,
        agent: &AgentDefinition,
        provider: Arc<dyn LlmProvider>,
        mode: crate::planning::Mode,
        session: Option<Arc<dyn Session>>,
    ) -> AgentEngine {
        let allowed = agent.clone();
        let tools = self
            .base
            .tools
            .filtered(Arc::new(move |name, kind| allowed.allows(name, kind)));
        let base = &self.base;
        // A definition only narrows: its own limit applies when it is the smaller one.
        let max_turns = match agent.max_turns {
            Some(own) if base.max_turns == 0 || own < base.max_turns => own,
            _ => base.max_turns,
        };
        let mut builder = AgentEngine::builder(provider, Arc::new(tools), base.workdir.clone())
            .subagent(&agent.name)
            .max_turns(max_turns)
            .tool_timeout(base.tool_timeout)
            .max_concurrent_tools(base.max_concurrent_tools)
            .context_window(base.context_window)
            .compactor(Arc::new(Summarization::for_window(base.context_window)))
            .prompt_builder(Arc::new(crate::agents::prompt::SubagentPrompt::new(
                base.workdir.clone(),
                &agent.name,
                &agent.instructions,
                preloaded_skills(&base.skills, &agent.skills),
            )))
            .mode(mode)
            .observer(Arc::clone(&base.observer))
            .hooks(Arc::clone(&base.hooks))
            .permission_rules(Arc::clone(&base.rules));
        if let Some(checkpoints) = &base.checkpoints {
            builder = builder.checkpoints(Arc::clone(checkpoints));
        }
        if let Some(servers) = &base.language_servers {
            builder = builder.language_servers(servers.clone());
        }
        if let Some(session) = session {
            builder = builder.session(session);
        }
        builder.build()
    }

    async fn child_session(
        &self,
        request: &TaskRequest,
        link: &AgentLink,
        provider: &dyn LlmProvider,
        mode: crate::planning::Mode,
    ) -> Result<Option<Arc<dyn Session>>, ToolError> {
        let (Some(store), Some(parent)) = (&self.base.store, &link.parent_session) else {
            return Ok(None);
        };
        let new = NewSession {
            workdir: self.base.workdir.display().to_string(),
            provider: provider.name().to_owned(),
            model: provider.model().to_owned(),
            mode: mode.to_string(),
        };
        let record = store
            .create_child(
                new,
                parent,
                &link.call_id,
                &request.agent,
                &request.description,
            )
            .await
            .map_err(|e| {
                ToolError::new(format!(
                    "the sub-agent could not start: its session could not be stored ({e})"
                ))
            })?;
        Ok(Some(Arc::new(SqliteSession::new(store.clone(), record.id))))
    }
}

/// The instructions of the skills an agent file names, read now (a skill that is not installed
/// or cannot be read is left out; the session's start named it in a notice).
pub(crate) fn preloaded_skills(
    index: &crate::context::SkillIndex,
    names: &[String],
) -> Vec<(String, String)> {
    names
        .iter()
        .filter_map(|name| match index.body(name) {
            Ok(body) => Some((name.clone(), body)),
            Err(problem) => {
                tracing::warn!("[agents] skill left out | {problem}");
                None
            }
        })
        .collect()
}

#[async_trait]
impl SubagentRunner for SubagentLauncher {
    async fn run(&self, request: TaskRequest, ctx: &ToolContext) -> Result<String, ToolError> {
        let link = AGENT_LINK.try_with(AgentLink::clone).map_err(|_| {
            ToolError::new("`task` runs only inside an agent's turn; it cannot be called here")
        })?;
        let agent = self.agents.get(&request.agent).ok_or_else(|| {
            ToolError::new(format!(
                "there is no agent named `{}`; available: {}",
                request.agent,
                self.agents.names().join(", ")
            ))
        })?;
        let provider = self.provider(agent, &link)?;
        let session = self
            .child_session(&request, &link, provider.as_ref(), ctx.mode)
            .await?;
        let engine = self.child_engine(agent, provider, ctx.mode, session);
        engine.inherit_grants(&link.grants);
        // The editor's side (ACP) is the child's too: the same editor holds its files and runs
        // its commands.
        engine.set_editor_files(ctx.editor_files.clone());
        let terminal = ctx.editor_terminal.clone();
        engine.set_editor_terminal(terminal.map(|t| crate::tools::under_task(t, &link.call_id)));
        let agent_name = agent.name.clone();
        if request.background {
            let slot = link.background.start();
            let mut emitter = ChildEmitter {
                task_id: link.call_id.clone(),
                agent: agent_name.clone(),
                sink: ChildSink::Background(slot.sink.clone()),
                cancel: slot.cancel.clone(),
            };
            let task_id = link.call_id.clone();
            let (prompt, description) = (request.prompt, request.description);
            let answer_agent = agent_name.clone();
            tokio::spawn(async move {
                let outcome = engine.run_loop(&prompt, &slot.cancel, &mut emitter).await;
                let result = child_answer(&answer_agent, outcome);
                let _ = slot.sink.send(BackgroundMessage::Finished {
                    task_id,
                    agent: answer_agent,
                    description,
                    result,
                });
            });
            return Ok(format!(
                "The `{agent_name}` sub-agent runs in the background as task `{}`. Its answer \
                 comes in a later message naming this task id; go on with other work meanwhile, \
                 and do not start the same job again.",
                link.call_id
            ));
        }
        let mut emitter = ChildEmitter {
            task_id: link.call_id.clone(),
            agent: agent_name.clone(),
            sink: ChildSink::Phase(link.sink.clone()),
            cancel: ctx.cancel.clone(),
        };
        let outcome = engine
            .run_loop(&request.prompt, &ctx.cancel, &mut emitter)
            .await;
        child_answer(&agent_name, outcome)
    }
}

/// A child run's result as the `task` call's (or a background task's) answer.
fn child_answer(
    agent: &str,
    outcome: Result<super::RunSummary, EngineError>,
) -> Result<String, ToolError> {
    match outcome {
        Ok(summary) => {
            let answer = summary.final_text.trim();
            let answer = if answer.is_empty() {
                "(the sub-agent ended without an answer)"
            } else {
                answer
            };
            Ok(format!(
                "{answer}\n\n[{agent} sub-agent: {} turn{}, {} input and {} output tokens]",
                summary.turns,
                if summary.turns == 1 { "" } else { "s" },
                summary.usage.prompt_tokens(),
                summary.usage.output_tokens
            ))
        }
        Err(EngineError::Cancelled) => Err(ToolError::new(
            "cancelled: the run was interrupted before the sub-agent finished",
        )),
        Err(error) => Err(ToolError::new(format!(
            "the `{agent}` sub-agent did not finish: {error}"
        ))),
    }
}

/// Where a child's messages go: the tool phase that runs its call, or (background) the engine.
enum ChildSink {
    Phase(mpsc::Sender<ChildMessage>),
    Background(mpsc::UnboundedSender<BackgroundMessage>),
}

impl ChildSink {
    /// Hands a message on; gives it back when nobody listens any more.
    async fn send(&self, message: ChildMessage) -> Result<(), Option<ChildMessage>> {
        match self {
            ChildSink::Phase(tx) => tx.send(message).await.map_err(|e| Some(e.0)),
            ChildSink::Background(tx) => {
                tx.send(BackgroundMessage::Child(message))
                    .map_err(|e| match e.0 {
                        BackgroundMessage::Child(message) => Some(message),
                        BackgroundMessage::Finished { .. } => None,
                    })
            }
        }
    }
}

/// A child run's output side: its events go up nested, its approvals as the parent's own.
struct ChildEmitter {
    task_id: String,
    agent: String,
    sink: ChildSink,
    /// The child's: fired when the parent stopped listening.
    cancel: CancellationToken,
}

#[async_trait]
impl Emitter for ChildEmitter {
    fn prefix(&self) -> &'static str {
        "[engine] [subagent]"
    }

    async fn emit(&mut self, event: Event) {
        if let EventKind::Retry(info) = &event.kind {
            log_retry(self.prefix(), info);
        }
        let nested = SubagentEvent {
            task_id: self.task_id.clone(),
            agent: self.agent.clone(),
            event: Box::new(event),
        };
        if self.sink.send(ChildMessage::Event(nested)).await.is_err() {
            self.cancel.cancel();
        }
    }

    async fn generate(
        &mut self,
        provider: &dyn LlmProvider,
        turn: u32,
        messages: &[Message],
        tools: &[ToolDefinition],
        cancel: &CancellationToken,
    ) -> Result<Completion, GenerateFailure> {
        generate_streamed(self, provider, turn, messages, tools, cancel).await
    }

    async fn approve(
        &mut self,
        _turn: u32,
        mut request: ApprovalRequest,
        answer: oneshot::Receiver<ApprovalDecision>,
        cancel: &CancellationToken,
    ) -> ApprovalDecision {
        request.id = format!("{}/{}", self.task_id, request.id);
        request.agent = Some(self.agent.clone());
        if self
            .sink
            .send(ChildMessage::Approval(request))
            .await
            .is_err()
        {
            self.cancel.cancel();
            return ApprovalDecision::NoApprover;
        }
        tokio::select! {
            biased;
            _ = cancel.cancelled() => ApprovalDecision::Interrupted,
            decision = answer => decision.unwrap_or(ApprovalDecision::Deny {
                reason: Some("the approval was abandoned".into()),
            }),
        }
    }

    async fn forward_approval(&mut self, _turn: u32, request: ApprovalRequest) {
        // A child has no children (it has no `task`); should one ever ask, it goes up too.
        if let Err(Some(ChildMessage::Approval(request))) =
            self.sink.send(ChildMessage::Approval(request)).await
        {
            request.respond(ApprovalDecision::NoApprover);
        }
    }
}
