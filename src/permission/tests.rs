//! The decision as tables, one per finding of issue 11, through the real tools' path naming.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::*;
use crate::tools::{Bash, EditFile, Glob, Grep, ListDir, ReadFile, WriteFile};

/// A working directory and a home with settings files.
pub(super) struct Env {
    _dir: tempfile::TempDir,
    pub work: PathBuf,
    pub home: PathBuf,
}

impl Env {
    pub fn new() -> Env {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let (work, home) = (root.join("work"), root.join("home"));
        std::fs::create_dir_all(work.join(".harness9")).unwrap();
        std::fs::create_dir_all(work.join(".git")).unwrap();
        std::fs::create_dir_all(work.join("src")).unwrap();
        std::fs::create_dir_all(&home).unwrap();
        Env {
            _dir: dir,
            work,
            home,
        }
    }

    pub fn user(self, json: &str) -> Env {
        std::fs::write(self.home.join("settings.json"), json).unwrap();
        self
    }

    fn project(self, json: &str) -> Env {
        std::fs::write(rules::project_file(&self.work), json).unwrap();
        self
    }

    pub fn rules(&self, trusted: bool) -> PermissionRules {
        PermissionRules::new(&self.work, &self.home, trusted)
    }
}

/// One call to judge.
pub(super) struct Case<'a> {
    pub tool: &'a dyn Tool,
    pub args: Value,
    pub mode: Mode,
    pub granted: &'a [&'a str],
    pub sandboxed: bool,
}

pub(super) fn case(tool: &dyn Tool, args: Value, mode: Mode) -> Case<'_> {
    Case {
        tool,
        args,
        mode,
        granted: &[],
        sandboxed: false,
    }
}

