//! Background commands seen from the session core: a job's end is a notice for every front end.

use super::undo::{call, yolo_fixture};
use super::*;

#[tokio::test]
async fn a_background_job_that_ends_is_a_notice_with_its_status_and_last_lines() {
    let fixture = yolo_fixture();
    let provider = scripted([
        call(
            "b1",
            "bash",
            serde_json::json!({
                "command": "echo listening; echo 'address in use' >&2; exit 3",
                "background": true,
            }),
        ),
        text("started"),
    ]);
    let mut opened = fixture
        .open(&provider, SessionChoice::New, CoreOptions::default())
        .await;
    opened.handle.send(Request::Submit("start a server".into()));
    let text = notice(&mut opened, "the job's end", |t| {
        t.starts_with("background job 1")
    })
    .await;
    assert!(text.contains("exited with status 3"), "{text}");
    assert!(
        text.contains("listening") && text.contains("address in use"),
        "{text}"
    );
    // Outside the sandbox nothing was refused by it.
    assert!(!text.contains("sandbox"), "{text}");
    // The list follows, with the job's real end.
    let list = next_jobs(&mut opened).await;
    assert!(!list[0].running, "{list:?}");
    assert_eq!(list[0].ended.map(|end| end.status), Some(Some(3)));
    close(&mut opened).await;
}

/// The next list of background commands that is not empty.
pub(super) async fn next_jobs(opened: &mut Opened) -> Vec<JobSummary> {
    let (jobs, _) = until(
        &mut opened.updates,
        "jobs",
        |u| matches!(u, Update::Jobs(list) if !list.is_empty()),
    )
    .await;
    let Update::Jobs(list) = jobs else {
        unreachable!()
    };
    list
}

/// The next notice `matches` accepts, as text.
async fn notice(opened: &mut Opened, what: &str, matches: impl Fn(&str) -> bool) -> String {
    let (found, _) = until(&mut opened.updates, what, |u| {
        matches!(u, Update::Engine(Event { kind: EventKind::Notice(text), .. }) if matches(text))
    })
    .await;
    match found {
        Update::Engine(Event {
            kind: EventKind::Notice(text),
            ..
        }) => text,
        _ => unreachable!(),
    }
}

#[tokio::test]
async fn ps_shows_a_jobs_whole_output_and_stops_a_running_one() {
    let fixture = yolo_fixture();
    let background = |command: &str| serde_json::json!({"command": command, "background": true});
    let provider = scripted([
        // The server first: once the second has ended, the first surely runs.
        call("b1", "bash", background("exec sleep 30")),
        call("b2", "bash", background("echo one; echo two")),
        text("started"),
    ]);
    let mut opened = fixture
        .open(&provider, SessionChoice::New, CoreOptions::default())
        .await;
    opened.handle.send(Request::Submit("start two".into()));
    notice(&mut opened, "job 2's end", |t| {
        t.starts_with("background job 2")
    })
    .await;
    opened.handle.send(Request::Job {
        id: "2".into(),
        action: JobAction::Output,
    });
    let output = notice(&mut opened, "job 2's output", |t| {
        t.contains("): exited with status 0")
    })
    .await;
    assert!(output.contains("one\n    two"), "{output}");
    opened.handle.send(Request::Job {
        id: "1".into(),
        action: JobAction::Stop,
    });
    let stopped = notice(&mut opened, "job 1 stopped", |t| t.starts_with("job 1")).await;
    assert!(stopped.contains("was stopped"), "{stopped}");
    // Its end follows as every job's does.
    notice(&mut opened, "job 1's end", |t| {
        t.starts_with("background job 1")
    })
    .await;
    opened.handle.send(Request::Job {
        id: "9".into(),
        action: JobAction::Output,
    });
    let (failed, _) = until(&mut opened.updates, "unknown job", |u| {
        matches!(u, Update::Failed(_))
    })
    .await;
    let Update::Failed(failure) = failed else {
        unreachable!()
    };
    assert!(
        failure.message.contains("no background job 9"),
        "{failure:?}"
    );
    close(&mut opened).await;
}
