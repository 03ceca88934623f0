//! Everything the program is told before it starts working: the command line, the environment
//! and `<workdir>/.env`, resolved into one `Settings`. `.env` values are looked up beside the
//! process environment, never put into it, so they cannot leak into commands the agent runs; a
//! folder's `.env` sets only the provider's variables, and in an untrusted folder its base URL
//! never receives a key from elsewhere.

pub mod approved;
mod cli;
pub mod cli_docs;
pub mod display;
pub mod trust;
pub mod worktree;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

pub use cli::{
    AttachArgs, Cli, Command, EvalArgs, ExecArgs, McpAction, McpArgs, McpScope, MemoryAction,
    MemoryArgs, RunOptions, SandboxArgs, ServeArgs, SessionsArgs, WorktreeAction, WorktreeArgs,
};

use crate::planning::Mode;
use crate::provider::{
    ApiKey, DEFAULT_MAX_TOKENS, ProviderConfig, ProviderKind, catalogue::Catalogue,
};

/// The context window assumed for a model we know nothing about.
pub const FALLBACK_CONTEXT_WINDOW: u64 = 128_000;

/// A configuration problem: the program stops with exit status 2 and this message.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error(
        "no API key found. Set one, for example:\n\
         \x20 export ANTHROPIC_API_KEY=sk-ant-...   (or OPENAI_API_KEY=sk-...)\n\
         or write that line (without `export`) to {dotenv}. With both set, HARNESS9_PROVIDER or\n\
         --provider chooses; OPENAI_BASE_URL with --provider openai uses a local\n\
         OpenAI-compatible server, which needs no key.{template}"
    )]
    NoProvider {
        dotenv: String,
        /// How to start from the folder's `.env.example`, when it has one (the README's setup
        /// step copies it); empty elsewhere.
        template: String,
    },
    #[error(
        "the {provider} provider needs {variable}: set it in the environment (export {variable}=...) or write that line to {dotenv}"
    )]
    MissingKey {
        provider: ProviderKind,
        variable: &'static str,
        dotenv: String,
    },
    #[error("HARNESS9_PROVIDER is {0:?}; expected openai or anthropic")]
    UnknownProvider(String),
    #[error("the working directory {path} cannot be used: {reason}")]
    Workdir { path: String, reason: String },
    #[error("{0}")]
    Invalid(String),
    #[error("cannot find the home directory; set HARNESS9_HOME")]
    NoHome,
}

/// Where a variable's value came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// The process environment (or a secret taken out of it at start).
    Process,
    /// The working directory's `.env`: written by whoever wrote the folder.
    Dotenv,
}

/// Variables from the process environment, falling back to `<workdir>/.env`. A folder's `.env`
/// may set the provider's variables only: anything else it holds is ignored (and listed, so the
/// front ends can say so), since it could move `$HARNESS9_HOME` into the folder or change `PATH`.
#[derive(Debug, Default, Clone)]
pub struct Environment {
    process: HashMap<String, String>,
    dotenv: HashMap<String, String>,
    /// Names in `.env` that were ignored, sorted.
    ignored: Vec<String>,
}

/// Whether a folder's `.env` may set `name` (CONTRACT "Environment"): an allowlist.
pub fn dotenv_may_set(name: &str) -> bool {
    name.starts_with("OPENAI_")
        || name.starts_with("ANTHROPIC_")
        || name == "HARNESS9_PROVIDER"
        || name == "HARNESS9_MODEL"
}

impl Environment {
    /// The process environment, plus `secrets` (the variables `hardening` took out of it), plus
    /// the allowed variables of `dotenv_path` when it exists. A malformed `.env` line is reported
    /// on stderr and skipped; a missing file is not an error.
    pub fn load(dotenv_path: &Path, secrets: impl IntoIterator<Item = (String, String)>) -> Self {
        let mut process: HashMap<String, String> = std::env::vars().collect();
        process.extend(secrets);
        let mut dotenv = Vec::new();
        if let Ok(iter) = dotenvy::from_path_iter(dotenv_path) {
            for item in iter {
                match item {
                    Ok(pair) => dotenv.push(pair),
                    Err(e) => eprintln!(
                        "harness9: skipping a line of {}: {e}",
                        dotenv_path.display()
                    ),
                }
            }
        }
        Self::build(process, dotenv)
    }

