//! A session's sub-agents' sessions through the core's interface.

use super::*;

/// A resumed session carries its sub-agents' sessions by the `task` call each answers, for a
/// front end's task blocks to open.
#[tokio::test]
async fn a_resumed_session_links_its_children_by_task_call() {
    let fixture = Fixture::new();
    let provider = scripted([text("Hello.")]);
    let mut opened = fixture
        .open(&provider, SessionChoice::New, CoreOptions::default())
        .await;
    opened.handle.send(Request::Submit("hi".into()));
    until(&mut opened.updates, "run end", run_ended).await;
    let closing = close(&mut opened).await;
    let store =
        crate::memory::SessionStore::open(&fixture.settings.home.join("sessions.db")).unwrap();
    let child = store
        .create_child(
            crate::memory::NewSession {
                workdir: fixture.workdir().display().to_string(),
                provider: "openai".into(),
                model: "m".into(),
                mode: "default".into(),
            },
            &closing.session_id,
            "call-1",
            "explore",
            "find the callers",
        )
        .await
        .unwrap();
    store.flush().await.unwrap();

    let mut again = fixture.resume(&provider, &closing.session_id).await;
    assert_eq!(
        again.loaded.child_sessions,
        [("call-1".to_owned(), child.id.clone())]
    );
    close(&mut again).await;
}
