//! The run going on (or the last one): what the status line shows of it (turn, tokens, retry,
//! the hook that runs) and what the stall hint measures (when the model was last heard from,
//! tools still running). Written as the engine's events arrive (`engine_events.rs`) and when a
//! run starts (`keys.rs`); owned by `App`.

use std::time::Instant;

use crate::engine::TokenUpdate;

#[derive(Debug, Default)]
pub struct RunState {
    pub running: bool,
    pub working_since: Option<Instant>,
    pub turn: u32,
    pub tokens: Option<TokenUpdate>,
    /// Why the provider's call is retried, while it is.
    pub retry: Option<String>,
    /// The command hook that runs now (its event and command).
    pub hook_running: Option<String>,
    /// When the model was last heard from in this run (deltas, tools, any event).
    pub last_heard: Option<Instant>,
    /// Retries seen since the model last answered: numbers the next attempt.
    pub retry_streak: u32,
    /// Tools of the run started and not finished (the model is not what is waited for).
    pub tools_running: usize,
}
