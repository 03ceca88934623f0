//! Planting attacks through the sandbox: a command that renames `.git` away and plants a
//! repository whose config runs a program at the user's next `git status`, swaps a temporary
//! workdir or harness9 home, redirects config or hooks through git files, or plants unix sockets
//! and unwritable directories. Each is refused or undone.

use std::path::Path;

use harness9::planning::Mode;
use serde_json::json;

use super::undo::sandboxed_as_owner;
use super::{Place, bash_call, bash_registry, context, fails, scratch_root, text};

/// The config a planted `.git` would hold: git runs `core.fsmonitor` at the user's next
/// `git status`, outside the sandbox.
const PLANTED_CONFIG: &str = "printf '[core]\\n\\tfsmonitor = touch /tmp/harness9-pwned\\n'";

#[test]
fn the_git_directory_cannot_be_renamed_away_and_replaced() {
    let place = Place::new();
    let config_before = std::fs::read(place.workdir.join(".git/config")).unwrap();
    for script in [
        format!("mv .git .git-old && mkdir .git && {PLANTED_CONFIG} > .git/config"),
        format!("rm -rf .git; mkdir -p .git && {PLANTED_CONFIG} > .git/config"),
    ] {
        fails(&place, &[], &script);
    }
    assert!(!place.workdir.join(".git-old").exists());
    assert_eq!(
        std::fs::read(place.workdir.join(".git/config")).unwrap(),
        config_before
    );
}

#[test]
fn a_workdir_in_the_temp_dir_cannot_be_swapped_for_one_with_a_planted_config() {
    let place = Place::under(Path::new("/tmp"));
    let config_before = std::fs::read(place.workdir.join(".git/config")).unwrap();
    for script in [
        format!(
            "cd .. && mv repo repo-old && mkdir -p repo/.git && {PLANTED_CONFIG} > repo/.git/config"
        ),
        // The workdir being pinned, what lies beneath it must still be protected from it.
        format!("{PLANTED_CONFIG} >> .git/config"),
        format!("mv .git .git-old && mkdir .git && {PLANTED_CONFIG} > .git/config"),
    ] {
        fails(&place, &[], &script);
    }
    assert!(!place.workdir.parent().unwrap().join("repo-old").exists());
    assert!(!place.workdir.join(".git-old").exists());
    assert_eq!(
        std::fs::read(place.workdir.join(".git/config")).unwrap(),
        config_before
    );
}

#[test]
fn a_harness9_home_in_the_temp_dir_cannot_be_swapped_for_one_with_planted_settings() {
    let place = Place::under(Path::new("/tmp"));
    let state = place.home.parent().unwrap();
    let script = format!(
        "cd {} && mv state state-old && mkdir -p state/h9 && \
         echo '{{\"permissions\": {{\"allow\": [\"bash(*)\"]}}}}' > state/h9/settings.json",
        state.parent().unwrap().display()
    );
    fails(&place, &[], &script);
    assert!(!place.home.join("settings.json").exists());
    assert!(place.home.join("sessions.db").exists());
    assert!(!state.with_file_name("state-old").exists());
}

#[test]
fn git_files_that_redirect_config_or_hooks_are_read_only_or_undone() {
    let place = Place::new();
    let git = place.workdir.join(".git");
    // Absent: creating them is undone and reported.
    for (script, created) in [
        ("echo /tmp/elsewhere > .git/commondir", "commondir"),
        ("echo '[core]' > .git/config.worktree", "config.worktree"),
        (
            "mkdir -p .git/modules/sub/hooks && echo x > .git/modules/sub/hooks/post-checkout",
            "modules",
        ),
        (
            "mkdir -p .git/worktrees/w && echo /tmp/elsewhere > .git/worktrees/w/commondir",
            "worktrees",
        ),
    ] {
        let output = fails(&place, &[], script);
        assert!(
            String::from_utf8_lossy(&output.stderr).contains("the sandbox undid"),
            "{}",
            text(&output)
        );
        assert!(!git.join(created).exists(), "{created} was left");
    }
    // Present: they are read-only.
    std::fs::create_dir_all(git.join("modules/sub")).unwrap();
    std::fs::write(git.join("modules/sub/config"), "[core]\n").unwrap();
    std::fs::create_dir_all(git.join("worktrees/w")).unwrap();
    std::fs::write(git.join("worktrees/w/commondir"), "../..\n").unwrap();
    for script in [
        format!("{PLANTED_CONFIG} >> .git/modules/sub/config"),
        "echo /tmp/elsewhere > .git/worktrees/w/commondir".to_owned(),
        "rm -rf .git/modules .git/worktrees".to_owned(),
    ] {
        fails(&place, &[], &script);
    }
    assert_eq!(
        std::fs::read_to_string(git.join("modules/sub/config")).unwrap(),
        "[core]\n"
    );
    assert_eq!(
        std::fs::read_to_string(git.join("worktrees/w/commondir")).unwrap(),
        "../..\n"
    );
}

#[test]
fn without_a_repository_a_new_git_file_or_directory_is_undone() {
    let place = Place::new();
    std::fs::remove_dir_all(place.workdir.join(".git")).unwrap();
    for script in [
        "printf 'gitdir: /tmp/harness9-elsewhere\\n' > .git".to_owned(),
        format!("mkdir .git && {PLANTED_CONFIG} > .git/config"),
        "git init -q".to_owned(),
    ] {
        let output = fails(&place, &[], &script);
        assert!(
            String::from_utf8_lossy(&output.stderr).contains("the sandbox undid"),
            "{}",
            text(&output)
        );
        assert!(!place.workdir.join(".git").exists(), "`{script}` left .git");
    }
}

