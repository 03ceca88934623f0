//! Compaction inside a run: when the estimated prompt passes the threshold of the window, the
//! compactor shrinks the history the model sees, the checkpoint is stored with the session (the
//! stored history stays whole), and a saving of more than 5% is reported.

use tokio_util::sync::CancellationToken;

use super::AgentEngine;
use super::emitter::Emitter;
use super::event::{CompactionInfo, Event, EventKind};
use super::run_loop::RunState;
use crate::context::estimate_tokens;
use crate::schema::{Message, ToolDefinition};

/// What a compaction did to the history.
pub(crate) enum Compacted {
    Unchanged,
    /// Changed, but saved too little to report.
    Quietly,
    Reported(CompactionInfo),
}

impl AgentEngine {
    /// Runs the compactor when the estimated prompt passes the threshold of the window.
    pub(super) async fn maybe_compact(
        &self,
        turn: u32,
        tools: &[ToolDefinition],
        cancel: &CancellationToken,
        em: &mut dyn Emitter,
        state: &mut RunState,
    ) {
        let Some(compactor) = &self.options.compactor else {
            return;
        };
        let window = self.options.context_window;
        let before = state.prompt_estimate(tools);
        if window == 0 || (before as f64) < window as f64 * self.options.compaction_threshold {
            return;
        }
        self.compact_with(compactor.as_ref(), turn, tools, cancel, em, state)
            .await;
    }

    async fn compact_with(
        &self,
        compactor: &dyn crate::memory::Compactor,
        turn: u32,
        tools: &[ToolDefinition],
        cancel: &CancellationToken,
        em: &mut dyn Emitter,
        state: &mut RunState,
    ) {
        match self
            .compact_history(
                compactor,
                &mut state.history,
                tools,
                state.session.as_deref(),
                cancel,
            )
            .await
        {
            Ok(Compacted::Unchanged) => {}
            Ok(compacted) => {
                state.saved = state.history.len();
                state.known_prompt = None;
                if let Compacted::Reported(info) = compacted {
                    em.emit(Event {
                        turn,
                        kind: EventKind::Compaction(info),
                    })
                    .await;
                }
            }
            Err(error) => tracing::warn!("{} compaction failed | error={error}", em.prefix()),
        }
    }

    /// Compacts `history` in place and records the checkpoint in `session`.
    pub(crate) async fn compact_history(
        &self,
        compactor: &dyn crate::memory::Compactor,
        history: &mut Vec<Message>,
        tools: &[ToolDefinition],
        session: Option<&dyn crate::memory::Session>,
        cancel: &CancellationToken,
    ) -> Result<Compacted, crate::memory::MemoryError> {
        let before = estimate_tokens(history, tools);
        let compaction = compactor
            .compact(history, self.provider().as_ref(), cancel)
            .await?;
        if compaction.is_unchanged() {
            return Ok(Compacted::Unchanged);
        }
        if let Some(session) = session {
            // Everything before the cut is stored, so the checkpoint covers stored messages only.
            session
                .record_compaction(compaction.keep_from - 1, compaction.summary.clone())
                .await?;
        }
        *history = compaction.apply(history);
        let after = estimate_tokens(history, tools);
        // Only a saving of more than 5% is worth telling the user about.
        Ok(if (after as f64) < before as f64 * 0.95 {
            Compacted::Reported(CompactionInfo {
                before_tokens: before,
                after_tokens: after,
                strategy: compactor.strategy(),
            })
        } else {
            Compacted::Quietly
        })
    }
}
