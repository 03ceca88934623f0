//! Typed failures through the core's interface: a provider's, a store's, a setting's.

use super::*;

#[tokio::test]
async fn a_provider_failure_is_typed_by_its_class_not_its_words() {
    let fixture = Fixture::new();
    let mut missing = ProviderError::new(
        ProviderErrorKind::InvalidRequest,
        "interrupted: the key is wrong",
    );
    missing.status = Some(404);
    let provider = scripted([
        ScriptStep::Fail(ProviderError::new(
            ProviderErrorKind::Auth,
            "Incorrect API key provided",
        )),
        ScriptStep::Fail(missing),
    ]);
    let mut opened = fixture
        .open(&provider, SessionChoice::New, CoreOptions::default())
        .await;
    for expected in [FailureKind::Auth, FailureKind::Model] {
        opened.handle.send(Request::Submit("hi".into()));
        let (last, _) = until(&mut opened.updates, "run end", run_ended).await;
        let Update::Engine(event) = last else {
            unreachable!()
        };
        let EventKind::Error(failure) = event.kind else {
            panic!("{event:?}")
        };
        assert_eq!(failure.kind, expected, "{failure:?}");
    }
    // A model that cannot be set up is a configuration failure.
    let refusing: ProviderFactory = Arc::new(|model: &str| {
        Err(crate::schema::ProviderError::new(
            crate::schema::ProviderErrorKind::InvalidRequest,
            format!("no model {model}"),
        ))
    });
    let mut other = open_with(
        &fixture.settings,
        SessionChoice::New,
        CoreOptions::default(),
        {
            let provider = Arc::clone(&provider);
            let usable = fixture.settings.provider.model.clone();
            Arc::new(move |model: &str| {
                if model == usable {
                    Ok(Arc::clone(&provider) as Arc<dyn LlmProvider>)
                } else {
                    refusing(model)
                }
            })
        },
    )
    .await
    .unwrap_or_else(|e| panic!("{e}"));
    other.handle.send(Request::SetModel("gpt-nope".into()));
    let (failed, _) = until(&mut other.updates, "a failure", |u| {
        matches!(u, Update::Failed(_))
    })
    .await;
    assert!(
        matches!(failed, Update::Failed(f) if f.kind == FailureKind::Config
        && f.message.contains("no model gpt-nope"))
    );
    close(&mut other).await;
    close(&mut opened).await;
}

#[tokio::test]
async fn a_store_that_fails_is_reported_as_a_storage_failure_with_its_words() {
    let fixture = Fixture::new();
    let id = stored_run(&fixture, "keep this", "Stored.").await;

    // sessions.db loses its messages table (a damaged or foreign file).
    let conn = rusqlite::Connection::open(fixture.settings.home.join("sessions.db")).unwrap();
    conn.execute_batch("DROP TABLE messages").unwrap();
    drop(conn);

    let options = CoreOptions {
        load_transcript: true,
        ..CoreOptions::default()
    };
    let provider = scripted([]);
    let mut opened = fixture
        .open(&provider, SessionChoice::Resume(id.clone()), options)
        .await;
    // Not an empty conversation: a storage failure that says what the store said.
    let problem = opened
        .loaded
        .problems
        .iter()
        .find(|p| p.kind == FailureKind::Storage)
        .unwrap_or_else(|| panic!("{:?}", opened.loaded.problems));
    assert!(
        problem.message.contains(&id) && problem.message.contains("no such table"),
        "{problem:?}"
    );
    // A run cannot read its history either: its failure is typed the same way.
    opened.handle.send(Request::Submit("go on".into()));
    let (last, _) = until(&mut opened.updates, "run end", run_ended).await;
    let Update::Engine(event) = last else {
        unreachable!()
    };
    assert!(
        matches!(&event.kind, EventKind::Error(f) if f.kind == FailureKind::Storage),
        "{event:?}"
    );
    close(&mut opened).await;
}

#[tokio::test]
async fn a_malformed_settings_file_is_reported_when_the_session_opens() {
    let fixture = Fixture::new();
    let project = fixture.workdir().join(".harness9");
    std::fs::create_dir_all(&project).unwrap();
    // Valid JSON, but its deny list is not a list: the deny rules it meant are not in force.
    std::fs::write(
        project.join("settings.json"),
        r#"{"permissions": {"deny": "bash"}}"#,
    )
    .unwrap();
    let provider = scripted([]);
    let mut opened = fixture
        .open(&provider, SessionChoice::New, CoreOptions::default())
        .await;
    assert!(
        opened
            .notices
            .iter()
            .any(|n| n.contains("settings.json is ignored")),
        "{:?}",
        opened.notices
    );
    close(&mut opened).await;
}
