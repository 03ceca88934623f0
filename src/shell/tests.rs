use super::*;

/// The programs of every command of `line`, in order.
fn programs(line: &str) -> Vec<String> {
    parse(line)
        .commands
        .iter()
        .map(|c| c.program().to_owned())
        .collect()
}

#[test]
fn quoted_and_escaped_program_names_are_the_real_program() {
    for line in [
        "\\rm x",
        "\"rm\" x",
        "'rm' x",
        "r\"m\" x",
        "$'\\x72m' x",
        "$'rm' x",
    ] {
        let parsed = parse(line);
        assert_eq!(parsed.commands.len(), 1, "{line}: {parsed:?}");
        let command = &parsed.commands[0];
        assert_eq!(command.words, ["rm", "x"], "{line}");
        assert!(parsed.is_plain(), "{line}: {parsed:?}");
        assert!(!command.has_path());
    }
    let by_path = parse("/bin/rm x");
    assert_eq!(by_path.commands[0].program(), "rm");
    assert!(by_path.commands[0].has_path());
    assert_eq!(by_path.commands[0].words[0], "/bin/rm");
}

#[test]
fn wrappers_are_peeled_to_the_program_they_run() {
    let cases: &[(&str, &[&str], bool)] = &[
        ("command rm x", &["rm", "x"], true),
        ("command -p rm x", &["rm", "x"], true),
        ("builtin cd src", &["cd", "src"], true),
        ("exec rm x", &["rm", "x"], true),
        ("env rm x", &["rm", "x"], true),
        ("env -i rm x", &["rm", "x"], true),
        ("env -u HOME rm x", &["rm", "x"], true),
        ("env A=1 rm x", &["rm", "x"], false),
        ("nohup rm x", &["rm", "x"], false),
        ("time rm x", &["rm", "x"], true),
        ("nice -n 5 rm x", &["rm", "x"], true),
        ("nice rm x", &["rm", "x"], true),
        ("timeout 5 rm x", &["rm", "x"], true),
        ("timeout -s KILL -k 1 5s rm x", &["rm", "x"], true),
        ("stdbuf -oL rm x", &["rm", "x"], true),
        ("setsid rm x", &["rm", "x"], true),
        ("sudo rm x", &["rm", "x"], false),
        ("sudo -u root -E rm x", &["rm", "x"], false),
        ("doas rm x", &["rm", "x"], false),
        ("xargs rm", &["rm"], false),
        ("xargs -0 -n 1 rm -f", &["rm", "-f"], false),
        // Options whose value can only be attached never swallow the program.
        ("xargs -i rm cat", &["rm", "cat"], false),
        ("xargs --replace rm cat", &["rm", "cat"], false),
        ("xargs -I {} rm {}", &["rm", "{}"], false),
        ("coproc rm x", &["rm", "x"], false),
        ("command env nice -n1 /bin/rm x", &["/bin/rm", "x"], true),
        // `command -v` looks a program up; it runs nothing.
        ("command -v rm", &["command", "-v", "rm"], true),
    ];
    for (line, words, plain) in cases {
        let parsed = parse(line);
        let first = &parsed.commands[0];
        assert_eq!(first.words, *words, "{line}: {parsed:?}");
        assert_eq!(parsed.is_plain(), *plain, "{line}: {parsed:?}");
    }
}

#[test]
fn every_nested_command_is_collected_and_compounds_are_not_plain() {
    let cases: &[(&str, &[&str])] = &[
        ("(rm x)", &["rm"]),
        ("{ rm x; }", &["rm"]),
        ("if true; then rm x; fi", &["true", "rm"]),
        (
            "if a; then b; elif c; then d; else rm x; fi",
            &["a", "b", "c", "d", "rm"],
        ),
        ("while false; do rm x; done", &["false", "rm"]),
        ("until false; do rm x; done", &["false", "rm"]),
        ("for f in a b; do rm $f; done", &["rm"]),
        ("for f in $(ls); do :; done", &["ls", ":"]),
        ("case x in x) rm x;; esac", &["rm"]),
        ("echo $(rm x)", &["echo", "rm"]),
        ("echo \"$(rm x)\"", &["echo", "rm"]),
        ("echo `rm x`", &["echo", "rm"]),
        ("echo ${x:-$(rm x)}", &["echo", "rm"]),
        ("echo $((1 + $(rm x)))", &["echo", "rm"]),
        ("cat <(rm x)", &["cat", "rm"]),
        ("tee >(rm x)", &["tee", "rm"]),
        ("f() { rm x; }; f", &["rm", "f"]),
        ("ls &", &["ls"]),
        ("ls & rm x", &["ls", "rm"]),
        ("! rm x", &["rm"]),
        ("[[ -f x ]] && rm x", &["rm"]),
        ("a=$(rm x)", &["rm"]),
        ("export A=$(rm x)", &["export", "rm"]),
        ("bash -c 'rm x'", &["bash", "rm"]),
        ("sh -ec \"ls; rm x\"", &["sh", "ls", "rm"]),
        ("zsh -c 'bash -c \"rm x\"'", &["zsh", "bash", "rm"]),
        ("eval 'rm x'", &["eval", "rm"]),
        ("eval rm x", &["eval", "rm"]),
        ("echo hi > out", &["echo"]),
        ("cat < in", &["cat"]),
        ("cat <<EOF\n$(rm x)\nEOF", &["cat", "rm"]),
        ("find . -exec rm {} \\;", &["find", "rm"]),
        ("find . -name x -execdir rm -f {} +", &["find", "rm"]),
    ];
    for (line, expected) in cases {
        let parsed = parse(line);
        assert_eq!(programs(line), *expected, "{line}: {parsed:?}");
        assert!(!parsed.is_plain(), "{line} must not be plain: {parsed:?}");
    }
}

