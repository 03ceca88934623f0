//! The decision against the classifier and rule bypasses of issue 19, one test per item: `cd`,
//! secrets printed by git, globs naming secrets, `$HARNESS9_HOME`, and deny rules seen through
//! `find -delete`, `find -exec` and `xargs`.

use std::path::Path;

use serde_json::json;

use super::tests::{BASH, Env, V, bash, case, check_table, judge, path, short, write};
use super::*;
use crate::tools::{EditFile, Glob, Grep, ListDir, ReadFile, WriteFile};

/// Writes `text` to `root/name`, creating its folders.
pub(super) fn file(root: &Path, name: &str, text: &str) {
    let path = root.join(name);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).unwrap();
    }
    std::fs::write(path, text).unwrap();
}

/// git with the machine's configuration left out, as a test fixture.
pub(super) fn git(dir: &Path, args: &[&str]) {
    let status = std::process::Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .status()
        .unwrap();
    assert!(status.success(), "git {args:?}");
}

/// A `bash` call as the sandbox would run it in `auto-edit`.
fn sandboxed(command: &str) -> (super::tests::Case<'static>, V) {
    let mut c = case(&*BASH, bash(command), Mode::AutoEdit);
    c.sandboxed = true;
    (c, V::Run)
}

fn expect(mut pair: (super::tests::Case<'static>, V), want: V) -> (super::tests::Case<'static>, V) {
    pair.1 = want;
    pair
}

/// An `Env` whose working directory is a real repository.
pub(super) fn repository() -> Env {
    let env = Env::new();
    std::fs::remove_dir_all(env.work.join(".git")).unwrap();
    git(&env.work, &["init", "-q"]);
    env
}

/// Item 1: `cd` changes what the words after it mean (and which repository git reads).
#[test]
fn a_cd_before_other_commands_is_not_read_only_and_moves_the_paths_judged() {
    let env = Env::new();
    file(&env.work, "evil/HEAD", "ref: refs/heads/main\n");
    file(&env.work, "src/.env", "KEY=x\n");
    file(&env.work, "src/main.rs", "fn main() {}\n");
    let rules = env.rules(true);
    use Mode::*;
    check_table(
        &env,
        &rules,
        &[
            (case(&*BASH, bash("cd evil && git status"), Default), V::Ask),
            (case(&*BASH, bash("cd evil; git log -1"), Default), V::Ask),
            (
                case(&*BASH, bash("pushd evil && git status"), Default),
                V::Ask,
            ),
            (case(&*BASH, bash("cd evil"), Default), V::Run),
            (case(&*BASH, bash("git status"), Default), V::Run),
            // The glob is expanded where `cd` leads: `src/.env`.
            expect(sandboxed("cd src && cat .e*"), V::Ask),
            expect(sandboxed("cd src && cat *.rs"), V::Run),
            // Where `cd "$d"` leads is only known when it runs: a glob after it cannot be
            // expanded with certainty.
            expect(sandboxed("cd \"$d\" && cat .e*"), V::Ask),
            expect(sandboxed("cd \"$d\" && make"), V::Run),
        ],
    );
}

/// Item 2: git prints what a repository tracks, and `--untracked`/`--no-index` what it does not.
#[test]
fn git_commands_that_print_files_ask_when_a_secret_is_tracked_or_reachable() {
    let env = repository();
    file(&env.work, "src/main.rs", "fn main() {}\n");
    file(&env.work, ".env.example", "KEY=\n");
    file(&env.work, ".env", "KEY=sk-secret\n");
    file(&env.work, "other/.env", "KEY=sk-secret\n");
    git(&env.work, &["add", "src/main.rs", ".env.example"]);
    // A repository inside it that tracks its `.env`.
    let dep = env.work.join("vendor/dep");
    file(&dep, ".env", "KEY=sk-secret\n");
    git(&dep, &["init", "-q"]);
    git(&dep, &["add", ".env"]);
    let rules = env.rules(true);
    use Mode::*;
    // Nothing secret is tracked (a template committed to be copied is no secret).
    check_table(
        &env,
        &rules,
        &[
            (case(&*BASH, bash("git grep KEY"), Default), V::Run),
            expect(sandboxed("git grep KEY"), V::Run),
            // Where `-C` and `cd` lead, the other repository's tracked files count.
            expect(sandboxed("git -C vendor/dep grep KEY"), V::Ask),
            expect(sandboxed("cd vendor/dep && git log -p"), V::Ask),
            expect(sandboxed("git --git-dir=vendor/dep/.git log -p"), V::Ask),
            (case(&*BASH, bash("git log -p"), Default), V::Run),
            (case(&*BASH, bash("git diff"), Default), V::Run),
            (
                case(&*BASH, bash("git grep --untracked KEY"), Default),
                V::Ask,
            ),
            (
                case(&*BASH, bash("git grep --no-index KEY"), Default),
                V::Ask,
            ),
            expect(sandboxed("git grep --untracked KEY"), V::Ask),
            expect(sandboxed("git grep --no-index KEY"), V::Ask),
            (
                case(&*BASH, bash("git diff --no-index src other"), Default),
                V::Ask,
            ),
            expect(sandboxed("git diff --no-index src other"), V::Ask),
            (
                case(&*BASH, bash("git diff --no-index src src"), Default),
                V::Run,
            ),
            // `git blame` prints the one file it names: judged as that path.
            (case(&*BASH, bash("git blame .env"), Default), V::Ask),
            (
                case(&*BASH, bash("git blame -- src/main.rs"), Default),
                V::Run,
            ),
        ],
    );
    // Once the index tracks `.env`, every git command that prints file contents asks.
    git(&env.work, &["add", ".env"]);
    let mut table = Vec::new();
    for line in [
        "git grep KEY",
        "git grep -l KEY -- src",
        "git log -p",
        "git log --patch -1",
        "git log -S KEY --oneline",
        "git log -GKEY",
        "git show",
        "git diff --cached",
        "git diff HEAD",
        "git cat-file -p :src/main.rs",
        "git --no-pager log -p -1",
    ] {
        table.push((case(&*BASH, bash(line), Default), V::Ask));
        table.push((case(&*BASH, bash(line), Plan), V::Deny));
        table.push(expect(sandboxed(line), V::Ask));
        table.push((case(&*BASH, bash(line), Yolo), V::Run));
    }
    for line in ["git status", "git log --oneline -5", "git ls-files"] {
        table.push((case(&*BASH, bash(line), Default), V::Run));
    }
    check_table(&env, &rules, &table);
}

/// Item 2 with a deny rule: a tracked file a read deny rule covers counts as a secret.
#[test]
fn git_commands_that_print_files_ask_when_a_denied_file_is_tracked() {
    let env = repository().user(r#"{"permissions": {"deny": ["read_file(private/**)"]}}"#);
    file(&env.work, "src/main.rs", "fn main() {}\n");
    file(&env.work, "private/notes.txt", "KEY\n");
    git(&env.work, &["add", "src/main.rs"]);
    let rules = env.rules(true);
    check_table(
        &env,
        &rules,
        &[(case(&*BASH, bash("git grep KEY"), Mode::Default), V::Run)],
    );
    git(&env.work, &["add", "private/notes.txt"]);
    check_table(
        &env,
        &rules,
        &[
            (case(&*BASH, bash("git grep KEY"), Mode::Default), V::Ask),
            (case(&*BASH, bash("git show"), Mode::Plan), V::Deny),
        ],
    );
}

/// Item 3: a glob is judged by the files it expands to.
#[test]
fn globs_are_judged_by_the_files_they_expand_to() {
    let env = Env::new().user(r#"{"permissions": {"deny": ["read_file(private/**)"]}}"#);
    for name in [
        ".env",
        "server.pem",
        "certs/server.pem",
        "src/main.rs",
        "src/a.rs",
    ] {
        file(&env.work, name, "x\n");
    }
    file(&env.work, "private/notes.txt", "x\n");
    let rules = env.rules(true);
    use Mode::*;
    check_table(
        &env,
        &rules,
        &[
            (case(&*BASH, bash("cat .e?v"), Default), V::Ask),
            (case(&*BASH, bash("cat .en*"), Default), V::Ask),
            (case(&*BASH, bash("cat ./.e*"), Default), V::Ask),
            (case(&*BASH, bash("head certs/*.pem"), Default), V::Ask),
            // Default mode runs only plain lines unasked; plan mode runs what the classifier
            // accepts, globs included.
            (case(&*BASH, bash("cat src/*.rs"), Default), V::Ask),
            (case(&*BASH, bash("cat .e?v"), Plan), V::Deny),
            (case(&*BASH, bash("cat .en*"), Plan), V::Deny),
            (case(&*BASH, bash("head certs/*.pem"), Plan), V::Deny),
            (case(&*BASH, bash("cat src/*.rs"), Plan), V::Run),
            expect(sandboxed("head *.pem"), V::Ask),
            expect(sandboxed("cat .e?v"), V::Ask),
            expect(sandboxed("cat .[e]nv"), V::Ask),
            expect(sandboxed("cat .{e,x}nv"), V::Ask),
            expect(sandboxed("cat src/**/*.rs"), V::Ask),
            expect(sandboxed("cat src/*.rs"), V::Run),
            expect(sandboxed("cat src/a*"), V::Run),
            // A redirection reads its file as surely as an argument names it.
            expect(sandboxed("cat < .env"), V::Ask),
            expect(sandboxed("cat 0<.e?v"), V::Ask),
            expect(sandboxed("{ cat; } < .env"), V::Ask),
            expect(sandboxed("wc -l < src/main.rs"), V::Run),
            (case(&*BASH, bash("cat < .e?v"), Plan), V::Deny),
            // A parameter expansion is only known when it runs: sandboxed, that is the contract.
            expect(sandboxed("cat \"$e\""), V::Run),
            // A glob reaching a denied path asks in every mode, as the path named would.
            (case(&*BASH, bash("cat priv*/notes.txt"), Yolo), V::Ask),
        ],
    );
}

/// Item 4: `$HARNESS9_HOME` holds the sessions, the serve token, the user's settings and the
/// trusted folders: secret to every tool, and protected from writes.
#[test]
fn harness9_home_is_secret_to_every_tool_and_protected_from_writes() {
    let env = Env::new();
    for name in ["serve.token", "sessions.db", "trusted.json"] {
        file(&env.home, name, "token-secret\n");
    }
    let rules = env.rules(true);
    let home = env.home.display().to_string();
    let token = format!("{home}/serve.token");
    use Mode::*;
    let mut table = Vec::new();
    for (mode, want) in [
        (Default, V::Ask),
        (AutoEdit, V::Ask),
        (Plan, V::Deny),
        (Yolo, V::Run),
    ] {
        table.push((case(&ReadFile, path(&token), mode), want));
        table.push((
            case(&Grep, json!({"pattern": "t", "path": home}), mode),
            want,
        ));
        table.push((
            case(&Glob, json!({"pattern": "*", "path": home}), mode),
            want,
        ));
        table.push((case(&ListDir, path(&home), mode), want));
        table.push((case(&*BASH, bash(&format!("cat {token}")), mode), want));
        table.push((case(&*BASH, bash("cat ../home/sessions.db"), mode), want));
    }
    check_table(&env, &rules, &table);

    // A home inside the working directory: writes there ask like protected paths, and tree
    // walks withhold its files.
    let inner = env.work.join(".h9");
    file(&inner, "sessions.db", "x");
    let rules = PermissionRules::new(&env.work, &inner, true);
    for mode in [Default, AutoEdit] {
        for tool in [&WriteFile as &dyn Tool, &EditFile] {
            let mut c = case(tool, write(".h9/settings.json"), mode);
            c.granted = &["edit:workdir"];
            let got = judge(&env.work, &rules, &c);
            assert_eq!(short(&got), V::Ask, "{mode} {}: {got:?}", tool.name());
        }
    }
    let c = case(&WriteFile, write(".h9/settings.json"), Yolo);
    assert_eq!(judge(&env.work, &rules, &c), Verdict::Run);
    let guard = read_guard(std::sync::Arc::new(rules), env.work.clone());
    assert!(guard.withholds(&inner.join("sessions.db")));
    assert!(!guard.withholds(&env.work.join("src/main.rs")));
}

/// Item 6: a deny rule on `rm` covers `find -delete`, `find -exec rm` and `xargs rm`.
#[test]
fn a_deny_rule_on_rm_covers_find_delete_find_exec_and_xargs() {
    for deny in ["bash(rm *)", "bash(rm -rf *)"] {
        let env = Env::new().user(&format!(r#"{{"permissions": {{"deny": ["{deny}"]}}}}"#));
        let rules = env.rules(true);
        let mut table = Vec::new();
        for line in [
            "find . -delete",
            "find . -name '*.o' -delete",
            "find src -type f -delete -print",
            "find . -exec rm {} +",
            "find . -execdir rm -r -f {} ;",
            "ls | xargs rm",
            "xargs rm < list.txt",
            "find . -print0 | xargs -0 rm -f",
        ] {
            table.push((case(&*BASH, bash(line), Mode::Yolo), V::Deny));
        }
        table.push((case(&*BASH, bash("find . -name '*.o'"), Mode::Yolo), V::Run));
        table.push((case(&*BASH, bash("ls | xargs wc -l"), Mode::Yolo), V::Run));
        // `-delete` as an argument of the command `-exec` runs is not find's own.
        table.push((
            case(&*BASH, bash("find . -exec echo -delete ;"), Mode::Yolo),
            V::Run,
        ));
        check_table(&env, &rules, &table);
    }
}

/// Comparing directories prints the files in them: `git diff` outside a repository (it is
/// `--no-index` there) and `diff`. A recursive search that follows symbolic links reads what
/// they point to.
#[test]
fn directory_diffs_and_followed_links_are_judged_by_what_they_read() {
    let env = Env::new();
    file(&env.work, "src/main.rs", "fn main() {}\n");
    file(&env.work, "other/.env", "KEY=sk-secret\n");
    let outside = env.home.parent().unwrap().join("outside");
    file(&outside, ".aws/credentials", "KEY=x\n");
    file(&env.work, "docs/readme.md", "KEY\n");
    std::os::unix::fs::symlink(
        outside.join(".aws/credentials"),
        env.work.join("docs/notes.txt"),
    )
    .unwrap();
    let rules = env.rules(true);
    use Mode::*;
    check_table(
        &env,
        &rules,
        &[
            (case(&*BASH, bash("git diff src other"), Default), V::Ask),
            (case(&*BASH, bash("git diff src src"), Default), V::Run),
            (case(&*BASH, bash("diff src other"), Default), V::Ask),
            (case(&*BASH, bash("diff -r src other"), Plan), V::Deny),
            (case(&*BASH, bash("diff -r src src"), Default), V::Run),
            (case(&*BASH, bash("grep -R KEY docs"), Default), V::Ask),
            (case(&*BASH, bash("grep -R KEY src"), Default), V::Run),
        ],
    );
}

/// Issue 15: a hook's `allow` lifts the approval a call of its kind needs, and nothing that
/// guards something: an ask rule, a secret, a protected path, a write outside the working
/// directory, leaving the sandbox, a deny rule.
#[test]
fn a_hooks_allow_lifts_only_the_ordinary_approval() {
    let env =
        Env::new().user(r#"{"permissions": {"ask": ["bash(git push*)"], "deny": ["bash(rm *)"]}}"#);
    let rules = env.rules(true);
    let granted = std::collections::HashSet::new();
    let allowed = |tool: &dyn Tool, args: serde_json::Value, mode: Mode| {
        let mut input = CallInput::new(tool, &args, mode, &env.work);
        input.hook_allowed = true;
        short(&decide(&input, &granted, &rules))
    };
    let bash = &*BASH;
    assert_eq!(
        allowed(bash, super::tests::bash("touch made"), Mode::Default),
        V::Run
    );
    assert_eq!(
        allowed(
            &EditFile,
            json!({"path": "src/a.rs", "old_string": "a", "new_string": "b"}),
            Mode::Default
        ),
        V::Run
    );
    assert_eq!(
        allowed(bash, super::tests::bash("git push origin"), Mode::Default),
        V::Ask
    );
    assert_eq!(
        allowed(bash, super::tests::bash("cat .env"), Mode::Default),
        V::Ask
    );
    assert_eq!(
        allowed(
            &WriteFile,
            super::tests::write(".harness9/settings.json"),
            Mode::Default
        ),
        V::Ask
    );
    assert_eq!(
        allowed(
            &WriteFile,
            super::tests::write("/tmp/elsewhere.txt"),
            Mode::Default
        ),
        V::Ask
    );
    assert_eq!(
        allowed(
            bash,
            json!({"command": "ls", "sandbox": false}),
            Mode::Default
        ),
        V::Ask
    );
    assert_eq!(
        allowed(bash, super::tests::bash("rm -rf src"), Mode::Yolo),
        V::Deny
    );
}
