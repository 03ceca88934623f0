//! Issue 29 point 12: a `.env` committed and removed later is still printed by the git commands
//! that print past versions; they ask (plan mode refuses them), while those that print only the
//! work tree and the index, or no contents, still run.

use super::bypass_tests::{file, git, repository};
use super::tests::{BASH, Env, V, bash, case, check_table};
use super::*;

/// The id of `rev` in the repository at `dir`.
fn rev_parse(dir: &std::path::Path, rev: &str) -> String {
    let out = std::process::Command::new("git")
        .args(["rev-parse", rev])
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// Adds `what` and commits it.
fn commit(env: &Env, what: &str, message: &str) {
    git(&env.work, &["add", what]);
    git(&env.work, &["commit", "-q", "-m", message]);
}

#[test]
fn git_commands_that_print_history_ask_when_a_removed_secret_is_in_it() {
    let env = repository();
    file(&env.work, "src/main.rs", "fn main() {}\n");
    file(&env.work, ".env.example", "KEY=\n");
    commit(&env, ".", "start");
    let rules = env.rules(true);
    use Mode::*;
    // A clean history: they run.
    check_table(
        &env,
        &rules,
        &[
            (case(&*BASH, bash("git log -p"), Plan), V::Run),
            (case(&*BASH, bash("git show HEAD"), Default), V::Run),
        ],
    );

    file(&env.work, "config/.env", "KEY=sk-secret\n");
    commit(&env, "config/.env", "oops");
    let blob = rev_parse(&env.work, "HEAD:config/.env");
    git(&env.work, &["rm", "-q", "config/.env"]);
    git(&env.work, &["commit", "-q", "-m", "remove the secret"]);
    let cat_blob = format!("git cat-file -p {blob}");
    let mut table = Vec::new();
    for line in [
        "git log -p",
        "git show HEAD~1",
        "git grep KEY HEAD~1",
        cat_blob.as_str(),
        "git diff HEAD~2 HEAD~1",
        "git log -S sk-secret --oneline",
    ] {
        table.push((case(&*BASH, bash(line), Default), V::Ask));
        table.push((case(&*BASH, bash(line), Plan), V::Deny));
    }
    // The work tree and the index hold no secret; no contents printed at all.
    for line in [
        "git grep KEY",
        "git diff",
        "git diff --stat -- src",
        "git log --oneline",
        "git status",
    ] {
        table.push((case(&*BASH, bash(line), Plan), V::Run));
    }
    check_table(&env, &rules, &table);

    // Reset away, the commit is still reachable from the reflog.
    let other = repository();
    file(&other.work, "a.txt", "a\n");
    commit(&other, ".", "a");
    let other_rules = other.rules(true);
    check_table(
        &other,
        &other_rules,
        &[(case(&*BASH, bash("git log -p"), Plan), V::Run)],
    );
    file(&other.work, "id_rsa", "KEY\n");
    commit(&other, "id_rsa", "key");
    git(&other.work, &["reset", "-q", "--hard", "HEAD~1"]);
    check_table(
        &other,
        &other_rules,
        &[(case(&*BASH, bash("git log -p --all"), Plan), V::Deny)],
    );
}

/// The id of a new object holding `text`, written to the object database and reached by
/// nothing (`git hash-object -w`), as a `.env` staged then unstaged leaves behind.
fn dangling_blob(dir: &std::path::Path, text: &str) -> String {
    file(dir, ".scratch", text);
    let out = std::process::Command::new("git")
        .args(["hash-object", "-w", ".scratch"])
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .unwrap();
    std::fs::remove_file(dir.join(".scratch")).unwrap();
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// Issue 29 point 12's gap: an object no ref or reflog reaches (the dangling blob of a `.env`
/// staged and unstaged, or of a deleted branch after gc of its reflog) has no path to judge, and
/// `git cat-file -p BLOB` or `git show BLOB` printed it in plan mode. Naming an unreachable
/// object by its id asks (plan mode refuses); a reachable one still runs.
#[test]
fn git_commands_naming_an_unreachable_object_ask() {
    let env = repository();
    file(&env.work, "src/main.rs", "fn main() {}\n");
    commit(&env, ".", "start");
    let reached = rev_parse(&env.work, "HEAD:src/main.rs");
    let dangling = dangling_blob(&env.work, "OPENAI_API_KEY=sk-secret\n");
    let rules = env.rules(true);
    use Mode::*;
    let mut table = Vec::new();
    for line in [
        format!("git cat-file -p {dangling}"),
        format!("git cat-file -p {}", &dangling[..8]),
        format!("git show {dangling}"),
        format!("git --no-pager show {}", dangling.to_uppercase()),
        format!("git diff {reached} {dangling}"),
        "git cat-file --batch-all-objects --batch".to_owned(),
        "git rev-list --all | git cat-file --batch".to_owned(),
    ] {
        table.push((case(&*BASH, bash(&line), Default), V::Ask));
        table.push((case(&*BASH, bash(&line), Plan), V::Deny));
    }
    for line in [
        format!("git cat-file -p {reached}"),
        format!("git show {}", &reached[..10]),
        "git show HEAD".to_owned(),
    ] {
        table.push((case(&*BASH, bash(&line), Plan), V::Run));
    }
    check_table(&env, &rules, &table);
}
