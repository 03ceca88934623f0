//! Issue 29, point 7: what harness9 starts outside the sandbox cannot read its memory and gets
//! no secret it does not need. A hook, a stdio MCP server and an eval task's setup run without
//! `CAP_SYS_PTRACE` (as `bash` already does); an MCP server inherits only `HOME`, `LOGNAME`,
//! `PATH`, `SHELL`, `TERM`, `USER` and what its configuration names.

use std::path::{Path, PathBuf};

use serde_json::json;

use crate::exec::Run;
use crate::support::{MockLlm, Reply, Split, openai_text_sse};

/// Prints whether `CAP_SYS_PTRACE` (bit 19) is in the bounding set, then the environment.
const PROBE: &str = r#"cap=$(awk '/^CapBnd/ {print $2}' /proc/self/status)
if [ $(( (0x$cap >> 19) & 1 )) = 1 ]; then echo PTRACE-KEPT; else echo PTRACE-DROPPED; fi
env
"#;

/// A secret of the user's that no child needs.
const SECRET: (&str, &str) = ("GITHUB_TOKEN", "ghp-not-for-servers-1234");

/// Only root can drop a capability from the bounding set; as another user the bit stays, and
/// there is nothing to read with it anyway.
fn is_root() -> bool {
    // SAFETY: geteuid only reads the process's credentials.
    unsafe { libc::geteuid() == 0 }
}

fn write_probe(dir: &Path) -> PathBuf {
    let path = dir.join("probe.sh");
    std::fs::write(&path, PROBE).unwrap();
    path
}

#[test]
fn a_hook_and_a_stdio_mcp_server_run_without_ptrace_and_the_server_without_secrets() {
    if !is_root() {
        eprintln!("did not run: only root has CAP_SYS_PTRACE in its bounding set to lose");
        return;
    }
    let mock = MockLlm::start_in_background();
    let run = Run::new();
    let probe = write_probe(run.home.parent().unwrap());
    let from_server = run.home.parent().unwrap().join("server.txt");
    std::fs::write(
        run.home.join("settings.json"),
        json!({"hooks": {"SessionStart": [{"matcher": "", "hooks": [{"type": "command",
            "command": format!("sh {} | head -1", probe.display())}]}]}})
        .to_string(),
    )
    .unwrap();
    std::fs::write(
        run.home.join("mcp.json"),
        json!({"mcpServers": {"probe": {"command": "/bin/sh",
            "args": ["-c", format!("sh {} > {}", probe.display(), from_server.display())],
            "env": {"NAMED_BY_CONFIG": "yes"}}}})
        .to_string(),
    )
    .unwrap();
    mock.push(Reply::Sse {
        body: openai_text_sse("Probed."),
        split: Split::Whole,
    });
    let output = run
        .command(&mock, &["exec", "hello"])
        .env(SECRET.0, SECRET.1)
        .env("LOGNAME", "someone")
        .output()
        .expect("harness9 runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );

    let sent = mock.requests()[0].body["messages"].to_string();
    assert!(sent.contains("PTRACE-"), "the hook did not run: {sent}");
    assert!(
        sent.contains("PTRACE-DROPPED"),
        "a hook kept CAP_SYS_PTRACE"
    );

    // `exec` waits for MCP servers before its first request, so the file is there.
    let server = std::fs::read_to_string(&from_server).unwrap();
    assert!(
        server.starts_with("PTRACE-DROPPED"),
        "an MCP server kept CAP_SYS_PTRACE: {server}"
    );
    let names: Vec<&str> = server
        .lines()
        .skip(1)
        .filter_map(|line| line.split_once('=').map(|(name, _)| name))
        .collect();
    assert!(!server.contains(SECRET.1), "{server}");
    assert!(names.contains(&"NAMED_BY_CONFIG"), "{names:?}");
    assert!(
        names.contains(&"LOGNAME") && names.contains(&"PATH"),
        "{names:?}"
    );
    // What the shell itself sets is not from harness9.
    let shell_own = ["PWD", "SHLVL", "_", "OLDPWD"];
    let allowed = ["HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"];
    for name in names {
        assert!(
            allowed.contains(&name) || shell_own.contains(&name) || name == "NAMED_BY_CONFIG",
            "an MCP server got {name}: {server}"
        );
    }
}

#[test]
fn an_eval_tasks_setup_runs_without_ptrace() {
    if !is_root() {
        eprintln!("did not run: only root has CAP_SYS_PTRACE in its bounding set to lose");
        return;
    }
    let mock = MockLlm::start_in_background();
    let run = Run::new();
    let scratch = run.home.parent().unwrap();
    let probe = write_probe(scratch);
    let found = scratch.join("setup.txt");
    let task = scratch.join("tasks/probe");
    std::fs::create_dir_all(task.join("repo")).unwrap();
    // The setup fails on purpose, so no agent runs.
    std::fs::write(
        task.join("task.toml"),
        format!(
            "prompt = \"x\"\nsetup = \"sh {} > {}; exit 3\"\ncheck = \"true\"\n",
            probe.display(),
            found.display()
        ),
    )
    .unwrap();
    let output = run
        .command(&mock, &["eval", scratch.join("tasks").to_str().unwrap()])
        .output()
        .expect("harness9 runs");
    let setup = std::fs::read_to_string(&found).unwrap_or_else(|_| {
        panic!(
            "the setup did not run: {}",
            String::from_utf8_lossy(&output.stdout)
        )
    });
    assert!(
        setup.starts_with("PTRACE-DROPPED"),
        "an eval setup kept CAP_SYS_PTRACE"
    );
}
