//! Everything the program is told before it starts working: the command line, the environment
//! and `<workdir>/.env`, resolved into one `Settings`. The process environment is never modified:
//! `.env` values are looked up beside it, so they cannot leak into commands the agent runs.

mod cli;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

pub use cli::{Cli, Command, ExecArgs, RunOptions, SandboxArgs, SessionsArgs};

use crate::planning::Mode;
use crate::provider::{
    ApiKey, DEFAULT_MAX_TOKENS, ProviderConfig, ProviderKind, known_context_window,
};

/// The context window assumed for a model we know nothing about.
pub const FALLBACK_CONTEXT_WINDOW: u64 = 128_000;

/// A configuration problem: the program stops with exit status 2 and this message.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error(
        "no API key found.\n\
         Set ANTHROPIC_API_KEY or OPENAI_API_KEY in the environment or in {dotenv}\n\
         (HARNESS9_PROVIDER or --provider chooses between them; OPENAI_BASE_URL points at a local\n\
         OpenAI-compatible server). See .env.example for every variable."
    )]
    NoProvider { dotenv: String },
    #[error(
        "the {provider} provider needs {variable}: set it in the environment or in {dotenv} (see .env.example)"
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

/// Variables from the process environment, falling back to `<workdir>/.env`.
#[derive(Debug, Default, Clone)]
pub struct Environment {
    process: HashMap<String, String>,
    dotenv: HashMap<String, String>,
}

impl Environment {
    /// The process environment plus `dotenv_path` when it exists. A malformed `.env` line is
    /// reported on stderr and skipped; a missing file is not an error.
    pub fn load(dotenv_path: &Path) -> Self {
        let process = std::env::vars().collect();
        let mut dotenv = HashMap::new();
        if let Ok(iter) = dotenvy::from_path_iter(dotenv_path) {
            for item in iter {
                match item {
                    Ok((key, value)) => {
                        dotenv.insert(key, value);
                    }
                    Err(e) => eprintln!(
                        "harness9: skipping a line of {}: {e}",
                        dotenv_path.display()
                    ),
                }
            }
        }
        Environment { process, dotenv }
    }

    /// An environment made of the given pairs only (tests, embedding).
    pub fn from_pairs<'a>(
        process: impl IntoIterator<Item = (&'a str, &'a str)>,
        dotenv: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Self {
        let own = |pairs: Vec<(&str, &str)>| {
            pairs
                .into_iter()
                .map(|(k, v)| (k.to_owned(), v.to_owned()))
                .collect()
        };
        Environment {
            process: own(process.into_iter().collect()),
            dotenv: own(dotenv.into_iter().collect()),
        }
    }

    /// A variable's value; the environment wins over `.env`, and empty counts as unset.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.process
            .get(name)
            .or_else(|| self.dotenv.get(name))
            .map(String::as_str)
            .filter(|v| !v.trim().is_empty())
    }
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
    /// `--sandbox`, when given (the settings files and the kernel decide the rest).
    pub sandbox: Option<crate::sandbox::SandboxMode>,
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

/// Combines the command line and the environment into `Settings`.
pub fn resolve(
    options: &RunOptions,
    workdir: PathBuf,
    env: &Environment,
) -> Result<Settings, ConfigError> {
    let dotenv = workdir.join(".env").display().to_string();
    let kind = choose_provider(options, env, &dotenv)?;
    let key = env.get(kind.key_variable());
    let base_url = env.get(kind.base_url_variable());
    // A local OpenAI-compatible server (Ollama, llama.cpp, vLLM) usually needs no key.
    let keyless_ok = kind == ProviderKind::OpenAi && base_url.is_some();
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

    let home = resolve_home(env)?;
    let context_window = options
        .context_window
        .or_else(|| known_context_window(&provider.model))
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
        sandbox: options.sandbox,
    })
}

/// `$HARNESS9_HOME`, else `~/.harness9`.
pub fn resolve_home(env: &Environment) -> Result<PathBuf, ConfigError> {
    Ok(match env.get("HARNESS9_HOME") {
        Some(home) => PathBuf::from(home),
        None => directories::BaseDirs::new()
            .ok_or(ConfigError::NoHome)?
            .home_dir()
            .join(".harness9"),
    })
}

/// CONTRACT.md: `--provider`, else `HARNESS9_PROVIDER`, else Anthropic if its key is set, else
/// OpenAI if its key is set.
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
            _ => Err(ConfigError::UnknownProvider(name.to_owned())),
        };
    }
    if env.get("ANTHROPIC_API_KEY").is_some() {
        Ok(ProviderKind::Anthropic)
    } else if env.get("OPENAI_API_KEY").is_some() {
        Ok(ProviderKind::OpenAi)
    } else {
        Err(ConfigError::NoProvider {
            dotenv: dotenv.to_owned(),
        })
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
