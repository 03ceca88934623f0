//! `/undo`, `/rewind`'s list and the question about files changed since a checkpoint, in the
//! app alone: what it asks the core, what it draws, how it answers.

use std::sync::Arc;

use super::*;
use crate::session::{Conflicts, PromptPoint, RestoreReport};
use crate::session::{Restore, Restored};
use crate::tui::keymap::Focus;

fn send(app: &mut App, text: &str) -> Vec<Effect> {
    app.set_input(text);
    app.handle_key(key(KeyCode::Enter))
}

fn points() -> Vec<PromptPoint> {
    ["fix the parser", "add a test", "rename the module"]
        .iter()
        .enumerate()
        .map(|(i, text)| PromptPoint {
            seq: 1 + 4 * i as i64,
            text: (*text).into(),
            files: 3 - i,
        })
        .collect()
}

#[test]
fn undo_asks_the_core_and_shows_what_it_restored() {
    let mut app = app();
    assert_eq!(
        send(&mut app, "/undo"),
        [Effect::Request(Request::Restore {
            what: Restore::Undo,
            conflicts: Conflicts::Ask
        })]
    );
    app.take_update(Update::Restored(Arc::new(Restored {
        what: Restore::Undo,
        prompt: Some("fix it".into()),
        report: RestoreReport {
            restored: vec!["/work/project/src/lib.rs".into()],
            ..RestoreReport::default()
        },
        branched: None,
        text: "undid the file changes of “fix it”; restored src/lib.rs".into(),
    })));
    assert!(screen(&mut app, 100, 20).contains("restored src/lib.rs"));
    app.run_mut().running = true;
    assert!(send(&mut app, "/undo").is_empty(), "not during a run");
}

#[test]
fn rewind_lists_the_prompts_and_enter_c_f_choose_what_goes_back() {
    let mut app = app();
    assert_eq!(
        send(&mut app, "/rewind"),
        [Effect::Request(Request::ListPrompts)]
    );
    assert_eq!(app.layer(), Focus::Rewind);
    app.take_update(Update::Prompts(points()));
    let shown = screen(&mut app, 100, 20);
    assert!(shown.contains("Rewind to before a prompt"), "{shown}");
    assert!(shown.contains("fix the parser") && shown.contains("3 files changed since"));
    assert!(
        shown.contains("› rename the module"),
        "the newest is selected: {shown}"
    );
    app.handle_key(key(KeyCode::Up));
    app.handle_key(key(KeyCode::Up));
    assert_eq!(
        app.handle_key(key(KeyCode::Enter)),
        [Effect::Request(Request::Restore {
            what: Restore::Rewind {
                seq: 1,
                files: true,
                conversation: true
            },
            conflicts: Conflicts::Ask
        })]
    );
    assert_eq!(app.layer(), Focus::Main);
    for (code, files, conversation) in [('c', false, true), ('f', true, false)] {
        send(&mut app, "/rewind");
        app.take_update(Update::Prompts(points()));
        let commands = app.handle_key(key(KeyCode::Char(code)));
        assert_eq!(
            commands,
            [Effect::Request(Request::Restore {
                what: Restore::Rewind {
                    seq: 9,
                    files,
                    conversation
                },
                conflicts: Conflicts::Ask
            })]
        );
    }
    send(&mut app, "/rewind");
    assert!(app.handle_key(key(KeyCode::Esc)).is_empty());
    assert_eq!(app.layer(), Focus::Main);
}

#[test]
fn a_rewound_conversation_offers_its_prompt_again() {
    let mut app = app();
    app.take_update(Update::Restored(Arc::new(Restored {
        what: Restore::Rewind {
            seq: 1,
            files: true,
            conversation: true,
        },
        prompt: Some("fix the parser".into()),
        report: RestoreReport::default(),
        branched: Some(8),
        text: "rewound to before “fix the parser”".into(),
    })));
    assert_eq!(app.input_text(), "fix the parser");
}

#[test]
fn files_changed_since_are_named_and_the_answer_is_sent_back() {
    let mut app = app();
    let what = Restore::Undo;
    let asking = |what: Restore| {
        Update::Restored(Arc::new(Restored {
            what,
            prompt: None,
            report: RestoreReport {
                changed_since: vec!["/work/project/notes.md".into()],
                asking: true,
                ..RestoreReport::default()
            },
            branched: None,
            text: String::new(),
        }))
    };
    app.take_update(asking(what.clone()));
    assert_eq!(app.layer(), Focus::RestoreQuestion);
    let shown = screen(&mut app, 100, 20);
    assert!(shown.contains("notes.md"), "{shown}");
    assert!(shown.contains("o  overwrite them"), "{shown}");
    // Any other key does nothing: the question stays.
    assert!(app.handle_key(key(KeyCode::Enter)).is_empty());
    assert_eq!(app.layer(), Focus::RestoreQuestion);
    assert_eq!(
        app.handle_key(key(KeyCode::Char('k'))),
        [Effect::Request(Request::Restore {
            what: what.clone(),
            conflicts: Conflicts::Keep
        })]
    );
    app.take_update(asking(what.clone()));
    assert_eq!(
        app.handle_key(key(KeyCode::Char('o'))),
        [Effect::Request(Request::Restore {
            what: what.clone(),
            conflicts: Conflicts::Overwrite
        })]
    );
    app.take_update(asking(what));
    assert!(app.handle_key(key(KeyCode::Esc)).is_empty());
    assert_eq!(app.layer(), Focus::Main);
    assert_eq!(app.flash().text.as_deref(), Some("nothing was restored"));
}

