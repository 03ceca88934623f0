//! What the rules are judged on, below the mode tables: a command line's paths and structure
//! (plainness, dynamic programs) and an `@` mention, a read like any other.

use super::*;

#[test]
fn command_lines_name_their_paths_and_find_actions() {
    let line = command::CommandLine::parse("grep -n --file=.env -e x src; find . -exec rm {} +");
    assert_eq!(
        line.path_words(),
        [".env", "x", "src", ".", "rm", "{}", "+", "{}"],
        "the command `find -exec` runs is a command of its own"
    );
    assert_eq!(line.texts.last().map(String::as_str), Some("rm {}"));
}

/// Findings 5 and 10 at this layer, with the parser's output built by hand: what a non-plain
/// word or a dynamic program means for the rules, whatever the grammar.
#[test]
fn structure_decides_plainness_and_dynamic_programs() {
    use crate::shell::{ParsedCommand, SimpleCommand};
    let simple = |words: &[&str], not_plain: Option<&str>| SimpleCommand {
        words: words.iter().map(|w| w.to_string()).collect(),
        not_plain: not_plain.map(str::to_owned),
        patterns: Vec::new(),
        open_arguments: false,
        inputs: Vec::new(),
        overwrites: Vec::new(),
    };
    let line = |commands: Vec<SimpleCommand>, not_plain: Option<&str>| {
        command::CommandLine::from_parsed(ParsedCommand {
            commands,
            not_plain: not_plain.map(str::to_owned),
        })
    };
    // `git status ${x:=\$\(touch x\)} ${x@P}`: the program is known, the line is not plain.
    let expanded = line(
        vec![simple(
            &["git", "status", "${x:=$(touch x)}", "${x@P}"],
            Some("a parameter expansion"),
        )],
        Some("a part is not plain"),
    );
    assert!(!expanded.is_plain());
    assert!(!expanded.has_dynamic_program());
    assert_eq!(command::command_prefix(&expanded), None);
    assert_eq!(command::exact_pattern(&expanded), None);
    for dynamic in [
        line(vec![simple(&["$x", "y"], Some("an expansion"))], None),
        line(vec![simple(&["eval", "$y"], Some("an expansion"))], None),
        line(
            vec![simple(&["bash", "-c", "$s"], Some("an expansion"))],
            None,
        ),
        line(vec![simple(&[], Some("an expansion"))], None),
        line(Vec::new(), Some("it cannot be parsed")),
    ] {
        assert!(dynamic.has_dynamic_program(), "{:?}", dynamic.parsed);
    }
    // `/bin/rm`, seen through a subshell: matched as `rm`.
    let nested = line(
        vec![simple(&["/bin/rm", "-rf", "x"], None)],
        Some("a subshell"),
    );
    assert_eq!(nested.texts, ["rm -rf x"]);
    assert!(!nested.has_dynamic_program());
    assert!(!nested.is_plain());
}

/// A mention is a read like any other (context::mentions): the session passes `read_denied`.
#[test]
fn mentions_of_denied_and_secret_files_are_not_attached() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let (work, home) = (root.join("w"), root.join("h"));
    std::fs::create_dir_all(work.join("private")).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(
        home.join("settings.json"),
        r#"{"permissions": {"deny": ["read_file(private/**)"]}}"#,
    )
    .unwrap();
    std::fs::write(work.join("private/plan.txt"), "the-private-plan").unwrap();
    std::fs::write(work.join(".env"), "OPENAI_API_KEY=sk-secret-value").unwrap();
    std::fs::write(work.join("notes.txt"), "public notes").unwrap();
    let rules = PermissionRules::new(&work, &home, true);
    let attached = crate::context::mentions::attach(
        "see @private/plan.txt @src/../private/plan.txt @.env @notes.txt",
        &work,
        &|path| read_denied(&rules, &work, path),
    );
    assert!(!attached.contains("the-private-plan"), "{attached}");
    assert!(!attached.contains("sk-secret-value"), "{attached}");
    assert!(attached.contains("public notes"));
    assert!(attached.contains("a permission rule denies reading it"));
    assert!(attached.contains("it usually holds secrets"));
}

/// Issue 29 point 2: a path outside the working directory is pinned to what it resolves to
/// when judged, for the built-in tools that open a `path`; inside, and for other tools, the
/// arguments stay as they are.
#[test]
fn a_path_outside_is_pinned_to_what_the_decision_resolved() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().canonicalize().unwrap();
    let (work, outside) = (base.join("work"), base.join("outside"));
    std::fs::create_dir_all(work.join("src")).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::os::unix::fs::symlink(&outside, base.join("alias")).unwrap();
    std::os::unix::fs::symlink(&outside, work.join("out")).unwrap();
    let real = outside.join("notes.txt").display().to_string();
    for raw in [
        base.join("alias/notes.txt").display().to_string(),
        "out/notes.txt".to_owned(),
        "../alias/notes.txt".to_owned(),
    ] {
        let pinned = pin_outside_path(
            "write_file",
            &serde_json::json!({"path": raw, "content": "x"}),
            &work,
        )
        .unwrap_or_else(|| panic!("{raw} not pinned"));
        assert_eq!(pinned["path"], real.as_str(), "{raw}");
        assert_eq!(pinned["content"], "x");
    }
    let args = serde_json::json!({"path": real});
    assert_eq!(
        pin_outside_path("read_file", &args, &work),
        None,
        "already real"
    );
    let args = serde_json::json!({"path": "src/main.rs"});
    assert_eq!(pin_outside_path("read_file", &args, &work), None, "inside");
    let args = serde_json::json!({"path": "out/notes.txt"});
    assert_eq!(
        pin_outside_path("mcp__fs__read", &args, &work),
        None,
        "not a built-in"
    );
}
