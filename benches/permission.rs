//! Per-call cost of the shell grammar, the read-only classifier and the permission decision for
//! a `bash` call: all three run on every `bash` tool call. Run with
//! `cargo bench --bench permission`; the target is under 100 µs per call in release.

use std::collections::HashSet;
use std::hint::black_box;

use divan::Bencher;
use harness9::permission::rules::{PermissionRules, project_file};
use harness9::permission::{CallInput, decide};
use harness9::planning::{Mode, readonly};
use harness9::shell;
use harness9::tools::{Bash, EditFile};

fn main() {
    divan::main();
}

/// What an agent typically runs.
const TYPICAL: &str = "git log --oneline -20 | head -5";

/// A long line (about 2 KB): a chain of read-only commands with quoting, globs and pipes.
fn long_line() -> String {
    let part = "rg -n 'fn (parse|check)' src/permission --glob '*.rs' | sort -u | head -n 40 && \
                git diff --stat HEAD~3 -- src/main.rs && find . -name '*.toml' -not -path './target/*' | wc -l";
    let mut line = String::from(part);
    while line.len() < 2_000 {
        line.push_str(" && ");
        line.push_str(part);
    }
    line
}

/// A refused line: the classifier must still parse all of it.
const REFUSED: &str =
    "git -c core.fsmonitor='touch x' status && printf -v x '\\x24\\x28cmd\\x29'; echo ${x@P}";

#[divan::bench]
fn parse_typical() -> shell::ParsedCommand {
    shell::parse(black_box(TYPICAL))
}

#[divan::bench]
fn parse_long(bencher: Bencher) {
    let line = long_line();
    bencher.bench_local(|| shell::parse(black_box(&line)));
}

#[divan::bench]
fn readonly_check_typical() -> Result<(), readonly::NotReadOnly> {
    readonly::check(black_box(TYPICAL))
}

#[divan::bench]
fn readonly_check_long(bencher: Bencher) {
    let line = long_line();
    assert!(readonly::check(&line).is_ok());
    bencher.bench_local(|| readonly::check(black_box(&line)));
}

#[divan::bench]
fn readonly_check_refused() -> Result<(), readonly::NotReadOnly> {
    readonly::check(black_box(REFUSED))
}

const RULES: usize = 200;

fn rules() -> (tempfile::TempDir, PermissionRules) {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().canonicalize().unwrap();
    let mut allow = Vec::new();
    let mut ask = Vec::new();
    let mut deny = Vec::new();
    for i in 0..RULES {
        match i % 4 {
            0 => allow.push(format!("bash(tool{i} run*)")),
            1 => allow.push(format!("edit_file(src/module{i}/**)")),
            2 => ask.push(format!("bash(deploy{i} *)")),
            _ => deny.push(format!("bash(rm{i} *)")),
        }
    }
    let settings = serde_json::json!({"permissions": {"allow": allow, "ask": ask, "deny": deny}});
    std::fs::create_dir_all(work.join(".harness9")).unwrap();
    std::fs::write(project_file(&work), settings.to_string()).unwrap();
    let rules = PermissionRules::new(&work, &work.join("home"), true);
    (dir, rules)
}

#[divan::bench(args = ["typical", "long"])]
fn decide_bash_200_rules(bencher: Bencher, which: &str) {
    let (dir, rules) = rules();
    let work = dir.path().canonicalize().unwrap();
    let allowed = HashSet::new();
    let command = if which == "typical" {
        TYPICAL.to_owned()
    } else {
        long_line()
    };
    let arguments = serde_json::json!({ "command": command });
    let bash = Bash::default();
    bencher.bench_local(|| {
        decide(
            &CallInput::new(&bash, &arguments, Mode::Default, &work),
            &allowed,
            &rules,
        )
    });
}

#[divan::bench]
fn decide_edit_200_rules(bencher: Bencher) {
    let (dir, rules) = rules();
    let work = dir.path().canonicalize().unwrap();
    let allowed = HashSet::new();
    let arguments =
        serde_json::json!({"path": "src/module197/lib.rs", "old_string": "a", "new_string": "b"});
    bencher.bench_local(|| {
        decide(
            &CallInput::new(&EditFile, &arguments, Mode::Default, &work),
            &allowed,
            &rules,
        )
    });
}

/// The floor: tree-sitter's own parse, without the walk over the tree.
#[divan::bench]
fn tree_sitter_parse_only_long(bencher: Bencher) {
    let line = long_line();
    let mut parser = tree_sitter::Parser::new();
    parser
        .set_language(&tree_sitter_bash::LANGUAGE.into())
        .unwrap();
    bencher.bench_local(|| parser.parse(black_box(&line), None));
}

#[divan::bench]
fn tree_sitter_parse_only_typical(bencher: Bencher) {
    let mut parser = tree_sitter::Parser::new();
    parser
        .set_language(&tree_sitter_bash::LANGUAGE.into())
        .unwrap();
    bencher.bench_local(|| parser.parse(black_box(TYPICAL), None));
}
