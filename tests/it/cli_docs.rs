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
