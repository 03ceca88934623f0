//! Issue 29, point 9: `$HARNESS9_HOME` is its owner's alone. A fresh home is made 0700 with
//! `sessions.db` (and SQLite's `-wal`/`-shm`) 0600; a home found open (0755, a 0644 database)
//! is tightened at start and the user told once, not again the next time.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use crate::exec::Run;
use crate::support::{MockLlm, Reply, Split, openai_text_sse};

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

fn answer(mock: &MockLlm) {
    mock.push(Reply::Sse {
        body: openai_text_sse("Done."),
        split: Split::Whole,
    });
}

/// The database and whichever of SQLite's side files are there after the run.
fn database_files(home: &Path) -> Vec<std::path::PathBuf> {
    ["sessions.db", "sessions.db-wal", "sessions.db-shm"]
        .iter()
        .map(|name| home.join(name))
        .filter(|path| path.exists())
        .collect()
}

#[test]
fn a_fresh_home_is_0700_and_its_database_0600() {
    let mock = MockLlm::start_in_background();
    let run = Run::new();
    std::fs::remove_dir(&run.home).unwrap();
    answer(&mock);
    let output = run.exec(&mock, &["exec", "hello"]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(mode(&run.home), 0o700);
    let files = database_files(&run.home);
    assert!(
        files.iter().any(|f| f.ends_with("sessions.db")),
        "{files:?}"
    );
    for file in files {
        assert_eq!(mode(&file), 0o600, "{}", file.display());
    }
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("readable by other users"), "{stderr}");
}

#[test]
fn an_open_home_is_tightened_at_start_and_said_once() {
    let mock = MockLlm::start_in_background();
    let run = Run::new();
    answer(&mock);
    answer(&mock);
    // A first run makes the database; then the home is opened up as an older harness9 left it.
    assert!(run.exec(&mock, &["exec", "hello"]).status.success());
    for file in database_files(&run.home) {
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
    }
    std::fs::set_permissions(&run.home, std::fs::Permissions::from_mode(0o755)).unwrap();

    let output = run.exec(&mock, &["exec", "hello again"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert_eq!(
        stderr.matches("readable by other users").count(),
        1,
        "{stderr}"
    );
    assert_eq!(mode(&run.home), 0o700);
    for file in database_files(&run.home) {
        assert_eq!(mode(&file), 0o600, "{}", file.display());
    }

    let again = MockLlm::start_in_background();
    answer(&again);
    let output = run.exec(&again, &["exec", "and again"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(!stderr.contains("readable by other users"), "{stderr}");
}
