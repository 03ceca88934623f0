//! Sessions as a user meets them through the real binary: continued, resumed, listed, searched,
//! and never lost to a kill.

use std::process::Stdio;

use serde_json::Value;

use crate::exec::{Run, json_lines};
use crate::support::{MockLlm, Reply, Split, openai_text_sse, openai_tool_sse};

fn sessions_json(run: &Run, mock: &MockLlm, args: &[&str]) -> Vec<Value> {
    let mut all = vec!["sessions", "--json"];
    all.extend_from_slice(args);
    let output = run.exec(mock, &all);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice::<Value>(&output.stdout)
        .unwrap()
        .as_array()
        .unwrap()
        .clone()
}

fn user_contents(request: &Value) -> Vec<String> {
    request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| m["content"].as_str().unwrap_or_default().to_owned())
        .collect()
}

#[test]
fn exec_continue_and_session_resume_the_stored_conversation() {
    let mock = MockLlm::start_in_background();
    let run = Run::new();
    std::fs::write(
        run.workdir.join("notes.txt"),
        "the secret word is pelican\n",
    )
    .unwrap();
    mock.push(Reply::Sse {
        body: openai_tool_sse("c1", "read_file", r#"{"path":"notes.txt"}"#),
        split: Split::Whole,
    });
    mock.push(Reply::Sse {
        body: openai_text_sse("It says pelican."),
        split: Split::Whole,
    });
    let first = run.exec(&mock, &["exec", "--json", "Read notes.txt"]);
    assert_eq!(first.status.code(), Some(0));
    let id = json_lines(&first.stdout)[0]["data"]["session_id"]
        .as_str()
        .unwrap()
        .to_owned();

    mock.push(Reply::Sse {
        body: openai_text_sse("Still pelican."),
        split: Split::Whole,
    });
    let second = run.exec(&mock, &["exec", "--json", "--continue", "And again?"]);
    assert_eq!(second.status.code(), Some(0));
    assert_eq!(
        json_lines(&second.stdout)[0]["data"]["session_id"],
        id.as_str(),
        "the same session"
    );
    let request = mock.requests().pop().unwrap().body;
    assert_eq!(user_contents(&request), ["Read notes.txt", "And again?"]);
    let tool = request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .unwrap();
    assert!(
        tool["content"].as_str().unwrap().contains("pelican"),
        "the tool result came back"
    );

    mock.push(Reply::Sse {
        body: openai_text_sse("Third."),
        split: Split::Whole,
    });
    let third = run.exec(
        &mock,
        &["exec", "--json", "--session", &id[..16], "Third time?"],
    );
    assert_eq!(third.status.code(), Some(0));
    assert_eq!(user_contents(&mock.requests().pop().unwrap().body).len(), 3);

    let listed = sessions_json(&run, &mock, &[]);
    assert_eq!(listed.len(), 1);
    let entry = &listed[0];
    for key in [
        "id",
        "name",
        "title",
        "workdir",
        "created_at",
        "updated_at",
        "messages",
    ] {
        assert!(entry.get(key).is_some(), "`{key}` is listed: {entry}");
    }
    assert_eq!(entry["id"], id.as_str());
    assert_eq!(entry["title"], "Read notes.txt");
    assert_eq!(entry["messages"], 8);
    assert!(entry["created_at"].as_str().unwrap().ends_with('Z'));

    let found = sessions_json(&run, &mock, &["--search", "pelican"]);
    assert_eq!(
        found.len(),
        1,
        "a word from a tool result finds the session"
    );
    assert!(sessions_json(&run, &mock, &["--search", "albatross"]).is_empty());

    let missing = run.exec(&mock, &["exec", "--session", "no-such-session", "hi"]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("no session has the id or name"));
}

#[test]
fn sessions_lists_this_directory_unless_all() {
    let mock = MockLlm::start_in_background();
    let run = Run::new();
    mock.push(Reply::Sse {
        body: openai_text_sse("one"),
        split: Split::Whole,
    });
    assert_eq!(
        run.exec(&mock, &["exec", "--json", "in the repo"])
            .status
            .code(),
        Some(0)
    );
    let elsewhere = run.workdir.parent().unwrap().join("other");
    std::fs::create_dir_all(&elsewhere).unwrap();
    mock.push(Reply::Sse {
        body: openai_text_sse("two"),
        split: Split::Whole,
    });
    let other_dir = elsewhere.to_str().unwrap();
    assert_eq!(
        run.exec(&mock, &["exec", "--json", "-C", other_dir, "elsewhere"])
            .status
            .code(),
        Some(0)
    );
    assert_eq!(sessions_json(&run, &mock, &[]).len(), 1);
    assert_eq!(sessions_json(&run, &mock, &["--all"]).len(), 2);
    let table = run.exec(&mock, &["sessions"]);
    let text = String::from_utf8_lossy(&table.stdout);
    assert!(
        text.starts_with("ID") && text.contains("in the repo") && !text.contains("elsewhere"),
        "{text}"
    );
    let no_key = run
        .command(&mock, &["sessions"])
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .output()
        .unwrap();
    assert_eq!(no_key.status.code(), Some(0), "listing needs no API key");
}

#[test]
fn a_kill_mid_turn_keeps_every_finished_turn() {
    let mock = MockLlm::start_in_background();
    let run = Run::new();
    mock.push(Reply::Sse {
        body: openai_tool_sse("c1", "list_dir", "{}"),
        split: Split::Whole,
    });
    mock.push(Reply::Hang);
    let child = run
        .command(&mock, &["exec", "--json", "look around"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    mock.wait_for_requests(2);
    // SAFETY: signalling our own child process.
    unsafe { libc::kill(child.id() as i32, libc::SIGKILL) };
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), None, "killed by a signal");
    let id = json_lines(&output.stdout)[0]["data"]["session_id"]
        .as_str()
        .unwrap()
        .to_owned();

    let conn = rusqlite::Connection::open(run.home.join("sessions.db")).unwrap();
    let check: String = conn
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(check, "ok");
    let roles: Vec<String> = conn
        .prepare("SELECT role FROM messages WHERE session_id = ?1 ORDER BY seq")
        .unwrap()
        .query_map([&id], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(
        roles,
        ["user", "assistant", "user"],
        "prompt, tool call and its result survived"
    );
}

#[test]
fn two_processes_write_sessions_at_once() {
    let mock = MockLlm::start_in_background();
    let run = Run::new();
    mock.set_fallback(Reply::Sse {
        body: openai_text_sse("done"),
        split: Split::Every(3),
    });
    let children: Vec<_> = (0..2)
        .map(|i| {
            run.command(&mock, &["exec", "--json", &format!("task {i}")])
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for child in children {
        let output = child.wait_with_output().unwrap();
        assert_eq!(
            output.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    let listed = sessions_json(&run, &mock, &[]);
    assert_eq!(listed.len(), 2);
    assert!(listed.iter().all(|s| s["messages"] == 2));
}
