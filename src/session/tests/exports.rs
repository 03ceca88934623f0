//! Files a front end asks for are written by the core: `/export` makes a new file in the
//! working directory and never overwrites one. The stored sessions reach the commands without
//! a session of their own through the `Catalogue`, as the session's view types.

use super::*;

async fn export(opened: &mut Opened, file: &str, markdown: &str) -> Result<PathBuf, ExportError> {
    // Sending never waits for the disk: the answer comes later, as an update.
    assert!(opened.handle.send(Request::Export {
        file: file.into(),
        markdown: markdown.into(),
    }));
    match until(&mut opened.updates, "the export's answer", |u| {
        matches!(u, Update::Exported { .. })
    })
    .await
    {
        (
            Update::Exported {
                file: named,
                result,
            },
            _,
        ) => {
            assert_eq!(named, file);
            result
        }
        _ => unreachable!(),
    }
}

#[tokio::test]
async fn an_export_is_written_by_the_core_and_never_over_an_existing_file() {
    let fixture = Fixture::new();
    let provider = scripted([]);
    let mut opened = fixture
        .open(&provider, SessionChoice::New, CoreOptions::default())
        .await;
    let path = export(&mut opened, "notes.md", "## You\n\nhi\n")
        .await
        .unwrap();
    assert_eq!(path, fixture.workdir().join("notes.md"));
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "## You\n\nhi\n");

    let again = export(&mut opened, "notes.md", "other").await;
    assert_eq!(again, Err(ExportError::Exists));
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "## You\n\nhi\n");

    let nowhere = export(&mut opened, "missing/notes.md", "x").await;
    assert!(matches!(nowhere, Err(ExportError::Write(_))), "{nowhere:?}");
    close(&mut opened).await;
}

#[tokio::test]
async fn the_catalogue_lists_and_reads_stored_sessions_as_views() {
    let fixture = Fixture::new();
    let id = stored_run(&fixture, "keep this", "Stored.").await;

    let catalogue = Catalogue::open(&fixture.settings.home).unwrap();
    let workdir = fixture.workdir().display().to_string();
    let hits = catalogue
        .find_sessions("", Some(&workdir), 10)
        .await
        .unwrap();
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].session.id, id);
    assert_eq!(hits[0].session.message_count, 2);
    let key = &id[..8];
    assert_eq!(catalogue.resolve(key).await.unwrap().id, id);
    let messages = catalogue.transcript(&id).await.unwrap();
    let contents: Vec<String> = messages
        .unwrap_or_default()
        .into_iter()
        .map(|m| m.content)
        .collect();
    assert_eq!(contents, ["keep this", "Stored."]);
    assert_eq!(catalogue.transcript("no-such-session").await.unwrap(), None);
}
