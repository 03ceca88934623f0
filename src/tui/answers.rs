//! The session core's updates taken into the app's state: the engine's events (`engine_events`),
//! the answers to the app's requests (a query, a finished `!` command, a loaded session), what
//! the core says of itself (MCP servers, jobs, a rename). Same rule as `app.rs`: state changes
//! in, effects out.

use std::sync::Arc;

use super::app::{App, Effect, Scroll};
use super::transcript::{Tone, Transcript};
use crate::session::{ExportError, LoadedSession, Update};

impl App {
    /// Takes in an update of the session core. `Update::Closed` is the runner's (it ends the
    /// loop).
    pub fn take_update(&mut self, update: Update) -> Vec<Effect> {
        match update {
            Update::Engine(event) => return self.handle_engine(event),
            Update::Loaded(loaded) => return self.load(Arc::unwrap_or_clone(loaded)),
            Update::Todos(todos) => self.take_todos(todos),
            // The app keeps the queue and sends the next prompt itself.
            Update::Queue(_) | Update::RunStarted { .. } | Update::Closed(_) => {}
            Update::Renamed(name) => {
                self.tell(
                    format!("renamed: harness9 --resume {name} comes back here"),
                    Tone::Quiet,
                );
                *self.session_name_mut() = Some(name);
            }
            Update::Exported { file, result } => {
                let (text, tone) = match result {
                    Ok(path) => (
                        format!("exported the transcript to {}", path.display()),
                        Tone::Quiet,
                    ),
                    Err(ExportError::Exists) => (
                        format!("{file} exists: /export NAME writes another file"),
                        Tone::Warning,
                    ),
                    Err(error) => (format!("cannot write {file}: {error}"), Tone::Error),
                };
                self.tell(text, tone);
            }
            Update::Jobs(list) => self.on_jobs(list),
            Update::Worktrees(report) => {
                let tone = if report.failed {
                    Tone::Error
                } else {
                    Tone::Quiet
                };
                self.transcript_mut().notice(report.lines.join("\n"), tone);
            }
            Update::Sessions { generation, hits } => {
                if let Some(picker) = self.stack_mut().find_mut::<super::picker::Picker>() {
                    picker.accept(generation, hits);
                }
            }
            Update::SessionRead {
                session_id,
                messages,
            } => self.session_read(&session_id, messages),
            Update::Files { files, .. } => {
                self.input_box_mut().files = Some(super::mentions::with_directories(
                    Arc::unwrap_or_clone(files),
                ))
            }
            Update::Attached(files) => self
                .transcript_mut()
                .notice(super::mentions::attached_note(&files), Tone::Quiet),
            Update::PastedImage(image) => self.attach_pasted_image(image),
            Update::Images(images) => {
                for image in &images {
                    self.transcript_mut()
                        .notice(super::transcript::image_label(image), Tone::Quiet);
                }
            }
            Update::Memories {
                generation,
                memories,
            } => {
                if let Some(panel) = self
                    .stack_mut()
                    .find_mut::<super::memory_panel::MemoryPanel>()
                {
                    panel.accept(generation, memories);
                }
            }
            Update::Mcp { servers, notices } => {
                let servers = servers
                    .iter()
                    .map(super::mcp_panel::McpView::from_status)
                    .collect();
                super::mcp_panel::servers_changed(self, servers, notices)
            }
            Update::Elicitation(ask) => {
                self.open_layer(super::elicitation_form::ElicitationForm::new(ask))
            }
            Update::McpPrompt { command, result } => {
                return super::mcp_panel::prompt_fetched(self, &command, result);
            }
            Update::ShellDone {
                id,
                mut result,
                duration,
            } => {
                self.shells_mut().retain(|running| *running != id);
                result.tool_call_id = id;
                self.transcript_mut().tool_finished(&result, Some(duration));
                if !self.busy() {
                    self.run_mut().working_since = None;
                }
                // A prompt typed while the command ran goes now, carrying its output.
                if let Some(started) = self.start_next_queued() {
                    return started;
                }
                self.transcript_mut().notice(
                    "the output goes to the model with your next prompt",
                    Tone::Quiet,
                );
            }
            Update::Compacted(Ok(Some(info))) => {
                self.flash_mut().text = None;
                self.transcript_mut().notice(
                    format!(
                        "compacted the conversation: {} → {} tokens ({})",
                        info.before_tokens, info.after_tokens, info.strategy
                    ),
                    Tone::Quiet,
                );
            }
            Update::Compacted(Ok(None)) => {
                self.tell(
                    "nothing to compact: nothing comes before the last exchange",
                    Tone::Quiet,
                );
            }
            Update::Compacted(Err(error)) => {
                self.flash_mut().text = None;
                self.transcript_mut()
                    .notice(format!("compaction failed: {}", error.message), Tone::Error);
            }
            Update::Prompts(prompts) => self.on_prompts(prompts),
            Update::Restored(restored) => self.on_restored(restored),
            Update::Failed(failure) => self.failed(failure),
        }
        Vec::new()
    }

