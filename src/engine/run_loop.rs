//! The ReAct loop, the only one: build the history (system prompt rebuilt, never stored), then
//! per turn compact if needed, call the model, run the tools it asked for, append the results
//! in the model's order and save the turn. It ends on a turn without tool calls, at the turn
//! limit, or on cancellation, always leaving a valid history behind.

use std::sync::Arc;
use std::time::Instant;

use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use super::continuation::Continuation;
use super::emitter::Emitter;
use super::event::{DoneInfo, Event, EventKind, SessionInfo, TokenUpdate};
use super::{AgentEngine, EngineError, RunSummary};
use crate::context::estimate_tokens;
use crate::memory::Session;
use crate::planning::Mode;
use crate::provider::Completion;
use crate::schema::{Message, ToolDefinition, Usage};

/// Per-run state the turns share.
pub(super) struct RunState {
    pub(super) history: Vec<Message>,
    /// Messages before this index are stored (or are the system prompt, which never is, or a
    /// summary its checkpoint stores).
    pub(super) saved: usize,
    /// Messages a compaction took out of `history` before they could be stored: stored first
    /// at the next save.
    pub(super) carry: Vec<Message>,
    /// Compaction checkpoints waiting for the messages they hide to be stored, in order.
    pub(super) checkpoints: Vec<crate::memory::Compaction>,
    pub(super) session: Option<Arc<dyn Session>>,
    pub(super) usage: Usage,
    /// Some call's server sent no usage, so `usage` holds harness9's estimate of it.
    pub(super) usage_estimated: bool,
    /// How the last model call stopped, when not by the model's choice.
    pub(super) model_stop: Option<crate::schema::ModelStop>,
    /// What the run's calls cost so far; `None` once a call's cost was unknown.
    pub(super) cost: Option<f64>,
    /// Whether every call so far had a known cost (the first call starts the sum).
    pub(super) turns_priced: bool,
    /// Usage (and the cost of calls with known prices) not yet added to the stored totals.
    pub(super) unrecorded_usage: Usage,
    pub(super) unrecorded_cost: f64,
    pub(super) turns: u32,
    /// The turn count when the current run began: an auto-continuation is a run of its own,
    /// with its own `--max-turns` budget.
    pub(super) budget_start: u32,
    pub(super) final_text: String,
    /// The prompt size the provider last reported, and the history length it covered: the next
    /// estimate counts only what was added since.
    pub(super) known_prompt: Option<(u64, usize)>,
    /// The `known_prompt` last recorded with the session, so it is written once.
    pub(super) recorded_prompt: Option<(u64, usize)>,
    /// Auto-continue: completed todos at the last check, and continuation runs since one was
    /// completed.
    pub(super) completed_seen: usize,
    pub(super) runs_without_progress: u32,
    /// The last tool call (name and arguments) and how many times in a row it came.
    pub(super) repeated_call: (String, u32),
    /// Set when the run must stop by itself, with why.
    pub(super) stall: Option<String>,
    /// How many times in a row a `Stop` hook kept the run going.
    pub(super) stop_blocks: u32,
}

impl RunState {
    /// Adds one call's (or children's) tokens to the run's totals and to what the session's
    /// stored totals have yet to get.
    fn add_usage(&mut self, added: &Usage) {
        for usage in [&mut self.usage, &mut self.unrecorded_usage] {
            usage.input_tokens += added.input_tokens;
            usage.output_tokens += added.output_tokens;
            usage.cache_read_tokens += added.cache_read_tokens;
            usage.cache_creation_tokens += added.cache_creation_tokens;
        }
    }

    /// Adds what sub-agents' model calls used to the run's totals (and to what the session's
    /// stored totals have yet to get).
    pub(super) fn add_children(&mut self, children: &super::subagent::ChildUsage) {
        if children.calls == 0 {
            return;
        }
        self.add_usage(&children.usage);
        self.usage_estimated |= children.estimated;
        self.unrecorded_cost += children.cost;
        self.cost = match (self.turns_priced, children.priced) {
            (true, true) => Some(self.cost.unwrap_or(0.0) + children.cost),
            _ => None,
        };
        self.turns_priced = self.cost.is_some();
    }

    pub(super) fn prompt_estimate(&self, tools: &[ToolDefinition]) -> u64 {
        match self.known_prompt {
            Some((tokens, covered)) if covered <= self.history.len() => {
                tokens + estimate_tokens(&self.history[covered..], &[])
            }
            _ => estimate_tokens(&self.history, tools),
        }
    }
}

