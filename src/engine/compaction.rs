//! Compaction inside a run: when the prompt (as the server last counted it, plus an estimate of
//! what was added since) passes the threshold of the window, or when the server refused the
//! prompt as too long, the history the model sees is shrunk. The configured compactor goes
//! first; when it fails (a summary call that errs) the token-budget compactor takes over, so a
//! compaction that was due always happens. The stored history stays whole: a checkpoint is
//! recorded only once every message it hides is stored, so a compaction never loses a turn that
//! could not be saved yet.

use tokio_util::sync::CancellationToken;

use super::AgentEngine;
use super::emitter::Emitter;
use super::event::{CompactionInfo, Event, EventKind};
use super::run_loop::RunState;
use crate::context::estimate_tokens;
use crate::memory::{Compaction, Compactor, MemoryError, TokenBudget};
use crate::schema::{Message, ToolDefinition};

/// A saving the user is told about: anything smaller is done quietly.
const REPORTED_SAVING: f64 = 0.95;

/// What shrinking a history produced: the steps to apply in order, and how.
pub(crate) struct Shrunk {
    pub steps: Vec<Compaction>,
    /// The strategy that decided the result (`token_budget` when it had to take over).
    pub strategy: &'static str,
    /// Why the configured compactor was not enough, for a `notice`.
    pub fallback: Option<String>,
}

impl Shrunk {
    pub fn apply(&self, history: &[Message]) -> Vec<Message> {
        let mut current = history.to_vec();
        for step in &self.steps {
            current = step.apply(&current);
        }
        current
    }
}

impl RunState {
    /// Applies one compaction step to the run's history. Messages it hides that were not
    /// stored yet move to `carry` (stored first at the next save), and the checkpoint waits in
    /// `checkpoints` until they are: the store never hides a message it does not have.
    pub(super) fn apply_compaction(&mut self, step: Compaction) {
        let keep_from = step.keep_from.clamp(1, self.history.len().max(1));
        let summary_len = usize::from(step.summary.is_some());
        self.saved = if self.saved < keep_from {
            self.carry
                .extend_from_slice(&self.history[self.saved.max(1)..keep_from]);
            // Everything kept after the summary is unsaved too; the summary is stored by
            // the checkpoint itself.
            1 + summary_len
        } else {
            self.saved - keep_from + 1 + summary_len
        };
        self.history = step.apply(&self.history);
        self.checkpoints.push(Compaction { keep_from, ..step });
    }
}

/// How long the summary's model call may take before the token budget is used instead.
pub(crate) const SUMMARY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);

/// The todo list's open items, for the end of a summary (the design's "Active Tasks"): the
/// model's summary may drop them, the list is the truth. Empty when nothing is open.
fn active_tasks(todos: &[crate::planning::TodoItem]) -> String {
    use crate::planning::TodoStatus;
    let open: Vec<String> = todos
        .iter()
        .filter(|item| item.status != TodoStatus::Completed)
        .map(|item| format!("- [{}] {}", item.status.as_str(), item.content))
        .collect();
    if open.is_empty() {
        return String::new();
    }
    format!(
        "\n\nActive tasks (the todo list's open items):\n{}",
        open.join("\n")
    )
}

impl AgentEngine {
    /// Compacts when the prompt passes the threshold of the window.
    pub(super) async fn maybe_compact(
        &self,
        turn: u32,
        tools: &[ToolDefinition],
        cancel: &CancellationToken,
        em: &mut dyn Emitter,
        state: &mut RunState,
    ) {
        if self.options.compactor.is_none() {
            return;
        }
        let window = self.options.context_window;
        let before = state.prompt_estimate(tools);
        if window == 0 || (before as f64) < window as f64 * self.options.compaction_threshold {
            return;
        }
        self.pre_compact_hooks(turn, "auto", cancel, em).await;
        self.compact_run(turn, tools, None, cancel, em, state).await;
    }

    /// Shrinks the run's history (below `target` tokens when given), tells the user, and
    /// stores the checkpoint. Returns whether the history changed.
    pub(super) async fn compact_run(
        &self,
        turn: u32,
        tools: &[ToolDefinition],
        target: Option<u64>,
        cancel: &CancellationToken,
        em: &mut dyn Emitter,
        state: &mut RunState,
    ) -> bool {
        let before = state.prompt_estimate(tools);
        let shrunk = match self
            .shrink(&state.history, tools, target, false, cancel)
            .await
        {
            Ok(shrunk) => shrunk,
            Err(error) => {
                tracing::warn!("{} compaction failed | error={error}", em.prefix());
                return false;
            }
        };
        if let Some(why) = &shrunk.fallback {
            tracing::warn!("{} compaction fell back | reason={why}", em.prefix());
            em.emit(Event {
                turn,
                kind: EventKind::Notice(why.clone()),
            })
            .await;
        }
        if shrunk.steps.is_empty() {
            return false;
        }
        for step in shrunk.steps {
            state.apply_compaction(step);
        }
        // The server's count covered the old history; the estimate starts afresh.
        state.known_prompt = None;
        let after = state.prompt_estimate(tools);
        if (after as f64) < before as f64 * REPORTED_SAVING {
            em.emit(Event {
                turn,
                kind: EventKind::Compaction(CompactionInfo {
                    before_tokens: before,
                    after_tokens: after,
                    strategy: shrunk.strategy,
                }),
            })
            .await;
        }
        self.save(state, em).await;
        true
    }

