//! Wiring, the same for `exec` and the TUI: from `Settings` to an engine bound to a stored
//! session (new, the latest of this directory, or a chosen one), with its todo list persisted,
//! the project's skills and AGENTS.md in the prompt, and summarising compaction. A session
//! stored in `yolo` comes back in `default` unless the command line names `yolo` again.

mod saving;

use std::sync::Arc;

use crate::config::Settings;
use crate::context::{DefaultPromptBuilder, SkillIndex};
use crate::engine::AgentEngine;
use crate::memory::{
    MemoryError, NewSession, SessionRecord, SessionStore, SqliteSession, Summarization,
};
use crate::observe::TracingObserver;
use crate::planning::{Mode, TodoStore};
use crate::provider::LlmProvider;
use crate::sandbox::{Sandbox, SandboxInputs};
use crate::schema::ProviderError;
use crate::tools;

/// The memory nudge (design option, on by default): every this many turns, the copy of the
/// history sent to the model (never the stored one) ends with `MEMORY_NUDGE`.
const MEMORY_NUDGE_TURNS: u32 = 10;
const MEMORY_NUDGE: &str = "(harness9: if this session has taught you a durable fact worth \
     keeping for future sessions, such as a user preference, a project convention or a command \
     that works, record it with `memory_write`; otherwise carry on.)";

pub use saving::{SavingSession, Unsaved};

/// Which session a run works in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SessionChoice {
    New,
    /// The most recent session of the working directory.
    Continue,
    /// By id, unique id prefix, or name.
    Resume(String),
}

#[derive(Debug, thiserror::Error)]
pub enum AssembleError {
    /// The user named a session that cannot be used (exit 2).
    #[error("{0}")]
    Session(String),
    /// Something on this machine failed (exit 1).
    #[error("{0}")]
    Setup(String),
    /// The session store failed (exit 1).
    #[error("{0}")]
    Storage(String),
}

impl AssembleError {
    /// The failure's class, for front ends.
    pub fn kind(&self) -> crate::engine::FailureKind {
        use crate::engine::FailureKind;
        match self {
            AssembleError::Session(_) => FailureKind::NotFound,
            AssembleError::Setup(_) => FailureKind::Config,
            AssembleError::Storage(_) => FailureKind::Storage,
        }
    }
}

/// Everything a front end needs for a run.
pub struct Assembly {
    pub engine: Arc<AgentEngine>,
    pub store: SessionStore,
    pub session: SessionRecord,
    pub todos: Arc<TodoStore>,
    pub skills: Arc<SkillIndex>,
    /// The stored session as the engine writes it, to ask at the end what could not be saved.
    pub saving: Arc<SavingSession<SqliteSession>>,
    /// Worth telling the user (a `yolo` session resumed in `default`).
    pub notices: Vec<String>,
    /// The commands' sandbox: front ends show its `notices()` once and its `label()`.
    pub sandbox: Arc<Sandbox>,
    /// The session's background commands (`bash` with `"background": true`): listed by `/ps`,
    /// all stopped when the session closes.
    pub jobs: Arc<tools::Jobs>,
    /// The session's MCP servers, starting in the background; their tools join the registry
    /// as they connect.
    pub mcp: crate::mcp::McpManager,
    /// A trusted project's MCP servers waiting for the user's approval (not started).
    pub pending_mcp: Vec<crate::config::approved::PendingExtension>,
    /// What each prompt's tools changed, for `/undo` and `/rewind`.
    pub checkpoints: Arc<crate::checkpoint::Checkpoints>,
    /// The session's language servers (started lazily; shut down with the session).
    pub language_servers: crate::lsp::Servers,
}

/// The mode a stored session resumes in: its own, except that `yolo` is never resumed (it is
/// only ever chosen by `--mode yolo` or in the TUI). The notice says so when it applies.
pub fn resumed_mode(stored: &str) -> (Mode, Option<String>) {
    match Mode::parse(stored).unwrap_or_default() {
        Mode::Yolo => (
            Mode::Default,
            Some(
                "this session was in yolo mode; it resumes in default mode (--mode yolo, or \
                 /mode yolo in the TUI, chooses it again)"
                    .into(),
            ),
        ),
        mode => (mode, None),
    }
}

/// Builds the provider for a model name (start, and `/model` later); the error is for the user.
pub type ProviderFactory =
    Arc<dyn Fn(&str) -> Result<Arc<dyn LlmProvider>, ProviderError> + Send + Sync>;

/// The settings' provider, with the model asked for.
pub fn provider_factory(settings: &Settings) -> ProviderFactory {
    let config = settings.provider.clone();
    let catalogue = settings.catalogue.clone();
    Arc::new(move |model: &str| {
        let mut config = config.clone();
        config.model = model.to_owned();
        let info = catalogue.lookup(model);
        config.prices = info.and_then(|info| info.prices());
        config.web_search = info.is_some_and(|info| info.web_search);
        config.build()
    })
}

