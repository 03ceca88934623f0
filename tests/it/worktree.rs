//! Sessions in git worktrees (issue 35), through the real binary: `exec --worktree` runs at
//! once on one repository, each on its own branch; `worktree list|merge|remove`; resuming a
//! session opens its worktree; outside a repository, a usage error.

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;

use crate::exec::{Run, json_lines};
use crate::support::{MockLlm, Reply, Split, git, openai_text_sse, openai_tool_sse};

/// A repository at `run.workdir` with `shared.txt` committed on `main`, and `.env` ignored.
fn repository(run: &Run) {
    git(&run.workdir, &["init", "-q", "-b", "main"]);
    std::fs::write(run.workdir.join("shared.txt"), "base\n").unwrap();
    std::fs::write(run.workdir.join(".gitignore"), ".env\n").unwrap();
    git(&run.workdir, &["add", "."]);
    git(&run.workdir, &["commit", "-q", "-m", "base"]);
}

/// A mock whose model writes `text` into shared.txt, commits it, then says it is done.
fn editing_model(text: &str) -> MockLlm {
    let mock = MockLlm::start_in_background();
    let write = serde_json::json!({"path": "shared.txt", "content": text}).to_string();
    mock.push(Reply::Sse {
        body: openai_tool_sse("w1", "write_file", &write),
        split: Split::Whole,
    });
    let commit = serde_json::json!({"command": "git -c user.name=m -c user.email=m@example.com \
        commit -q -am edited"})
    .to_string();
    mock.push(Reply::Sse {
        body: openai_tool_sse("c1", "bash", &commit),
        split: Split::Whole,
    });
    mock.push(Reply::Sse {
        body: openai_text_sse("edited"),
        split: Split::Whole,
    });
    mock
}

/// `harness9 ARGS` as a user with a git identity (a merge commit needs one).
fn as_user(run: &Run, mock: &MockLlm, args: &[&str]) -> Output {
    let mut command = run.command(mock, args);
    for (variable, value) in [
        ("GIT_AUTHOR_NAME", "u"),
        ("GIT_AUTHOR_EMAIL", "u@example.com"),
        ("GIT_COMMITTER_NAME", "u"),
        ("GIT_COMMITTER_EMAIL", "u@example.com"),
    ] {
        command.env(variable, value);
    }
    command.output().expect("harness9 runs")
}