    /// Works out how to shrink `history`: the configured compactor first; the token budget
    /// when it fails, or when `target` asks for less than it left. Fails only when nothing can
    /// be done (cancelled, or a failed compactor and no window to budget against). `requested`:
    /// the user asked (`/compact`), so everything before the last exchange is compacted.
    pub(crate) async fn shrink(
        &self,
        history: &[Message],
        tools: &[ToolDefinition],
        target: Option<u64>,
        requested: bool,
        cancel: &CancellationToken,
    ) -> Result<Shrunk, MemoryError> {
        let mut shrunk = Shrunk {
            steps: Vec::new(),
            strategy: "token_budget",
            fallback: None,
        };
        let mut current = history.to_vec();
        let mut budget = target;
        if let Some(compactor) = &self.options.compactor {
            shrunk.strategy = compactor.strategy();
            // The summary is one more model call, with a deadline of its own: a stalled one
            // falls back to the token budget rather than holding the run.
            let provider = self.provider();
            let compacting = async {
                if requested {
                    compactor
                        .compact_requested(&current, provider.as_ref(), cancel)
                        .await
                } else {
                    compactor.compact(&current, provider.as_ref(), cancel).await
                }
            };
            let compacted = tokio::time::timeout(SUMMARY_TIMEOUT, compacting)
                .await
                .unwrap_or_else(|_| {
                    Err(MemoryError::Compaction(format!(
                        "no summary within {} s",
                        SUMMARY_TIMEOUT.as_secs()
                    )))
                });
            match compacted {
                Ok(step) if step.is_unchanged() => {}
                Ok(mut step) => {
                    if let Some(summary) = &mut step.summary {
                        summary
                            .content
                            .push_str(&active_tasks(&self.todos().snapshot()));
                    }
                    current = step.apply(&current);
                    shrunk.steps.push(step);
                }
                Err(error) if cancel.is_cancelled() => return Err(error),
                Err(error) => {
                    let Some(fallback) = target.or_else(|| self.fallback_budget()) else {
                        return Err(error);
                    };
                    shrunk.fallback = Some(format!(
                        "{} could not compact the conversation ({error}); kept the latest \
                         messages that fit in {fallback} tokens instead",
                        compactor.strategy()
                    ));
                    budget = Some(fallback);
                }
            }
        }
        if let Some(budget) = budget
            && estimate_tokens(&current, tools) > budget
        {
            // The tool definitions go with every request: the messages get what they leave.
            let messages_budget = budget.saturating_sub(estimate_tokens(&[], tools));
            let mut step = TokenBudget {
                max_tokens: messages_budget,
            }
            .compact(&current, self.provider().as_ref(), cancel)
            .await?;
            // A budget smaller than the latest message would keep nothing at all: keep that
            // message (with the call its results answer) and drop everything before it.
            if step.keep_from >= current.len() {
                step = Compaction::cut(&current, current.len().saturating_sub(1));
            }
            if !step.is_unchanged() {
                shrunk.steps.push(step);
                shrunk.strategy = TokenBudget { max_tokens: 0 }.strategy();
            }
        }
        Ok(shrunk)
    }

    /// What the token budget keeps when the configured compactor failed: half the window,
    /// well under the threshold so the next turns do not compact again at once.
    fn fallback_budget(&self) -> Option<u64> {
        let window = self.options.context_window;
        (window > 0).then_some(window / 2)
    }

    /// Compacts a stored session's history now (`/compact`); every message is stored, so the
    /// checkpoints are recorded at once.
    pub(crate) async fn compact_stored(
        &self,
        history: &mut Vec<Message>,
        tools: &[ToolDefinition],
        session: &dyn crate::memory::Session,
        cancel: &CancellationToken,
    ) -> Result<Option<CompactionInfo>, MemoryError> {
        let before = estimate_tokens(history, tools);
        let shrunk = self.shrink(history, tools, None, true, cancel).await?;
        if shrunk.steps.is_empty() {
            return Ok(None);
        }
        for step in &shrunk.steps {
            session
                .record_compaction(step.keep_from - 1, step.summary.clone())
                .await?;
        }
        *history = shrunk.apply(history);
        let after = estimate_tokens(history, tools);
        // Asked for: said whatever it saved.
        Ok(Some(CompactionInfo {
            before_tokens: before,
            after_tokens: after,
            strategy: shrunk.strategy,
        }))
    }
}