    /// An environment made of the given pairs only (tests, embedding); `dotenv` is filtered as
    /// a folder's `.env` is.
    pub fn from_pairs<'a>(
        process: impl IntoIterator<Item = (&'a str, &'a str)>,
        dotenv: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Self {
        let own = |(k, v): (&str, &str)| (k.to_owned(), v.to_owned());
        Self::build(
            process.into_iter().map(own).collect(),
            dotenv.into_iter().map(own).collect(),
        )
    }

    fn build(process: HashMap<String, String>, pairs: Vec<(String, String)>) -> Self {
        let mut dotenv = HashMap::new();
        let mut ignored = Vec::new();
        for (key, value) in pairs {
            if dotenv_may_set(&key) {
                dotenv.insert(key, value);
            } else {
                ignored.push(key);
            }
        }
        ignored.sort();
        ignored.dedup();
        Environment {
            process,
            dotenv,
            ignored,
        }
    }

    /// A variable's value; the environment wins over `.env`, and empty counts as unset.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.get_with_origin(name).map(|(value, _)| value)
    }

    /// A variable's value and where it came from.
    pub fn get_with_origin(&self, name: &str) -> Option<(&str, Origin)> {
        let set = |v: &String| !v.trim().is_empty();
        if let Some(value) = self.process.get(name).filter(|v| set(v)) {
            return Some((value, Origin::Process));
        }
        self.dotenv
            .get(name)
            .filter(|v| set(v))
            .map(|value| (value.as_str(), Origin::Dotenv))
    }

    /// A variable of the process environment only (never the folder's `.env`).
    pub fn process_var(&self, name: &str) -> Option<&str> {
        self.process
            .get(name)
            .map(String::as_str)
            .filter(|v| !v.trim().is_empty())
    }

    /// The names in the folder's `.env` that were ignored.
    pub fn ignored_dotenv(&self) -> &[String] {
        &self.ignored
    }
}

/// `exec --allow/--deny`: rules for one run in the settings' syntax, kept raw like every value of
/// the command line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunRules {
    pub allow: Vec<String>,
    pub deny: Vec<String>,
}

/// The resolved configuration of one run.
#[derive(Debug, Clone)]
pub struct Settings {
    pub workdir: PathBuf,
    /// `$HARNESS9_HOME`: sessions, logs, skills, settings.
    pub home: PathBuf,
    pub provider: ProviderConfig,
    pub mode: Mode,
    /// Whether the command line named the mode (a resumed session otherwise keeps its own).
    pub mode_given: bool,
    /// 0 = unlimited.
    pub max_turns: u32,
    /// `None` = no timeout.
    pub tool_timeout: Option<Duration>,
    /// 0 = unlimited.
    pub max_concurrent_tools: usize,
    pub context_window: u64,
    /// Folder trust (CONTRACT "Folder trust"): `--trust`, or a folder the user trusted before.
    pub trusted: bool,
    /// Whether the folder's trust came from an earlier answer or `--trust` (so the TUI need not
    /// ask), rather than being the untrusted default.
    pub trust_decided: bool,
    /// `--trust` itself: it also approves the folder's own MCP servers for this run.
    pub trust_flag: bool,
    /// What was ignored while resolving, for the front end to show (a `notice`, a stderr line).
    pub notices: Vec<String>,
    /// `--sandbox`, when given (the settings files and the kernel decide the rest).
    pub sandbox: Option<crate::sandbox::SandboxMode>,
    /// The models harness9 knows (built in, and `$HARNESS9_HOME/models.toml`).
    pub catalogue: Catalogue,
    /// Permission rules for this run only (`exec --allow/--deny`), as the user wrote them: the
    /// permission layer parses them (and `main` has refused any that does not parse).
    pub run_rules: RunRules,
    /// `--trust` in `exec` and `serve`: the project's hooks count as approved for this run
    /// (CONTRACT "Folder trust"). The TUI asks instead.
    pub approve_extensions: bool,
    /// The server a trusted folder's `.env` names for the environment's key, not approved and
    /// so not used: the TUI asks about it with the project's extensions.
    pub pending_base_url: Option<approved::PendingExtension>,
    /// `HARNESS9_SMALL_MODEL`: a smaller model of the same provider for the `explore` sub-agent
    /// (and file agents saying `model: haiku`); unset, they use the session's model.
    pub small_model: Option<String>,
    /// `--worktree NAME`: the session runs in that git worktree (`workdir` is its folder).
    pub worktree: Option<String>,
    /// MCP servers the editor passed (ACP `session/new`): started like `.mcp.json` servers, as
    /// the editor's own (no approval asked: the user configured them in the editor).
    pub editor_mcp: Vec<EditorMcpServer>,
}

