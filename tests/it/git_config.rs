//! Issue 29 point 10: a repository's own `.git/config` made "read-only" git commands run
//! programs (`git status` a clean filter, `git diff` an external diff). Through the real binary
//! (`exec --json`: nobody can approve, so a call that asks is refused), in plan and default mode.

use std::path::{Path, PathBuf};

use crate::exec::{Run, json_lines};
use crate::permissions::{approvals, script, tool_results};
use crate::support::{MockLlm, git};

/// A repository with one committed file, changed since, whose `.git/config` gets `config`
/// appended (with `MARKER` replaced by the marker's path) and whose `.gitattributes` applies
/// the filter `x` to it. Returns the marker a program named there would write.
fn hostile_repository(workdir: &Path, config: &str) -> PathBuf {
    git(workdir, &["init", "-q"]);
    std::fs::write(workdir.join("a.txt"), "hello\n").unwrap();
    git(workdir, &["add", "a.txt"]);
    git(workdir, &["commit", "-qm", "first"]);
    let marker = workdir.join("marker");
    let path = workdir.join(".git/config");
    let mut text = std::fs::read_to_string(&path).unwrap();
    text.push_str(&config.replace("MARKER", &marker.display().to_string()));
    std::fs::write(&path, text).unwrap();
    std::fs::write(workdir.join(".gitattributes"), "*.txt filter=x\n").unwrap();
    // Same size, other content: git has to read the file (and filter it) to compare.
    std::fs::write(workdir.join("a.txt"), "world\n").unwrap();
    marker
}

/// Runs `command` as the model's one `bash` call in `mode`; the approvals asked and the
/// result the model saw.
fn run_git(run: &Run, mode: &str, command: &str) -> (Vec<String>, String) {
    let mock = MockLlm::start_in_background();
    let arguments = serde_json::json!({ "command": command }).to_string();
    script(&mock, &[("bash", &arguments)]);
    let output = run.exec(&mock, &["exec", "--json", "--mode", mode, "go"]);
    assert_eq!(output.status.code(), Some(0));
    let results = tool_results(&mock);
    (approvals(&json_lines(&output.stdout)), results.join("\n"))
}

#[test]
fn a_repositorys_filter_diff_program_or_included_pager_is_never_run_unasked() {
    for (config, command) in [
        (
            "[filter \"x\"]\n\tclean = touch MARKER; cat\n",
            "git status",
        ),
        ("[diff]\n\texternal = touch MARKER; true\n", "git diff"),
        ("[include]\n\tpath = ../pager.inc\n", "git log --oneline"),
    ] {
        for mode in ["plan", "default"] {
            let run = Run::new();
            let marker = hostile_repository(&run.workdir, config);
            std::fs::write(
                run.workdir.join("pager.inc"),
                format!("[core]\n\tpager = touch {}; cat\n", marker.display()),
            )
            .unwrap();
            let (asked, result) = run_git(&run, mode, command);
            let expected: &[&str] = if mode == "plan" { &[] } else { &["bash"] };
            assert_eq!(asked, expected, "{mode} {command}: {result}");
            assert!(
                mode != "plan" || result.contains("configuration"),
                "{mode} {command}: {result}"
            );
            assert!(!marker.exists(), "{mode} {command} ran the program");
        }
    }
}

#[test]
fn a_plain_repository_still_runs_git_status_unasked() {
    let run = Run::new();
    hostile_repository(&run.workdir, "[user]\n\tname = someone\n");
    for mode in ["plan", "default"] {
        let (asked, result) = run_git(&run, mode, "git status --short");
        assert!(asked.is_empty(), "{mode}: {result}");
        assert!(result.contains("a.txt"), "{mode}: {result}");
    }
}
