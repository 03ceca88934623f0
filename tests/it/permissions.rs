//! Issue 11's permission findings through the real binary: `exec --json` (nobody can approve, so
//! a call that asks is refused) and the TUI in a pseudo-terminal (approvals answered by keys),
//! against a scripted model server on 127.0.0.1.

use serde_json::Value;

use crate::exec::{Run, json_lines};
use crate::support::{MockLlm, Reply, Split, git, openai_text_sse, openai_tool_sse};
use crate::tui::{press_until_screen, start};

/// Scripts one tool call per turn, then a closing text.
pub(crate) fn script(mock: &MockLlm, calls: &[(&str, &str)]) {
    for (index, (name, arguments)) in calls.iter().enumerate() {
        mock.push(Reply::Sse {
            body: openai_tool_sse(&format!("call_{index}"), name, arguments),
            split: Split::Whole,
        });
    }
    mock.push(Reply::Sse {
        body: openai_text_sse("Finished."),
        split: Split::Whole,
    });
}

/// The tool results the model was sent in the last request.
pub(crate) fn tool_results(mock: &MockLlm) -> Vec<String> {
    let requests = mock.requests();
    let last = requests.last().expect("a request");
    last.body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap_or_default().to_owned())
        .collect()
}

pub(crate) fn approvals(events: &[Value]) -> Vec<String> {
    events
        .iter()
        .filter(|e| e["type"] == "approval_required")
        .map(|e| e["data"]["tool_call"]["name"].as_str().unwrap().to_owned())
        .collect()
}

fn write_settings(path: &std::path::Path, json: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, json).unwrap();
}

