//! `harness9 completions SHELL` and `harness9 man` through the real binary: the bash script is
//! valid bash, the man page is roff naming the commands, and neither needs a key or a folder.

use std::process::Command;

fn harness9(args: &[&str]) -> std::process::Output {
    Command::new(assert_cmd::cargo::cargo_bin!("harness9"))
        .args(args)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .output()
        .expect("harness9 runs")
}

#[test]
fn completions_and_the_man_page_come_from_the_command_line() {
    let bash = harness9(&["completions", "bash"]);
    assert_eq!(bash.status.code(), Some(0));
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("harness9.bash");
    std::fs::write(&script, &bash.stdout).unwrap();
    let checked = Command::new("bash")
        .arg("-n")
        .arg(&script)
        .output()
        .unwrap();
    assert!(
        checked.status.success(),
        "{}",
        String::from_utf8_lossy(&checked.stderr)
    );
    for shell in ["zsh", "fish", "powershell"] {
        let out = harness9(&["completions", shell]);
        assert_eq!(out.status.code(), Some(0), "{shell}");
        assert!(!out.stdout.is_empty(), "{shell}");
    }
    assert_eq!(harness9(&["completions", "tcsh"]).status.code(), Some(2));
    let man = harness9(&["man"]);
    assert_eq!(man.status.code(), Some(0));
    let page = String::from_utf8_lossy(&man.stdout);
    assert!(
        page.contains(".TH harness9") && page.contains("exec"),
        "{page}"
    );
}

/// Issue 32 (cosmetics): the man page's synopsis gives each option's value, `exec --help` lists
/// only what `exec` uses (not the TUI's `--no-alt-screen` and `--theme`), and `harness9 help
/// hooks` prints the hooks reference from the binary (an installed user has no docs/ folder).
#[test]
fn the_synopsis_names_values_exec_help_is_its_own_and_help_hooks_exists() {
    let man = harness9(&["man"]);
    let page = String::from_utf8_lossy(&man.stdout);
    let synopsis = page
        .split(".SH SYNOPSIS")
        .nth(1)
        .and_then(|rest| rest.split(".SH").next())
        .unwrap_or_else(|| panic!("a synopsis: {page}"));
    assert!(
        synopsis.contains("MODE") && synopsis.contains("DIR"),
        "{synopsis}"
    );
    let help = harness9(&["exec", "--help"]);
    assert_eq!(help.status.code(), Some(0));
    let help = String::from_utf8_lossy(&help.stdout);
    assert!(
        !help.contains("--no-alt-screen") && !help.contains("--theme"),
        "{help}"
    );
    // The TUI and `attach` still take them.
    let top = String::from_utf8_lossy(&harness9(&["--help"]).stdout).into_owned();
    assert!(
        top.contains("--no-alt-screen") && top.contains("--theme"),
        "{top}"
    );
    let attach = String::from_utf8_lossy(&harness9(&["attach", "--help"]).stdout).into_owned();
    assert!(attach.contains("--theme"), "{attach}");
    let hooks = harness9(&["help", "hooks"]);
    assert_eq!(hooks.status.code(), Some(0));
    let hooks = String::from_utf8_lossy(&hooks.stdout);
    assert!(
        hooks.contains("PreToolUse") && hooks.contains("settings.json"),
        "{hooks}"
    );
    // `help COMMAND` still prints that command's help; an unknown topic is a usage error.
    let exec = String::from_utf8_lossy(&harness9(&["help", "exec"]).stdout).into_owned();
    assert!(exec.contains("--json"), "{exec}");
    assert_eq!(harness9(&["help", "nothing-here"]).status.code(), Some(2));
}
