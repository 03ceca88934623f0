//! `AgentEngineBuilder`'s options and `build`: every option has its design default.

use super::*;

impl AgentEngineBuilder {
    /// The language servers whose new diagnostics end an edit's result; none by default.
    pub fn language_servers(mut self, servers: crate::lsp::Servers) -> Self {
        self.language_servers = (!servers.is_empty()).then_some(servers);
        self
    }

    /// Record the files tool calls change (`/undo`, `/rewind`); nothing is recorded without.
    pub fn checkpoints(mut self, checkpoints: Arc<crate::checkpoint::Checkpoints>) -> Self {
        self.checkpoints = Some(checkpoints);
        self
    }

    /// Permission rules (the settings files); none by default.
    pub fn permission_rules(
        mut self,
        rules: Arc<crate::permission::rules::PermissionRules>,
    ) -> Self {
        self.rules = Some(rules);
        self
    }

    /// The user's command hooks; none by default.
    pub fn hooks(mut self, hooks: Arc<crate::hooks::Hooks>) -> Self {
        self.hooks = Some(hooks);
        self
    }

    /// Continue by itself while todos are open (design: 自动续跑).
    pub fn auto_continue(mut self, on: bool) -> Self {
        self.auto_continue = on;
        self
    }

    /// This engine runs the sub-agent `name` (its end runs `SubagentStop` hooks, not `Stop`).
    pub fn subagent(mut self, name: &str) -> Self {
        self.options.subagent = Some(name.to_owned());
        self
    }

    pub fn max_turns(mut self, n: u32) -> Self {
        self.options.max_turns = n;
        self
    }

    pub fn tool_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.options.tool_timeout = timeout;
        self
    }

    pub fn max_concurrent_tools(mut self, n: usize) -> Self {
        self.options.max_concurrent_tools = n;
        self
    }

    pub fn session(mut self, session: Arc<dyn Session>) -> Self {
        self.session = Some(session);
        self
    }

    pub fn compactor(mut self, compactor: Arc<dyn Compactor>) -> Self {
        self.options.compactor = Some(compactor);
        self
    }

    pub fn compaction_threshold(mut self, share: f64) -> Self {
        self.options.compaction_threshold = share;
        self
    }

    pub fn context_window(mut self, tokens: u64) -> Self {
        self.options.context_window = tokens;
        self
    }

    pub fn prompt_builder(mut self, builder: Arc<dyn PromptBuilder>) -> Self {
        self.options.prompt_builder = Some(builder);
        self
    }

    /// The initial mode (design `WithPlanMode`).
    pub fn mode(mut self, mode: Mode) -> Self {
        self.mode = mode;
        self
    }

    pub fn todo_store(mut self, todos: Arc<TodoStore>) -> Self {
        self.todos = Some(todos);
        self
    }

    pub fn observer(mut self, observer: Arc<dyn EngineObserver>) -> Self {
        self.options.observer = observer;
        self
    }

    pub fn memory_nudge(mut self, every_turns: u32, text: impl Into<String>) -> Self {
        self.options.memory_nudge = (every_turns > 0).then(|| (every_turns, text.into()));
        self
    }

    pub fn turn_retry(mut self, policy: RetryPolicy) -> Self {
        self.options.turn_retry = policy;
        self
    }

    pub fn build(self) -> AgentEngine {
        let prompt = self
            .options
            .prompt_builder
            .clone()
            .unwrap_or_else(|| Arc::new(BasePrompt::new(self.workdir.clone())));
        let rules = self
            .rules
            .unwrap_or_else(|| Arc::new(crate::permission::rules::PermissionRules::none()));
        let hooks = self.hooks.unwrap_or_default();
        let chain = tool_chain(&hooks, &rules, self.checkpoints.as_ref());
        AgentEngine {
            provider: RwLock::new(self.provider),
            registry: self.registry,
            workdir: self.workdir,
            options: self.options,
            prompt,
            todos: self.todos.unwrap_or_default(),
            live: RwLock::new(Live {
                session: self.session,
                mode: self.mode,
            }),
            allowed: Mutex::new(HashSet::new()),
            user_context: Mutex::new(Vec::new()),
            pending_images: Mutex::new(Vec::new()),
            unsaved: Mutex::new(None),
            rules,
            auto_continue: std::sync::atomic::AtomicBool::new(self.auto_continue),
            hooks,
            chain,
            started_sessions: Mutex::new(HashSet::new()),
            notifications: Mutex::new(tokio::task::JoinSet::new()),
            background: Arc::default(),
            language_servers: self.language_servers,
            editor_files: RwLock::new(None),
            checkpoints: self.checkpoints,
            editor_terminal: RwLock::new(None),
        }
    }
}
