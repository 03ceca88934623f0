//! Issue 32 point 1: in `auto-edit` a sandboxed command runs unasked unless it deletes or
//! overwrites files that exist, wherever the deleting command sits in the line.

use std::collections::HashSet;
use std::path::Path;

use serde_json::json;

use super::tests::{BASH, Env, V, bash, case, judge, short};
use super::*;

/// A working directory with a `build/` folder, files `a`, `README.md` and `src/a`.
fn env_with_files() -> Env {
    let env = Env::new();
    std::fs::create_dir_all(env.work.join("build")).unwrap();
    for file in ["a", "README.md", "src/a"] {
        std::fs::write(env.work.join(file), "kept\n").unwrap();
    }
    env
}

fn sandboxed_in_auto_edit(env: &Env, command: &str) -> Verdict {
    let rules = env.rules(true);
    let mut call = case(&*BASH, bash(command), Mode::AutoEdit);
    call.sandboxed = true;
    judge(&env.work, &rules, &call)
}

#[test]
fn deleting_or_overwriting_existing_files_asks_in_auto_edit_even_sandboxed() {
    let env = env_with_files();
    for command in [
        "rm -rf build && mkdir build",
        "x=1; rm a",
        "$(rm a)",
        "echo $(rm a)",
        "bash -c 'rm a'",
        "find . -delete",
        "find . -name '*.o' -exec rm {} +",
        "ls | xargs rm",
        "echo > README.md",
        "cat a >| README.md",
        "make 2> README.md",
        "echo hi > \"$out\"",
        "rm *.o",
        "cd src && rm x",
        "mv a README.md",
        "cp a src",
        "ln -sf a README.md",
        "echo hi | tee README.md",
        "dd if=/dev/zero of=a count=1",
        "truncate -s 0 a",
        "git clean -fdx",
        "git checkout -- .",
        "git checkout README.md",
        "git restore .",
        "git reset --hard",
        "git rm a",
        "unlink a",
    ] {
        let verdict = sandboxed_in_auto_edit(&env, command);
        let Verdict::Ask { reason, .. } = &verdict else {
            panic!("`{command}` must ask in auto-edit: {verdict:?}");
        };
        assert!(
            reason.contains("deletes or overwrites"),
            "`{command}`: {reason}"
        );
    }
    for file in ["a", "README.md", "src/a"] {
        assert!(env.work.join(file).exists(), "nothing ran");
    }
}

#[test]
fn commands_that_destroy_nothing_that_exists_still_run_sandboxed_in_auto_edit() {
    let env = env_with_files();
    for command in [
        "mkdir out && echo hi > out/x",
        "rm -f missing.txt",
        "echo hi >> README.md",
        "cargo build 2>/dev/null",
        "echo hi > new.txt",
        "cp a b",
        "mv -n a README.md",
        "git checkout -b topic",
        "git restore --staged a",
        "git rm --cached a",
        "touch x",
    ] {
        assert_eq!(
            sandboxed_in_auto_edit(&env, command),
            Verdict::Run,
            "`{command}`"
        );
    }
}

#[test]
fn a_destroying_command_the_user_allowed_for_the_session_runs_and_other_modes_are_unchanged() {
    let env = env_with_files();
    let rules = env.rules(true);
    let Verdict::Ask { scope, .. } = sandboxed_in_auto_edit(&env, "rm a") else {
        panic!("asks");
    };
    let keys = [scope.key.as_str()];
    let mut granted = case(&*BASH, bash("rm a"), Mode::AutoEdit);
    granted.sandboxed = true;
    granted.granted = &keys;
    assert_eq!(judge(&env.work, &rules, &granted), Verdict::Run);
    let mut unsandboxed = case(&*BASH, bash("rm a"), Mode::AutoEdit);
    unsandboxed.sandboxed = false;
    assert_eq!(short(&judge(&env.work, &rules, &unsandboxed)), V::Ask);
    assert_eq!(
        short(&judge(
            &env.work,
            &rules,
            &case(&*BASH, bash("rm a"), Mode::Default)
        )),
        V::Ask
    );
    assert_eq!(
        judge(&env.work, &rules, &case(&*BASH, bash("rm a"), Mode::Yolo)),
        Verdict::Run
    );
    let leave = case(
        &*BASH,
        json!({"command": "rm a", "sandbox": false}),
        Mode::AutoEdit,
    );
    assert_eq!(short(&judge(&env.work, &rules, &leave)), V::Ask);
}

/// A file a tool of this session created is the session's: a command may delete or overwrite it
/// unasked; the user's files still ask.
#[test]
fn files_this_session_created_may_be_removed_unasked() {
    let env = env_with_files();
    let rules = env.rules(true);
    let made = env.work.join("a");
    let created = move |path: &Path| path == made;
    let judge_line = |command: &str| {
        let arguments = bash(command);
        let mut input = CallInput::new(&*BASH, &arguments, Mode::AutoEdit, &env.work);
        input.sandboxed = true;
        input.created = Some(&created);
        decide(&input, &HashSet::new(), &rules)
    };
    assert_eq!(judge_line("rm a"), Verdict::Run);
    assert_eq!(judge_line("echo again > a"), Verdict::Run);
    assert_eq!(short(&judge_line("rm a README.md")), V::Ask);
}
