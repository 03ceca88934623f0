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
    let (notice, _) = until(&mut opened.updates, "the job's end", |u| {
        matches!(u, Update::Engine(Event { kind: EventKind::Notice(text), .. })
            if text.starts_with("background job 1"))
    })
    .await;
    let Update::Engine(Event {
        kind: EventKind::Notice(text),
        ..
    }) = notice
    else {
        unreachable!()
    };
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