/// The run ended with `code` and said `says` on stderr.
fn assert_fails(output: &Output, code: i32, says: &str) {
    let text = stderr(output);
    assert_eq!(output.status.code(), Some(code), "{text}");
    assert!(text.contains(says), "{text}");
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// `git ARGS` in `dir`, its standard output.
fn git_out(dir: &Path, args: &[&str]) -> String {
    let out = std::process::Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The `session_started` event of an `exec --json` run: its session and working directory.
fn started(output: &Output) -> (String, PathBuf) {
    assert_eq!(output.status.code(), Some(0), "{}", stderr(output));
    let events = json_lines(&output.stdout);
    let started = events.iter().find(|e| e["type"] == "session_started");
    let data: &Value = &started.expect("session_started")["data"];
    (
        data["session_id"].as_str().unwrap().to_owned(),
        PathBuf::from(data["workdir"].as_str().unwrap()),
    )
}

#[test]
fn two_runs_at_once_edit_one_file_on_their_own_branches_then_merge_and_conflict() {
    let run = Run::new();
    repository(&run);
    let (mock_a, mock_b) = (editing_model("from a\n"), editing_model("from b\n"));
    // The model commits its edit itself: outside the sandbox, in yolo mode.
    let args = |name: &'static str| {
        let mut args = vec!["exec", "--json", "--mode", "yolo", "--sandbox", "off"];
        args.extend(["--worktree", name, "edit"]);
        args
    };
    // Both started before either is waited for: they run at once.
    let spawn = |mock: &MockLlm, name| {
        run.command(mock, &args(name))
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("harness9 runs")
    };
    let (first, second) = (spawn(&mock_a, "a"), spawn(&mock_b, "b"));
    let first = first.wait_with_output().unwrap();
    let second = second.wait_with_output().unwrap();
    let (session_a, dir_a) = started(&first);
    let (_, dir_b) = started(&second);
    let main = run.workdir.canonicalize().unwrap();
    let beside = main.parent().unwrap().join("repo.worktrees");
    assert_eq!(dir_a, beside.join("a"));
    assert_eq!(dir_b, beside.join("b"));

    // Each edit is on its own branch; the main working tree is untouched.
    assert_eq!(
        std::fs::read_to_string(main.join("shared.txt")).unwrap(),
        "base\n"
    );
    assert_eq!(git_out(&main, &["status", "--porcelain"]), "");
    assert_eq!(
        git_out(&main, &["show", "harness9/a:shared.txt"]),
        "from a\n"
    );
    assert_eq!(
        git_out(&main, &["show", "harness9/b:shared.txt"]),
        "from b\n"
    );

    let quiet = MockLlm::start_in_background();
    let listed = run.exec(&quiet, &["worktree", "list"]);
    assert_eq!(listed.status.code(), Some(0), "{}", stderr(&listed));
    let text = stdout(&listed);
    let line_a = text.lines().find(|l| l.starts_with("a ")).unwrap();
    assert!(line_a.contains("harness9/a"), "{text}");
    assert!(line_a.contains("1 unmerged commit(s)"), "{text}");
    assert!(line_a.contains(&format!("session {session_a}")), "{text}");
    assert!(
        text.lines().any(|l| l.starts_with("b  harness9/b")),
        "{text}"
    );

    let merged = as_user(&run, &quiet, &["worktree", "merge", "a"]);
    assert_eq!(merged.status.code(), Some(0), "{}", stderr(&merged));
    assert_eq!(
        std::fs::read_to_string(main.join("shared.txt")).unwrap(),
        "from a\n"
    );

    // The other conflicts: said with the file, aborted, nothing lost.
    let conflict = as_user(&run, &quiet, &["worktree", "merge", "b"]);
    assert_fails(&conflict, 1, "conflicts in shared.txt");
    assert_eq!(
        std::fs::read_to_string(main.join("shared.txt")).unwrap(),
        "from a\n"
    );
    assert_eq!(git_out(&main, &["status", "--porcelain"]), "");
    assert!(!main.join(".git/MERGE_HEAD").exists());
    assert_eq!(
        git_out(&main, &["show", "harness9/b:shared.txt"]),
        "from b\n"
    );

    // b holds work not merged: removing it needs --force; a's is merged.
    let refused = run.exec(&quiet, &["worktree", "remove", "b"]);
    assert_fails(&refused, 1, "unmerged");
    assert!(dir_b.exists());
    for args in [
        &["worktree", "remove", "b", "--force"][..],
        &["worktree", "remove", "a"],
    ] {
        let removed = run.exec(&quiet, args);
        assert_eq!(removed.status.code(), Some(0), "{}", stderr(&removed));
    }
    assert!(!dir_a.exists() && !dir_b.exists());
    assert_eq!(git_out(&main, &["branch", "--list", "harness9/*"]), "");
    assert!(quiet.requests().is_empty());
}

#[test]
fn resuming_a_session_opens_its_worktree_even_once_its_folder_was_deleted() {
    let run = Run::new();
    repository(&run);
    std::fs::write(run.workdir.join(".env"), "OPENAI_MODEL_NOTE=1\n").unwrap();
    let home_settings = r#"{"worktree": {"copy": [".env"]}}"#;
    std::fs::write(run.home.join("settings.json"), home_settings).unwrap();
    let mock = MockLlm::start_in_background();
    mock.set_fallback(Reply::Sse {
        body: openai_text_sse("ok"),
        split: Split::Whole,
    });
    let first = run.exec(&mock, &["exec", "--json", "--worktree", "r", "hello"]);
    let (session, folder) = started(&first);
    assert_eq!(
        std::fs::read_to_string(folder.join(".env")).unwrap(),
        "OPENAI_MODEL_NOTE=1\n",
        "worktree.copy"
    );

    // From the main working tree, the session comes back in its worktree.
    let again = run.exec(&mock, &["exec", "--json", "--session", &session, "again"]);
    let (resumed, dir) = started(&again);
    assert_eq!(
        (resumed.as_str(), dir.as_path()),
        (session.as_str(), folder.as_path())
    );

    // A folder deleted by hand: listed as missing; resuming makes it again on its branch.
    std::fs::remove_dir_all(&folder).unwrap();
    let listed = run.exec(&mock, &["worktree", "list"]);
    assert!(stdout(&listed).contains("missing"), "{}", stdout(&listed));
    let back = run.exec(&mock, &["exec", "--json", "--session", &session, "back"]);
    assert_eq!(started(&back).1, folder);
    assert!(folder.join("shared.txt").exists());

    // Deleted again, `remove` cleans up git's record of it.
    std::fs::remove_dir_all(&folder).unwrap();
    let removed = run.exec(&mock, &["worktree", "remove", "r"]);
    assert_eq!(removed.status.code(), Some(0), "{}", stderr(&removed));
    let listed = stdout(&run.exec(&mock, &["worktree", "list"]));
    assert!(listed.starts_with("no worktrees"), "{listed}");
}

#[test]
fn outside_a_repository_a_worktree_is_a_usage_error_and_reaches_no_model() {
    let run = Run::new();
    let mock = MockLlm::start_in_background();
    let output = run.exec(&mock, &["exec", "--worktree", "x", "hello"]);
    assert_fails(&output, 2, "is not inside a git repository");
    let listed = run.exec(&mock, &["worktree", "list"]);
    assert_fails(&listed, 2, "is not inside a git repository");
    let bad = run.exec(&mock, &["exec", "--worktree", "../up", "hello"]);
    assert_fails(&bad, 2, "invalid worktree name");
    assert!(mock.requests().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_opens_a_session_in_a_worktree_and_refuses_a_bad_name() {
    let mock = MockLlm::start().await;
    let server = crate::serve_client::Server::start(&mock, &[], &[]);
    repository(&server.run);
    let body = serde_json::json!({"worktree": "api"});
    let (status, opened) = server.request("POST", "/sessions", Some(body)).await;
    assert_eq!(status, reqwest::StatusCode::CREATED, "{opened}");
    assert_eq!(opened["worktree"], "api");
    let main = server.run.workdir.canonicalize().unwrap();
    let folder = main.parent().unwrap().join("repo.worktrees/api");
    assert_eq!(opened["workdir"], folder.display().to_string());
    assert!(folder.join("shared.txt").exists());
    let bad = serde_json::json!({"worktree": "../up"});
    let (status, refused) = server.request("POST", "/sessions", Some(bad)).await;
    assert_eq!(status, reqwest::StatusCode::BAD_REQUEST, "{refused}");
    assert!(mock.requests().is_empty());
}

#[test]
fn the_tui_names_its_worktree_on_the_status_line_and_in_status() {
    let run = Run::new();
    repository(&run);
    let mock = MockLlm::start_in_background();
    // The repository is trusted, so its worktree is too: no trust question comes first.
    let env = crate::tui::env(&run, &mock);
    let mut pty = crate::pty::Pty::spawn(
        crate::tui::harness9(),
        &["--worktree", "ui"],
        &run.workdir,
        &env,
    );
    // The status line shows the folder (and the notice that made it, while it is new).
    pty.wait_for_all(&["Ask harness9 to do something", "…repo.worktrees/ui"]);
    pty.send("/status\r");
    let main = run.workdir.canonicalize().unwrap();
    let folder = main.parent().unwrap().join("repo.worktrees/ui");
    pty.wait_for_all(&[
        "worktree: ui · sandbox:",
        &format!("working directory: {}", folder.display()),
    ]);
    assert!(mock.requests().is_empty());
}