impl AgentEngine {
    pub(crate) async fn run_loop(
        &self,
        prompt: &str,
        cancel: &CancellationToken,
        em: &mut dyn Emitter,
    ) -> Result<RunSummary, EngineError> {
        let session = self.session();
        let session_id = session
            .as_ref()
            .map(|s| s.id().to_owned())
            .unwrap_or_default();
        let observer = Arc::clone(&self.options.observer);
        let span = observer.on_interaction_start(&session_id, prompt);
        let started = Instant::now();
        em.emit(Event {
            turn: 0,
            kind: EventKind::SessionStarted(SessionInfo {
                session_id,
                workdir: self.workdir.display().to_string(),
                provider: self.provider().name().to_owned(),
                model: self.provider().model().to_owned(),
                mode: self.mode(),
            }),
        })
        .await;
        if let Some(problem) = self.todos.take_load_problem() {
            em.emit(Event {
                turn: 0,
                kind: EventKind::Notice(problem),
            })
            .await;
        }
        tracing::info!(
            "{} start | workdir={} maxTurns={} toolTimeout={:?} maxConcurrent={}",
            em.prefix(),
            self.workdir.display(),
            self.options.max_turns,
            self.options.tool_timeout,
            self.options.max_concurrent_tools
        );
        let mut state = RunState {
            history: Vec::new(),
            saved: 0,
            carry: Vec::new(),
            checkpoints: Vec::new(),
            session,
            usage: Usage::default(),
            usage_estimated: false,
            model_stop: None,
            cost: None,
            turns_priced: true,
            unrecorded_usage: Usage::default(),
            unrecorded_cost: 0.0,
            turns: 0,
            budget_start: 0,
            final_text: String::new(),
            known_prompt: None,
            recorded_prompt: None,
            completed_seen: self.todos.count(crate::planning::TodoStatus::Completed),
            runs_without_progress: 0,
            repeated_call: (String::new(), 0),
            stall: None,
            stop_blocks: 0,
        };
        let outcome = self
            .turns(prompt, cancel, em, &mut state, &span)
            .instrument(span.clone())
            .await;
        if cancel.is_cancelled() {
            // Esc, SIGINT: background children stop with the run that was interrupted.
            self.background.cancel_all();
        }
        self.keep_unsaved(&mut state, em).await;
        let error_text = outcome.as_ref().err().map(ToString::to_string);
        if let Some(error) = &error_text
            && self.auto_continue_enabled()
        {
            // Whatever went wrong, nothing carries on by itself after it.
            self.set_auto_continue(false);
            em.emit(Event {
                turn: state.turns,
                kind: EventKind::Notice(format!(
                    "auto-continue is off: the run ended with an error ({error})"
                )),
            })
            .await;
        }
        observer.on_interaction_end(&span, state.turns, error_text.as_deref());
        tracing::info!(
            "{} loop end | turns={} total_time={:.1}s{}",
            em.prefix(),
            state.turns,
            started.elapsed().as_secs_f64(),
            error_text
                .as_deref()
                .map(|e| format!(" error={e}"))
                .unwrap_or_default()
        );
        let kind = match &outcome {
            Ok(()) => EventKind::Done(DoneInfo {
                turns: state.turns,
                input_tokens: state.usage.prompt_tokens(),
                output_tokens: state.usage.output_tokens,
                cache_read_tokens: state.usage.cache_read_tokens,
                cache_write_tokens: state.usage.cache_creation_tokens,
                cost_usd: state.cost,
                estimated: state.usage_estimated,
                model_stop: state.model_stop,
            }),
            Err(error) => EventKind::Error(error.into()),
        };
        em.emit(Event {
            turn: state.turns,
            kind,
        })
        .await;
        outcome.map(|()| RunSummary {
            turns: state.turns,
            usage: state.usage,
            final_text: state.final_text,
        })
    }

