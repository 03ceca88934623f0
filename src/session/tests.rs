//! The core through its request/update interface, without a terminal: a scripted provider, a
//! real `sessions.db` in a temporary home, the standard tools with the sandbox off.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;

use super::*;
use crate::config::Settings;
use crate::engine::{ApprovalDecision, Event, EventKind};
use crate::provider::{
    ApiKey, LlmProvider, ProviderConfig, ProviderKind, ScriptStep, ScriptedProvider,
};
use crate::schema::{Message, ProviderError, ProviderErrorKind, ToolCall};

/// A bound on every wait (never a way to wait for an outcome).
const PATIENCE: Duration = Duration::from_secs(20);

struct Fixture {
    _dir: tempfile::TempDir,
    settings: Settings,
}

impl Fixture {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let workdir = dir.path().join("repo");
        let home = dir.path().join("home");
        std::fs::create_dir_all(&workdir).unwrap();
        std::fs::create_dir_all(&home).unwrap();
        let settings = Settings {
            workdir,
            home,
            provider: ProviderConfig::new(
                ProviderKind::OpenAi,
                ApiKey::new("sk-test"),
                "http://127.0.0.1:9/v1",
            ),
            mode: Default::default(),
            mode_given: false,
            max_turns: 10,
            tool_timeout: Some(Duration::from_secs(10)),
            max_concurrent_tools: 0,
            context_window: 128_000,
            trusted: true,
            trust_decided: true,
            trust_flag: false,
            notices: Vec::new(),
            sandbox: Some(crate::sandbox::SandboxMode::Off),
            catalogue: Default::default(),
            run_rules: Default::default(),
            approve_extensions: false,
            pending_base_url: None,
            small_model: None,
            worktree: None,
            editor_mcp: Vec::new(),
        };
        Fixture {
            _dir: dir,
            settings,
        }
    }

    async fn open(
        &self,
        provider: &Arc<ScriptedProvider>,
        choice: SessionChoice,
        options: CoreOptions,
    ) -> Opened {
        let provider = Arc::clone(provider);
        let providers: ProviderFactory =
            Arc::new(move |_model: &str| Ok(Arc::clone(&provider) as Arc<dyn LlmProvider>));
        match open_with(&self.settings, choice, options, providers).await {
            Ok(opened) => opened,
            Err(error) => panic!("the session opens: {error}"),
        }
    }

    /// A second core resuming the stored session `id`, its transcript loaded.
    async fn resume(&self, provider: &Arc<ScriptedProvider>, id: &str) -> Opened {
        let options = CoreOptions {
            load_transcript: true,
            ..CoreOptions::default()
        };
        self.open(provider, SessionChoice::Resume(id.to_owned()), options)
            .await
    }

    fn workdir(&self) -> &Path {
        &self.settings.workdir
    }
}

fn scripted(steps: impl IntoIterator<Item = ScriptStep>) -> Arc<ScriptedProvider> {
    Arc::new(ScriptedProvider::new(steps))
}

fn text(reply: &str) -> ScriptStep {
    ScriptStep::Reply(Message::assistant(reply))
}

fn write_call(id: &str, path: &str) -> ScriptStep {
    let mut message = Message::assistant("");
    message.tool_calls = vec![ToolCall {
        id: id.into(),
        name: "write_file".into(),
        arguments: serde_json::json!({"path": path, "content": "made\n"}).to_string(),
    }];
    ScriptStep::Reply(message)
}

/// Reads updates until one matches; returns it and everything before it.
async fn until(
    updates: &mut mpsc::UnboundedReceiver<Update>,
    what: &str,
    mut matches: impl FnMut(&Update) -> bool,
) -> (Update, Vec<Update>) {
    let mut seen = Vec::new();
    let found = tokio::time::timeout(PATIENCE, async {
        while let Some(update) = updates.recv().await {
            if matches(&update) {
                return Some(update);
            }
            seen.push(update);
        }
        None
    })
    .await;
    match found {
        Ok(Some(update)) => (update, seen),
        _ => panic!("no update {what}; saw {seen:#?}"),
    }
}