#[test]
fn ps_lists_the_background_commands_and_the_status_line_counts_the_running_ones() {
    let mut app = app();
    let job = |id: &str, running: bool, tail: &str| crate::session::JobSummary {
        id: id.into(),
        command: format!("python3 -m http.server {id}"),
        running,
        elapsed: Duration::from_secs(42),
        // Ended at 12:53:10 UTC with status 1.
        ended: (!running).then(|| crate::session::JobEnd {
            status: Some(1),
            at: std::time::UNIX_EPOCH + Duration::from_secs(12 * 3600 + 53 * 60 + 10),
        }),
        tail: tail.into(),
    };
    // A refresh after a tool result: counted, and a line above the input with its last line,
    // not listed in the transcript.
    app.on_jobs(vec![job("1", true, "Serving HTTP on 0.0.0.0 port 8000")]);
    let shown = screen(&mut app, 140, 20);
    assert!(shown.contains("1 background command (/ps)"), "{shown}");
    assert!(
        shown.contains("⚙ [1] python3 -m http.server 1  Serving HTTP on 0.0.0.0 port 8000"),
        "{shown}"
    );
    assert!(!shown.contains("running 42s"), "{shown}");
    assert_eq!(send(&mut app, "/ps"), [Effect::Request(Request::ListJobs)]);
    // One job: its whole output, or stopping it, asked of the session core.
    for (typed, action) in [
        ("/ps 2", crate::session::JobAction::Output),
        ("/ps stop 2", crate::session::JobAction::Stop),
    ] {
        assert_eq!(
            send(&mut app, typed),
            [Effect::Request(Request::Job {
                id: "2".into(),
                action
            })]
        );
    }
    app.on_jobs(vec![
        job(
            "1",
            true,
            "Serving HTTP on 0.0.0.0 port 8000\n\"GET / HTTP/1.1\" 200 -",
        ),
        job("2", false, "done"),
    ]);
    let shown = screen(&mut app, 140, 20);
    assert!(
        shown.contains("[1] running 42s  python3 -m http.server 1"),
        "{shown}"
    );
    assert!(shown.contains("\"GET / HTTP/1.1\" 200 -"), "{shown}");
    // Its real end: the status and the time it ended, not an age since it started.
    assert!(
        shown.contains("[2] exited with status 1 at 12:53:10 UTC after 42s"),
        "{shown}"
    );
    // An ended command has no line above the input.
    app.on_jobs(vec![job("2", false, "done")]);
    let shown = screen(&mut app, 140, 20);
    assert!(!shown.contains("⚙"), "{shown}");
}

#[test]
fn a_pasted_image_path_becomes_a_mention_and_a_sent_or_resumed_image_shows_its_size() {
    let mut app = app();
    app.handle_paste("'/tmp/shots/screen.png'\n");
    assert_eq!(app.input_text(), "@/tmp/shots/screen.png ");
    let mut app = super::app();
    app.handle_paste("/tmp/my shot.png");
    assert_eq!(
        app.input_text(),
        "/tmp/my shot.png",
        "a path with spaces stays text"
    );
    let mut app = super::app();
    app.handle_paste("notes.txt");
    assert_eq!(app.input_text(), "notes.txt");

    let mut message = crate::schema::Message::user("what is this");
    message.images = vec![crate::schema::ImageRef {
        path: "/h/images/ab.png".into(),
        media_type: "image/png".into(),
        name: "shot.png".into(),
        width: 640,
        height: 480,
    }];
    let mut app = super::app();
    app.take_update(loaded("s", vec![message]));
    let shown = screen(&mut app, 100, 20);
    assert!(shown.contains("[image: shot.png, 640x480]"), "{shown}");
    // A prompt just sent: the core names its images.
    let mut app = super::app();
    app.take_update(Update::Images(vec![crate::schema::ImageRef {
        path: "/h/images/cd.png".into(),
        media_type: "image/png".into(),
        name: "diagram.png".into(),
        width: 1024,
        height: 768,
    }]));
    let shown = screen(&mut app, 100, 20);
    assert!(shown.contains("[image: diagram.png, 1024x768]"), "{shown}");
}

#[test]
fn ctrl_v_asks_for_the_clipboards_image_which_is_sent_as_a_mention_and_shown_as_pasted() {
    let mut app = app();
    assert_eq!(
        app.handle_key(ctrl('v')),
        [Effect::Request(Request::PasteImage)]
    );
    // What a terminal sends for Cmd+V / Ctrl+Shift+V when the clipboard holds only an image.
    assert_eq!(app.handle_paste(""), [Effect::Request(Request::PasteImage)]);
    app.set_input("what is ");
    app.take_update(Update::PastedImage(Ok(crate::session::ClipboardImage {
        path: "/h/clipboard/clipboard-1-ab.png".into(),
        width: 800,
        height: 600,
    })));
    assert_eq!(app.input_text(), "what is [image #1 800x600] ");
    let commands = app.handle_key(key(KeyCode::Enter));
    assert!(
        commands
            .iter()
            .any(|c| matches!(c, Effect::Request(Request::Submit(p))
            if p.trim_end() == "what is @/h/clipboard/clipboard-1-ab.png")),
        "{commands:?}"
    );
    let shown = screen(&mut app, 100, 20);
    assert!(shown.contains("what is [image #1 800x600]"), "{shown}");
    assert!(!shown.contains("clipboard-1-ab"), "{shown}");

    let mut app = super::app();
    app.take_update(Update::PastedImage(Err(crate::session::Failure::new(
        crate::session::FailureKind::NotFound,
        "the clipboard holds no image",
    ))));
    let shown = screen(&mut app, 100, 20);
    assert!(shown.contains("the clipboard holds no image"), "{shown}");
    assert_eq!(app.input_text(), "");
}
