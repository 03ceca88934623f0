//! The tools the model can call, behind one `Registry`: it lists what a mode offers, and it turns
//! every bad call (unknown tool, arguments that are not JSON or do not match the schema, a call
//! the mode forbids) into an error result that tells the model how to fix it. It never panics and
//! never ends the loop.

mod background;
mod bash;
mod diff;
mod edit_file;
mod editor_files;
mod editor_terminal;
mod glob;
mod grep;
mod list_dir;
mod live_output;
pub mod memory;
pub(crate) mod output;
mod path_locks;
pub mod preview;
pub mod progress;
mod read_file;
pub mod reaper;
mod shell_process;
pub mod task;
mod todo_write;
mod use_skill;
mod validate;
mod write_file;

pub use background::{JobEnd, JobSummary, Jobs};
pub use bash::Bash;
pub use edit_file::EditFile;
pub use editor_files::{EditorFileError, EditorFiles};
pub use editor_terminal::{EditorTerminal, EditorTerminalError, TerminalRun, under_task};
pub use glob::Glob;
pub use grep::Grep;
pub use list_dir::ListDir;
pub use read_file::ReadFile;
pub use task::{SubagentRunner, TaskRequest, TaskTool};
pub use todo_write::TodoWrite;
pub use use_skill::UseSkill;
pub use write_file::WriteFile;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use async_trait::async_trait;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::planning::{Mode, TodoStore};
use crate::schema::{ToolCall, ToolDefinition, ToolKind, ToolResult};

/// What a running tool may use.
#[derive(Clone)]
pub struct ToolContext {
    pub workdir: PathBuf,
    /// Fires on interruption or timeout; a tool stops its work (and kills its processes).
    pub cancel: CancellationToken,
    pub mode: Mode,
    pub todos: Arc<TodoStore>,
    /// What a tree walk must not read: secret files and paths a deny rule covers.
    pub read_guard: crate::files::walk::ReadGuard,
    /// Where output past a tool's bound is kept whole (`output::outputs_dir`); `None`: nowhere
    /// (no stored session).
    pub outputs: Option<std::path::PathBuf>,
    /// The editor's file I/O (ACP), when it offers it: the file tools read and write through
    /// it once the path is judged; `None`: their own I/O.
    pub editor_files: Option<Arc<dyn EditorFiles>>,
    /// The editor's terminal (ACP, where the user chose it): `bash` runs a foreground command
    /// there; `None`: in harness9's own sandboxed process.
    pub editor_terminal: Option<Arc<dyn EditorTerminal>>,
}

/// A failed tool call, worded for the model: what went wrong and how to call it better.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ToolError(pub String);

impl ToolError {
    pub fn new(message: impl Into<String>) -> Self {
        ToolError(message.into())
    }
}

/// One tool.
#[async_trait]
pub trait Tool: Send + Sync {
    /// Built-in tools have fixed names; an MCP server's tools get theirs when it connects.
    fn name(&self) -> &str;
    /// For the model: what it does, when to use it, its limits.
    fn description(&self) -> &str;
    /// A JSON Schema of the arguments object.
    fn input_schema(&self) -> Value;
    fn kind(&self) -> ToolKind;

    /// The paths a call would write (for the deny rules, protected paths and the
    /// outside-the-working-directory check, judged after resolution): an edit tool's `path`
    /// argument by default.
    fn written_paths(&self, arguments: &Value) -> Vec<String> {
        if self.kind() != ToolKind::Edit {
            return Vec::new();
        }
        arguments
            .get("path")
            .and_then(Value::as_str)
            .map(str::to_owned)
            .into_iter()
            .collect()
    }

    /// The paths a call would read, as the model named them (for the deny rules and the
    /// secret-file check, judged after resolution): a read-only tool's `path` argument by
    /// default. A tool that walks a tree names its root; what the walk finds inside it is
    /// filtered by `ToolContext::read_guard`.
    fn read_paths(&self, arguments: &Value) -> Vec<String> {
        if self.kind() != ToolKind::ReadOnly {
            return Vec::new();
        }
        arguments
            .get("path")
            .and_then(Value::as_str)
            .map(str::to_owned)
            .into_iter()
            .collect()
    }

    /// The host a call reaches, as `domain:` rules name it (`web_fetch`); `None` for tools that
    /// reach no single host.
    fn domain(&self, _arguments: &Value) -> Option<String> {
        None
    }

    /// Whether the tool keeps its own output small enough for the model (every built-in
    /// does); the chain's output bound cuts the output of one that does not.
    fn bounds_own_output(&self) -> bool {
        false
    }

    /// Whether the tool bounds its own running time (`task`: its sub-agent's calls each have
    /// the timeout), so `--tool-timeout` does not apply to the call as a whole.
    fn has_own_time_limit(&self) -> bool {
        false
    }

