//! Files a front end asks for are written by the core: `/export` makes a new file in the
//! working directory and never overwrites one. The stored sessions reach the commands without
//! a session of their own through the `Catalogue`, as the session's view types.

use super::*;

async fn export(opened: &mut Opened, file: &str, markdown: &str) -> Result<PathBuf, ExportError> {
    export_with(opened, file, markdown, false).await
}

async fn export_with(
    opened: &mut Opened,
    file: &str,
    markdown: &str,
    overwrite: bool,
) -> Result<PathBuf, ExportError> {
    // Sending never waits for the disk: the answer comes later, as an update.
    assert!(opened.handle.send(Request::Export {
        file: file.into(),
        markdown: markdown.into(),
        overwrite,
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

    // Over an existing file only when the front end says the user agreed.
    let replaced = export_with(&mut opened, "notes.md", "replaced\n", true).await;
    assert_eq!(replaced, Ok(path.clone()));
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "replaced\n");
    close(&mut opened).await;
}

/// Issue 29 point 14: `/export` wrote anywhere a name (or a hostile repository's links) led.
#[tokio::test]
async fn an_export_stays_inside_the_working_directory_off_protected_paths_and_links() {
    let fixture = Fixture::new();
    let provider = scripted([]);
    let mut opened = fixture
        .open(&provider, SessionChoice::New, CoreOptions::default())
        .await;
    let work = fixture.workdir().canonicalize().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let outside = outside.path().canonicalize().unwrap();
    std::fs::create_dir_all(work.join(".git/hooks")).unwrap();
    std::os::unix::fs::symlink(&outside, work.join("out")).unwrap();
    std::os::unix::fs::symlink(work.join(".git/hooks"), work.join("hooks")).unwrap();
    std::fs::create_dir_all(work.join("docs")).unwrap();
    std::os::unix::fs::symlink(work.join("docs"), work.join("docs-link")).unwrap();
    std::os::unix::fs::symlink(outside.join("planted.md"), work.join("dangling.md")).unwrap();
    std::fs::write(work.join("kept.md"), "mine\n").unwrap();

    let outside_file = outside.join("x.md").display().to_string();
    let cases = [
        ("../x.md", ExportError::Outside),
        (outside_file.as_str(), ExportError::Outside),
        ("/etc/x.md", ExportError::Outside),
        (".git/hooks/x", ExportError::Protected),
        (".env", ExportError::Protected),
        (".harness9/settings.local.json", ExportError::Protected),
        ("out/x.md", ExportError::Link),
        ("hooks/pre-commit", ExportError::Link),
        ("docs-link/x.md", ExportError::Link),
        ("dangling.md", ExportError::Exists),
        ("kept.md", ExportError::Exists),
    ];
    for (file, refused) in cases {
        let result = export(&mut opened, file, "planted\n").await;
        assert_eq!(result, Err(refused), "{file}");
    }
    assert_eq!(
        std::fs::read_dir(&outside).unwrap().count(),
        0,
        "written outside"
    );
    assert_eq!(
        std::fs::read_dir(work.join(".git/hooks")).unwrap().count(),
        0
    );
    assert!(!work.join(".env").exists());
    assert_eq!(
        std::fs::read_to_string(work.join("kept.md")).unwrap(),
        "mine\n"
    );
    // Inside, as named, it is written.
    let inside = export(&mut opened, "docs/x.md", "fine\n").await;
    assert_eq!(inside, Ok(work.join("docs/x.md")));
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