/// `$HARNESS9_HOME/sessions.db`, opened and migrated.
pub fn open_store(settings: &Settings) -> Result<SessionStore, AssembleError> {
    let path = settings.home.join("sessions.db");
    SessionStore::open(&path)
        .map_err(|e| AssembleError::Storage(format!("cannot open {}: {e}", path.display())))
}

/// Finds or creates the session, then builds the engine around it.
pub async fn assemble(
    settings: &Settings,
    store: SessionStore,
    choice: SessionChoice,
) -> Result<Assembly, AssembleError> {
    assemble_with(settings, store, choice, &provider_factory(settings)).await
}

/// `assemble` with the provider built by `providers` (tests give a scripted one).
pub async fn assemble_with(
    settings: &Settings,
    store: SessionStore,
    choice: SessionChoice,
    providers: &ProviderFactory,
) -> Result<Assembly, AssembleError> {
    let workdir = settings.workdir.display().to_string();
    let setup = |e: MemoryError| AssembleError::Storage(e.to_string());
    let session = match choice {
        SessionChoice::New => store
            .create(NewSession {
                workdir: workdir.clone(),
                provider: settings.provider.kind.to_string(),
                model: settings.provider.model.clone(),
                mode: settings.mode.to_string(),
            })
            .await
            .map_err(|e| {
                AssembleError::Storage(format!(
                    "cannot create the session in {}: {e}; nothing was sent to the model",
                    settings.home.join("sessions.db").display()
                ))
            })?,
        SessionChoice::Continue => store.latest(&workdir).await.map_err(setup)?.ok_or_else(|| {
            AssembleError::Session(format!(
                "there is no earlier session in {workdir} to continue; start one without --continue"
            ))
        })?,
        SessionChoice::Resume(key) => store.resolve(&key).await.map_err(|e| match e {
            MemoryError::NotFound(m) | MemoryError::Ambiguous(m) => AssembleError::Session(m),
            other => setup(other),
        })?,
    };
    // A resumed session comes back in its own mode unless the command line names one (and
    // never in yolo by itself).
    let mut notices = Vec::new();
    let mode = if settings.mode_given {
        settings.mode
    } else {
        let (mode, notice) = resumed_mode(&session.mode);
        notices.extend(notice);
        mode
    };
    if mode.as_str() != session.mode {
        store
            .set_mode(&session.id, mode.as_str())
            .await
            .map_err(setup)?;
    }

    // An unreadable stored list is reported by the first run and left in sessions.db as it is.
    let todos = Arc::new(TodoStore::default());
    match store.load_todos(&session.id).await {
        Ok(items) => todos.load(items),
        Err(MemoryError::Corrupt(problem)) => todos.set_load_problem(Some(problem)),
        Err(other) => return Err(setup(other)),
    }
    let (sink_store, sink_id) = (store.clone(), session.id.clone());
    todos.set_sink(Box::new(move |items| {
        sink_store.save_todos(&sink_id, items)
    }));

    let skills = Arc::new(SkillIndex::discover(&settings.workdir, &settings.home));
    let provider = providers(&settings.provider.model).map_err(|e| {
        AssembleError::Setup(format!(
            "cannot set up the {} provider: {e}",
            settings.provider.kind
        ))
    })?;
    let saving = Arc::new(SavingSession::new(SqliteSession::new(
        store.clone(),
        session.id.clone(),
    )));
    // The binary re-executes itself as the sandbox helper; without it, commands cannot be
    // sandboxed (the probe then says so).
    let helper = std::env::current_exe().unwrap_or_default();
    let sandbox = Arc::new(Sandbox::resolve(&SandboxInputs {
        flag: settings.sandbox,
        workdir: settings.workdir.clone(),
        home: settings.home.clone(),
        helper,
    }));
    let loaded_hooks = crate::hooks::settings::load(&crate::hooks::HookSources {
        home: &settings.home,
        workdir: &settings.workdir,
        trusted: settings.trusted,
        approve_all: settings.approve_extensions,
    });
    notices.extend(loaded_hooks.notices);
    let hooks = Arc::new(crate::hooks::Hooks::new(
        loaded_hooks.hooks,
        settings.workdir.clone(),
    ));
    let mut bash = tools::Bash::new(Arc::clone(&sandbox), settings.tool_timeout);
    // harness9's own binary is the reaper of commands run outside the sandbox.
    if let Some(reaper) = tools::reaper::this_binary() {
        bash = bash.with_reaper(reaper);
    }
    let jobs = bash.jobs();
    let mut registry = tools::standard_registry(Arc::clone(&skills), bash);
    let (mcp, pending_mcp, mcp_notices) = crate::mcp::start(settings);
    notices.extend(mcp_notices);
    registry.set_late_tools(Arc::new(mcp.clone()));
    // Language servers start lazily, on the first file of their language: none here.
    let (language_servers, lsp_notices) = crate::lsp::Servers::for_settings(settings);
    notices.extend(lsp_notices);
    registry
        .register(Arc::new(crate::lsp::tool::LspTool::new(
            language_servers.clone(),
        )))
        .map_err(|e| AssembleError::Setup(e.to_string()))?;
    let web = crate::web::WebSettings::read(&settings.home, &mut notices);
    crate::web::register(&mut registry, &web);
    let memory_place = tools::memory::MemoryPlace {
        store: store.clone(),
        workdir: settings.workdir.display().to_string(),
        home: settings.home.clone(),
    };
    tools::memory::register(&mut registry, &memory_place);
    // Taken once: the prompt's prefix stays byte-identical for the whole session.
    let memory_digest = match store.memory_list(Some(&memory_place.workdir)).await {
        Ok(memories) => crate::memory::long_term::digest(&memories),
        Err(error) => {
            notices.push(format!("the long-term memories could not be read: {error}"));
            None
        }
    };
    let run_rules = crate::permission::rules::RuleSet::from_lists(
        &settings.run_rules.allow,
        &settings.run_rules.deny,
    )
    .map_err(|e| AssembleError::Setup(format!("a rule given with --allow/--deny: {e}")))?;
    let rules = Arc::new(
        crate::permission::rules::PermissionRules::new(
            &settings.workdir,
            &settings.home,
            settings.trusted,
        )
        .with_run_rules(run_rules),
    );
    let checkpoints = Arc::new(crate::checkpoint::Checkpoints::new(
        &settings.home,
        settings.workdir.clone(),
        Some(store.clone()),
    ));
    let _ = crate::checkpoint::cleanup::clean_in_background(&settings.home, &store);
    // `task` last: its children get every tool registered before it, and never `task`.
    let agents = Arc::new(crate::agents::AgentCatalog::discover(
        &settings.workdir,
        &settings.home,
        settings.trusted,
    ));
    notices.extend(agents.notices.iter().cloned());
    notices.extend(agents.iter().flat_map(|agent| {
        agent
            .skills
            .iter()
            .filter(|name| skills.get(name).is_none())
            .map(|name| {
                format!(
                    "the `{}` agent names the skill `{name}`, which is not installed: it starts \
                     without it",
                    agent.name
                )
            })
            .collect::<Vec<_>>()
    }));
    let child_tools = registry.clone();
    crate::engine::subagent::SubagentLauncher::register(
        &mut registry,
        agents,
        crate::engine::subagent::SubagentBase {
            tools: child_tools,
            providers: Arc::clone(providers),
            small_model: settings.small_model.clone(),
            workdir: settings.workdir.clone(),
            max_turns: settings.max_turns,
            skills: Arc::clone(&skills),
            tool_timeout: settings.tool_timeout,
            max_concurrent_tools: settings.max_concurrent_tools,
            context_window: settings.context_window,
            hooks: Arc::clone(&hooks),
            rules: Arc::clone(&rules),
            store: Some(store.clone()),
            observer: Arc::new(TracingObserver),
            checkpoints: Some(Arc::clone(&checkpoints)),
            language_servers: Some(language_servers.clone()),
        },
    );
    let engine = AgentEngine::builder(provider, Arc::new(registry), settings.workdir.clone())
        .checkpoints(Arc::clone(&checkpoints))
        .max_turns(settings.max_turns)
        .tool_timeout(settings.tool_timeout)
        .max_concurrent_tools(settings.max_concurrent_tools)
        .context_window(settings.context_window)
        .compactor(Arc::new(crate::memory::extract::ExtractingSummarization {
            inner: Summarization::for_window(settings.context_window),
            store: store.clone(),
            workdir: memory_place.workdir.clone(),
            home: settings.home.clone(),
            timeout: std::time::Duration::from_secs(30),
        }))
        .prompt_builder(Arc::new(
            DefaultPromptBuilder::new(settings.workdir.clone(), Arc::clone(&skills))
                .for_provider(settings.provider.kind)
                .with_memory(memory_digest)
                .with_late_section({
                    let mcp = mcp.clone();
                    crate::context::LateSection(Arc::new(move || mcp.instructions_section()))
                }),
        ))
        .memory_nudge(MEMORY_NUDGE_TURNS, MEMORY_NUDGE)
        .mode(mode)
        .todo_store(Arc::clone(&todos))
        .session(Arc::clone(&saving) as Arc<dyn crate::memory::Session>)
        .observer(Arc::new(TracingObserver))
        .hooks(hooks)
        .permission_rules(rules)
        .language_servers(language_servers.clone())
        .build();
    Ok(Assembly {
        engine: Arc::new(engine),
        store,
        session,
        todos,
        skills,
        saving,
        notices,
        sandbox,
        jobs,
        mcp,
        pending_mcp,
        checkpoints,
        language_servers,
    })
}
