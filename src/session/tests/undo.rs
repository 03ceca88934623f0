//! `/undo` and `/rewind` through the core: files back byte for byte, the conversation continued
//! from before a prompt with the later messages kept as a branch, and files changed since the
//! checkpoint named and never overwritten without an answer.

use super::*;
use crate::planning::Mode;
use crate::session::Conflicts;

pub(super) fn call(id: &str, name: &str, arguments: serde_json::Value) -> ScriptStep {
    let mut message = Message::assistant("");
    message.tool_calls = vec![ToolCall {
        id: id.into(),
        name: name.into(),
        arguments: arguments.to_string(),
    }];
    ScriptStep::Reply(message)
}

fn calls(list: &[(&str, &str, serde_json::Value)]) -> ScriptStep {
    let mut message = Message::assistant("");
    message.tool_calls = list
        .iter()
        .map(|(id, name, arguments)| ToolCall {
            id: (*id).into(),
            name: (*name).into(),
            arguments: arguments.to_string(),
        })
        .collect();
    ScriptStep::Reply(message)
}

pub(super) fn yolo_fixture() -> Fixture {
    let mut fixture = Fixture::new();
    fixture.settings.mode = Mode::Yolo;
    fixture.settings.mode_given = true;
    fixture
}

async fn prompt(opened: &mut Opened, text: &str) {
    opened.handle.send(Request::Submit(text.into()));
    let (last, _) = until(&mut opened.updates, "run end", run_ended).await;
    assert!(
        matches!(&last, Update::Engine(e) if matches!(e.kind, EventKind::Done(_))),
        "{last:?}"
    );
}