/// Waits for the next approval and answers it with `decision`; returns the updates before it.
async fn answer_next_approval(opened: &mut Opened, decision: ApprovalDecision) -> Vec<Update> {
    let (asked, seen) = until(
        &mut opened.updates,
        "an approval",
        |u| matches!(u, Update::Engine(e) if matches!(e.kind, EventKind::ApprovalRequired(_))),
    )
    .await;
    let Update::Engine(Event {
        kind: EventKind::ApprovalRequired(request),
        ..
    }) = asked
    else {
        unreachable!()
    };
    opened.handle.send(Request::AnswerApproval {
        id: request.id,
        decision,
    });
    seen
}

fn run_ended(update: &Update) -> bool {
    matches!(
        update,
        Update::Engine(event) if matches!(event.kind, EventKind::Done(_) | EventKind::Error(_))
    )
}

fn answer_text(updates: &[Update]) -> String {
    updates
        .iter()
        .filter_map(|u| match u {
            Update::Engine(event) => match &event.kind {
                EventKind::ActionDelta(delta) => Some(delta.as_str()),
                _ => None,
            },
            _ => None,
        })
        .collect()
}

async fn close(opened: &mut Opened) -> Arc<Closing> {
    opened.handle.send(Request::Close {
        discard_if_empty: false,
    });
    match until(&mut opened.updates, "closed", |u| {
        matches!(u, Update::Closed(_))
    })
    .await
    {
        (Update::Closed(closing), _) => closing,
        _ => unreachable!(),
    }
}

/// A new session with one run of `prompt` answered `reply`, closed: its id.
async fn stored_run(fixture: &Fixture, prompt: &str, reply: &str) -> String {
    let provider = scripted([text(reply)]);
    let mut opened = fixture
        .open(&provider, SessionChoice::New, CoreOptions::default())
        .await;
    opened.handle.send(Request::Submit(prompt.into()));
    until(&mut opened.updates, "run end", run_ended).await;
    close(&mut opened).await.session_id.clone()
}

#[tokio::test]
async fn a_submitted_prompt_streams_its_events_to_done_and_is_stored() {
    let fixture = Fixture::new();
    let provider = scripted([text("Hello from the core.")]);
    let mut opened = fixture
        .open(&provider, SessionChoice::New, CoreOptions::default())
        .await;
    opened.handle.send(Request::Submit("hi".into()));
    let (last, before) = until(&mut opened.updates, "run end", run_ended).await;
    let Update::Engine(event) = last else {
        unreachable!()
    };
    assert!(matches!(event.kind, EventKind::Done(_)), "{event:?}");
    assert!(matches!(
        &before[0],
        Update::Engine(e) if matches!(e.kind, EventKind::SessionStarted(_))
    ));
    assert_eq!(answer_text(&before), "Hello from the core.");
    let closing = close(&mut opened).await;
    assert!(closing.kept && closing.unsaved.is_empty() && closing.flush_error.is_none());

    // It is in sessions.db: a second core resuming it loads both messages.
    let mut again = fixture.resume(&provider, &closing.session_id).await;
    let contents: Vec<&str> = again
        .loaded
        .messages
        .iter()
        .map(|m| m.content.as_str())
        .collect();
    assert_eq!(contents, ["hi", "Hello from the core."]);
    close(&mut again).await;
}

#[tokio::test]
async fn interrupt_ends_the_run_with_an_interrupted_failure() {
    let fixture = Fixture::new();
    let provider = scripted([ScriptStep::Hang {
        text: "Working on".into(),
    }]);
    let mut opened = fixture
        .open(&provider, SessionChoice::New, CoreOptions::default())
        .await;
    opened.handle.send(Request::Submit("long task".into()));
    until(
        &mut opened.updates,
        "the first delta",
        |u| matches!(u, Update::Engine(e) if matches!(e.kind, EventKind::ActionDelta(_))),
    )
    .await;
    opened.handle.send(Request::Interrupt);
    let (last, _) = until(&mut opened.updates, "run end", run_ended).await;
    let Update::Engine(event) = last else {
        unreachable!()
    };
    let EventKind::Error(failure) = event.kind else {
        panic!("{event:?}")
    };
    assert_eq!(failure.kind, FailureKind::Interrupted);
    close(&mut opened).await;
}

