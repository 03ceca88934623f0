//! Stored session state that cannot be read (a corrupt todo list or prompt queue in
//! `sessions.db`, a conversation the store cannot give back) is reported by the real binary as
//! what it is and never overwritten by loading it.

use crate::exec::{Run, json_lines};
use crate::support::{MockLlm, Reply, Split, openai_text_sse};

fn stored_state(run: &Run, id: &str) -> (String, String) {
    let conn = rusqlite::Connection::open(run.home.join("sessions.db")).unwrap();
    conn.query_row(
        "SELECT todos.items, sessions.queued FROM sessions JOIN todos ON todos.session_id = sessions.id
         WHERE sessions.id = ?1",
        [id],
        |row| Ok((row.get(0)?, row.get(1)?)),
    )
    .unwrap()
}

#[test]
fn a_corrupt_todo_list_is_reported_and_kept_across_runs() {
    let mock = MockLlm::start_in_background();
    let run = Run::new();
    mock.push(Reply::Sse {
        body: openai_text_sse("First."),
        split: Split::Whole,
    });
    let first = run.exec(&mock, &["exec", "--json", "Plan it"]);
    assert_eq!(first.status.code(), Some(0));
    let id = json_lines(&first.stdout)[0]["data"]["session_id"]
        .as_str()
        .unwrap()
        .to_owned();
    {
        let conn = rusqlite::Connection::open(run.home.join("sessions.db")).unwrap();
        conn.execute(
            "INSERT INTO todos (session_id, items) VALUES (?1, '[{\"content\": \"write the par')",
            [&id],
        )
        .unwrap();
        conn.execute("UPDATE sessions SET queued = '[1, 2' WHERE id = ?1", [&id])
            .unwrap();
    }
    let corrupt = stored_state(&run, &id);

    // Text mode: the notice reaches stderr, and the run goes on.
    mock.push(Reply::Sse {
        body: openai_text_sse("Second."),
        split: Split::Whole,
    });
    let second = run.exec(&mock, &["exec", "--session", &id, "Go on"]);
    let stderr = String::from_utf8_lossy(&second.stderr);
    assert_eq!(second.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("the stored todo list of session") && stderr.contains("cannot be read"),
        "{stderr}"
    );

    // JSON mode: a `notice` event says so.
    mock.push(Reply::Sse {
        body: openai_text_sse("Third."),
        split: Split::Whole,
    });
    let third = run.exec(&mock, &["exec", "--json", "--session", &id, "Again"]);
    assert_eq!(third.status.code(), Some(0));
    let events = json_lines(&third.stdout);
    assert!(
        events.iter().any(|e| e["type"] == "notice"
            && e["data"].as_str().unwrap_or_default().contains("todo list")),
        "{events:?}"
    );
    assert_eq!(
        stored_state(&run, &id),
        corrupt,
        "loading never rewrote the stored values"
    );
}

#[test]
fn the_tui_reports_a_corrupt_queue_and_todo_list_and_leaves_them_stored() {
    let mock = MockLlm::start_in_background();
    let run = Run::new();
    mock.push(Reply::Sse {
        body: openai_text_sse("First."),
        split: Split::Whole,
    });
    let first = run.exec(&mock, &["exec", "--json", "Plan it"]);
    assert_eq!(first.status.code(), Some(0));
    let id = json_lines(&first.stdout)[0]["data"]["session_id"]
        .as_str()
        .unwrap()
        .to_owned();
    {
        let conn = rusqlite::Connection::open(run.home.join("sessions.db")).unwrap();
        conn.execute(
            "INSERT INTO todos (session_id, items) VALUES (?1, 'not json')",
            [&id],
        )
        .unwrap();
        conn.execute(
            "UPDATE sessions SET queued = '[\"half a prompt' WHERE id = ?1",
            [&id],
        )
        .unwrap();
    }
    let corrupt = stored_state(&run, &id);

    let script = format!(
        "'{}' --continue; printf 'SHELL-DONE'; sleep 30",
        crate::tui::harness9().display()
    );
    let mut pty = crate::tui::Pty::spawn(
        std::path::Path::new("/bin/sh"),
        &["-c", &script],
        &run.workdir,
        &crate::tui::env(&run, &mock),
    );
    pty.wait_for_all(&["stored todo list", "stored prompt queue", "cannot be read"]);
    pty.send("\x04");
    pty.wait_for("SHELL-DONE");
    assert_eq!(
        stored_state(&run, &id),
        corrupt,
        "opening and closing the session rewrote nothing"
    );
}

#[test]
fn the_tui_shows_a_store_that_cannot_be_read_as_what_it_is_not_an_empty_screen() {
    let mock = MockLlm::start_in_background();
    let run = Run::new();
    mock.push(Reply::Sse {
        body: openai_text_sse("First."),
        split: Split::Whole,
    });
    let first = run.exec(&mock, &["exec", "--json", "Remember this"]);
    assert_eq!(first.status.code(), Some(0));
    let id = json_lines(&first.stdout)[0]["data"]["session_id"]
        .as_str()
        .unwrap()
        .to_owned();
    // sessions.db loses its messages (a damaged or foreign file).
    rusqlite::Connection::open(run.home.join("sessions.db"))
        .unwrap()
        .execute_batch("DROP TABLE messages")
        .unwrap();

    let script = format!(
        "'{}' --resume {id}; printf 'SHELL-DONE'; sleep 30",
        crate::tui::harness9().display()
    );
    let mut pty = crate::tui::Pty::spawn(
        std::path::Path::new("/bin/sh"),
        &["-c", &script],
        &run.workdir,
        &crate::tui::env(&run, &mock),
    );
    pty.wait_for_all(&["cannot read the conversation of session", "no such table"]);
    pty.send("\x04");
    pty.wait_for("SHELL-DONE");
}
