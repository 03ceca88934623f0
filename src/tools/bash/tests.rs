//! The `bash` tool's own tests: limits, timeouts, background jobs and their approvals.

use std::sync::Arc;

use serde_json::json;

use super::*;
use crate::planning::TodoStore;
use crate::tools::shell_process::git_guard_env;

#[test]
fn a_background_commands_approval_says_it_is_one_and_what_its_sandbox_allows() {
    let inputs = crate::sandbox::SandboxInputs {
        flag: None,
        workdir: PathBuf::from("/w"),
        home: PathBuf::from("/h"),
        helper: PathBuf::from("/bin/harness9"),
    };
    let platform = crate::sandbox::HelperPlatform {
        helper: PathBuf::from("/bin/harness9"),
    };
    let sandbox = Sandbox::from_parts(
        &inputs,
        crate::sandbox::SandboxSettings::default(),
        Some(Arc::new(platform)),
        Vec::new(),
    );
    let bash = Bash::new(Arc::new(sandbox), None);
    let server = json!({"command": "python3 -m http.server", "background": true});
    let note = bash.approval_note(&server, Mode::Default).unwrap();
    assert!(note.contains("background command"), "{note}");
    assert!(
        note.contains("in the sandbox (workspace-write)")
            && note.contains("may not use the network"),
        "{note}"
    );
    let outside = json!({"command": "python3 -m http.server", "background": true,
                         "sandbox": false});
    let note = bash.approval_note(&outside, Mode::Default).unwrap();
    assert!(note.contains("outside the sandbox"), "{note}");
    // A foreground command's approval is as it was.
    let plain = json!({"command": "python3 -m http.server"});
    assert_eq!(bash.approval_note(&plain, Mode::Default), None);
}

#[test]
fn the_model_is_told_the_timeout_that_really_applies() {
    let bash = Bash::new(
        Arc::new(Sandbox::disabled(Path::new("/"))),
        Some(Duration::from_secs(60)),
    );
    let schema = bash.input_schema().to_string();
    assert!(schema.contains("default and maximum 60"), "{schema}");
    assert!(!bash.description().contains("120"));
    // Asking for more than the engine allows is capped just under the engine's limit, so
    // the command's own output and message come back rather than a bare engine timeout.
    let limit = bash.deadline(Some(600)).unwrap().run_for;
    assert!(limit < Duration::from_secs(60) && limit > Duration::from_secs(59));
    assert_eq!(
        bash.deadline(Some(5)).map(|l| l.run_for),
        Some(Duration::from_secs(5))
    );
    assert_eq!(
        Bash::new(Arc::new(Sandbox::disabled(Path::new("/"))), None).deadline(None),
        None
    );
}

#[tokio::test]
async fn a_command_past_the_session_timeout_comes_back_with_its_output() {
    let dir = tempfile::tempdir().unwrap();
    let bash = Bash::new(
        Arc::new(Sandbox::disabled(dir.path())),
        Some(Duration::from_millis(2500)),
    );
    let ctx = ToolContext {
        workdir: dir.path().to_owned(),
        cancel: Default::default(),
        mode: Mode::Default,
        todos: Arc::new(TodoStore::default()),
        read_guard: Default::default(),
        outputs: None,
        editor_files: None,
        editor_terminal: None,
    };
    let error = bash
        .execute(
            json!({"command": "echo started; exec sleep 30", "timeout_secs": 100}),
            &ctx,
        )
        .await
        .unwrap_err();
    assert!(
        error.0.contains("started") && error.0.contains("timed out after 2.5s, the session's"),
        "{}",
        error.0
    );
    let asked = bash
        .execute(
            json!({"command": "echo started; exec sleep 30", "timeout_secs": 1}),
            &ctx,
        )
        .await
        .unwrap_err();
    assert!(
        asked
            .0
            .contains("timed out after 1s, the timeout_secs it was given"),
        "{}",
        asked.0
    );
}

#[test]
fn git_guards_follow_the_settings_the_environment_already_has() {
    let vars = git_guard_env(Some("2"));
    assert_eq!(vars[0], ("GIT_CONFIG_COUNT".into(), "4".into()));
    assert_eq!(
        vars[1],
        ("GIT_CONFIG_KEY_2".into(), "safe.bareRepository".into())
    );
    assert_eq!(git_guard_env(None)[0].1, "2");
}

/// A cloned repository holding a bare repository as plain files: `cd evil && git status`
/// would run `evil/config`'s fsmonitor program.
#[tokio::test]
async fn a_bare_repository_inside_the_workdir_runs_no_program_of_its_config() {
    let dir = tempfile::tempdir().unwrap();
    let evil = dir.path().join("evil");
    let init = std::process::Command::new("git")
        .args(["init", "-q", "--bare"])
        .arg(&evil)
        .status();
    if !init.is_ok_and(|s| s.success()) {
        return; // no git on this machine: nothing to attack
    }
    let marker = dir.path().join("pwned");
    let mut config = std::fs::read_to_string(evil.join("config")).unwrap();
    // Not bare after all, with the folder above as its work tree: status, diff and add
    // then run the fsmonitor program.
    config = config.replace("bare = true", "bare = false\n\tworktree = ..");
    config.push_str(&format!(
        "[core]\n\tfsmonitor = \"touch {}; false\"\n",
        marker.display()
    ));
    std::fs::write(evil.join("config"), config).unwrap();
    let bash = Bash::new(Arc::new(Sandbox::disabled(dir.path())), None);
    let ctx = ToolContext {
        workdir: dir.path().to_owned(),
        cancel: Default::default(),
        mode: Mode::Yolo,
        todos: Arc::new(TodoStore::default()),
        read_guard: Default::default(),
        outputs: None,
        editor_files: None,
        editor_terminal: None,
    };
    for command in [
        "cd evil && git status",
        "git -C evil log",
        "cd evil && git diff",
    ] {
        let _ = bash.execute(json!({ "command": command }), &ctx).await;
        assert!(!marker.exists(), "{command} ran the repository's program");
    }
}