/// An MCP server the editor hands over, as the editor wrote it (no `${VAR}` expansion).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EditorMcpServer {
    pub name: String,
    pub transport: EditorMcpTransport,
}

/// How to reach an editor's server. It mirrors `mcp::config::Transport` (without OAuth) because
/// `config` sits below `mcp` and cannot name it; `mcp::config::editor_servers` converts it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EditorMcpTransport {
    Stdio {
        command: String,
        args: Vec<String>,
        env: Vec<(String, String)>,
    },
    Http {
        url: String,
        headers: Vec<(String, String)>,
    },
}

/// The working directory a command line names, canonicalized.
pub fn resolve_workdir(options: &RunOptions) -> Result<PathBuf, ConfigError> {
    let raw = match &options.workdir {
        Some(dir) => dir.clone(),
        None => std::env::current_dir().map_err(|e| ConfigError::Workdir {
            path: ".".into(),
            reason: e.to_string(),
        })?,
    };
    let path = raw.canonicalize().map_err(|e| ConfigError::Workdir {
        path: raw.display().to_string(),
        reason: e.to_string(),
    })?;
    if !path.is_dir() {
        return Err(ConfigError::Workdir {
            path: path.display().to_string(),
            reason: "it is not a directory".into(),
        });
    }
    Ok(path)
}

/// Combines the command line and the environment into `Settings`; the folder is trusted with
/// `--trust` or when the user trusted it before.
pub fn resolve(
    options: &RunOptions,
    workdir: PathBuf,
    env: &Environment,
) -> Result<Settings, ConfigError> {
    let home = resolve_home(env)?;
    let decided = options.trust || trust::is_trusted(&home, &workdir);
    let mut settings = resolve_trusted(options, workdir, env, decided)?;
    settings.trust_decided = decided;
    Ok(settings)
}

