//! What the provider's token counts cost since the screen opened: in all, by model, and which
//! model each sub-agent runs (its calls are counted under its own model). Owned by `App`, read by
//! the status line and `/cost`.

use std::collections::HashMap;

use crate::engine::TokenUpdate;

/// The session's spend, in all and by model.
#[derive(Debug, Default)]
pub struct Spending {
    /// The provider's counts added up since this screen opened, and their cost.
    total: Spend,
    /// The same by model, in the order first used (`/cost` lists it when there is more than one).
    by_model: Vec<(String, Spend)>,
    /// Each sub-agent's model, by task id (from its nested `SessionStarted`).
    child_models: HashMap<String, String>,
}

impl Spending {
    /// Counts a provider's token update: in the total and in `model`'s entry of the spend by
    /// model (a new entry for a new model).
    pub fn count(&mut self, model: &str, update: &TokenUpdate) {
        self.total.add(update);
        if !update.counts_toward_totals() {
            return;
        }
        match self.by_model.iter_mut().find(|(name, _)| name == model) {
            Some((_, spend)) => spend.add(update),
            None => {
                let mut spend = Spend::default();
                spend.add(update);
                self.by_model.push((model.to_owned(), spend));
            }
        }
    }

    pub fn total(&self) -> &Spend {
        &self.total
    }

    pub fn by_model(&self) -> &[(String, Spend)] {
        &self.by_model
    }

    /// The sub-agent of `task_id` runs `model`.
    pub fn child_started(&mut self, task_id: &str, model: &str) {
        self.child_models
            .insert(task_id.to_owned(), model.to_owned());
    }

    /// The model the sub-agent of `task_id` runs, once it said.
    pub fn child_model(&self, task_id: &str) -> Option<&str> {
        self.child_models.get(task_id).map(String::as_str)
    }
}

/// Tokens by kind and their cost, added up from the provider's counts.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Spend {
    /// Prompt tokens not read from or written to a cache.
    pub input: u64,
    pub cache_read: u64,
    pub cache_write: u64,
    pub output: u64,
    pub cost_usd: f64,
    /// Whether a call had a known cost (the model's prices are in the catalogue).
    pub priced: bool,
    /// Whether some call's tokens are harness9's estimate (its server sent no usage).
    pub estimated: bool,
}

impl Spend {
    pub fn add(&mut self, update: &TokenUpdate) {
        if !update.counts_toward_totals() {
            return;
        }
        self.estimated |= update.estimated;
        let cached = update.cache_read_tokens + update.cache_write_tokens;
        self.input += update.input_tokens.saturating_sub(cached);
        self.cache_read += update.cache_read_tokens;
        self.cache_write += update.cache_write_tokens;
        self.output += update.output_tokens;
        if let Some(cost) = update.cost_usd {
            self.cost_usd += cost;
            self.priced = true;
        }
    }

    /// `$0.0123`, or `$1.23` from a dollar on.
    pub fn dollars(&self) -> String {
        if self.cost_usd >= 1.0 {
            format!("${:.2}", self.cost_usd)
        } else {
            format!("${:.4}", self.cost_usd)
        }
    }
}