    async fn turns(
        &self,
        prompt: &str,
        cancel: &CancellationToken,
        em: &mut dyn Emitter,
        state: &mut RunState,
        span: &tracing::Span,
    ) -> Result<(), EngineError> {
        let mut mode = self.mode();
        state.history = match &state.session {
            Some(session) => session.load_messages().await?,
            None => Vec::new(),
        };
        // Design §4.1: the system prompt is rebuilt on every start and never stored.
        state
            .history
            .retain(|m| m.role != crate::schema::Role::System);
        state
            .history
            .insert(0, Message::system(self.prompt.build(mode)));
        state.saved = state.history.len();
        // The server's count from the last run is the truth to start from (our estimate runs
        // low on digit-heavy output); a count for more messages than the view has is stale,
        // and so is one from before compactions the last run could not store.
        if !self.restore_unsaved(state)
            && let Some(session) = &state.session
            && let Ok(Some(count)) = session.prompt_count().await
            && count.messages < state.history.len()
        {
            state.known_prompt = Some((count.tokens, count.messages + 1));
            state.recorded_prompt = state.known_prompt;
        }
        // The user's hooks see the prompt first; one may drop it, or add context.
        let resumed = state.history.len() > 1;
        let Some(hook_context) = self.prompt_hooks(prompt, resumed, cancel, em).await else {
            return Ok(());
        };
        // Commands the user ran with `!` since the last prompt go to the model with this one.
        let mut prompt = prompt.to_owned();
        for context in hook_context.into_iter().chain(self.take_user_context()) {
            prompt.push_str("\n\n");
            prompt.push_str(&context);
        }
        let mut message = Message::user(prompt);
        message.images = self.take_images();
        state.history.push(message);
        // The prompt is stored before the first model call: a run killed at once still left it.
        self.save(state, em).await;

        loop {
            let turn = state.turns + 1;
            if self.options.max_turns > 0 && turn - state.budget_start > self.options.max_turns {
                return Err(EngineError::MaxTurns(self.options.max_turns));
            }
            if cancel.is_cancelled() {
                return Err(EngineError::Cancelled);
            }
            state.turns = turn;
            // Background children's events so far, and the answers of those that finished.
            self.drain_background(turn, false, cancel, em, state).await;
            let turn_mode = self.mode();
            if turn_mode != mode {
                mode = turn_mode;
                state.history[0] = Message::system(self.prompt.build(mode));
            }
            let turn_span = self.options.observer.on_turn_start(span, turn);
            let has_tool_calls = self
                .turn(turn, mode, cancel, em, state)
                .instrument(turn_span.clone())
                .await?;
            self.options
                .observer
                .on_turn_end(&turn_span, turn, has_tool_calls);
            self.turn_complete_hooks(turn, has_tool_calls, cancel, em)
                .await;
            if let Some(reason) = state.stall.take() {
                self.stop_auto_continue(turn, &reason, em).await;
                return Ok(());
            }
            if !has_tool_calls {
                match self.continuation(state) {
                    Continuation::Finished if self.background.running() > 0 => {
                        // The answer is not the end while background children run: their
                        // answers come to the model with one more turn.
                        if !self.drain_background(turn, true, cancel, em, state).await {
                            return Err(EngineError::Cancelled);
                        }
                        self.save(state, em).await;
                    }
                    Continuation::Finished => {
                        if !self
                            .keep_going_for_stop_hooks(turn, cancel, em, state)
                            .await
                        {
                            return Ok(());
                        }
                    }
                    Continuation::Stop(reason) => {
                        self.stop_auto_continue(turn, &reason, em).await;
                        return Ok(());
                    }
                    Continuation::Prompt { prompt, progress } => {
                        em.emit(Event {
                            turn,
                            kind: EventKind::Notice(progress),
                        })
                        .await;
                        state.history.push(Message::user(prompt));
                        state.budget_start = state.turns;
                        self.save(state, em).await;
                    }
                }
            }
        }
    }

    /// Runs the `Stop` hooks of a finished run; `true` when one blocked and the run goes on
    /// with its reason as the next instruction (at most `MAX_STOP_BLOCKS` times in a row).
    async fn keep_going_for_stop_hooks(
        &self,
        turn: u32,
        cancel: &CancellationToken,
        em: &mut dyn Emitter,
        state: &mut RunState,
    ) -> bool {
        use super::hook_events::MAX_STOP_BLOCKS;
        let Some(reason) = self
            .stop_hooks(turn, state.stop_blocks > 0, cancel, em)
            .await
        else {
            return false;
        };
        if state.stop_blocks >= MAX_STOP_BLOCKS {
            em.emit(Event {
                turn,
                kind: EventKind::Notice(format!(
                    "a Stop hook blocked the end of the run {MAX_STOP_BLOCKS} times in a row; \
                     the run ends here. It said: {reason}"
                )),
            })
            .await;
            return false;
        }
        state.stop_blocks += 1;
        em.emit(Event {
            turn,
            kind: EventKind::Notice(format!(
                "a Stop hook keeps the run going ({}/{MAX_STOP_BLOCKS}): {reason}",
                state.stop_blocks
            )),
        })
        .await;
        state.history.push(Message::user(reason));
        self.save(state, em).await;
        true
    }