/// `resolve` with the folder's trust given (the TUI, once the user answered).
pub fn resolve_trusted(
    options: &RunOptions,
    workdir: PathBuf,
    env: &Environment,
    trusted: bool,
) -> Result<Settings, ConfigError> {
    let dotenv = workdir.join(".env").display().to_string();
    let mut notices = Vec::new();
    if !env.ignored_dotenv().is_empty() {
        notices.push(format!(
            "ignored {} in {dotenv}: a folder's .env may set only OPENAI_*, ANTHROPIC_*, \
             HARNESS9_PROVIDER and HARNESS9_MODEL",
            env.ignored_dotenv().join(", ")
        ));
    }
    let kind = choose_provider(options, env, &dotenv)?;
    let key = env.get_with_origin(kind.key_variable());
    let mut base_url = env.get_with_origin(kind.base_url_variable());
    // An untrusted folder must not send a key it did not supply to a server it names.
    if !trusted && let (Some((_, Origin::Dotenv)), Some((_, Origin::Process))) = (base_url, key) {
        notices.push(format!(
            "ignored {} from {dotenv}: this folder is not trusted and {} comes from the \
             environment, so it is sent only to {} (--trust to use the folder's server)",
            kind.base_url_variable(),
            kind.key_variable(),
            env.process_var(kind.base_url_variable())
                .unwrap_or(kind.default_base_url())
        ));
        base_url = env
            .process_var(kind.base_url_variable())
            .map(|url| (url, Origin::Process));
    }
    let home = resolve_home(env)?;
    // Nor may a trusted folder's `.env`, rewritten since (a planted file that outlived a
    // killed session), send the environment's key to a server the user never approved.
    let mut pending_base_url = None;
    if trusted
        && !options.trust
        && let (Some((url, Origin::Dotenv)), Some((_, Origin::Process))) = (base_url, key)
    {
        let name = kind.base_url_variable();
        let hash = crate::files::hash_of(url.as_bytes());
        if !approved::is_approved(
            &home,
            &workdir,
            approved::ExtensionKind::BaseUrl,
            name,
            &hash,
        ) {
            notices.push(format!(
                "ignored {name}={url} from {dotenv}: {} comes from the environment and this \
                 folder's server for it was not approved (or changed since), so the key goes \
                 only to {} (the TUI asks; --trust uses it for one run)",
                kind.key_variable(),
                env.process_var(name).unwrap_or(kind.default_base_url())
            ));
            pending_base_url = Some(approved::PendingExtension {
                kind: approved::ExtensionKind::BaseUrl,
                name: name.to_owned(),
                summary: url.to_owned(),
                hash,
            });
            base_url = env.process_var(name).map(|url| (url, Origin::Process));
        }
    }
    let key = key.map(|(value, _)| value);
    let base_url = base_url.map(|(value, _)| value);
    // A local OpenAI-compatible server (Ollama, llama.cpp, vLLM) usually needs no key.
    let keyless_ok =
        matches!(kind, ProviderKind::OpenAi | ProviderKind::Responses) && base_url.is_some();
    if key.is_none() && !keyless_ok {
        return Err(ConfigError::MissingKey {
            provider: kind,
            variable: kind.key_variable(),
            dotenv,
        });
    }
    let mut provider = ProviderConfig::new(
        kind,
        ApiKey::new(key.unwrap_or_default()),
        base_url.unwrap_or(kind.default_base_url()),
    );
    if let Some(model) = options.model.as_deref().or(env.get("HARNESS9_MODEL")) {
        provider.model = model.to_owned();
    }
    provider.max_tokens = options.max_tokens;
    provider.thinking_budget = options.thinking_budget.unwrap_or(0);
    provider.reasoning_effort = options.reasoning_effort.clone();
    validate_thinking(&provider)?;

    match crate::private_home::secure(&home) {
        Ok(notice) => notices.extend(notice),
        Err(error) => notices.push(error.to_string()),
    }
    if !trusted {
        notices.extend(untrusted_notice(&workdir));
    }
    let (catalogue, problem) = Catalogue::load(&home);
    notices.extend(problem.map(|e| e.to_string()));
    let known = catalogue.lookup(&provider.model);
    provider.prices = known.and_then(|info| info.prices());
    provider.web_search = known.is_some_and(|info| info.web_search);
    let context_window = options
        .context_window
        .or_else(|| known.and_then(|info| info.context_window))
        .unwrap_or(FALLBACK_CONTEXT_WINDOW);
    Ok(Settings {
        workdir,
        home,
        mode: options.mode.unwrap_or_default(),
        mode_given: options.mode.is_some(),
        max_turns: options.max_turns.unwrap_or(50),
        tool_timeout: match options.tool_timeout.unwrap_or(60) {
            0 => None,
            secs => Some(Duration::from_secs(secs)),
        },
        max_concurrent_tools: options.max_concurrent_tools.unwrap_or(0),
        context_window,
        provider,
        trusted,
        trust_decided: trusted,
        trust_flag: options.trust,
        notices,
        sandbox: options.sandbox,
        catalogue,
        run_rules: Default::default(),
        approve_extensions: options.trust,
        pending_base_url,
        small_model: env
            .get("HARNESS9_SMALL_MODEL")
            .map(str::trim)
            .filter(|m| !m.is_empty())
            .map(str::to_owned),
        worktree: None,
        editor_mcp: Vec::new(),
    })
}