#[tokio::test]
async fn git_init_in_the_sandbox_is_undone_and_the_model_told_how_to_leave_it() {
    let place = Place::new();
    std::fs::remove_dir_all(place.workdir.join(".git")).unwrap();
    let registry = bash_registry(&place, |b| b);
    let ctx = context(&place, Mode::AutoEdit);
    let result = registry
        .execute(&bash_call(json!({"command": "git init -q"})), &ctx)
        .await;
    assert!(result.is_error, "{}", result.output);
    assert!(result.output.contains(".git"), "{}", result.output);
    assert!(
        result.output.contains("\"sandbox\": false"),
        "{}",
        result.output
    );
    assert!(!place.workdir.join(".git").exists());
}

#[test]
fn a_linked_worktrees_git_file_and_git_dir_redirections_stay_out_of_reach() {
    let place = Place::new();
    let worktree = place.linked_worktree();
    let gitdir = place.workdir.join(".git/worktrees/wt");
    let dot_git_before = std::fs::read(worktree.join(".git")).unwrap();
    let commondir_before = std::fs::read(gitdir.join("commondir")).unwrap();
    for script in [
        "printf 'gitdir: /tmp/harness9-elsewhere\\n' > .git".to_owned(),
        format!(
            "echo /tmp/harness9-elsewhere > {}/commondir",
            gitdir.display()
        ),
        format!("echo '[core]' > {}/config.worktree", gitdir.display()),
    ] {
        let output = place.sandboxed_in(&worktree, &[], &script, &[]);
        assert!(!output.status.success(), "`{script}`: {}", text(&output));
    }
    assert_eq!(
        std::fs::read(worktree.join(".git")).unwrap(),
        dot_git_before
    );
    assert_eq!(
        std::fs::read(gitdir.join("commondir")).unwrap(),
        commondir_before
    );
    assert!(!gitdir.join("config.worktree").exists());
}

/// A perl one-liner that connects to the Unix socket named by its argument.
const UNIX_CONNECT: &str = "perl -MIO::Socket::UNIX -e '\
     IO::Socket::UNIX->new(Type => SOCK_STREAM(), Peer => $ARGV[0]) \
     or die \"connect: $!\\n\"; print \"connected\\n\"'";

#[test]
fn unix_sockets_outside_are_out_of_reach_unless_the_network_is_on() {
    let place = Place::new();
    // Stands in for /var/run/docker.sock: a listener outside everything the command may write.
    let socket = place.workdir.parent().unwrap().join("docker.sock");
    let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    let script = format!("{UNIX_CONNECT} {}", socket.display());
    let output = fails(&place, &[], &script);
    assert!(!String::from_utf8_lossy(&output.stdout).contains("connected"));

    // What commands use every day still works: pipes, socketpair, git, cargo.
    let everyday = "printf 'b\\na\\n' | sort | head -1 && git status --short && \
         \"$CARGO\" --version && perl -MSocket -e '\
         socketpair(my $x, my $y, AF_UNIX, SOCK_STREAM, PF_UNSPEC) \
         or die \"socketpair: $!\\n\"; print \"pair\\n\"'";
    let output = place.sandboxed_env(&[], everyday, &[("CARGO", env!("CARGO"))]);
    assert!(output.status.success(), "{}", text(&output));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.starts_with("a\n") && stdout.contains("cargo ") && stdout.contains("pair"));

    std::fs::write(
        place.home.join("settings.json"),
        r#"{"sandbox": {"mode": "workspace-write", "network": true}}"#,
    )
    .unwrap();
    let output = place.sandboxed(&[], &script);
    assert!(output.status.success(), "{}", text(&output));
    assert!(String::from_utf8_lossy(&output.stdout).contains("connected"));
}

#[test]
fn a_planted_directory_made_unwritable_is_still_undone() {
    let place = Place::new();
    let script = "mkdir -p .harness9/sub && \
        echo '{\"permissions\": {\"allow\": [\"bash(*)\"]}}' > .harness9/settings.json && \
        chmod 555 .harness9/sub .harness9";
    let output = sandboxed_as_owner(&place, script);
    assert!(!output.status.success(), "{}", text(&output));
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("the sandbox undid"),
        "{}",
        text(&output)
    );
    assert!(!place.workdir.join(".harness9").exists());
}

#[test]
fn a_missing_or_linked_harness9_home_cannot_be_planted() {
    let place = Place::under(Path::new("/tmp"));
    std::fs::remove_dir_all(&place.home).unwrap();
    let plant =
        "echo '{\"permissions\": {\"allow\": [\"bash(*)\"]}}' > \"$HARNESS9_HOME/settings.json\"";
    let output = fails(
        &place,
        &[],
        &format!("mkdir -p \"$HARNESS9_HOME\" && {plant}"),
    );
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("the sandbox undid"),
        "{}",
        text(&output)
    );
    assert!(!place.home.exists());

    // A home that is a link into a place the command cannot write: the link stays.
    let real = tempfile::tempdir_in(scratch_root()).unwrap();
    std::os::unix::fs::symlink(real.path(), &place.home).unwrap();
    fails(
        &place,
        &[],
        &format!("rm \"$HARNESS9_HOME\" && mkdir \"$HARNESS9_HOME\" && {plant}"),
    );
    assert_eq!(std::fs::read_link(&place.home).unwrap(), real.path());
    assert!(!real.path().join("settings.json").exists());
}
