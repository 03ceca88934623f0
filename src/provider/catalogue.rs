//! The model catalogue (`assets/models.toml`, built in, plus `$HARNESS9_HOME/models.toml`): per
//! model, the providers that serve it, its context window and output limit, how it reasons, and
//! its prices. A model name matches the entry with the longest name it starts with; an unknown
//! model has no entry, and callers fall back to their defaults. `Prices::cost` turns a call's
//! usage into dollars.

use std::path::Path;
use std::sync::Arc;

use serde::Deserialize;

use crate::schema::Usage;

/// The built-in catalogue.
const BUILTIN: &str = include_str!("../../assets/models.toml");
/// The user's additions, under `$HARNESS9_HOME`.
pub const OVERRIDE_FILE: &str = "models.toml";

/// US dollars per million tokens.
#[derive(Debug, Clone, Copy, PartialEq, Default, Deserialize)]
pub struct Prices {
    pub input: f64,
    /// Cached input read; the input price when the model has none.
    pub cached_input: Option<f64>,
    /// Input written to the cache (Anthropic); the input price when the model has none.
    pub cache_write: Option<f64>,
    pub output: f64,
}

impl Prices {
    /// What one call's (or a run's) usage cost, in dollars.
    pub fn cost(&self, usage: &Usage) -> f64 {
        let per_token = |tokens: u64, price: f64| tokens as f64 * price / 1_000_000.0;
        per_token(usage.input_tokens, self.input)
            + per_token(
                usage.cache_read_tokens,
                self.cached_input.unwrap_or(self.input),
            )
            + per_token(
                usage.cache_creation_tokens,
                self.cache_write.unwrap_or(self.input),
            )
            + per_token(usage.output_tokens, self.output)
    }
}

/// How a model reasons, and so which setting steers it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Reasoning {
    /// `--reasoning-effort`.
    Effort,
    /// `--thinking-budget`.
    Budget,
}

/// What the catalogue knows of one model (family).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelInfo {
    pub name: String,
    #[serde(default)]
    pub providers: Vec<String>,
    pub context_window: Option<u64>,
    pub max_output: Option<u32>,
    pub reasoning: Option<Reasoning>,
    /// The provider can search the web itself for this model (Anthropic's web search tool,
    /// OpenAI Responses' `web_search`); chat completions has no such tool and ignores it.
    #[serde(default)]
    pub web_search: bool,
    /// `false`: the model takes no image input.
    pub images: Option<bool>,
    input: Option<f64>,
    cached_input: Option<f64>,
    cache_write: Option<f64>,
    output: Option<f64>,
}

impl ModelInfo {
    /// The prices, when both input and output prices are known.
    pub fn prices(&self) -> Option<Prices> {
        Some(Prices {
            input: self.input?,
            cached_input: self.cached_input,
            cache_write: self.cache_write,
            output: self.output?,
        })
    }
}

#[derive(Debug, Deserialize)]
struct CatalogueFile {
    #[serde(default)]
    model: Vec<ModelInfo>,
}

/// Why the user's catalogue file was not used.
#[derive(Debug, thiserror::Error)]
#[error("{path} was not used: {reason}")]
pub struct CatalogueError {
    pub path: String,
    pub reason: String,
}

/// Every known model.
#[derive(Debug, Clone, Default)]
pub struct Catalogue {
    models: Arc<Vec<ModelInfo>>,
}

impl Catalogue {
    /// The built-in catalogue, parsed once per process.
    pub fn builtin() -> Self {
        static BUILT_IN: std::sync::OnceLock<Arc<Vec<ModelInfo>>> = std::sync::OnceLock::new();
        // The built-in file is part of the build: a test keeps it parsing.
        let models = BUILT_IN.get_or_init(|| Arc::new(parse(BUILTIN).unwrap_or_default()));
        Catalogue {
            models: Arc::clone(models),
        }
    }

    /// The built-in catalogue with `$HARNESS9_HOME/models.toml` over it. A file that cannot be
    /// read or parsed is left out, and the error says so (the built-in entries still hold).
    pub fn load(home: &Path) -> (Self, Option<CatalogueError>) {
        let mut models = Catalogue::builtin().models.as_ref().clone();
        let path = home.join(OVERRIDE_FILE);
        let problem = match std::fs::read_to_string(&path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => Some(e.to_string()),
            Ok(text) => match parse(&text) {
                Ok(own) => {
                    for entry in own {
                        models.retain(|m| m.name != entry.name);
                        models.push(entry);
                    }
                    None
                }
                Err(reason) => Some(reason),
            },
        };
        let error = problem.map(|reason| CatalogueError {
            path: path.display().to_string(),
            reason,
        });
        (
            Catalogue {
                models: Arc::new(models),
            },
            error,
        )
    }

    /// Why `model` cannot take an attached image, when the catalogue says it takes none.
    pub fn refuses_images(&self, model: &str) -> Option<String> {
        self.lookup(model)
            .filter(|m| m.images == Some(false))
            .map(|m| {
                format!(
                    "{model} takes no images (the model catalogue says so for `{}`); nothing was \
                 sent. Remove the image, or switch to a model that reads images (/model NAME)",
                    m.name
                )
            })
    }