async fn restore(opened: &mut Opened, what: Restore, conflicts: Conflicts) -> Arc<Restored> {
    opened.handle.send(Request::Restore { what, conflicts });
    match until(&mut opened.updates, "restored", |u| {
        matches!(u, Update::Restored(_) | Update::Failed(_))
    })
    .await
    {
        (Update::Restored(restored), _) => restored,
        (other, _) => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn undo_puts_back_an_edited_and_a_written_file_byte_for_byte() {
    let fixture = yolo_fixture();
    let dir = fixture.workdir();
    // Bytes that are not UTF-8 and CRLF line ends: restored exactly, not as text.
    let over: &[u8] = b"old\r\n\xff\xfe binary\x00\r\n";
    std::fs::write(dir.join("over.bin"), over).unwrap();
    std::fs::write(dir.join("code.rs"), "fn main() {\r\n    one();\r\n}\r\n").unwrap();
    let provider = scripted([
        calls(&[
            (
                "e1",
                "edit_file",
                serde_json::json!({"path": "code.rs", "old_string": "one", "new_string": "two"}),
            ),
            (
                "w1",
                "write_file",
                serde_json::json!({"path": "over.bin", "content": "replaced\n"}),
            ),
            (
                "w2",
                "write_file",
                serde_json::json!({"path": "sub/new.txt", "content": "new\n"}),
            ),
        ]),
        text("done"),
    ]);
    let mut opened = fixture
        .open(&provider, SessionChoice::New, CoreOptions::default())
        .await;
    prompt(&mut opened, "change things").await;
    assert!(
        std::fs::read_to_string(dir.join("code.rs"))
            .unwrap()
            .contains("two")
    );
    assert_eq!(std::fs::read(dir.join("over.bin")).unwrap(), b"replaced\n");

    let restored = restore(&mut opened, Restore::Undo, Conflicts::Ask).await;
    assert!(!restored.report.asking, "{restored:?}");
    assert_eq!(restored.report.restored.len(), 2, "{restored:?}");
    assert_eq!(restored.report.removed, [dir.join("sub/new.txt")]);
    assert_eq!(std::fs::read(dir.join("over.bin")).unwrap(), over);
    assert_eq!(
        std::fs::read(dir.join("code.rs")).unwrap(),
        b"fn main() {\r\n    one();\r\n}\r\n"
    );
    assert!(!dir.join("sub/new.txt").exists());
    for name in ["code.rs", "over.bin", "sub/new.txt"] {
        assert!(restored.text.contains(name), "{}", restored.text);
    }
    assert!(
        restored.text.contains("“change things”"),
        "{}",
        restored.text
    );

    // Undone once: nothing is left to undo.
    let again = restore(&mut opened, Restore::Undo, Conflicts::Ask).await;
    assert!(again.text.starts_with("nothing to undo"), "{}", again.text);
    close(&mut opened).await;
}

#[tokio::test]
async fn undo_puts_back_what_a_bash_command_changed_in_the_workdir() {
    let fixture = yolo_fixture();
    let dir = fixture.workdir();
    std::fs::write(dir.join("kept.txt"), "kept\n").unwrap();
    std::fs::write(dir.join("gone.txt"), "gone\n").unwrap();
    let provider = scripted([
        call(
            "b1",
            "bash",
            serde_json::json!({"command": "echo more >> kept.txt; rm gone.txt; printf x > made.txt"}),
        ),
        text("done"),
    ]);
    let mut opened = fixture
        .open(&provider, SessionChoice::New, CoreOptions::default())
        .await;
    prompt(&mut opened, "run it").await;
    assert!(!dir.join("gone.txt").exists());
    let restored = restore(&mut opened, Restore::Undo, Conflicts::Ask).await;
    assert_eq!(restored.report.restored.len(), 2, "{restored:?}");
    assert_eq!(restored.report.removed, [dir.join("made.txt")]);
    assert_eq!(
        std::fs::read_to_string(dir.join("kept.txt")).unwrap(),
        "kept\n"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("gone.txt")).unwrap(),
        "gone\n"
    );
    assert!(!dir.join("made.txt").exists());
    close(&mut opened).await;
}

#[tokio::test]
async fn a_file_changed_since_the_checkpoint_is_named_and_only_overwritten_when_told() {
    let fixture = yolo_fixture();
    let dir = fixture.workdir();
    std::fs::write(dir.join("mine.txt"), "original\n").unwrap();
    std::fs::write(dir.join("other.txt"), "other\n").unwrap();
    let provider = scripted([
        calls(&[
            (
                "w1",
                "write_file",
                serde_json::json!({"path": "mine.txt", "content": "agent\n"}),
            ),
            (
                "w2",
                "write_file",
                serde_json::json!({"path": "other.txt", "content": "agent\n"}),
            ),
        ]),
        text("done"),
    ]);
    let mut opened = fixture
        .open(&provider, SessionChoice::New, CoreOptions::default())
        .await;
    prompt(&mut opened, "write").await;
    // The user edits one of the files afterwards.
    std::fs::write(dir.join("mine.txt"), "the user's edit\n").unwrap();

    let asked = restore(&mut opened, Restore::Undo, Conflicts::Ask).await;
    assert!(asked.report.asking);
    assert_eq!(asked.report.changed_since, [dir.join("mine.txt")]);
    assert!(asked.text.contains("mine.txt"), "{}", asked.text);
    // Nothing was written while asking.
    assert_eq!(
        std::fs::read_to_string(dir.join("mine.txt")).unwrap(),
        "the user's edit\n"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("other.txt")).unwrap(),
        "agent\n"
    );

    // "Keep mine": the others are restored, the user's file is left alone.
    let kept = restore(&mut opened, Restore::Undo, Conflicts::Keep).await;
    assert_eq!(kept.report.restored, [dir.join("other.txt")]);
    assert_eq!(
        std::fs::read_to_string(dir.join("mine.txt")).unwrap(),
        "the user's edit\n"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("other.txt")).unwrap(),
        "other\n"
    );
    assert!(
        kept.text.contains("left as you changed them: mine.txt"),
        "{}",
        kept.text
    );
    close(&mut opened).await;
}