    /// Another session is now the current one (or the current one again, after a rewind of
    /// the conversation): its conversation, mode, todos and queue; what went wrong loading it
    /// and what was ignored are said.
    fn load(&mut self, loaded: LoadedSession) -> Vec<Effect> {
        // The session shown, loaded again: inline, its conversation up to there is in the
        // scrollback already.
        let again = loaded.session_id == self.session().session_id;
        let (problems, notices) = self.show_loaded(loaded);
        if again && self.screen().inline {
            self.transcript_mut().mark_written();
        }
        // Left in sessions.db as stored; the user is told why the list or queue is empty.
        let mut said: Vec<String> = Vec::new();
        for problem in problems {
            said.push(problem.message.clone());
            self.failed(problem);
        }
        said.extend(notices);
        if !said.is_empty() {
            self.flash_mut().text = Some(said.join("; "));
        }
        Vec::new()
    }

    /// Something asked of the session failed (what kind decides where it is shown).
    fn failed(&mut self, failure: crate::session::Failure) {
        self.flash_mut().text = Some(failure.message.lines().next().unwrap_or("").to_owned());
        // A store that fails is shown as what it is and stays readable, never as an empty
        // screen.
        if failure.kind == crate::session::FailureKind::Storage {
            let hint = super::engine_events::next_step(failure.kind);
            self.transcript_mut()
                .notice(format!("{}\n{hint}", failure.message), Tone::Error);
        }
    }

    /// The screen shows `loaded` from now on: its conversation, mode, todos and queue, and its
    /// sub-agents' sessions by task call id. Returns what could not be read of it and its
    /// notices, for the caller to say.
    pub(super) fn show_loaded(
        &mut self,
        loaded: LoadedSession,
    ) -> (Vec<crate::session::Failure>, Vec<String>) {
        let LoadedSession {
            session_id,
            name,
            mode,
            messages,
            todos,
            queue,
            problems,
            notices,
            child_sessions,
        } = loaded;
        // A named session is resumed by its name, however it got it.
        *self.session_name_mut() = name;
        let messages = &messages[..];
        self.session_mut().session_id = session_id;
        self.session_mut().mode = mode;
        *self.transcript_mut() = Transcript::from_messages(messages);
        for (task_id, session_id) in child_sessions {
            self.transcript_mut()
                .link_child_session(&task_id, session_id);
        }
        self.stack_mut().close::<super::child_view::ChildView>();
        self.set_history(
            messages
                .iter()
                .filter(|m| m.role == crate::schema::Role::User && !m.is_tool_result())
                .map(|m| {
                    crate::session::text::split_attachments(&m.content)
                        .0
                        .to_owned()
                })
                .collect(),
        );
        self.plan_mut().restore(todos);
        self.queue_mut().restore(queue);
        self.run_mut().turn = 0;
        // The stored conversation's size until the provider counts it at the next call.
        self.run_mut().tokens = (!messages.is_empty()).then(|| crate::engine::TokenUpdate {
            input_tokens: crate::session::text::estimate_tokens(messages, &[]),
            output_tokens: 0,
            context_window: self.session().context_window,
            estimated: true,
            ..Default::default()
        });
        self.view_mut().scroll = Scroll::Follow;
        self.flash_mut().text = Some(if self.queue().is_empty() {
            format!(
                "session {}",
                &self.session().session_id[..self.session().session_id.len().min(8)]
            )
        } else {
            format!(
                "{} queued prompt(s) restored: Enter on an empty input sends the next",
                self.queue().len()
            )
        });
        (problems, notices)
    }
}