/// What an untrusted folder's own files would have changed and do not, when it has any.
fn untrusted_notice(workdir: &Path) -> Option<String> {
    let present: Vec<&str> = [
        ".harness9/settings.json",
        ".harness9/settings.local.json",
        ".mcp.json",
    ]
    .into_iter()
    .filter(|name| workdir.join(name).exists())
    .collect();
    if present.is_empty() {
        return None;
    }
    Some(format!(
        "this folder is not trusted: the allow rules, hooks and MCP servers of {} are ignored \
         (its deny and ask rules apply); --trust, or trusting it in the TUI, lifts this",
        present.join(", ")
    ))
}

/// `$HARNESS9_HOME` (from the process environment only, never a folder's `.env`), else
/// `~/.harness9`.
pub fn resolve_home(env: &Environment) -> Result<PathBuf, ConfigError> {
    Ok(match env.process_var("HARNESS9_HOME") {
        Some(home) => PathBuf::from(home),
        None => directories::BaseDirs::new()
            .ok_or(ConfigError::NoHome)?
            .home_dir()
            .join(".harness9"),
    })
}

/// `--provider`, else `HARNESS9_PROVIDER`, else Anthropic if its key is set, else OpenAI if its
/// key is set, else OpenAI if `OPENAI_BASE_URL` names a server (a local one needs no key).
fn choose_provider(
    options: &RunOptions,
    env: &Environment,
    dotenv: &str,
) -> Result<ProviderKind, ConfigError> {
    if let Some(kind) = options.provider {
        return Ok(kind);
    }
    if let Some(name) = env.get("HARNESS9_PROVIDER") {
        return match name.trim().to_ascii_lowercase().as_str() {
            "openai" => Ok(ProviderKind::OpenAi),
            "anthropic" => Ok(ProviderKind::Anthropic),
            "responses" => Ok(ProviderKind::Responses),
            _ => Err(ConfigError::UnknownProvider(name.to_owned())),
        };
    }
    if env.get("ANTHROPIC_API_KEY").is_some() {
        Ok(ProviderKind::Anthropic)
    } else if env.get("OPENAI_API_KEY").is_some() {
        Ok(ProviderKind::OpenAi)
    } else if env.get("OPENAI_BASE_URL").is_some() {
        // A local OpenAI-compatible server (Ollama, llama.cpp) needs no key.
        Ok(ProviderKind::OpenAi)
    } else {
        Err(ConfigError::NoProvider {
            dotenv: dotenv.to_owned(),
            template: env_template_hint(dotenv),
        })
    }
}

/// The no-key message's hint for a folder with a `.env.example` beside where `.env` would be.
fn env_template_hint(dotenv: &str) -> String {
    let template = Path::new(dotenv).with_file_name(".env.example");
    if template.is_file() {
        "\nThis folder has a .env.example: cp .env.example .env, then fill in a key.".to_owned()
    } else {
        String::new()
    }
}

fn validate_thinking(provider: &ProviderConfig) -> Result<(), ConfigError> {
    let budget = provider.thinking_budget;
    if budget == 0 {
        return Ok(());
    }
    let max_tokens = provider.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS);
    if budget < 1024 {
        return Err(ConfigError::Invalid(format!(
            "--thinking-budget must be at least 1024 tokens (got {budget})"
        )));
    }
    if budget >= max_tokens {
        return Err(ConfigError::Invalid(format!(
            "--thinking-budget ({budget}) must be below --max-tokens ({max_tokens})"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests;