#[tokio::test]
async fn rewind_to_the_first_of_three_prompts_restores_files_and_branches_the_conversation() {
    let fixture = yolo_fixture();
    let dir = fixture.workdir();
    std::fs::write(dir.join("notes.txt"), "zero\n").unwrap();
    let write = |id: &str, content: &str| {
        call(
            id,
            "write_file",
            serde_json::json!({"path": "notes.txt", "content": content}),
        )
    };
    let provider = scripted([
        write("w1", "one\n"),
        text("first done"),
        write("w2", "two\n"),
        text("second done"),
        call(
            "w3",
            "write_file",
            serde_json::json!({"path": "third.txt", "content": "three\n"}),
        ),
        text("third done"),
        text("a new direction"),
    ]);
    let mut opened = fixture
        .open(
            &provider,
            SessionChoice::New,
            CoreOptions {
                load_transcript: true,
                ..CoreOptions::default()
            },
        )
        .await;
    for text in ["first", "second", "third"] {
        prompt(&mut opened, text).await;
    }
    let id = opened.loaded.session_id.clone();

    opened.handle.send(Request::ListPrompts);
    let (listed, _) = until(&mut opened.updates, "prompts", |u| {
        matches!(u, Update::Prompts(_))
    })
    .await;
    let Update::Prompts(points) = listed else {
        unreachable!()
    };
    let texts: Vec<&str> = points.iter().map(|p| p.text.as_str()).collect();
    assert_eq!(texts, ["first", "second", "third"]);
    assert_eq!(
        points.iter().map(|p| p.files).collect::<Vec<_>>(),
        [2, 2, 1]
    );

    let what = Restore::Rewind {
        seq: points[0].seq,
        files: true,
        conversation: true,
    };
    opened.handle.send(Request::Restore {
        what,
        conflicts: Conflicts::Ask,
    });
    let (done, before) = until(&mut opened.updates, "restored", |u| {
        matches!(u, Update::Restored(_))
    })
    .await;
    let Update::Restored(restored) = done else {
        unreachable!()
    };
    assert_eq!(
        std::fs::read_to_string(dir.join("notes.txt")).unwrap(),
        "zero\n"
    );
    assert!(!dir.join("third.txt").exists());
    assert_eq!(restored.prompt.as_deref(), Some("first"));
    // Three prompts of three messages each (prompt, tool call, result) and their answers.
    assert_eq!(restored.branched, Some(12), "{restored:?}");
    let loaded = before
        .iter()
        .find_map(|u| match u {
            Update::Loaded(loaded) => Some(loaded.clone()),
            _ => None,
        })
        .expect("the session is loaded again");
    assert!(loaded.messages.is_empty(), "{:?}", loaded.messages);

    // The conversation goes on from before the first prompt; the old one is a branch.
    prompt(&mut opened, "instead").await;
    let closing = close(&mut opened).await;
    let store =
        crate::memory::SessionStore::open(&fixture.settings.home.join("sessions.db")).unwrap();
    let kept = store.branch_messages(&id, 1).await.unwrap();
    assert_eq!(kept.len(), 12);
    assert_eq!(kept[0].content, "first");
    let again = fixture.resume(&provider, &closing.session_id).await;
    let contents: Vec<&str> = again
        .loaded
        .messages
        .iter()
        .map(|m| m.content.as_str())
        .collect();
    assert_eq!(contents, ["instead", "a new direction"]);
}

#[tokio::test]
async fn list_jobs_answers_with_the_sessions_background_commands() {
    let fixture = yolo_fixture();
    let provider = scripted([
        call(
            "b1",
            "bash",
            serde_json::json!({"command": "echo serving; exec sleep 30", "background": true}),
        ),
        text("started"),
    ]);
    let mut opened = fixture
        .open(&provider, SessionChoice::New, CoreOptions::default())
        .await;
    prompt(&mut opened, "start a server").await;
    opened.handle.send(Request::ListJobs);
    let list = super::jobs::next_jobs(&mut opened).await;
    assert_eq!(list.len(), 1);
    assert!(
        list[0].running && list[0].command.contains("sleep 30"),
        "{list:?}"
    );
    close(&mut opened).await;
}

#[tokio::test]
async fn an_image_for_a_model_the_catalogue_marks_text_only_is_refused_before_the_request() {
    let mut fixture = yolo_fixture();
    let home = fixture.settings.home.clone();
    std::fs::write(
        home.join("models.toml"),
        "[[model]]\nname = \"script\"\nimages = false\n",
    )
    .unwrap();
    fixture.settings.catalogue = crate::provider::catalogue::Catalogue::load(&home).0;
    std::fs::write(
        fixture.workdir().join("shot.png"),
        crate::images::tests::png_3x2(),
    )
    .unwrap();
    let provider = scripted([text("never sent")]);
    let mut opened = fixture
        .open(&provider, SessionChoice::New, CoreOptions::default())
        .await;
    opened
        .handle
        .send(Request::Submit("what is in @shot.png".into()));
    let (last, before) = until(&mut opened.updates, "run end", run_ended).await;
    let Update::Engine(event) = last else {
        unreachable!()
    };
    let EventKind::Error(failure) = event.kind else {
        panic!("{event:?}")
    };
    assert_eq!(failure.kind, FailureKind::Config);
    assert!(
        failure.message.contains("script takes no images"),
        "{}",
        failure.message
    );
    assert!(answer_text(&before).is_empty());
    // Without the image the same model runs.
    prompt(&mut opened, "hello").await;
    close(&mut opened).await;
}