#[tokio::test]
async fn an_approval_answered_through_a_request_runs_the_call_and_only_once() {
    let fixture = Fixture::new();
    let provider = scripted([write_call("w1", "made.txt"), text("Written.")]);
    let mut opened = fixture
        .open(&provider, SessionChoice::New, CoreOptions::default())
        .await;
    opened.handle.send(Request::Submit("make a file".into()));
    let (approval, _) = until(
        &mut opened.updates,
        "an approval",
        |u| matches!(u, Update::Engine(e) if matches!(e.kind, EventKind::ApprovalRequired(_))),
    )
    .await;
    let Update::Engine(event) = approval else {
        unreachable!()
    };
    let EventKind::ApprovalRequired(request) = event.kind else {
        unreachable!()
    };
    assert!(!fixture.workdir().join("made.txt").exists(), "it waits");
    opened.handle.send(Request::AnswerApproval {
        id: request.id.clone(),
        decision: ApprovalDecision::AllowOnce,
    });
    // A second answer to the same approval changes nothing and is refused.
    opened.handle.send(Request::AnswerApproval {
        id: request.id.clone(),
        decision: ApprovalDecision::Deny { reason: None },
    });
    let (refused, _) = until(&mut opened.updates, "the second answer refused", |u| {
        matches!(u, Update::Failed(_))
    })
    .await;
    assert!(matches!(refused, Update::Failed(f) if f.kind == FailureKind::NotFound));
    let (last, _) = until(&mut opened.updates, "run end", run_ended).await;
    assert!(matches!(last, Update::Engine(e) if matches!(e.kind, EventKind::Done(_))));
    assert_eq!(
        std::fs::read_to_string(fixture.workdir().join("made.txt")).unwrap(),
        "made\n"
    );
    close(&mut opened).await;
}

#[tokio::test]
async fn new_and_resume_switch_the_session_and_a_missing_one_is_not_found() {
    let fixture = Fixture::new();
    let provider = scripted([text("First answer."), text("Second answer.")]);
    let options = CoreOptions {
        load_transcript: true,
        ..CoreOptions::default()
    };
    let mut opened = fixture.open(&provider, SessionChoice::New, options).await;
    let first = opened.loaded.session_id.clone();
    opened.handle.send(Request::Submit("one".into()));
    until(&mut opened.updates, "run end", run_ended).await;

    opened.handle.send(Request::NewSession);
    let (loaded, _) = until(&mut opened.updates, "the new session", |u| {
        matches!(u, Update::Loaded(_))
    })
    .await;
    let Update::Loaded(second) = loaded else {
        unreachable!()
    };
    assert_ne!(second.session_id, first);
    assert!(second.messages.is_empty());
    opened.handle.send(Request::Submit("two".into()));
    until(&mut opened.updates, "run end", run_ended).await;
    // The run went into the new session, not the first.
    let last_call = provider.calls().pop().unwrap();
    assert!(!last_call.messages.iter().any(|m| m.content == "one"));

    opened.handle.send(Request::Resume(first.clone()));
    let (loaded, _) = until(&mut opened.updates, "the first session again", |u| {
        matches!(u, Update::Loaded(_))
    })
    .await;
    let Update::Loaded(back) = loaded else {
        unreachable!()
    };
    assert_eq!(back.session_id, first);
    let contents: Vec<&str> = back.messages.iter().map(|m| m.content.as_str()).collect();
    assert_eq!(contents, ["one", "First answer."]);
    assert!(back.problems.is_empty());

    opened
        .handle
        .send(Request::Resume("0000000000000000ffffffffffffffff".into()));
    let (failed, _) = until(&mut opened.updates, "a failure", |u| {
        matches!(u, Update::Failed(_))
    })
    .await;
    assert!(matches!(failed, Update::Failed(f) if f.kind == FailureKind::NotFound));

    opened.handle.send(Request::ListSessions {
        query: String::new(),
        all: false,
        generation: 7,
    });
    let (sessions, _) = until(&mut opened.updates, "the session list", |u| {
        matches!(u, Update::Sessions { .. })
    })
    .await;
    let Update::Sessions { generation, hits } = sessions else {
        unreachable!()
    };
    assert_eq!(generation, 7, "the answer carries its query's generation");
    assert_eq!(hits.len(), 2);
    close(&mut opened).await;
}

