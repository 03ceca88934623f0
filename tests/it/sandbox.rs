//! The command sandbox through the real binary (`harness9 sandbox -- ...`, which runs a command
//! exactly as `bash` does) and through the `bash` tool with the real helper. These tests run
//! as root here: root must be confined too.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Arc;

use harness9::planning::Mode;
use harness9::sandbox::{Sandbox, SandboxInputs};
use harness9::schema::ToolCall;
use harness9::tools::{Bash, ToolContext, builtin_registry_with};
use serde_json::json;

use crate::support::git;

fn binary() -> PathBuf {
    PathBuf::from(assert_cmd::cargo::cargo_bin!("harness9"))
}

/// A git repository as the workdir, a `$HARNESS9_HOME` holding a sessions database, and a
/// `$HOME` outside both.
struct Place {
    _dir: tempfile::TempDir,
    workdir: PathBuf,
    home: PathBuf,
    user_home: PathBuf,
}

/// Where a test's tree goes: not under /tmp or the temp dir, which commands may write (the
/// build's own temp dir, unless the checkout itself lies under /tmp; then /var/tmp).
fn scratch_root() -> PathBuf {
    let temp = std::env::temp_dir();
    let temp = temp.canonicalize().unwrap_or(temp);
    let writable = |path: &Path| path.starts_with("/tmp") || path.starts_with(&temp);
    let target = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let target = target.canonicalize().unwrap_or(target);
    if !writable(&target) {
        return target;
    }
    let fallback = PathBuf::from("/var/tmp");
    assert!(
        !writable(&fallback),
        "no folder outside the sandbox's temp dirs to test in"
    );
    fallback
}

impl Place {
    fn new() -> Place {
        Place::under(&scratch_root())
    }

    /// A place whose tree lies in `parent` (the sandbox's temp dir, for the tests of what a
    /// command may do to the directories around the workdir and `$HARNESS9_HOME`). The home is
    /// `ROOT/state/h9`, so `state` is an ancestor of the home but not of the workdir.
    fn under(parent: &Path) -> Place {
        let dir = tempfile::tempdir_in(parent).unwrap();
        let root = dir.path().canonicalize().unwrap();
        let (workdir, home, user_home) =
            (root.join("repo"), root.join("state/h9"), root.join("me"));
        for d in [&workdir, &home, &user_home] {
            std::fs::create_dir_all(d).unwrap();
        }
        std::fs::write(home.join("sessions.db"), "the user's sessions").unwrap();
        let place = Place {
            _dir: dir,
            workdir,
            home,
            user_home,
        };
        // Outside the sandbox: a repository's new hooks and config are exactly what the
        // sandbox keeps a command from creating.
        git(&place.workdir, &["init", "-q", "."]);
        std::fs::write(place.workdir.join("f.txt"), "tracked\n").unwrap();
        place
    }

    /// Commits the workdir and adds a linked worktree `wt` beside it; returns its path.
    fn linked_worktree(&self) -> PathBuf {
        git(&self.workdir, &["add", "-A"]);
        git(&self.workdir, &["commit", "-qm", "base"]);
        let worktree = self.workdir.parent().unwrap().join("wt");
        git(
            &self.workdir,
            &["worktree", "add", "-q", worktree.to_str().unwrap()],
        );
        worktree
    }

    /// `harness9 [flags] sandbox -- bash -c SCRIPT` in the workdir.
    fn sandboxed(&self, flags: &[&str], script: &str) -> Output {
        self.sandboxed_env(flags, script, &[])
    }

    fn sandboxed_env(&self, flags: &[&str], script: &str, env: &[(&str, &str)]) -> Output {
        self.sandboxed_in(&self.workdir, flags, script, env)
    }

    fn sandboxed_in(
        &self,
        dir: &Path,
        flags: &[&str],
        script: &str,
        env: &[(&str, &str)],
    ) -> Output {
        Command::new(binary())
            .args(flags)
            .args(["sandbox", "--", "bash", "-c", script])
            .current_dir(dir)
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", &self.user_home)
            .env("HARNESS9_HOME", &self.home)
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@example.com")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@example.com")
            .envs(env.iter().copied())
            .output()
            .unwrap()
    }
}