/// A sub-agent's change belongs to the prompt that started it: `/undo` takes it back too.
#[tokio::test]
async fn undo_puts_back_what_a_sub_agent_wrote() {
    let fixture = yolo_fixture();
    let dir = fixture.workdir();
    std::fs::write(dir.join("notes.txt"), "the parent's notes\n").unwrap();
    let provider = scripted([
        call(
            "t1",
            "task",
            serde_json::json!({"agent": "general", "description": "rewrite the notes",
                               "prompt": "Rewrite notes.txt"}),
        ),
        call(
            "w1",
            "write_file",
            serde_json::json!({"path": "notes.txt", "content": "the child's notes\n"}),
        ),
        text("rewritten"),
        text("the child rewrote them"),
    ]);
    let mut opened = fixture
        .open(&provider, SessionChoice::New, CoreOptions::default())
        .await;
    prompt(&mut opened, "have a sub-agent rewrite the notes").await;
    assert_eq!(
        std::fs::read_to_string(dir.join("notes.txt")).unwrap(),
        "the child's notes\n"
    );
    let restored = restore(&mut opened, Restore::Undo, Conflicts::Ask).await;
    assert!(!restored.report.asking, "{restored:?}");
    assert_eq!(
        std::fs::read_to_string(dir.join("notes.txt")).unwrap(),
        "the parent's notes\n"
    );
}

/// Issue 29 point 5: a folder swapped for a link after the checkpoint (into `.git/hooks`, and
/// out of the working directory) must not lead `/undo` there; the files are reported as not
/// restored.
#[tokio::test]
async fn undo_writes_through_no_link_swapped_in_after_the_checkpoint() {
    let fixture = yolo_fixture();
    let dir = fixture.workdir().canonicalize().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let outside = outside.path().canonicalize().unwrap();
    std::fs::create_dir_all(dir.join(".git/hooks")).unwrap();
    for folder in ["sub", "out"] {
        std::fs::create_dir_all(dir.join(folder)).unwrap();
        let file = dir.join(folder).join("pre-commit");
        std::fs::write(&file, "#!/bin/sh\necho original\n").unwrap();
        std::fs::set_permissions(&file, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
    }
    let provider = scripted([
        calls(&[
            (
                "w1",
                "write_file",
                serde_json::json!({"path": "sub/pre-commit", "content": "changed\n"}),
            ),
            (
                "w2",
                "write_file",
                serde_json::json!({"path": "out/pre-commit", "content": "changed\n"}),
            ),
            (
                "w3",
                "write_file",
                serde_json::json!({"path": "sub/made.txt", "content": "new\n"}),
            ),
        ]),
        text("done"),
    ]);
    let mut opened = fixture
        .open(&provider, SessionChoice::New, CoreOptions::default())
        .await;
    prompt(&mut opened, "change things").await;
    // The swap, as a background job would make it after the checkpoint.
    std::fs::rename(dir.join("sub"), dir.join("sub-real")).unwrap();
    std::os::unix::fs::symlink(dir.join(".git/hooks"), dir.join("sub")).unwrap();
    std::fs::rename(dir.join("out"), dir.join("out-real")).unwrap();
    std::os::unix::fs::symlink(&outside, dir.join("out")).unwrap();
    std::fs::write(outside.join("made.txt"), "theirs\n").unwrap();

    let restored = restore(&mut opened, Restore::Undo, Conflicts::Overwrite).await;
    assert!(restored.report.restored.is_empty(), "{restored:?}");
    assert_eq!(restored.report.failed.len(), 3, "{restored:?}");
    for (_, why) in &restored.report.failed {
        let link = crate::checkpoint::RestoreFailure::Link.to_string();
        assert_eq!(*why, link, "{restored:?}");
    }
    assert_eq!(
        std::fs::read_dir(dir.join(".git/hooks")).unwrap().count(),
        0
    );
    assert_eq!(
        std::fs::read_to_string(outside.join("made.txt")).unwrap(),
        "theirs\n"
    );
    assert!(!outside.join("pre-commit").exists());
    assert!(
        restored.text.contains("could not restore sub/pre-commit"),
        "{}",
        restored.text
    );
    close(&mut opened).await;
}
