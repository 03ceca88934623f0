use super::*;

fn rules(json: &str) -> RuleSet {
    RuleSet::parse(json).unwrap()
}

fn verdict(set: &RuleSet, subject: Subject<'_>) -> Option<List> {
    set.strongest(&subject, true).map(|r| r.list)
}

fn read(path: &str) -> Subject<'_> {
    Subject::Read { tool: "grep", path }
}

fn write(path: &str) -> Subject<'_> {
    Subject::Write {
        tool: "write_file",
        path,
    }
}

#[test]
fn precedence_globbing_and_path_rules_as_concerns() {
    let set = rules(
        r#"{"permissions": {
        "allow": ["bash(git status*)", "edit_file(src/**)", "read_file"],
        "ask": ["bash(git push*)"],
        "deny": ["bash(rm *)", "read_file(**/.env)", "edit_file(src/secret.rs)"]}}"#,
    );
    assert_eq!(
        verdict(&set, Subject::Command("git status --short")),
        Some(List::Allow)
    );
    assert_eq!(verdict(&set, Subject::Command("cargo build")), None);
    assert_eq!(
        verdict(&set, Subject::Command("git push origin main")),
        Some(List::Ask)
    );
    assert_eq!(
        verdict(&set, Subject::Command("rm -rf x")),
        Some(List::Deny)
    );
    // Finding 7: a path rule covers every tool that reads or writes the path.
    assert_eq!(verdict(&set, read(".env")), Some(List::Deny));
    assert_eq!(verdict(&set, read("config/.env")), Some(List::Deny));
    assert_eq!(verdict(&set, write("src/secret.rs")), Some(List::Deny));
    assert_eq!(verdict(&set, write("src/parser/mod.rs")), Some(List::Allow));
    assert_eq!(verdict(&set, write("tests/a.rs")), None);
    assert_eq!(verdict(&set, read("README.md")), Some(List::Allow));
    assert_eq!(
        verdict(&set, write(".env")),
        None,
        "a read rule is not a write rule"
    );
}

fn files(user: &str, project: &str, local: &str) -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let (work, home) = (dir.path().join("w"), dir.path().join("h"));
    std::fs::create_dir_all(work.join(".harness9")).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    for (path, text) in [
        (home.join("settings.json"), user),
        (project_file(&work), project),
        (local_file(&work), local),
    ] {
        if !text.is_empty() {
            std::fs::write(path, text).unwrap();
        }
    }
    (dir, work, home)
}

#[test]
fn every_file_applies_and_a_project_cannot_lift_the_users_deny() {
    // Finding 2: the project's allow used to win over the user's deny.
    let (_dir, work, home) = files(
        r#"{"permissions": {"deny": ["bash(curl *)"], "ask": ["bash(make*)"]}}"#,
        r#"{"permissions": {"allow": ["bash", "bash(curl *)", "bash(make*)"]}}"#,
        r#"{"permissions": {"deny": ["bash(git push*)"]}}"#,
    );
    let rules = PermissionRules::new(&work, &home, true);
    let of = |c: &str| rules.evaluate(&Subject::Command(c));
    assert!(matches!(of("curl http://x"), Some(RuleVerdict::Deny(_))));
    assert!(matches!(of("make all"), Some(RuleVerdict::Ask(_))));
    assert!(matches!(of("git push"), Some(RuleVerdict::Deny(_))));
    assert!(matches!(of("ls"), Some(RuleVerdict::Allow(_))));
}

#[test]
fn an_untrusted_folders_allow_rules_are_ignored_with_one_notice() {
    let (_dir, work, home) = files(
        r#"{"permissions": {"allow": ["bash(ls*)"]}}"#,
        r#"{"permissions": {"allow": ["bash"], "deny": ["bash(make*)"]}}"#,
        r#"{"permissions": {"allow": ["edit_file"], "ask": ["bash(git*)"]}}"#,
    );
    let rules = PermissionRules::new(&work, &home, false);
    assert_eq!(rules.evaluate(&Subject::Command("touch x")), None);
    assert!(
        matches!(
            rules.evaluate(&Subject::Command("ls -la")),
            Some(RuleVerdict::Allow(_))
        ),
        "the user's own allow rules still count"
    );
    assert!(matches!(
        rules.evaluate(&Subject::Command("make")),
        Some(RuleVerdict::Deny(_))
    ));
    assert!(matches!(
        rules.evaluate(&Subject::Command("git log")),
        Some(RuleVerdict::Ask(_))
    ));
    assert_eq!(rules.evaluate(&write("src/a.rs")), None);
    let notices = rules.take_problems();
    assert_eq!(notices.len(), 1, "{notices:?}");
    assert!(notices[0].contains("not trusted"), "{notices:?}");
    rules.evaluate(&Subject::Command("ls"));
    assert!(rules.take_problems().is_empty(), "said once");

    let trusted = PermissionRules::new(&work, &home, true);
    assert!(matches!(
        trusted.evaluate(&Subject::Command("touch x")),
        Some(RuleVerdict::Allow(_))
    ));
    assert!(trusted.take_problems().is_empty());
}