    /// The entry `model` belongs to: the longest name it starts with (case aside).
    pub fn lookup(&self, model: &str) -> Option<&ModelInfo> {
        let model = model.to_ascii_lowercase();
        self.models
            .iter()
            .filter(|m| model.starts_with(&m.name.to_ascii_lowercase()))
            .max_by_key(|m| m.name.len())
    }

    /// The models a provider serves, in the catalogue's order (for `/model`).
    pub fn models_for(&self, provider: &str) -> Vec<&ModelInfo> {
        self.models
            .iter()
            .filter(|m| m.providers.iter().any(|p| p == provider))
            .collect()
    }
}

fn parse(text: &str) -> Result<Vec<ModelInfo>, String> {
    toml::from_str::<CatalogueFile>(text)
        .map(|file| file.model)
        .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_builtin_catalogue_parses_and_the_longest_name_wins() {
        assert!(parse(BUILTIN).is_ok(), "{:?}", parse(BUILTIN).err());
        let catalogue = Catalogue::builtin();
        assert_eq!(
            catalogue.lookup("gpt-4o-mini-2024-07-18").unwrap().name,
            "gpt-4o-mini"
        );
        assert_eq!(catalogue.lookup("GPT-4o").unwrap().name, "gpt-4o");
        let sonnet = catalogue.lookup("claude-sonnet-4-20250514").unwrap();
        assert_eq!(sonnet.context_window, Some(200_000));
        assert_eq!(sonnet.reasoning, Some(Reasoning::Budget));
        assert!(catalogue.lookup("llama3.1:8b").is_none());
        assert!(
            catalogue
                .lookup("deepseek-chat")
                .unwrap()
                .prices()
                .is_none()
        );
        let names: Vec<&str> = catalogue
            .models_for("responses")
            .iter()
            .map(|m| m.name.as_str())
            .collect();
        assert!(names.contains(&"gpt-5-codex") && !names.contains(&"claude-sonnet-4"));
    }

    #[test]
    fn cost_counts_each_kind_of_token_at_its_price() {
        let sonnet = Catalogue::builtin()
            .lookup("claude-sonnet-4")
            .unwrap()
            .prices()
            .unwrap();
        let usage = Usage {
            input_tokens: 1_000_000,
            output_tokens: 100_000,
            cache_read_tokens: 2_000_000,
            cache_creation_tokens: 1_000_000,
        };
        // 3.00 + 1.50 + 0.60 + 3.75
        assert!(
            (sonnet.cost(&usage) - 8.85).abs() < 1e-9,
            "{}",
            sonnet.cost(&usage)
        );
        let gpt = Catalogue::builtin()
            .lookup("gpt-4o")
            .unwrap()
            .prices()
            .unwrap();
        let usage = Usage {
            input_tokens: 760,
            output_tokens: 41,
            cache_read_tokens: 5120,
            cache_creation_tokens: 0,
        };
        // 760 * 2.50 + 5120 * 1.25 + 41 * 10.00, per million.
        let expected = (760.0 * 2.5 + 5120.0 * 1.25 + 41.0 * 10.0) / 1e6;
        assert!((gpt.cost(&usage) - expected).abs() < 1e-12);
        // No cached price: cached input costs the input price.
        let plain = Prices {
            input: 1.0,
            cached_input: None,
            cache_write: None,
            output: 2.0,
        };
        let usage = Usage {
            input_tokens: 0,
            output_tokens: 0,
            cache_read_tokens: 1_000_000,
            cache_creation_tokens: 0,
        };
        assert_eq!(plain.cost(&usage), 1.0);
    }

    #[test]
    fn the_users_file_adds_and_replaces_entries_and_a_broken_one_is_reported() {
        let home = tempfile::tempdir().unwrap();
        std::fs::write(
            home.path().join(OVERRIDE_FILE),
            "[[model]]\nname = \"gpt-4o\"\ncontext_window = 64000\ninput = 1.0\noutput = 1.0\n\n\
             [[model]]\nname = \"my-local-model\"\nproviders = [\"openai\"]\ncontext_window = 32768\n",
        )
        .unwrap();
        let (catalogue, error) = Catalogue::load(home.path());
        assert!(error.is_none());
        let gpt = catalogue.lookup("gpt-4o").unwrap();
        assert_eq!(gpt.context_window, Some(64_000));
        assert_eq!(gpt.prices().unwrap().input, 1.0);
        assert_eq!(
            catalogue
                .lookup("my-local-model-q4")
                .unwrap()
                .context_window,
            Some(32_768)
        );
        assert!(
            catalogue.lookup("gpt-4o-mini").is_some(),
            "the rest still holds"
        );
        std::fs::write(home.path().join(OVERRIDE_FILE), "[[model]]\nnam = 1\n").unwrap();
        let (catalogue, error) = Catalogue::load(home.path());
        assert!(error.unwrap().to_string().contains("models.toml"));
        assert_eq!(
            catalogue.lookup("gpt-4o").unwrap().context_window,
            Some(128_000)
        );
    }

    #[test]
    fn the_known_text_only_models_refuse_images_and_the_others_take_them() {
        let catalogue = Catalogue::builtin();
        assert!(catalogue.refuses_images("deepseek-chat").is_some());
        assert!(catalogue.refuses_images("o3-mini-2025-01-31").is_some());
        assert!(catalogue.refuses_images("o3").is_none());
        assert!(catalogue.refuses_images("gpt-4o").is_none());
        assert!(catalogue.refuses_images("some-unknown-model").is_none());
    }
}
