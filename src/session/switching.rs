//! Loading a session and switching to another: the engine, the todo list and the stored
//! queue are pointed at the stored session, and what cannot be read is reported as what it is
//! (a storage failure with the store's words), never shown as an empty conversation.

use std::path::Path;
use std::sync::Arc;

use super::actor::Core;
use super::protocol::{LoadedSession, Update};
use crate::assemble::{self, Assembly, SavingSession};
use crate::engine::{Failure, FailureKind};
use crate::memory::{NewSession, SessionStore, SqliteSession};
use crate::planning::Mode;

/// The session the core opened with, as a front end shows it.
pub(super) async fn load_current(
    assembly: &Assembly,
    mode: Mode,
    load_transcript: bool,
) -> LoadedSession {
    let id = assembly.session.id.clone();
    // An unreadable stored list was noted by `assemble` and left in sessions.db.
    let mut problems: Vec<Failure> = assembly
        .todos
        .take_load_problem()
        .into_iter()
        .map(|problem| Failure::new(FailureKind::Storage, problem))
        .collect();
    let messages = if load_transcript {
        read_messages(&assembly.store, &id, &mut problems).await
    } else {
        Vec::new()
    };
    let queue = assembly
        .store
        .load_queue(&id)
        .await
        .unwrap_or_else(|error| {
            problems.push(Failure::from(&error));
            Vec::new()
        });
    let child_sessions = if load_transcript {
        child_sessions(&assembly.store, &id, &mut problems).await
    } else {
        Vec::new()
    };
    LoadedSession {
        session_id: id,
        name: assembly.session.name.clone(),
        mode,
        messages,
        child_sessions,
        todos: assembly.todos.snapshot(),
        queue,
        problems,
        notices: Vec::new(),
    }
}

/// The session's children by task call id; a store that cannot say leaves them unopenable.
pub(super) async fn child_sessions(
    store: &SessionStore,
    id: &str,
    problems: &mut Vec<Failure>,
) -> Vec<(String, String)> {
    store.child_links(id).await.unwrap_or_else(|error| {
        problems.push(Failure::from(&error));
        Vec::new()
    })
}

async fn read_messages(
    store: &SessionStore,
    id: &str,
    problems: &mut Vec<Failure>,
) -> Vec<crate::schema::Message> {
    match store.load_all(id).await {
        Ok(messages) => messages,
        Err(error) => {
            problems.push(
                Failure::from(&error)
                    .context(&format!("cannot read the conversation of session {id}")),
            );
            Vec::new()
        }
    }
}

impl Core {
    /// The `SessionEnd` hooks of the session being left (the engine runs them once per session
    /// it started, so `/new` then the switch it makes runs them once); what they said is shown.
    pub(super) async fn session_end_hooks(&self, reason: &str) {
        for notice in self.assembly.engine.session_end_hooks(reason).await {
            self.hub.publish(Update::Engine(crate::engine::Event {
                turn: 0,
                kind: crate::engine::EventKind::Notice(notice),
            }));
        }
    }

    /// `/new`: a session in the same working directory, with the current model and mode.
    pub(super) async fn new_session(&mut self) {
        let engine = &self.assembly.engine;
        let created = self
            .assembly
            .store
            .create(NewSession {
                workdir: self.workdir.display().to_string(),
                provider: self.assembly.session.provider.clone(),
                model: engine.provider().model().to_owned(),
                mode: engine.mode().to_string(),
            })
            .await;
        match created {
            Ok(record) => {
                self.session_end_hooks("clear").await;
                self.switch_to(record.id).await
            }
            Err(error) => self.hub.publish(Update::Failed(
                Failure::from(&error).context("cannot start a session"),
            )),
        }
    }

    /// Points the engine, the todo list and the queue at another stored session.
    pub(super) async fn switch_to(&mut self, id: String) {
        let store = self.assembly.store.clone();
        let record = match store.get(&id).await {
            Ok(Some(record)) => record,
            Ok(None) => {
                let gone = Failure::new(FailureKind::NotFound, format!("session {id} is gone"));
                self.hub.publish(Update::Failed(gone));
                return;
            }
            Err(error) => {
                let failure = Failure::from(&error).context(&format!("cannot open session {id}"));
                self.hub.publish(Update::Failed(failure));
                return;
            }
        };
        // A session of another folder is not carried on here: its files, rules and checkpoints
        // are that folder's. The user is told how to open it there (from its repository,
        // `--resume` opens the worktree it ran in), as the peers do.
        if !same_folder(Path::new(&record.workdir), &self.workdir) {
            let notice = format!(
                "session {} ran in {}: it continues there, not here. Quit and run \
                 `harness9 --resume {}` in that folder{}",
                record.id,
                record.workdir,
                record.id,
                if crate::worktree::main_of_linked(Path::new(&record.workdir)).is_some() {
                    " (or in its repository, which opens that worktree)"
                } else {
                    ""
                }
            );
            self.hub.publish(Update::Engine(crate::engine::Event {
                turn: 0,
                kind: crate::engine::EventKind::Notice(notice),
            }));
            return;
        }
        // The session being left goes if it never got a prompt (as it would on exit).
        if self.session_id != record.id {
            self.session_end_hooks("resume").await;
            let _ = store.delete_if_empty(&self.session_id).await;
        }
        let saving = Arc::new(SavingSession::new(SqliteSession::new(
            store.clone(),
            record.id.clone(),
        )));
        let engine = &self.assembly.engine;
        engine.set_session(Some(Arc::clone(&saving) as Arc<dyn crate::memory::Session>));
        self.saving = saving;
        let (mode, yolo_notice) = assemble::resumed_mode(&record.mode);
        engine.set_plan_mode(mode);
        let mut problems = Vec::new();
        let todos = store.load_todos(&record.id).await.unwrap_or_else(|error| {
            problems.push(Failure::from(&error));
            Vec::new()
        });
        let todo_list = &self.assembly.todos;
        todo_list.load(todos.clone());
        let (sink_store, sink_id) = (store.clone(), record.id.clone());
        todo_list.set_sink(Box::new(move |items| {
            sink_store.save_todos(&sink_id, items)
        }));
        let messages = if self.options.load_transcript {
            read_messages(&store, &record.id, &mut problems).await
        } else {
            Vec::new()
        };
        let child_sessions = if self.options.load_transcript {
            child_sessions(&store, &record.id, &mut problems).await
        } else {
            Vec::new()
        };
        let queue = store.load_queue(&record.id).await.unwrap_or_else(|error| {
            problems.push(Failure::from(&error));
            Vec::new()
        });
        self.session_id = record.id.clone();
        self.queue = queue.clone();
        self.hub.publish(Update::Loaded(Arc::new(LoadedSession {
            session_id: record.id,
            name: record.name,
            mode,
            messages,
            child_sessions,
            todos,
            queue,
            problems,
            notices: yolo_notice.into_iter().collect(),
        })));
    }
}

/// Whether two folders are the same, however either was written.
fn same_folder(stored: &Path, here: &Path) -> bool {
    stored == here
        || matches!(
            (stored.canonicalize(), here.canonicalize()),
            (Ok(a), Ok(b)) if a == b
        )
}
