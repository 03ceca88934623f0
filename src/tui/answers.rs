//! The answers the runner brings back from work done off the UI task (the session core's query
//! answers, a finished `!` command, a loaded session), taken into the app's state. Same rule as
//! `app.rs`: state changes in, commands out.

use super::app::{App, AppEvent, Command, Scroll};
use super::transcript::{Tone, Transcript};

impl App {
    /// Takes in an answer from work done off the UI task.
    pub fn handle_async(&mut self, event: AppEvent) -> Vec<Command> {
        match event {
            AppEvent::Sessions { generation, hits } => {
                if let Some(picker) = self.stack.find_mut::<super::picker::Picker>() {
                    picker.accept(generation, hits);
                }
            }
            AppEvent::SessionRead {
                session_id,
                messages,
            } => self.session_read(&session_id, messages),
            AppEvent::Files(files) => self.files = Some(super::mentions::with_directories(files)),
            AppEvent::Attached(files) => self
                .transcript
                .notice(super::mentions::attached_note(&files), Tone::Quiet),
            AppEvent::PastedImage(image) => self.attach_pasted_image(image),
            AppEvent::Images(images) => {
                for image in &images {
                    self.transcript
                        .notice(super::transcript::image_label(image), Tone::Quiet);
                }
            }
            AppEvent::Memories {
                generation,
                memories,
            } => {
                if let Some(panel) = self.stack.find_mut::<super::memory_panel::MemoryPanel>() {
                    panel.accept(generation, memories);
                }
            }
            AppEvent::Mcp { servers, notices } => {
                super::mcp_panel::servers_changed(self, servers, notices)
            }
            AppEvent::McpPrompt { command, result } => {
                return super::mcp_panel::prompt_fetched(self, &command, result);
            }
            AppEvent::ShellDone {
                id,
                mut result,
                duration,
            } => {
                self.shells.retain(|running| *running != id);
                result.tool_call_id = id;
                self.transcript.tool_finished(&result, Some(duration));
                if !self.busy() {
                    self.working_since = None;
                }
                // A prompt typed while the command ran goes now, carrying its output.
                if !self.busy() && !self.queue.is_empty() {
                    let next = self.queue.remove(0);
                    let mut commands = self.start_run(next);
                    commands.push(Command::QueueChanged(self.queue.clone()));
                    return commands;
                }
                self.transcript.notice(
                    "the output goes to the model with your next prompt",
                    Tone::Quiet,
                );
            }
            AppEvent::Compacted(Ok(Some(info))) => {
                self.flash = None;
                self.transcript.notice(
                    format!(
                        "compacted the conversation: {} → {} tokens ({})",
                        info.before_tokens, info.after_tokens, info.strategy
                    ),
                    Tone::Quiet,
                );
            }
            AppEvent::Compacted(Ok(None)) => {
                self.flash = Some("nothing to compact yet: the conversation is short".into());
            }
            AppEvent::Compacted(Err(error)) => {
                self.flash = None;
                self.transcript
                    .notice(format!("compaction failed: {error}"), Tone::Error);
            }
            AppEvent::ChildSessions(links) => {
                for (task_id, session_id) in links {
                    self.transcript.link_child_session(&task_id, session_id);
                }
            }
            AppEvent::SessionLoaded {
                session_id,
                mode,
                messages,
                todos,
                queue,
            } => {
                self.session.session_id = session_id;
                self.session.mode = mode;
                self.transcript = Transcript::from_messages(&messages);
                self.stack.close::<super::child_view::ChildView>();
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
                self.todos = todos;
                self.queue = queue;
                self.turn = 0;
                // The stored conversation's size until the provider counts it at the next call.
                self.tokens = (!messages.is_empty()).then(|| crate::engine::TokenUpdate {
                    input_tokens: crate::session::text::estimate_tokens(&messages, &[]),
                    output_tokens: 0,
                    context_window: self.session.context_window,
                    estimated: true,
                    ..Default::default()
                });
                self.scroll = Scroll::Follow;
                self.flash = Some(if self.queue.is_empty() {
                    format!(
                        "session {}",
                        &self.session.session_id[..self.session.session_id.len().min(8)]
                    )
                } else {
                    format!(
                        "{} queued prompt(s) restored: Enter on an empty input sends the next",
                        self.queue.len()
                    )
                });
            }
            AppEvent::Flash(text) => self.flash = Some(text),
            AppEvent::Prompts(prompts) => self.on_prompts(prompts),
            AppEvent::Restored(restored) => self.on_restored(restored),
            AppEvent::Failed(failure) => {
                self.flash = Some(failure.message.lines().next().unwrap_or("").to_owned());
                // A store that fails is shown as what it is and stays readable, never as an
                // empty screen.
                if failure.kind == crate::engine::FailureKind::Storage {
                    let hint = super::engine_events::next_step(failure.kind);
                    self.transcript
                        .notice(format!("{}\n{hint}", failure.message), Tone::Error);
                }
            }
        }
        Vec::new()
    }
}