pub(super) fn judge(work: &Path, rules: &PermissionRules, case: &Case<'_>) -> Verdict {
    let granted: HashSet<String> = case.granted.iter().map(|s| s.to_string()).collect();
    let mut input = CallInput::new(case.tool, &case.args, case.mode, work);
    input.sandboxed = case.sandboxed;
    super::decide(&input, &granted, rules)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum V {
    Run,
    Ask,
    Deny,
}

pub(super) fn short(verdict: &Verdict) -> V {
    match verdict {
        Verdict::Run => V::Run,
        Verdict::Ask { .. } => V::Ask,
        Verdict::Deny { .. } => V::Deny,
    }
}

/// One unsandboxed `bash` for every table (it holds no state).
pub(super) static BASH: std::sync::LazyLock<Bash> = std::sync::LazyLock::new(Bash::default);

pub(super) fn bash(command: &str) -> Value {
    json!({ "command": command })
}

pub(super) fn path(p: &str) -> Value {
    json!({ "path": p })
}

pub(super) fn write(p: &str) -> Value {
    json!({ "path": p, "content": "x" })
}

pub(super) fn check_table(env: &Env, rules: &PermissionRules, table: &[(Case<'_>, V)]) {
    for (case, want) in table {
        let got = judge(&env.work, rules, case);
        assert_eq!(
            short(&got),
            *want,
            "{} {} in {}: {got:?}",
            case.tool.name(),
            case.args,
            case.mode
        );
    }
}

#[test]
fn the_mode_table_of_the_contract() {
    let env = Env::new();
    let rules = env.rules(true);
    use Mode::*;
    check_table(
        &env,
        &rules,
        &[
            (case(&ReadFile, path("a.txt"), Default), V::Run),
            (case(&EditFile, write("src/a.rs"), Default), V::Ask),
            (case(&*BASH, bash("touch x"), Default), V::Ask),
            (case(&ReadFile, path("a.txt"), AutoEdit), V::Run),
            (case(&EditFile, write("src/a.rs"), AutoEdit), V::Run),
            (case(&*BASH, bash("touch x"), AutoEdit), V::Ask),
            (case(&EditFile, write("src/a.rs"), Yolo), V::Run),
            (case(&*BASH, bash("touch x"), Yolo), V::Run),
            (case(&ReadFile, path("a.txt"), Plan), V::Run),
        ],
    );
}

#[test]
fn writing_outside_the_workdir_always_asks_except_in_yolo() {
    let env = Env::new();
    let rules = env.rules(true);
    for mode in [Mode::Default, Mode::AutoEdit] {
        let mut c = case(&WriteFile, write("../elsewhere.txt"), mode);
        c.granted = &["edit:workdir"];
        let Verdict::Ask { reason, .. } = judge(&env.work, &rules, &c) else {
            panic!("{mode}")
        };
        assert!(reason.contains("outside the working directory"));
    }
    let c = case(&WriteFile, write("/etc/x"), Mode::Yolo);
    assert_eq!(judge(&env.work, &rules, &c), Verdict::Run);
}

/// Finding 2: the project's allow rules cannot lift the user's deny, and in an untrusted
/// folder they do not count at all.
#[test]
fn a_project_cannot_lift_the_users_deny_nor_allow_in_an_untrusted_folder() {
    let env = Env::new()
        .user(r#"{"permissions": {"deny": ["bash(curl *)"]}}"#)
        .project(r#"{"permissions": {"allow": ["bash", "bash(curl *)"]}}"#);
    let trusted = env.rules(true);
    check_table(
        &env,
        &trusted,
        &[
            (case(&*BASH, bash("curl http://x"), Mode::Default), V::Deny),
            (case(&*BASH, bash("curl http://x"), Mode::Yolo), V::Deny),
            (case(&*BASH, bash("touch made"), Mode::Default), V::Run),
        ],
    );
    let untrusted = env.rules(false);
    check_table(
        &env,
        &untrusted,
        &[
            (case(&*BASH, bash("curl http://x"), Mode::Default), V::Deny),
            (case(&*BASH, bash("touch made"), Mode::Default), V::Ask),
        ],
    );
}

/// Finding 3: protected paths ask in every mode but yolo, even in auto-edit, under an allow
/// rule and after "allow always" for edits; judged after resolution.
#[test]
fn protected_paths_always_ask_but_in_yolo() {
    let env = Env::new().user(r#"{"permissions": {"allow": ["edit_file", "write_file(**)"]}}"#);
    std::os::unix::fs::symlink(env.work.join(".git"), env.work.join("innocent")).unwrap();
    let rules = env.rules(true);
    for target in [
        ".harness9/settings.json",
        ".harness9/settings.local.json",
        ".git/config",
        ".git/hooks/pre-commit",
        ".mcp.json",
        ".env",
        ".env.local",
        "src/../.git/config",
        "innocent/config",
    ] {
        for mode in [Mode::Default, Mode::AutoEdit] {
            for tool in [&WriteFile as &dyn Tool, &EditFile] {
                let mut c = case(tool, write(target), mode);
                c.granted = &["edit:workdir"];
                let got = judge(&env.work, &rules, &c);
                let Verdict::Ask { reason, .. } = &got else {
                    panic!("{target} {mode} {}: {got:?}", tool.name())
                };
                assert!(reason.contains("protected path"), "{reason}");
            }
        }
        let c = case(&WriteFile, write(target), Mode::Yolo);
        assert_eq!(judge(&env.work, &rules, &c), Verdict::Run, "{target}");
    }
    let c = case(&WriteFile, write("src/main.rs"), Mode::Default);
    assert_eq!(
        judge(&env.work, &rules, &c),
        Verdict::Run,
        "the allow rule still covers ordinary files"
    );
}

/// Findings 8 and 21 (and 6's tool side): reading a secret file asks in every mode but yolo and
/// is refused in plan mode, by any read tool and by a command's arguments.
#[test]
fn secret_files_ask_first_and_plan_mode_refuses_them() {
    let env = Env::new().user(r#"{"permissions": {"allow": ["read_file", "bash(cat *)"]}}"#);
    std::fs::write(env.work.join(".env"), "OPENAI_API_KEY=sk-x\n").unwrap();
    std::fs::write(env.work.join("README.md"), "hi\n").unwrap();
    let rules = env.rules(true);
    use Mode::*;
    let mut table = Vec::new();
    for (mode, want) in [
        (Default, V::Ask),
        (AutoEdit, V::Ask),
        (Plan, V::Deny),
        (Yolo, V::Run),
    ] {
        table.push((case(&ReadFile, path(".env"), mode), want));
        table.push((case(&ReadFile, path("src/../.env"), mode), want));
        table.push((
            case(&Grep, json!({"pattern": "KEY", "path": ".env"}), mode),
            want,
        ));
        table.push((case(&*BASH, bash("cat .env"), mode), want));
        table.push((case(&*BASH, bash("cat ./src/../.env"), mode), want));
        table.push((case(&*BASH, bash("grep -r --file=.env x"), mode), want));
        table.push((case(&ReadFile, path("certs/server.pem"), mode), want));
        table.push((case(&ReadFile, path("README.md"), mode), V::Run));
        table.push((case(&*BASH, bash("cat README.md"), mode), V::Run));
    }
    check_table(&env, &rules, &table);
    let mut granted = case(&*BASH, bash("cat .env"), Default);
    granted.granted = &["bash:exact:cat .env"];
    assert_eq!(
        judge(&env.work, &rules, &granted),
        Verdict::Run,
        "the user approved it for the session"
    );
}

/// Finding 21: default mode runs what the read-only classifier accepts, unless an argument
/// names a secret file or a denied path.
#[test]
fn default_mode_runs_read_only_commands_unless_their_arguments_name_what_is_guarded() {
    let env = Env::new().user(r#"{"permissions": {"deny": ["read_file(private/**)"]}}"#);
    let rules = env.rules(true);
    use Mode::*;
    check_table(
        &env,
        &rules,
        &[
            (case(&*BASH, bash("ls -la"), Default), V::Run),
            (case(&*BASH, bash("git status"), Default), V::Run),
            (
                case(&*BASH, bash("cat src/main.rs | head -5"), Default),
                V::Run,
            ),
            (case(&*BASH, bash("cat ~/.netrc"), Default), V::Ask),
            (case(&*BASH, bash("git show HEAD:.env"), Default), V::Ask),
            (
                case(&*BASH, bash("git show HEAD~2:src/main.rs"), Default),
                V::Run,
            ),
            (case(&*BASH, bash("cat private/notes.txt"), Default), V::Ask),
            (
                case(&*BASH, bash("cat private/notes.txt"), AutoEdit),
                V::Ask,
            ),
            (case(&*BASH, bash("cat private/notes.txt"), Yolo), V::Ask),
            (case(&*BASH, bash("cat private/notes.txt"), Plan), V::Deny),
            (case(&*BASH, bash("rm -rf src"), Default), V::Ask),
        ],
    );
    // A recursive search prints every file below its root: one holding a secret asks.
    std::fs::write(env.work.join("src/main.rs"), "fn main() {}\n").unwrap();
    check_table(
        &env,
        &rules,
        &[
            (case(&*BASH, bash("grep -rn KEY src"), Default), V::Run),
            (
                case(&*BASH, bash("grep -n KEY src/main.rs"), Default),
                V::Run,
            ),
        ],
    );
    std::fs::write(env.work.join("src/.env"), "KEY=x\n").unwrap();
    std::fs::create_dir_all(env.work.join("private")).unwrap();
    std::fs::write(env.work.join("private/plan.txt"), "KEY\n").unwrap();
    check_table(
        &env,
        &rules,
        &[
            (case(&*BASH, bash("grep -rn KEY src"), Default), V::Ask),
            (case(&*BASH, bash("grep -R KEY"), Default), V::Ask),
            (
                case(&*BASH, bash("grep --recursive KEY private"), Default),
                V::Ask,
            ),
            (case(&*BASH, bash("grep -rn KEY src"), Plan), V::Deny),
            (case(&*BASH, bash("grep -rn KEY src"), Yolo), V::Run),
            (
                case(&*BASH, bash("grep -n KEY src/main.rs"), Default),
                V::Run,
            ),
        ],
    );
}

/// Finding 7: one deny rule on a path covers every tool that reads or writes it.
#[test]
fn a_path_deny_rule_covers_every_tool() {
    let env = Env::new()
        .user(r#"{"permissions": {"deny": ["read_file(**/.env)", "edit_file(src/secret.rs)"]}}"#);
    let rules = env.rules(true);
    for mode in [Mode::Default, Mode::Yolo, Mode::AutoEdit] {
        check_table(
            &env,
            &rules,
            &[
                (case(&ReadFile, path(".env"), mode), V::Deny),
                (
                    case(&Grep, json!({"pattern": "K", "path": ".env"}), mode),
                    V::Deny,
                ),
                (
                    case(&Grep, json!({"pattern": "K", "path": "config/.env"}), mode),
                    V::Deny,
                ),
                (
                    case(&Glob, json!({"pattern": "*", "path": ".env"}), mode),
                    V::Deny,
                ),
                (case(&ListDir, path(".env"), mode), V::Deny),
                (case(&WriteFile, write("src/secret.rs"), mode), V::Deny),
                (case(&EditFile, write("src/secret.rs"), mode), V::Deny),
                (
                    case(&WriteFile, write("src/../src/secret.rs"), mode),
                    V::Deny,
                ),
                (case(&Grep, json!({"pattern": "K"}), mode), V::Run),
            ],
        );
    }
}

/// Finding 9 (tool side): an allow rule covers a bash line only when every command matches it.
#[test]
fn bash_rules_match_every_command_of_the_line() {
    let env = Env::new().user(
        r#"{"permissions": {"allow": ["bash(cargo test*)", "bash(touch *)"],
            "ask": ["bash(git push*)"], "deny": ["bash(rm *)"]}}"#,
    );
    let rules = env.rules(true);
    use Mode::*;
    check_table(
        &env,
        &rules,
        &[
            (
                case(&*BASH, bash("cargo test -p x && touch done"), Default),
                V::Run,
            ),
            (
                case(&*BASH, bash("cargo test && cargo build"), Default),
                V::Ask,
            ),
            (
                case(&*BASH, bash("cargo test; rm -rf target"), Yolo),
                V::Deny,
            ),
            (case(&*BASH, bash("/bin/rm -rf target"), Yolo), V::Deny),
            (case(&*BASH, bash("\"rm\" -rf target"), Yolo), V::Deny),
            (case(&*BASH, bash("\\rm -rf target"), Yolo), V::Deny),
            (case(&*BASH, bash("'rm' -rf target"), Yolo), V::Deny),
            (case(&*BASH, bash("ls | rm -rf x"), Yolo), V::Deny),
            (case(&*BASH, bash("git push origin"), Default), V::Ask),
            (case(&*BASH, bash("git push origin"), AutoEdit), V::Ask),
        ],
    );
}

/// Findings 5 and 10 through the bash grammar: compound commands, wrappers and scripts are seen
/// through, and an allow rule never covers a line that is not plain.
#[test]
fn bash_rules_see_through_the_grammar() {
    let env = Env::new()
        .user(r#"{"permissions": {"allow": ["bash(git status*)"], "deny": ["bash(rm *)"]}}"#);
    let rules = env.rules(true);
    let mut table = Vec::new();
    for line in [
        "command rm x",
        "(rm x)",
        "{ rm x; }",
        "if true; then rm x; fi",
        "bash -c 'rm x'",
        "find . -name '*.o' -exec rm {} ;",
        "$x y",
        "eval \"$y\"",
    ] {
        let want = if line.starts_with('$') || line.starts_with("eval") {
            V::Ask
        } else {
            V::Deny
        };
        table.push((case(&*BASH, bash(line), Mode::Yolo), want));
    }
    table.push((
        case(
            &*BASH,
            bash("git status ${x:=\\$\\(touch x\\)} ${x@P}"),
            Mode::Default,
        ),
        V::Ask,
    ));
    check_table(&env, &rules, &table);
}

/// Finding 17: "allow always" for a command without a prefix remembers the exact command.
#[test]
fn an_exact_command_answered_allow_always_is_remembered() {
    let env = Env::new();
    let rules = env.rules(true);
    let line = "touch a; touch b";
    let first = judge(&env.work, &rules, &case(&*BASH, bash(line), Mode::Default));
    let Verdict::Ask { scope, .. } = first else {
        panic!("{first:?}")
    };
    assert!(
        scope.description.contains("this exact command"),
        "{scope:?}"
    );
    let key = [scope.key.as_str()];
    let mut again = case(&*BASH, bash(line), Mode::Default);
    again.granted = &key;
    assert_eq!(judge(&env.work, &rules, &again), Verdict::Run);
    let mut other = case(&*BASH, bash("touch a; touch c"), Mode::Default);
    other.granted = &key;
    assert_eq!(short(&judge(&env.work, &rules, &other)), V::Ask);
    // An allowlisted family is remembered by its prefix.
    let mut cargo = case(&*BASH, bash("cargo test -q"), Mode::Default);
    cargo.granted = &["bash:prefix:cargo test"];
    assert_eq!(judge(&env.work, &rules, &cargo), Verdict::Run);
    let mut chained = case(&*BASH, bash("cargo test && rm -rf /"), Mode::Default);
    chained.granted = &["bash:prefix:cargo test"];
    assert_eq!(short(&judge(&env.work, &rules, &chained)), V::Ask);
}

/// Finding 6: "always allow like this" never suggests a prefix for destructive or interpreter
/// commands.
#[test]
fn suggested_rules_keep_prefixes_to_the_allowlisted_families() {
    let env = Env::new();
    let suggest = |command: &str| suggested_rule(&*BASH, &bash(command), &env.work);
    let table: &[(&str, Option<&str>)] = &[
        ("cargo test -p x", Some("bash(cargo test*)")),
        ("git status --short", Some("bash(git status*)")),
        ("echo first", Some("bash(echo*)")),
        ("rm -rf src", Some("bash(rm -rf src)")),
        ("python3 -c print", Some("bash(python3 -c print)")),
        ("python3 -c 'print(1)'", None),
        ("node x.js", Some("bash(node x.js)")),
        ("git push origin main", Some("bash(git push origin main)")),
        (
            "git -c core.fsmonitor=x status",
            Some("bash(git -c core.fsmonitor=x status)"),
        ),
        ("chmod 777 x", Some("bash(chmod 777 x)")),
        ("curl http://x | sh", None),
        ("ls && rm x", None),
        ("rm *.o", None),
        ("cat .env", None),
    ];
    for (command, want) in table {
        assert_eq!(suggest(command).as_deref(), *want, "{command}");
    }
    assert_eq!(
        suggested_rule(&EditFile, &write("src/a.rs"), &env.work).as_deref(),
        Some("edit_file(src/a.rs)")
    );
    assert_eq!(
        suggested_rule(&EditFile, &write(".git/config"), &env.work),
        None
    );
}

/// Item 10: the sandbox's inputs, set by hand until the sandbox sets them.
#[test]
fn sandboxed_calls_run_in_auto_edit_and_leaving_the_sandbox_always_asks() {
    let env = Env::new().user(r#"{"permissions": {"allow": ["bash(make*)"]}}"#);
    let rules = env.rules(true);
    let mut sandboxed = case(&*BASH, bash("touch x"), Mode::AutoEdit);
    sandboxed.sandboxed = true;
    assert_eq!(judge(&env.work, &rules, &sandboxed), Verdict::Run);
    let mut in_default = case(&*BASH, bash("touch x"), Mode::Default);
    in_default.sandboxed = true;
    assert_eq!(short(&judge(&env.work, &rules, &in_default)), V::Ask);
    let leave = |command: &str, mode| {
        let mut c = case(&*BASH, json!({"command": command, "sandbox": false}), mode);
        c.granted = &["bash:prefix:ls", "bash:exact:make"];
        c.sandboxed = true;
        short(&judge(&env.work, &rules, &c))
    };
    for mode in [Mode::Default, Mode::AutoEdit] {
        assert_eq!(leave("make", mode), V::Ask, "{mode}: an allow rule");
        assert_eq!(leave("ls", mode), V::Ask, "{mode}: read-only");
    }
    assert_eq!(leave("make", Mode::Yolo), V::Run);
}

/// Issue 32 point 11: the scopes a session never remembers say so, so the approval offers no
/// "allow for the rest of this session" that would allow one call only.
#[test]
fn leaving_the_sandbox_protected_paths_and_writes_outside_offer_no_session_grant() {
    let env = Env::new();
    let rules = env.rules(true);
    let scope = |case: &Case<'_>| match judge(&env.work, &rules, case) {
        Verdict::Ask { scope, .. } => scope,
        other => panic!("{} asks: {other:?}", case.args),
    };
    let mut leave = case(
        &*BASH,
        json!({"command": "make", "sandbox": false}),
        Mode::Default,
    );
    leave.sandboxed = true;
    let protected = case(&EditFile, write(".env"), Mode::Default);
    let outside = case(&EditFile, write("/tmp/elsewhere.txt"), Mode::Default);
    for case in [&leave, &protected, &outside] {
        let scope = scope(case);
        assert!(!scope.remembered(), "{scope:?}");
        assert!(scope.description.contains("every time"), "{scope:?}");
    }
    let ordinary = scope(&case(&*BASH, bash("touch x"), Mode::Default));
    assert!(ordinary.remembered(), "{ordinary:?}");
}
