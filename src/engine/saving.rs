//! Saving a run's turns: the messages not stored yet go to the session in one append, then the
//! compaction checkpoints that were waiting for them. A failed save keeps everything in memory
//! for the next one (the user is told), also across runs of the session in this process;
//! nothing is ever marked stored that was not.

use super::AgentEngine;
use super::emitter::Emitter;
use super::event::{Event, EventKind};
use super::run_loop::RunState;
use crate::memory::Compaction;
use crate::schema::Message;

/// What a run of `session_id` ended without storing: its messages in order (after the stored
/// view) and the compaction checkpoints that wait for them.
pub(super) struct Unsaved {
    session_id: String,
    messages: Vec<Message>,
    checkpoints: Vec<Compaction>,
}

impl AgentEngine {
    /// Stores the messages not stored yet, then the checkpoints that waited for them.
    pub(super) async fn save(&self, state: &mut RunState, em: &mut dyn Emitter) {
        let Some(session) = state.session.clone() else {
            state.saved = state.history.len();
            state.carry.clear();
            state.checkpoints.clear();
            return;
        };
        if !state.carry.is_empty() || state.saved < state.history.len() {
            let mut batch = state.carry.clone();
            batch.extend_from_slice(&state.history[state.saved.min(state.history.len())..]);
            // A store busy past its own timeout gets two more chances before the turn waits in
            // memory for the next save; the user is told, since a crash now would lose it.
            let mut failure = None;
            for wait_ms in [0u64, 100, 500] {
                tokio::time::sleep(std::time::Duration::from_millis(wait_ms)).await;
                match session.append_messages(&batch).await {
                    Ok(()) => {
                        failure = None;
                        break;
                    }
                    Err(error) => {
                        tracing::error!("{} could not save the turn | error={error}", em.prefix());
                        failure = Some(error);
                    }
                }
            }
            if let Some(error) = failure {
                em.emit(Event {
                    turn: state.turns,
                    kind: EventKind::Notice(format!(
                        "this turn could not be saved to sessions.db ({error}); it is kept in \
                         memory and saved with the next one"
                    )),
                })
                .await;
                return;
            }
            state.carry.clear();
            state.saved = state.history.len();
        }
        // Every message the checkpoints hide is stored now; record them in the order they came.
        while let Some(step) = state.checkpoints.first() {
            let recorded = session
                .record_compaction(step.keep_from - 1, step.summary.clone())
                .await;
            if let Err(error) = recorded {
                // The stored view stays longer than the model's until the next save retries.
                tracing::warn!(
                    "{} could not store the compaction checkpoint | error={error}",
                    em.prefix()
                );
                return;
            }
            state.checkpoints.remove(0);
        }
        // The stored view is now the model's history: the server's count of it is kept for
        // the next run's compaction decision.
        if let Some((tokens, covered)) = state.known_prompt
            && state.recorded_prompt != state.known_prompt
            && covered >= 1
        {
            let count = crate::memory::PromptCount {
                tokens,
                messages: covered - 1,
            };
            match session.record_prompt_count(count).await {
                Ok(()) => state.recorded_prompt = state.known_prompt,
                Err(error) => tracing::warn!(
                    "{} could not store the prompt's token count | error={error}",
                    em.prefix()
                ),
            }
        }
        // The session's usage totals (`harness9 sessions --json`), added as the turns are.
        if state.unrecorded_usage != crate::schema::Usage::default() {
            let usage = state.unrecorded_usage;
            match session.record_usage(usage, state.unrecorded_cost).await {
                Ok(()) => {
                    state.unrecorded_usage = crate::schema::Usage::default();
                    state.unrecorded_cost = 0.0;
                }
                Err(error) => tracing::warn!(
                    "{} could not store the session's usage | error={error}",
                    em.prefix()
                ),
            }
        }
    }

    /// At the end of a run: keeps what could not be saved for the session's next run, and
    /// tells the user it is only in memory.
    pub(super) async fn keep_unsaved(&self, state: &mut RunState, em: &mut dyn Emitter) {
        let Some(session) = &state.session else {
            return;
        };
        let mut messages = std::mem::take(&mut state.carry);
        messages.extend_from_slice(&state.history[state.saved.min(state.history.len())..]);
        let checkpoints = std::mem::take(&mut state.checkpoints);
        let unsaved = (!messages.is_empty() || !checkpoints.is_empty()).then(|| Unsaved {
            session_id: session.id().to_owned(),
            messages,
            checkpoints,
        });
        if let Some(unsaved) = &unsaved
            && !unsaved.messages.is_empty()
        {
            em.emit(Event {
                turn: state.turns,
                kind: EventKind::Notice(format!(
                    "{} message(s) of this session are not in sessions.db yet: they are kept in \
                     memory and saved with the next prompt, and lost if harness9 exits first",
                    unsaved.messages.len()
                )),
            })
            .await;
        }
        if let Ok(mut slot) = self.unsaved.lock() {
            *slot = unsaved;
        }
    }

    /// At the start of a run: puts back what the session's last run could not save, as unsaved
    /// messages after the stored view, with its compactions applied again. Returns whether
    /// anything came back.
    pub(super) fn restore_unsaved(&self, state: &mut RunState) -> bool {
        let Some(session) = &state.session else {
            return false;
        };
        let taken = self
            .unsaved
            .lock()
            .ok()
            .and_then(|mut slot| slot.take_if(|unsaved| unsaved.session_id == session.id()));
        let Some(unsaved) = taken else {
            return false;
        };
        state.history.extend(unsaved.messages);
        for step in unsaved.checkpoints {
            state.apply_compaction(step);
        }
        true
    }
}