#[test]
fn plain_lists_and_pipelines_stay_plain() {
    let cases: &[(&str, &[&str])] = &[
        ("ls -la", &["ls"]),
        ("git status && git diff", &["git", "git"]),
        ("cat a | head -n 3", &["cat", "head"]),
        ("ls; pwd\nwhoami", &["ls", "pwd", "whoami"]),
        ("false || echo 'no luck'", &["false", "echo"]),
        ("ls # a comment", &["ls"]),
        ("git log --format='%h %s' -3", &["git"]),
    ];
    for (line, expected) in cases {
        let parsed = parse(line);
        assert_eq!(programs(line), *expected, "{line}: {parsed:?}");
        assert!(parsed.is_plain(), "{line}: {parsed:?}");
    }
    assert_eq!(
        parse("git log --format='%h %s' -3").commands[0].words,
        ["git", "log", "--format=%h %s", "-3"]
    );
}

#[test]
fn expansions_redirections_assignments_and_globs_are_not_plain() {
    let cases = [
        "git status ${x:=\\$\\(touch x\\)} ${x@P}",
        "printf -v x '\\x24\\x28cmd\\x29'; echo ${x@P}",
        "echo $[1+1]",
        "echo $((1+1))",
        "echo $HOME",
        "echo \"$HOME\"",
        "echo ~",
        "ls ~/x",
        "A=1 git status",
        "echo hi > out",
        "ls 2>/dev/null",
        "cat <<< hi",
        "wc -l src/*.rs",
        "ls ?",
        "ls [ab]",
        "echo {a,b}",
        "echo {1..3}",
        "echo $'\\x80'",
        "echo $\"hi\"",
        "$x rm",
        "\"$(echo rm)\" x",
        "env -S 'rm x'",
        "time -o out ls",
    ];
    for line in cases {
        let parsed = parse(line);
        assert!(!parsed.is_plain(), "{line} must not be plain: {parsed:?}");
        assert!(
            parsed.commands.iter().any(|c| !c.is_plain()),
            "{line}: some command must carry the reason: {parsed:?}"
        );
    }
    // A dynamic program word stays visible, as written.
    let dynamic = parse("$x rm");
    assert_eq!(dynamic.commands[0].words[0], "$x");
    let substituted = parse("\"$(echo rm)\" x");
    assert_eq!(substituted.commands[0].words[0], "\"$(echo rm)\"");
    assert_eq!(programs("\"$(echo rm)\" x"), ["\"$(echo rm)\"", "echo"]);
    // The reasons say what the shell would do.
    let why = parse("ls > out").not_plain.unwrap();
    assert!(why.contains("redirect"), "{why}");
    let glob = analyse("wc -l src/*.rs");
    assert_eq!(
        glob.commands[0].reasons,
        [Reason::Glob {
            word: "src/*.rs".into(),
            leading_literal: true
        }]
    );
    let bare_glob = analyse("wc -l *.rs");
    assert!(matches!(
        bare_glob.commands[0].reasons[0],
        Reason::Glob {
            leading_literal: false,
            ..
        }
    ));
    // Quoted glob characters and braces without a separator are literal.
    for line in [
        "find . -name '*.rs'",
        "git log @{u}",
        "echo \\*",
        "grep -n 'a[0-9]' f",
    ] {
        assert!(parse(line).is_plain(), "{line}: {:?}", parse(line));
    }
}

#[test]
fn assignment_alone_is_not_plain_and_runs_nothing() {
    let parsed = parse("a=1");
    assert!(parsed.commands.is_empty());
    assert!(parsed.not_plain.unwrap().contains("assign"));
}