    /// Whether a call of it can do anything on this machine (`web_search` without a search
    /// backend cannot): a tool that cannot is offered to the model only when the provider runs
    /// it instead (its own web search), never to fail.
    fn works_here(&self) -> bool {
        true
    }

    /// Whether plan mode offers the tool to the model (it may still refuse some calls).
    fn offered_in_plan(&self) -> bool {
        self.kind().allowed_in_plan()
    }

    /// Whether this call will run inside the command sandbox (only `bash` has one): the
    /// permission decision lets a sandboxed call run unasked in `auto-edit`.
    fn runs_sandboxed(&self, _arguments: &Value, _mode: Mode) -> bool {
        false
    }

    /// What the user should know of this call when asked to approve it, beyond its arguments
    /// (a background command: that it keeps running, and what its sandbox allows).
    fn approval_note(&self, _arguments: &Value, _mode: Mode) -> Option<String> {
        None
    }

    /// Why plan mode refuses this call, or `None` to let it run. By default a tool of a kind
    /// plan mode does not allow is refused; `bash` narrows this to read-only commands.
    fn plan_mode_refusal(&self, _arguments: &Value) -> Option<String> {
        (!self.kind().allowed_in_plan()).then(|| {
            format!(
                "`{}` is not available in plan mode: plan mode only reads and plans. Explore with \
                 read-only tools, write the plan with `todo_write`, and stop; the user will switch \
                 modes to carry it out.",
                self.name()
            )
        })
    }

    /// Runs the call. The arguments have been checked against `input_schema`.
    async fn execute(&self, arguments: Value, ctx: &ToolContext) -> Result<String, ToolError>;

    fn definition(&self) -> ToolDefinition {
        ToolDefinition {
            name: self.name().to_owned(),
            description: self.description().to_owned(),
            input_schema: self.input_schema(),
            provider_may_run: false,
        }
    }
}

/// A registration problem (a programming error, reported at start).
#[derive(Debug, thiserror::Error)]
pub enum RegistryError {
    #[error("a tool named `{0}` is already registered")]
    Duplicate(String),
}

/// Tools that arrive while the session runs (an MCP server that connected late, or changed its
/// list): the registry asks for the current set each time it offers or looks up a tool, so they
/// join at the next turn.
pub trait LateTools: Send + Sync {
    fn tools(&self) -> Vec<Arc<dyn Tool>>;
}

/// Which tools (by name and kind) a filtered registry keeps.
pub type ToolFilter = Arc<dyn Fn(&str, ToolKind) -> bool + Send + Sync>;

/// Late tools that pass a filter.
struct FilteredLate {
    inner: Arc<dyn LateTools>,
    keep: ToolFilter,
}

impl LateTools for FilteredLate {
    fn tools(&self) -> Vec<Arc<dyn Tool>> {
        self.inner
            .tools()
            .into_iter()
            .filter(|tool| (self.keep)(tool.name(), tool.kind()))
            .collect()
    }
}

/// The set of tools, by name.
#[derive(Default, Clone)]
pub struct Registry {
    tools: BTreeMap<String, Arc<dyn Tool>>,
    late: Option<Arc<dyn LateTools>>,
}

impl Registry {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn register(&mut self, tool: Arc<dyn Tool>) -> Result<(), RegistryError> {
        let name = tool.name().to_owned();
        if self.tools.contains_key(&name) {
            return Err(RegistryError::Duplicate(name));
        }
        self.tools.insert(name, tool);
        Ok(())
    }

    /// Adds a source of tools that come and go while the session runs. A late tool never
    /// shadows a registered one of the same name.
    pub fn set_late_tools(&mut self, late: Arc<dyn LateTools>) {
        self.late = Some(late);
    }

    /// The registered tools, then the late ones whose names are free, sorted by name.
    fn all(&self) -> BTreeMap<String, Arc<dyn Tool>> {
        let mut all = self.tools.clone();
        if let Some(late) = &self.late {
            for tool in late.tools() {
                all.entry(tool.name().to_owned()).or_insert(tool);
            }
        }
        all
    }

    /// The tools `keep` accepts (by name and kind), late ones included as they come: a
    /// sub-agent's set, taken from its parent's.
    pub fn filtered(&self, keep: ToolFilter) -> Registry {
        let tools = self
            .tools
            .iter()
            .filter(|(name, tool)| keep(name, tool.kind()))
            .map(|(name, tool)| (name.clone(), Arc::clone(tool)))
            .collect();
        let late = self.late.as_ref().map(|inner| {
            Arc::new(FilteredLate {
                inner: Arc::clone(inner),
                keep,
            }) as Arc<dyn LateTools>
        });
        Registry { tools, late }
    }