#[tokio::test]
async fn a_prompt_sent_while_a_run_goes_is_queued_stored_and_run_next() {
    let fixture = Fixture::new();
    // The first run waits on an approval, so the second prompt arrives while it goes.
    let provider = scripted([
        write_call("w1", "a.txt"),
        text("First done."),
        text("Second done."),
    ]);
    let options = CoreOptions {
        drive_queue: true,
        load_transcript: false,
        wait_for_mcp: None,
        ask_elicitations: false,
    };
    let mut opened = fixture.open(&provider, SessionChoice::New, options).await;
    let id = opened.loaded.session_id.clone();
    opened.handle.send(Request::Submit("first".into()));
    let (approval, _) = until(
        &mut opened.updates,
        "an approval",
        |u| matches!(u, Update::Engine(e) if matches!(e.kind, EventKind::ApprovalRequired(_))),
    )
    .await;
    opened.handle.send(Request::Submit("second".into()));
    let (queue, _) = until(&mut opened.updates, "the queue", |u| {
        matches!(u, Update::Queue(_))
    })
    .await;
    assert!(matches!(&queue, Update::Queue(q) if q == &["second".to_owned()]));
    let Update::Engine(event) = approval else {
        unreachable!()
    };
    let EventKind::ApprovalRequired(request) = event.kind else {
        unreachable!()
    };
    opened.handle.send(Request::AnswerApproval {
        id: request.id,
        decision: ApprovalDecision::Deny { reason: None },
    });
    until(&mut opened.updates, "the first run's end", run_ended).await;
    let (started, _) = until(&mut opened.updates, "the queued run", |u| {
        matches!(u, Update::RunStarted { .. })
    })
    .await;
    assert!(matches!(started, Update::RunStarted { prompt } if prompt == "second"));
    let (last, before) = until(&mut opened.updates, "the second run's end", run_ended).await;
    assert!(matches!(last, Update::Engine(e) if matches!(e.kind, EventKind::Done(_))));
    assert_eq!(answer_text(&before), "Second done.");
    let asked = provider.calls().pop().unwrap();
    assert_eq!(asked.messages.last().unwrap().content, "second");
    close(&mut opened).await;
    let store =
        crate::memory::SessionStore::open(&fixture.settings.home.join("sessions.db")).unwrap();
    assert!(store.load_queue(&id).await.unwrap().is_empty(), "stored");
}