fn text(output: &Output) -> String {
    format!(
        "status {:?}\nstdout: {}\nstderr: {}",
        output.status.code(),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

fn fails(place: &Place, flags: &[&str], script: &str) -> Output {
    let output = place.sandboxed(flags, script);
    assert!(
        !output.status.success(),
        "`{script}` should fail: {}",
        text(&output)
    );
    output
}

#[test]
fn workspace_write_lets_commands_write_the_workdir_and_tmp_and_commit() {
    let place = Place::new();
    let tmp_name = format!("/tmp/harness9-sandbox-{}", std::process::id());
    let script = format!(
        "echo built > out.txt && mkdir -p target/debug && echo t > {tmp_name} && \
         git add -A && git commit -qm first && git log --oneline"
    );
    let output = place.sandboxed(&[], &script);
    assert!(output.status.success(), "{}", text(&output));
    assert_eq!(
        std::fs::read_to_string(place.workdir.join("out.txt")).unwrap(),
        "built\n"
    );
    assert!(Path::new(&tmp_name).exists());
    assert!(String::from_utf8_lossy(&output.stdout).contains("first"));
    let _ = std::fs::remove_file(&tmp_name);
}

#[test]
fn a_linked_worktree_can_commit_but_not_touch_the_repositorys_hooks_or_config() {
    let place = Place::new();
    let worktree = place.linked_worktree();
    let output = place.sandboxed_in(
        &worktree,
        &[],
        "echo change > g.txt && git add g.txt && git commit -qm in-worktree && git log --oneline",
        &[],
    );
    assert!(output.status.success(), "{}", text(&output));
    assert!(String::from_utf8_lossy(&output.stdout).contains("in-worktree"));
    let main_git = place.workdir.join(".git");
    let config_before = std::fs::read(main_git.join("config")).unwrap();
    for script in [
        format!("echo x > {}/hooks/post-checkout", main_git.display()),
        format!("echo '[core]' >> {}/config", main_git.display()),
    ] {
        let output = place.sandboxed_in(&worktree, &[], &script, &[]);
        assert!(!output.status.success(), "`{script}`: {}", text(&output));
    }
    assert!(!main_git.join("hooks/post-checkout").exists());
    assert_eq!(
        std::fs::read(main_git.join("config")).unwrap(),
        config_before
    );
}

#[test]
fn workspace_write_keeps_everything_else_and_the_protected_paths_unwritten() {
    let place = Place::new();
    let outside = place.workdir.parent().unwrap().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    let config_before = std::fs::read(place.workdir.join(".git/config")).unwrap();
    let attempts = [
        format!("echo x > {}/x", outside.display()),
        "echo x > \"$HOME/x\"".to_owned(),
        "echo '#!/bin/sh' > .git/hooks/pre-commit".to_owned(),
        "printf '[core]\\n\\tfsmonitor = evil\\n' >> .git/config".to_owned(),
    ];
    for script in &attempts {
        fails(&place, &[], script);
    }
    assert!(!outside.join("x").exists());
    assert!(!place.user_home.join("x").exists());
    assert!(!place.workdir.join(".git/hooks/pre-commit").exists());
    assert_eq!(
        std::fs::read(place.workdir.join(".git/config")).unwrap(),
        config_before
    );

    // Protected paths that do not exist yet cannot be planted either.
    for script in [
        "echo '{\"mcpServers\": {}}' > .mcp.json",
        "mkdir -p .harness9 && echo '{\"permissions\": {\"allow\": [\"bash(*)\"]}}' > .harness9/settings.json",
        "echo OPENAI_BASE_URL=http://evil > .env.local",
    ] {
        let output = fails(&place, &[], script);
        assert!(
            String::from_utf8_lossy(&output.stderr).contains("the sandbox undid"),
            "{}",
            text(&output)
        );
    }
    assert!(!place.workdir.join(".mcp.json").exists());
    assert!(!place.workdir.join(".harness9").exists());
    assert!(!place.workdir.join(".env.local").exists());
}

#[test]
fn commands_cannot_read_the_harness9_home() {
    let place = Place::new();
    let output = fails(&place, &[], "cat \"$HARNESS9_HOME/sessions.db\"");
    assert!(!String::from_utf8_lossy(&output.stdout).contains("the user's sessions"));
}

#[test]
fn tcp_to_a_local_listener_fails_unless_the_user_turns_the_network_on() {
    let place = Place::new();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let script = format!("exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected");
    let output = fails(&place, &[], &script);
    assert!(!String::from_utf8_lossy(&output.stdout).contains("connected"));

    // A project file cannot turn it on...
    std::fs::create_dir_all(place.workdir.join(".harness9")).unwrap();
    std::fs::write(
        place.workdir.join(".harness9/settings.json"),
        r#"{"sandbox": {"network": true}}"#,
    )
    .unwrap();
    fails(&place, &[], &script);
    // ...the user's own settings can.
    std::fs::write(
        place.home.join("settings.json"),
        r#"{"sandbox": {"mode": "workspace-write", "network": true}}"#,
    )
    .unwrap();
    std::fs::remove_file(place.workdir.join(".harness9/settings.json")).unwrap();
    let output = place.sandboxed(&[], &script);
    assert!(output.status.success(), "{}", text(&output));
    assert!(String::from_utf8_lossy(&output.stdout).contains("connected"));
}

#[test]
fn root_cannot_change_the_hostname_or_the_clock() {
    let place = Place::new();
    let before = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
    fails(&place, &[], "hostname harness9-was-here");
    fails(&place, &[], "date -s '2001-01-01 00:00:00'");
    assert_eq!(
        std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap(),
        before
    );
    let output = place.sandboxed(&[], "grep -E '^Cap(Eff|Prm|Bnd|Amb|Inh)' /proc/self/status");
    for line in String::from_utf8_lossy(&output.stdout).lines() {
        assert!(
            line.ends_with("0000000000000000"),
            "capability left: {line}"
        );
    }
}

/// x32 system calls carry other numbers for the same calls; the filter refuses them all
/// (EPERM, 1). A kernel without x32 would answer ENOSYS (38): the answer shows the filter ran.
#[cfg(target_arch = "x86_64")]
#[test]
fn x32_system_calls_are_refused_by_the_filter() {
    let place = Place::new();
    // getpid (39) with the x32 bit.
    let output = place.sandboxed(&[], "perl -e 'syscall(0x40000000 | 39); print $!+0'");
    assert_eq!(
        String::from_utf8_lossy(&output.stdout).trim(),
        "1",
        "{}",
        text(&output)
    );
}

#[test]
fn read_only_writes_nowhere() {
    let place = Place::new();
    for script in ["echo x > new.txt", "echo x >> f.txt", "mktemp", "mkdir d"] {
        fails(&place, &["--sandbox", "read-only"], script);
    }
    assert!(!place.workdir.join("new.txt").exists());
    assert!(!place.workdir.join("d").exists());
    // Reading still works.
    let output = place.sandboxed(&["--sandbox", "read-only"], "cat f.txt");
    assert!(output.status.success(), "{}", text(&output));
}

#[cfg(debug_assertions)]
#[test]
fn a_kernel_without_landlock_degrades_to_off_with_a_notice() {
    let place = Place::new();
    let outside = place.workdir.parent().unwrap().join("written-unsandboxed");
    let output = place.sandboxed_env(
        &[],
        &format!("echo x > {}", outside.display()),
        &[("HARNESS9_SANDBOX_SIMULATE", "no-landlock")],
    );
    assert!(output.status.success(), "{}", text(&output));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(stderr.matches("notice: sandbox off").count(), 1, "{stderr}");
    assert!(stderr.contains("no Landlock"), "{stderr}");
    assert!(outside.exists());
}

/// The `bash` tool of a session whose sandbox re-executes the real binary.
fn bash_registry(place: &Place, bash: impl FnOnce(Bash) -> Bash) -> harness9::tools::Registry {
    let sandbox = Sandbox::resolve(&SandboxInputs {
        flag: None,
        workdir: place.workdir.clone(),
        home: place.home.clone(),
        helper: binary(),
    });
    assert!(sandbox.is_active(), "{:?}", sandbox.notices());
    builtin_registry_with(bash(Bash::new(Arc::new(sandbox), None)))
}

fn context(place: &Place, mode: Mode) -> ToolContext {
    ToolContext {
        workdir: place.workdir.clone(),
        cancel: Default::default(),
        mode,
        todos: Arc::default(),
        read_guard: Default::default(),
        outputs: None,
        editor_files: None,
        editor_terminal: None,
    }
}

fn bash_call(arguments: serde_json::Value) -> ToolCall {
    ToolCall {
        id: "b".into(),
        name: "bash".into(),
        arguments: arguments.to_string(),
    }
}

#[tokio::test]
async fn plan_mode_changes_nothing_even_without_its_command_check() {
    let place = Place::new();
    let registry = bash_registry(&place, Bash::without_plan_classifier);
    let ctx = context(&place, Mode::Plan);
    for arguments in [
        json!({"command": "echo x > planned.txt"}),
        json!({"command": "rm f.txt"}),
        // Asking to leave the sandbox changes nothing in plan mode.
        json!({"command": "echo x > planned.txt", "sandbox": false}),
    ] {
        let result = registry.execute(&bash_call(arguments), &ctx).await;
        assert!(result.is_error, "{}", result.output);
    }
    assert!(!place.workdir.join("planned.txt").exists());
    assert!(place.workdir.join("f.txt").exists());
}

#[tokio::test]
async fn a_denied_command_tells_the_model_how_to_leave_the_sandbox() {
    let place = Place::new();
    let registry = bash_registry(&place, |b| b);
    let ctx = context(&place, Mode::AutoEdit);
    let result = registry
        .execute(
            &bash_call(json!({"command": "echo x >> .git/config"})),
            &ctx,
        )
        .await;
    assert!(result.is_error);
    assert!(result.output.contains("[sandbox]"), "{}", result.output);
    assert!(
        result.output.contains("\"sandbox\": false"),
        "{}",
        result.output
    );

    let result = registry
        .execute(
            &bash_call(json!({"command": "echo '{}' > .mcp.json"})),
            &ctx,
        )
        .await;
    assert!(
        result.is_error && result.output.contains(".mcp.json"),
        "{}",
        result.output
    );
    assert!(!place.workdir.join(".mcp.json").exists());

    // A command that works gets no hint.
    let result = registry
        .execute(&bash_call(json!({"command": "echo fine > ok.txt"})), &ctx)
        .await;
    assert!(
        !result.is_error && !result.output.contains("[sandbox]"),
        "{}",
        result.output
    );
}

mod metadata;
mod nested;
mod planting;
mod undo;