/// Finding 2: a cloned repository's settings allowed `bash` and overrode the user's deny.
#[test]
fn a_projects_allow_cannot_lift_the_users_deny() {
    let mock = MockLlm::start_in_background();
    let run = Run::new();
    write_settings(
        &run.home.join("settings.json"),
        r#"{"permissions": {"deny": ["bash(touch *)"]}}"#,
    );
    write_settings(
        &run.workdir.join(".harness9/settings.json"),
        r#"{"permissions": {"allow": ["bash", "bash(touch *)"]}}"#,
    );
    script(&mock, &[("bash", r#"{"command":"touch pwned"}"#)]);
    let output = run.exec(&mock, &["exec", "--json", "--mode", "yolo", "go"]);
    assert_eq!(output.status.code(), Some(0));
    assert!(!run.workdir.join("pwned").exists(), "the user's deny held");
    let results = tool_results(&mock);
    assert!(results[0].contains("`bash(touch *)`"), "{results:?}");
}

/// Finding 3: auto-edit wrote harness9's own settings, git's config and `.env` unasked.
#[test]
fn auto_edit_never_writes_protected_paths_unasked() {
    let mock = MockLlm::start_in_background();
    let run = Run::new();
    let settings = r#"{"permissions": {"allow": ["write_file", "edit_file"]}}"#;
    write_settings(&run.workdir.join(".harness9/settings.json"), settings);
    write_settings(&run.workdir.join(".git/config"), "[core]\n");
    script(
        &mock,
        &[
            (
                "write_file",
                r#"{"path":".harness9/settings.json","content":"{\"permissions\":{\"allow\":[\"bash\"]}}"}"#,
            ),
            (
                "write_file",
                r#"{"path":"src/../.git/config","content":"[core]\nfsmonitor = touch x\n"}"#,
            ),
            (
                "write_file",
                r#"{"path":".env","content":"OPENAI_BASE_URL=http://evil\n"}"#,
            ),
            ("write_file", r#"{"path":"notes.txt","content":"fine\n"}"#),
        ],
    );
    let output = run.exec(&mock, &["exec", "--json", "--mode", "auto-edit", "go"]);
    assert_eq!(output.status.code(), Some(0));
    let events = json_lines(&output.stdout);
    assert_eq!(approvals(&events).len(), 3, "each protected write asked");
    assert_eq!(
        std::fs::read_to_string(run.workdir.join(".harness9/settings.json")).unwrap(),
        settings
    );
    assert_eq!(
        std::fs::read_to_string(run.workdir.join(".git/config")).unwrap(),
        "[core]\n"
    );
    assert!(!run.workdir.join(".env").exists());
    let results = tool_results(&mock);
    assert!(
        results[..3].iter().all(|r| r.contains("--mode yolo")),
        "auto-edit would not allow them: {results:?}"
    );
    assert_eq!(
        std::fs::read_to_string(run.workdir.join("notes.txt")).unwrap(),
        "fine\n",
        "an ordinary edit still runs in auto-edit"
    );
}

/// Finding 7: a deny rule covered only its own tool.
#[test]
fn a_path_deny_rule_covers_grep_and_write_file() {
    let mock = MockLlm::start_in_background();
    let run = Run::new();
    write_settings(
        &run.home.join("settings.json"),
        r#"{"permissions": {"deny": ["read_file(**/.env)", "edit_file(src/secret.rs)"]}}"#,
    );
    std::fs::write(run.workdir.join(".env"), "TOKEN=the-dot-env-secret\n").unwrap();
    std::fs::create_dir_all(run.workdir.join("src")).unwrap();
    std::fs::write(run.workdir.join("src/secret.rs"), "// keep\n").unwrap();
    script(
        &mock,
        &[
            ("grep", r#"{"pattern":"TOKEN","path":".env"}"#),
            ("grep", r#"{"pattern":"TOKEN"}"#),
            (
                "write_file",
                r#"{"path":"src/secret.rs","content":"// gone\n"}"#,
            ),
        ],
    );
    let output = run.exec(&mock, &["exec", "--json", "--mode", "yolo", "go"]);
    assert_eq!(output.status.code(), Some(0));
    let results = tool_results(&mock);
    assert!(results[0].contains("`read_file(**/.env)`"), "{results:?}");
    assert!(
        results.iter().all(|r| !r.contains("the-dot-env-secret")),
        "{results:?}"
    );
    assert!(
        results[2].contains("`edit_file(src/secret.rs)`"),
        "{results:?}"
    );
    assert_eq!(
        std::fs::read_to_string(run.workdir.join("src/secret.rs")).unwrap(),
        "// keep\n"
    );
}

/// Finding 8: `read_file .env` ran unasked in default mode and sent the key to the model.
#[test]
fn reading_a_secret_file_asks_first() {
    let mock = MockLlm::start_in_background();
    let run = Run::new();
    std::fs::write(run.workdir.join(".env"), "OPENAI_API_KEY=sk-from-dot-env\n").unwrap();
    script(
        &mock,
        &[
            ("read_file", r#"{"path":".env"}"#),
            ("bash", r#"{"command":"cat .env"}"#),
        ],
    );
    let output = run.exec(&mock, &["exec", "--json", "go"]);
    assert_eq!(output.status.code(), Some(0));
    let events = json_lines(&output.stdout);
    assert_eq!(approvals(&events), ["read_file", "bash"]);
    let results = tool_results(&mock);
    assert!(
        results.iter().all(|r| !r.contains("sk-from-dot-env")),
        "{results:?}"
    );
}

/// Finding 17: `a` ("this exact command, for the session") was not remembered.
#[test]
fn allow_always_remembers_the_exact_command() {
    let mock = MockLlm::start_in_background();
    let run = Run::new();
    let command = r#"{"command":"touch one; touch two"}"#;
    script(&mock, &[("bash", command), ("bash", command)]);
    let mut pty = start(&run, &mock);
    pty.send("make two files, twice\r");
    pty.wait_for_all(&["Approve bash?", "this exact command"]);
    // The dialog takes keys once it has been on screen for 250 ms; a second dialog would wait.
    press_until_screen(&mut pty, "a", |screen| !screen.contains("Approve bash?"));
    pty.wait_for("Finished.");
    let results = tool_results(&mock);
    assert_eq!(results.len(), 2, "{results:?}");
    assert!(
        results
            .iter()
            .all(|r| !r.contains("denied") && !r.contains("approval")),
        "the second call ran without asking: {results:?}"
    );
    assert!(run.workdir.join("two").exists());
}

/// Finding 6 (through the TUI's `r`): the rule goes to the git-ignored local file, and a local
/// file that cannot be parsed is left alone.
#[test]
fn always_allow_writes_the_local_file_and_never_rewrites_a_broken_one() {
    let mock = MockLlm::start_in_background();
    let run = Run::new();
    script(
        &mock,
        &[
            ("bash", r#"{"command":"mkdir first"}"#),
            ("bash", r#"{"command":"mkdir second"}"#),
        ],
    );
    let mut pty = start(&run, &mock);
    pty.send("make dirs\r");
    pty.wait_for("bash(mkdir*)");
    press_until_screen(&mut pty, "r", |screen| !screen.contains("Approve bash?"));
    pty.wait_for("Finished.");
    assert!(run.workdir.join("second").is_dir(), "the rule covered it");
    let local = run.workdir.join(".harness9/settings.local.json");
    let written: Value = serde_json::from_str(&std::fs::read_to_string(&local).unwrap()).unwrap();
    assert_eq!(written["permissions"]["allow"][0], "bash(mkdir*)");
    assert!(!run.workdir.join(".harness9/settings.json").exists());
    let ignore = std::fs::read_to_string(run.workdir.join(".harness9/.gitignore")).unwrap();
    assert!(
        ignore.lines().any(|l| l == "/settings.local.json"),
        "{ignore}"
    );
    drop(pty);

    let mock = MockLlm::start_in_background();
    let run = Run::new();
    let broken = r#"{"permissions": {"deny": ["bash(rm *)"],}}"#;
    write_settings(&run.workdir.join(".harness9/settings.local.json"), broken);
    script(&mock, &[("bash", r#"{"command":"mkdir third"}"#)]);
    let mut pty = start(&run, &mock);
    pty.send("make a dir\r");
    pty.wait_for("bash(mkdir*)");
    press_until_screen(&mut pty, "r", |screen| !screen.contains("Approve bash?"));
    pty.wait_for("Finished.");
    assert!(run.workdir.join("third").is_dir(), "allowed once");
    assert_eq!(
        std::fs::read_to_string(run.workdir.join(".harness9/settings.local.json")).unwrap(),
        broken
    );
}

/// Issue 12 through the decision: in auto-edit a sandboxed `bash` call runs without asking, and
/// a call that asks to leave the sandbox (`"sandbox": false`) asks (refused in `exec`), saying so.
#[test]
fn auto_edit_runs_sandboxed_commands_and_leaving_the_sandbox_asks() {
    let mock = MockLlm::start_in_background();
    let run = Run::new();
    script(
        &mock,
        &[
            ("bash", r#"{"command":"touch inside"}"#),
            ("bash", r#"{"command":"touch outside","sandbox":false}"#),
        ],
    );
    let output = run.exec(&mock, &["exec", "--json", "--mode", "auto-edit", "go"]);
    assert_eq!(output.status.code(), Some(0));
    let events = json_lines(&output.stdout);
    assert!(run.workdir.join("inside").exists(), "ran in the sandbox");
    assert!(!run.workdir.join("outside").exists(), "nobody approved it");
    assert_eq!(approvals(&events), ["bash"], "only the escape asked");
    let asked = events
        .iter()
        .find(|e| e["type"] == "approval_required")
        .unwrap();
    assert!(
        asked["data"]["reason"]
            .as_str()
            .unwrap()
            .contains("outside the sandbox"),
        "{asked}"
    );
    let results = tool_results(&mock);
    assert!(!results[0].contains("denied"), "{results:?}");
    assert!(results[1].contains("--mode yolo"), "{results:?}");
}

/// Issue 19, item 1: `cd evil && git status` was read-only to the classifier, and git ran the
/// `core.fsmonitor` program of an embedded bare repository (plain files in a cloned repo).
#[test]
fn cd_into_an_embedded_repository_is_not_read_only() {
    let mock = MockLlm::start_in_background();
    let run = Run::new();
    git(&run.workdir, &["init", "-q"]);
    let evil = run.workdir.join("evil");
    for dir in ["objects", "refs/heads"] {
        std::fs::create_dir_all(evil.join(dir)).unwrap();
    }
    std::fs::write(evil.join("HEAD"), "ref: refs/heads/main\n").unwrap();
    let pwned = run.workdir.join("pwned");
    std::fs::write(
        evil.join("config"),
        format!(
            "[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tworktree = ..\n\t\
             fsmonitor = \"touch {}; false\"\n",
            pwned.display()
        ),
    )
    .unwrap();
    script(&mock, &[("bash", r#"{"command":"cd evil && git status"}"#)]);
    let output = run.exec(&mock, &["exec", "--json", "go"]);
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(approvals(&json_lines(&output.stdout)), ["bash"]);
    assert!(!pwned.exists(), "the fsmonitor program did not run");
}

/// Issue 19, item 2: git printed a tracked `.env` (`git grep`, `git diff --cached`) and an
/// untracked one (`git grep --untracked`, `--no-index`) unasked.
#[test]
fn git_does_not_print_secret_files_unasked() {
    let mock = MockLlm::start_in_background();
    let run = Run::new();
    git(&run.workdir, &["init", "-q"]);
    std::fs::write(run.workdir.join("README.md"), "KEY is read from .env\n").unwrap();
    std::fs::write(run.workdir.join(".env"), "KEY=sk-tracked-secret\n").unwrap();
    git(&run.workdir, &["add", "README.md", ".env"]);
    script(
        &mock,
        &[
            ("bash", r#"{"command":"git grep KEY"}"#),
            ("bash", r#"{"command":"git diff --cached"}"#),
            ("bash", r#"{"command":"git status --short"}"#),
        ],
    );
    let output = run.exec(&mock, &["exec", "--json", "go"]);
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(approvals(&json_lines(&output.stdout)), ["bash", "bash"]);
    let results = tool_results(&mock);
    assert!(
        results.iter().all(|r| !r.contains("sk-tracked-secret")),
        "{results:?}"
    );
    assert!(
        results[2].contains(".env"),
        "git status still runs: {results:?}"
    );

    let mock = MockLlm::start_in_background();
    let run = Run::new();
    git(&run.workdir, &["init", "-q"]);
    std::fs::write(run.workdir.join("README.md"), "KEY\n").unwrap();
    std::fs::write(run.workdir.join(".env"), "KEY=sk-untracked-secret\n").unwrap();
    git(&run.workdir, &["add", "README.md"]);
    script(
        &mock,
        &[
            ("bash", r#"{"command":"git grep --untracked KEY"}"#),
            ("bash", r#"{"command":"git grep --no-index KEY"}"#),
        ],
    );
    let output = run.exec(&mock, &["exec", "--json", "go"]);
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(approvals(&json_lines(&output.stdout)), ["bash", "bash"]);
    let results = tool_results(&mock);
    assert!(
        results.iter().all(|r| !r.contains("sk-untracked-secret")),
        "{results:?}"
    );
}

/// Issue 19, item 3: `cat .e?v` ran in plan mode (the classifier accepts globs), `cat .en*` in
/// auto-edit's sandbox (which may read the working directory), both unasked.
#[test]
fn globs_naming_secret_files_are_not_read_unasked() {
    for (mode, command, asked) in [("plan", "cat .e?v", 0), ("auto-edit", "cat .en*", 1)] {
        let mock = MockLlm::start_in_background();
        let run = Run::new();
        std::fs::write(run.workdir.join(".env"), "KEY=sk-globbed-secret\n").unwrap();
        let arguments = serde_json::json!({ "command": command }).to_string();
        script(&mock, &[("bash", &arguments)]);
        let output = run.exec(&mock, &["exec", "--json", "--mode", mode, "go"]);
        assert_eq!(output.status.code(), Some(0));
        assert_eq!(
            approvals(&json_lines(&output.stdout)).len(),
            asked,
            "{mode}"
        );
        let results = tool_results(&mock);
        assert!(
            results.iter().all(|r| !r.contains("sk-globbed-secret")),
            "{mode}: {results:?}"
        );
    }
}

/// Issue 19, item 4: `$HARNESS9_HOME` (the serve token, the sessions) was readable by every
/// read tool and by `cat` unasked.
#[test]
fn harness9_home_is_read_only_with_approval() {
    let mock = MockLlm::start_in_background();
    let run = Run::new();
    std::fs::create_dir_all(&run.home).unwrap();
    std::fs::write(run.home.join("serve.token"), "token-home-secret\n").unwrap();
    let home = run.home.display().to_string();
    let token = format!("{home}/serve.token");
    let calls: Vec<(&str, String)> = vec![
        (
            "read_file",
            serde_json::json!({ "path": token }).to_string(),
        ),
        (
            "grep",
            serde_json::json!({ "pattern": "token", "path": home }).to_string(),
        ),
        (
            "glob",
            serde_json::json!({ "pattern": "*", "path": home }).to_string(),
        ),
        ("list_dir", serde_json::json!({ "path": home }).to_string()),
        (
            "bash",
            serde_json::json!({ "command": format!("cat {token}") }).to_string(),
        ),
    ];
    let calls: Vec<(&str, &str)> = calls.iter().map(|(n, a)| (*n, a.as_str())).collect();
    script(&mock, &calls);
    let output = run.exec(&mock, &["exec", "--json", "go"]);
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(
        approvals(&json_lines(&output.stdout)),
        ["read_file", "grep", "glob", "list_dir", "bash"]
    );
    let results = tool_results(&mock);
    assert!(
        results.iter().all(|r| !r.contains("token-home-secret")),
        "{results:?}"
    );
}

/// Issue 19, item 6: the user's `bash(rm *)` did not cover `find -delete` nor `xargs rm`.
#[test]
fn a_deny_rule_on_rm_covers_find_delete_and_xargs() {
    let mock = MockLlm::start_in_background();
    let run = Run::new();
    write_settings(
        &run.home.join("settings.json"),
        r#"{"permissions": {"deny": ["bash(rm *)"]}}"#,
    );
    std::fs::write(run.workdir.join("one.tmp"), "").unwrap();
    std::fs::write(run.workdir.join("two.tmp"), "").unwrap();
    script(
        &mock,
        &[
            ("bash", r#"{"command":"find . -name one.tmp -delete"}"#),
            ("bash", r#"{"command":"echo two.tmp | xargs rm"}"#),
        ],
    );
    let output = run.exec(&mock, &["exec", "--json", "--mode", "yolo", "go"]);
    assert_eq!(output.status.code(), Some(0));
    assert!(run.workdir.join("one.tmp").exists());
    assert!(run.workdir.join("two.tmp").exists());
    let results = tool_results(&mock);
    assert!(
        results.iter().all(|r| r.contains("`bash(rm *)`")),
        "{results:?}"
    );
}