    pub fn get(&self, name: &str) -> Option<Arc<dyn Tool>> {
        if let Some(tool) = self.tools.get(name) {
            return Some(Arc::clone(tool));
        }
        self.late
            .as_ref()?
            .tools()
            .into_iter()
            .find(|tool| tool.name() == name)
    }

    pub fn names(&self) -> Vec<String> {
        self.all().into_keys().collect()
    }

    /// The definitions offered to the model in `mode`, sorted by name.
    pub fn available_tools(&self, mode: Mode) -> Vec<ToolDefinition> {
        self.all()
            .values()
            .filter(|tool| mode != Mode::Plan || tool.offered_in_plan())
            .map(|tool| tool.definition())
            .collect()
    }

    /// Checks a call without running it: the tool exists, its arguments parse and match the
    /// schema, and the mode allows it. Returns the tool and the parsed arguments.
    pub fn prepare(
        &self,
        call: &ToolCall,
        mode: Mode,
    ) -> Result<(Arc<dyn Tool>, Value), ToolError> {
        let tool = self.get(call.name.as_str()).ok_or_else(|| {
            let names = self.names();
            ToolError(format!(
                "There is no tool named `{}`. Available tools: {}.",
                call.name,
                names.join(", ")
            ))
        })?;
        let raw = if call.arguments.trim().is_empty() {
            "{}"
        } else {
            call.arguments.as_str()
        };
        let arguments: Value = serde_json::from_str(raw).map_err(|e| {
            ToolError(format!(
                "The arguments of `{}` are not valid JSON ({e}). Send one JSON object matching \
                 this schema: {}",
                call.name,
                tool.input_schema()
            ))
        })?;
        check_arguments(tool.as_ref(), &arguments, mode)?;
        Ok((tool, arguments))
    }

    /// Runs a call and always returns a result: failures are `is_error` results for the model.
    pub async fn execute(&self, call: &ToolCall, ctx: &ToolContext) -> ToolResult {
        let outcome = match self.prepare(call, ctx.mode) {
            Ok((tool, arguments)) => tool.execute(arguments, ctx).await,
            Err(error) => Err(error),
        };
        match outcome {
            Ok(output) => ToolResult::ok(&call.id, output),
            Err(error) => ToolResult::error(&call.id, error.0),
        }
    }
}

#[cfg(test)]
mod tests;

/// Every built-in tool, registered (`bash` unsandboxed: tests and embedders).
pub fn builtin_registry() -> Registry {
    builtin_registry_with(Bash::default())
}

/// Every built-in tool, with this session's `bash` (its sandbox and timeout).
pub fn builtin_registry_with(bash: Bash) -> Registry {
    let mut registry = Registry::new();
    let jobs = bash.jobs();
    let tools: [Arc<dyn Tool>; 10] = [
        Arc::new(bash),
        Arc::new(background::BashOutput(Arc::clone(&jobs))),
        Arc::new(background::BashKill(jobs)),
        Arc::new(ReadFile),
        Arc::new(WriteFile),
        Arc::new(EditFile),
        Arc::new(ListDir),
        Arc::new(Glob),
        Arc::new(Grep),
        Arc::new(TodoWrite),
    ];
    for tool in tools {
        // The built-in names are distinct; a clash would be caught by the registry's tests.
        let _ = registry.register(tool);
    }
    registry
}

/// The built-in tools, this session's `bash`, and `use_skill` over `skills`: what a real run
/// offers.
pub fn standard_registry(skills: Arc<crate::context::SkillIndex>, bash: Bash) -> Registry {
    let mut registry = builtin_registry_with(bash);
    let _ = registry.register(Arc::new(UseSkill::new(skills)));
    registry
}

/// Whether parsed `arguments` may reach `tool` in `mode`: they match its schema, and plan mode
/// does not refuse them. `Registry::prepare` asks it of the model's arguments, the hook chain
/// of arguments a hook rewrote.
pub fn check_arguments(tool: &dyn Tool, arguments: &Value, mode: Mode) -> Result<(), ToolError> {
    validate::check(&tool.input_schema(), arguments).map_err(|problem| {
        ToolError(format!(
            "The arguments of `{}` do not match its schema: {problem}. Expected: {}",
            tool.name(),
            tool.input_schema()
        ))
    })?;
    if mode == Mode::Plan
        && let Some(refusal) = tool.plan_mode_refusal(arguments)
    {
        return Err(ToolError(refusal));
    }
    Ok(())
}

/// Arguments (already checked against the schema) as the tool's own type.
pub(crate) fn parse_args<T: serde::de::DeserializeOwned>(arguments: Value) -> Result<T, ToolError> {
    serde_json::from_value(arguments)
        .map_err(|e| ToolError::new(format!("the arguments could not be read: {e}")))
}

/// Runs file-system work off the async threads.
pub(crate) async fn blocking<T, F>(work: F) -> Result<T, ToolError>
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| ToolError::new(format!("the tool's work failed: {e}")))
}