    /// One turn; returns whether the model asked for tools (and so the loop goes on).
    async fn turn(
        &self,
        turn: u32,
        mode: Mode,
        cancel: &CancellationToken,
        em: &mut dyn Emitter,
        state: &mut RunState,
    ) -> Result<bool, EngineError> {
        let turn_started = Instant::now();
        let mut tools = self.registry.available_tools(mode);
        self.offer_provider_search(&mut tools, mode);
        tracing::info!(
            "{} ======== Turn {turn} ======== | history={} tools={}",
            em.prefix(),
            state.history.len(),
            tools.len()
        );
        self.maybe_compact(turn, &tools, cancel, em, state).await;
        let estimate = state.prompt_estimate(&tools);
        em.emit(Event {
            turn,
            kind: EventKind::TokenUpdate(TokenUpdate {
                input_tokens: estimate,
                output_tokens: 0,
                context_window: self.options.context_window,
                estimated: true,
                ..TokenUpdate::default()
            }),
        })
        .await;

        let llm_started = Instant::now();
        let completion = self.call_model(turn, &tools, cancel, em, state).await?;
        let llm_time = llm_started.elapsed();
        let Completion {
            message,
            usage,
            stop,
        } = completion;
        state.model_stop = stop;
        let update = match usage {
            Some(usage) => {
                state.add_usage(&usage);
                // The cost of a call whose model has no prices is unknown, and so is the run's.
                let cost = self.provider().prices().map(|prices| prices.cost(&usage));
                state.unrecorded_cost += cost.unwrap_or(0.0);
                state.cost = match (state.turns_priced, cost) {
                    (true, Some(cost)) => Some(state.cost.unwrap_or(0.0) + cost),
                    _ => None,
                };
                state.turns_priced = state.cost.is_some();
                TokenUpdate {
                    input_tokens: usage.prompt_tokens(),
                    output_tokens: usage.output_tokens,
                    context_window: self.options.context_window,
                    estimated: false,
                    after_call: true,
                    cache_read_tokens: usage.cache_read_tokens,
                    cache_write_tokens: usage.cache_creation_tokens,
                    cost_usd: cost,
                }
            }
            None => {
                // A call with no usage has no known cost: neither has the run.
                state.cost = None;
                state.turns_priced = false;
                // The server sent no usage (llama.cpp's server, some proxies): the totals get
                // harness9's own estimate, marked as such, rather than nothing.
                // Recounted: a refusal may have compacted the history since the first estimate.
                let estimate = Usage {
                    input_tokens: state.prompt_estimate(&tools),
                    output_tokens: estimate_tokens(std::slice::from_ref(&message), &[]),
                    ..Usage::default()
                };
                state.add_usage(&estimate);
                state.usage_estimated = true;
                TokenUpdate {
                    input_tokens: estimate.input_tokens,
                    output_tokens: estimate.output_tokens,
                    context_window: self.options.context_window,
                    estimated: true,
                    after_call: true,
                    ..TokenUpdate::default()
                }
            }
        };
        em.emit(Event {
            turn,
            kind: EventKind::TokenUpdate(update),
        })
        .await;
        state.final_text = message.content.clone();
        let calls = message.tool_calls.clone();
        state.history.push(message);
        state.known_prompt = (!update.estimated).then_some((
            update.input_tokens + update.output_tokens,
            state.history.len(),
        ));
        if calls.is_empty() {
            self.save(state, em).await;
            tracing::info!(
                "{} Turn {turn} | task complete | llm={:.1}s",
                em.prefix(),
                llm_time.as_secs_f64()
            );
            return Ok(false);
        }

        if self.auto_continue_enabled() {
            for call in &calls {
                let signature = format!("{} {}", call.name, call.arguments);
                if state.repeated_call.0 == signature {
                    state.repeated_call.1 += 1;
                } else {
                    state.repeated_call = (signature, 1);
                }
                if state.repeated_call.1 >= 3 {
                    state.stall = Some(format!(
                        "the same `{}` call with the same arguments came three times in a row",
                        call.name
                    ));
                }
            }
        }
        let tools_started = Instant::now();
        let mut children = super::subagent::ChildUsage::default();
        let results = self
            .run_tools(turn, mode, &calls, cancel, em, &mut children)
            .await;
        state.add_children(&children);
        for result in &results {
            state.history.push(Message::tool_result(result));
        }
        self.save(state, em).await;
        tracing::info!(
            "{} Turn {turn} | observation injected | history={} | llm={:.1}s tools={:.1}s turn={:.1}s",
            em.prefix(),
            state.history.len(),
            llm_time.as_secs_f64(),
            tools_started.elapsed().as_secs_f64(),
            turn_started.elapsed().as_secs_f64()
        );
        if cancel.is_cancelled() {
            return Err(EngineError::Cancelled);
        }
        Ok(true)
    }
}