#[test]
fn malformed_files_are_reported_once_and_ignored_and_changes_are_reread() {
    let (_dir, work, home) = files(
        r#"{"permissions": {"allow": ["bash(ls*)"], "deny": ["bash(make*)"]}}"#,
        "{ not json",
        "",
    );
    let permissions = PermissionRules::new(&work, &home, true);
    let ls = Subject::Command("ls -la");
    assert!(
        matches!(permissions.evaluate(&ls), Some(RuleVerdict::Allow(_))),
        "the user's file still applies"
    );
    let problems = permissions.take_problems();
    assert_eq!(problems.len(), 1);
    assert!(problems[0].contains("settings.json is ignored"));
    permissions.evaluate(&ls);
    assert!(permissions.take_problems().is_empty(), "reported once");
    std::fs::write(
        project_file(&work),
        r#"{"permissions": {"deny": ["bash(ls*)"], "allow": ["bash(make*)"]}}"#,
    )
    .unwrap();
    assert!(matches!(
        permissions.evaluate(&ls),
        Some(RuleVerdict::Deny(_))
    ));
    assert!(
        matches!(
            permissions.evaluate(&Subject::Command("make all")),
            Some(RuleVerdict::Deny(_))
        ),
        "the user's deny still wins over the project's allow"
    );
}

/// Issue 19, item 6: a command whose arguments are only known when it runs (`xargs rm`,
/// `find -exec rm -r {} +`, `find -delete`) meets a deny or ask rule by its program; an allow
/// rule must still match it as written.
#[test]
fn open_commands_meet_deny_and_ask_rules_by_their_program() {
    let set = rules(
        r#"{"permissions": {
        "allow": ["bash(wc*)", "bash(rm -rf build)"],
        "ask": ["bash(git push*)"],
        "deny": ["bash(rm -rf *)", "bash(chmod 777 /*)"]}}"#,
    );
    assert_eq!(verdict(&set, Subject::Command("rm")), None);
    assert_eq!(verdict(&set, Subject::OpenCommand("rm")), Some(List::Deny));
    assert_eq!(
        verdict(&set, Subject::OpenCommand("rm -r -f {}")),
        Some(List::Deny)
    );
    assert_eq!(
        verdict(&set, Subject::OpenCommand("chmod +x")),
        Some(List::Deny)
    );
    assert_eq!(verdict(&set, Subject::OpenCommand("git")), Some(List::Ask));
    assert_eq!(
        verdict(&set, Subject::OpenCommand("wc -l")),
        Some(List::Allow)
    );
    assert_eq!(verdict(&set, Subject::OpenCommand("cat")), None);
    let everything = rules(r#"{"permissions": {"deny": ["bash"], "allow": ["bash(*)"]}}"#);
    assert_eq!(
        verdict(&everything, Subject::OpenCommand("cat")),
        Some(List::Deny)
    );
}

/// Issue 16: `mcp__srv` and `mcp__srv__*` cover every tool of that server and no other's;
/// `mcp__srv__tool` covers that one tool.
#[test]
fn mcp_rules_cover_a_server_or_one_tool() {
    let set = rules(
        r#"{"permissions": {
        "allow": ["mcp__github__*", "mcp__docs"],
        "deny": ["mcp__github__delete_repo"]}}"#,
    );
    let call = |tool| Subject::Call { tool, text: None };
    assert_eq!(
        verdict(&set, call("mcp__github__list_issues")),
        Some(List::Allow)
    );
    assert_eq!(
        verdict(&set, call("mcp__github__delete_repo")),
        Some(List::Deny)
    );
    assert_eq!(verdict(&set, call("mcp__docs__search")), Some(List::Allow));
    // Another server whose name starts alike, and the bare prefix, are not covered.
    assert_eq!(verdict(&set, call("mcp__githubx__list")), None);
    assert_eq!(verdict(&set, call("mcp__github__")), None);
    assert_eq!(verdict(&set, call("mcp__docsearch__q")), None);
    // A rule that is not an MCP server's is still exact.
    let other = rules(r#"{"permissions": {"allow": ["mcp____*", "mcp__a__b__*"]}}"#);
    assert_eq!(verdict(&other, call("mcp__a__b__c")), None);
}

/// Issue 29 point 4: an allow rule a file gains while the session runs (a background job
/// planting `settings.local.json`) is held back until the user confirms it; a deny rule added
/// the same way applies at once; a rule harness9 writes for the user ("always allow") counts.
#[test]
fn allow_rules_added_during_the_session_wait_for_confirmation_and_deny_rules_apply() {
    let (_dir, work, home) = files("", r#"{"permissions": {"allow": ["bash(ls*)"]}}"#, "");
    let rules = PermissionRules::new(&work, &home, true);
    assert!(matches!(
        rules.evaluate(&Subject::Command("ls")),
        Some(RuleVerdict::Allow(_))
    ));
    std::fs::write(
        local_file(&work),
        r#"{"permissions": {"allow": ["write_file", "bash(git add*)"], "deny": ["bash(rm*)"]}}"#,
    )
    .unwrap();
    assert_eq!(
        rules.evaluate(&write("src/a.rs")),
        None,
        "the planted allow widened"
    );
    assert!(matches!(
        rules.evaluate(&Subject::Command("rm -r x")),
        Some(RuleVerdict::Deny(_))
    ));
    let notices = rules.take_problems();
    assert_eq!(notices.len(), 1, "{notices:?}");
    assert!(notices[0].contains("`write_file`"), "{notices:?}");
    rules.evaluate(&write("src/a.rs"));
    assert!(rules.take_problems().is_empty(), "said once");
    assert_eq!(rules.pending_allows().len(), 1);

    // "Always allow" from the user: accepted as harness9 writes it.
    rules.accept_local_allow("bash(git add*)");
    assert!(matches!(
        rules.evaluate(&Subject::Command("git add x")),
        Some(RuleVerdict::Allow(_))
    ));
    assert_eq!(rules.evaluate(&write("src/a.rs")), None);

    // The user confirms what is left.
    assert_eq!(rules.confirm_pending(), vec!["write_file".to_owned()]);
    assert!(matches!(
        rules.evaluate(&write("src/a.rs")),
        Some(RuleVerdict::Allow(_))
    ));
    assert!(rules.pending_allows().is_empty());
}