#[tokio::test]
async fn the_core_reads_mentioned_files_and_lists_the_workdir() {
    let fixture = Fixture::new();
    std::fs::write(
        fixture.workdir().join("notes.txt"),
        "the secret word is plum\n",
    )
    .unwrap();
    std::fs::write(
        fixture.workdir().join("shot.png"),
        crate::images::tests::png_3x2(),
    )
    .unwrap();
    let provider = scripted([text("Read it.")]);
    let mut opened = fixture
        .open(&provider, SessionChoice::New, CoreOptions::default())
        .await;
    opened.handle.send(Request::ListFiles { generation: 3 });
    let (files, _) = until(&mut opened.updates, "the files", |u| {
        matches!(u, Update::Files { .. })
    })
    .await;
    assert!(
        matches!(files, Update::Files { generation: 3, files } if files.contains(&"notes.txt".to_owned()))
    );
    opened.handle.send(Request::Submit(
        "what does @notes.txt say? @shot.png".into(),
    ));
    let (_, seen) = until(&mut opened.updates, "run end", run_ended).await;
    // And which images, with their size, for `[image: name, WxH]`.
    assert!(
        seen.iter().any(|u| matches!(u, Update::Images(images)
            if images.len() == 1 && images[0].name == "shot.png"
                && (images[0].width, images[0].height) == (3, 2))),
        "{seen:#?}"
    );
    // Front ends are told what was attached, with its size (they never read the files).
    assert!(
        seen.iter().any(|u| matches!(u, Update::Attached(files)
            if files.contains(&("notes.txt".to_owned(), 24)))),
        "{seen:#?}"
    );
    let asked = provider.calls().pop().unwrap();
    assert!(
        asked
            .messages
            .last()
            .unwrap()
            .content
            .contains("the secret word is plum")
    );
    close(&mut opened).await;
}

#[tokio::test]
async fn once_closed_every_watcher_sees_the_end_and_requests_are_refused() {
    let fixture = Fixture::new();
    let provider = scripted([]);
    let mut opened = fixture
        .open(&provider, SessionChoice::New, CoreOptions::default())
        .await;
    let mut second = opened.handle.subscribe();
    let closing = close(&mut opened).await;
    assert!(closing.kept, "a headless close keeps even an empty session");
    // The second watcher saw the same end, then its channel ends: nobody waits forever.
    let (seen, _) = until(&mut second, "closed", |u| matches!(u, Update::Closed(_))).await;
    assert!(matches!(seen, Update::Closed(c) if c.session_id == closing.session_id));
    let ended = tokio::time::timeout(PATIENCE, second.recv()).await;
    assert!(matches!(ended, Ok(None)), "{ended:?}");
    let ended = tokio::time::timeout(PATIENCE, opened.updates.recv()).await;
    assert!(matches!(ended, Ok(None)));
    assert!(!opened.handle.send(Request::Interrupt));
    assert!(opened.handle.subscribe().recv().await.is_none());
}

#[tokio::test]
async fn a_stored_session_is_read_without_switching_to_it() {
    let fixture = Fixture::new();
    let provider = scripted([]);
    let mut opened = fixture
        .open(&provider, SessionChoice::New, CoreOptions::default())
        .await;
    // A sub-agent's session, written to the same sessions.db beside the core.
    let store =
        crate::memory::SessionStore::open(&fixture.settings.home.join("sessions.db")).unwrap();
    let child = store
        .create(crate::memory::NewSession {
            workdir: fixture.workdir().display().to_string(),
            provider: "openai".into(),
            model: "m".into(),
            mode: "default".into(),
        })
        .await
        .unwrap();
    let said = [
        Message::user("find the callers"),
        Message::assistant("Two callers."),
    ];
    store.append(&child.id, &said).await.unwrap();
    store.flush().await.unwrap();

    opened.handle.send(Request::ReadSession {
        session_id: child.id.clone(),
    });
    let (read, before) = until(&mut opened.updates, "the stored conversation", |u| {
        matches!(u, Update::SessionRead { .. })
    })
    .await;
    let Update::SessionRead {
        session_id,
        messages,
    } = read
    else {
        unreachable!()
    };
    assert_eq!(session_id, child.id);
    let contents: Vec<String> = messages.unwrap().into_iter().map(|m| m.content).collect();
    assert_eq!(contents, ["find the callers", "Two callers."]);
    assert!(
        !before.iter().any(|u| matches!(u, Update::Loaded(_))),
        "the core stays on its own session"
    );
    close(&mut opened).await;
}

mod children;
mod compact;
mod elicitation;
mod exports;
mod failures;
mod jobs;
mod mcp_login;
mod memories;
mod own_writes;
mod rules;
mod undo;
mod worktrees;