#[test]
fn broken_huge_and_binary_lines_are_not_plain_and_bounded() {
    for line in [
        "cat 'unterminated",
        "echo \"open",
        "ls )",
        "if true; then",
        "echo $(",
    ] {
        let parsed = parse(line);
        assert!(!parsed.is_plain(), "{line}: {parsed:?}");
    }
    let nul = parse("ls\0rm x");
    assert!(!nul.is_plain());
    assert!(nul.not_plain.unwrap().contains("NUL"));

    let huge = format!("echo {}", "a".repeat(1024 * 1024));
    let started = std::time::Instant::now();
    let parsed = parse(&huge);
    assert!(!parsed.is_plain());
    assert!(parsed.not_plain.unwrap().contains("longer than"));
    // Just under the bound, deep nesting must neither overflow the stack nor take long.
    let deep = format!("{}ls{}", "$(".repeat(20_000), ")".repeat(20_000));
    let parsed = parse(&deep);
    assert!(!parsed.is_plain());
    let wide = "ls -la; ".repeat(MAX_LINE_BYTES / 8 - 1);
    let parsed = parse(&wide);
    assert!(parsed.is_plain());
    assert_eq!(parsed.commands.len(), MAX_LINE_BYTES / 8 - 1);
    assert!(
        started.elapsed() < std::time::Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn inline_scripts_nest_only_so_deep() {
    let mut line = "rm x".to_owned();
    for _ in 0..8 {
        line = format!("bash -c {}", shell_quote(&line));
    }
    let parsed = parse(&line);
    assert!(!parsed.is_plain());
    let dynamic = parse("bash -c \"$CMD\"");
    assert!(
        dynamic
            .not_plain
            .unwrap()
            .contains("only known when it runs")
    );
}

fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

#[test]
fn output_only_discarded_is_told_apart_from_other_redirections() {
    for line in [
        "ls 2>/dev/null",
        "ls >/dev/null 2>&1",
        "ls &>/dev/null",
        "ls 2>&1 | head",
        "ls >&2",
    ] {
        let analysis = analyse(line);
        assert!(
            matches!(
                analysis.commands[0].reasons[..],
                [Reason::DiscardsOutput(_)]
            ),
            "{line}: {analysis:?}"
        );
        assert!(!parse(line).is_plain(), "{line}");
    }
    for line in [
        "ls > out",
        "ls 2>/dev/nullx",
        "ls 2>$F",
        "ls 3>&1",
        "ls >&3",
        "cat < /dev/null",
        "ls 2>/dev/null > out",
        "cat <<< hi",
        "ls > /dev/*",
    ] {
        let analysis = analyse(line);
        assert!(
            analysis.commands[0]
                .reasons
                .iter()
                .any(|r| matches!(r, Reason::Other(_))),
            "{line}: {analysis:?}"
        );
    }
}

/// Issue 19, item 3: the words the shell expands to file names are kept as patterns, quoted
/// characters escaped, so the decision can expand them as bash would.
#[test]
fn patterns_keep_what_the_shell_expands_and_escape_what_it_does_not() {
    let patterns = |line: &str| -> Vec<String> {
        parse(line)
            .commands
            .iter()
            .flat_map(|c| c.patterns.clone())
            .collect()
    };
    let table: &[(&str, &[&str])] = &[
        ("cat .e?v", &[".e?v"]),
        ("cat '.e?v'", &[]),
        ("cat \".e\"*", &[".e*"]),
        ("cat '*'.env*", &["\\*.env*"]),
        ("cat \"[a-f]\"*", &["\\[a\\-f\\]*"]),
        ("cat .[!x]nv", &[".[!x]nv"]),
        ("cat .{e,x}nv", &[".{e,x}nv"]),
        ("cat ~/.env", &["~/.env"]),
        ("cat ~", &["~"]),
        ("cat src/main.rs", &[]),
        ("cat ~root/.env", &[]),
        ("cat $x*", &[]),
        ("cat ${e}v", &[]),
        ("timeout 5 cat .e*", &[".e*"]),
        ("bash -c 'cat .e*'", &[".e*"]),
    ];
    for (line, want) in table {
        assert_eq!(patterns(line), *want, "{line}");
    }
    let open = |line: &str| -> Vec<bool> {
        parse(line)
            .commands
            .iter()
            .map(|c| c.open_arguments)
            .collect()
    };
    assert_eq!(open("ls | xargs rm"), [false, true]);
    assert_eq!(open("find . -exec rm {} +"), [false, true]);
    assert_eq!(open("rm x"), [false]);
    let inputs = |line: &str| -> Vec<Vec<String>> {
        parse(line)
            .commands
            .iter()
            .map(|c| c.inputs.clone())
            .collect()
    };
    assert_eq!(inputs("cat < a.txt"), [["a.txt"]]);
    assert_eq!(inputs("cat 0<> 'b c'"), [["b c"]]);
    assert_eq!(inputs("{ cat; wc; } < d"), [["d"], ["d"]]);
    assert_eq!(inputs("cat > out 2>&1"), [Vec::<String>::new()]);
    assert_eq!(inputs("cat < \"$f\""), [Vec::<String>::new()]);
    assert_eq!(patterns("cat < .e*"), [".e*"]);
}
