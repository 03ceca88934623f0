use super::*;

/// The non-comment lines of a corpus.
fn corpus(text: &str) -> Vec<&str> {
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .collect()
}

#[test]
fn the_corpora_read_only_mostly_accepted_and_writing_never() {
    let read_only = corpus(include_str!(
        "../../../tests/fixtures/commands/read_only.txt"
    ));
    let writing = corpus(include_str!(
        "../../../tests/fixtures/commands/not_read_only.txt"
    ));
    assert!(read_only.len() >= 200, "{}", read_only.len());
    assert!(writing.len() >= 100, "{}", writing.len());

    let refused: Vec<(&str, String)> = read_only
        .iter()
        .filter_map(|c| check(c).err().map(|why| (*c, why.to_string())))
        .collect();
    for (command, why) in &refused {
        println!("refused read-only: {command}  ({why})");
    }
    let accepted = read_only.len() - refused.len();
    let rate = accepted as f64 / read_only.len() as f64;
    println!(
        "read_only.txt: {accepted}/{} accepted ({:.1}%)",
        read_only.len(),
        rate * 100.0
    );
    assert!(rate >= 0.90, "only {:.1}% accepted", rate * 100.0);

    let wrongly_accepted: Vec<&&str> = writing.iter().filter(|c| check(c).is_ok()).collect();
    println!(
        "not_read_only.txt: {}/{} accepted",
        wrongly_accepted.len(),
        writing.len()
    );
    assert!(
        wrongly_accepted.is_empty(),
        "accepted commands that write, run or leak: {wrongly_accepted:#?}"
    );
}

#[test]
fn every_command_of_issue_11_findings_1_5_and_10_is_refused() {
    let cases = [
        // finding 1
        "git -c core.fsmonitor='touch x' status",
        "git -c diff.external=./x diff",
        "git grep -O'touch x' foo",
        "printf -v x '\\x24\\x28cmd\\x29'; echo ${x@P}",
        "printf -v x '\\x24\\x28cmd\\x29'",
        "echo ${x@P}",
        "echo $[1+1]",
        "tools/cat README.md",
        "./ls",
        "/bin/cat README.md",
        "uniq a b",
        "sort -oFILE in",
        "uniq /dev/null ../outside",
        "git reflog expire --expire=now --all",
        "hostname NAME",
        "date -s 2020-01-01",
        "rg --pre CMD foo",
        "tree -o FILE",
        // finding 5
        "git status ${x:=\\$\\(touch x\\)} ${x@P}",
        // finding 10
        "/bin/rm x",
        "\\rm x",
        "command rm x",
        "\"rm\" x",
        "(rm x)",
        "{ rm x; }",
        "if true; then rm x; fi",
    ];
    for command in cases {
        assert!(check(command).is_err(), "{command} was accepted");
    }
}

#[test]
fn refusals_say_why() {
    let cases = [
        ("uniq a b", "writes the second"),
        ("sort -oFILE in", "`sort -o` writes"),
        ("sort --output=x in", "`sort --output` writes"),
        ("tree -o FILE", "`tree -o` writes"),
        ("rg --pre CMD foo", "runs a program"),
        ("git grep -Ocmd x", "`git grep -O`"),
        ("git -c a=b status", "sets configuration"),
        ("git reflog expire --all", "rewrite history"),
        ("date -s now", "sets the system clock"),
        ("date 0101", "set the clock"),
        ("tools/cat x", "run by path"),
        ("hostname NAME", "not on the list"),
        ("find . -delete", "-delete"),
        ("find . -exec rm {} \\;", "`find -exec` runs a command"),
        ("ls > out", "redirect"),
        ("printf -v x y", "assigns a shell variable"),
        ("git push", "git push"),
        ("git branch new", "creates one"),
        ("wc -l *.rs", "starting with `-`"),
        ("ls | xargs rm", "xargs rm"),
        ("ls -y", "`ls -y`"),
        ("cat --evil", "not an option known to only read"),
    ];
    for (command, expected) in cases {
        let why = check(command).unwrap_err().to_string();
        assert!(why.contains(expected), "{command}: {why}");
    }
}

#[test]
fn the_table() {
    let cases: &[(&str, bool)] = &[
        ("ls -la src", true),
        ("cat README.md", true),
        ("head -n 20 src/main.rs", true),
        ("wc -l src/*.rs", true),
        ("git status", true),
        ("git log --oneline -n 5", true),
        ("git --no-pager diff HEAD~1", true),
        ("git branch -a", true),
        ("grep -rn 'fn main' src", true),
        ("rg TODO", true),
        ("find . -name '*.rs'", true),
        ("ls && git status", true),
        ("git log | head -n 3", true),
        ("cat a.txt; wc -l a.txt", true),
        ("find . -name '*.rs' | xargs wc -l", true),
        ("date +%s", true),
        ("date", true),
        ("uniq -c in.txt", true),
        ("sort -rn in.txt", true),
        ("echo 'hello world'", true),
        ("git -C sub show HEAD:README.md", false),
        ("find . -name '*.tmp' -delete", false),
        ("echo hi > file", false),
        ("cat a >> b", false),
        ("ls 2>&1", true),
        ("ls 2>/dev/null | head", true),
        ("ls 2>out", false),
        ("ls > /dev/null < secret", false),
        ("echo $(rm -rf /)", false),
        ("echo `whoami`", false),
        ("git commit -m x", false),
        ("git checkout main", false),
        ("ls && rm -rf x", false),
        ("ls; touch x", false),
        ("sed -i s/a/b/ f", false),
        ("FOO=1 ls", false),
        ("sleep 100 &", false),
        ("cargo build", false),
        ("cat 'unterminated", false),
        ("", false),
        ("ls | xargs sort -o x", false),
        ("find . | xargs rg --pre x y", false),
        ("tail -f log", false),
        ("sudo cat /etc/shadow", false),
        ("env cat x", true),
        ("timeout 5 git status", true),
    ];
    for (command, read_only) in cases {
        let verdict = check(command);
        assert_eq!(verdict.is_ok(), *read_only, "{command}: {verdict:?}");
    }
}

/// Issue 19, item 1: `cd` changes what the paths after it mean and which repository git reads
/// (an embedded bare repository's `core.fsmonitor` ran); git's own ways to another directory
/// or configuration are refused too.
#[test]
fn cd_with_other_commands_and_git_pointed_elsewhere_are_refused() {
    for command in [
        "cd evil && git status",
        "cd evil; git log",
        "ls && cd evil",
        "cd evil | git status",
        "pushd evil && git status",
        "popd && git status",
        "builtin cd evil && git status",
        "git -C evil status",
        "git -Cevil status",
        "git --git-dir=evil status",
        "git --git-dir evil status",
        "git --work-tree=. --git-dir=evil status",
        "git --namespace=x log",
        "git --exec-path=evil status",
        "git --super-prefix=x/ status",
        "GIT_DIR=evil git status",
        "GIT_CONFIG_GLOBAL=evil/config git status",
        "env GIT_DIR=evil git status",
        "git log --ext-diff -p",
        "git log --textconv -p",
        "git show --output=x",
    ] {
        assert!(check(command).is_err(), "{command} was accepted");
    }
    let why = check("cd evil && git status").unwrap_err().to_string();
    assert!(why.contains("`cd`"), "{why}");
    assert!(
        check("cd evil").is_ok(),
        "a lone `cd` changes nothing after it"
    );
}

/// Issue 19, item 2: `git grep` outside what git tracks reads untracked secrets (`.env`).
#[test]
fn git_grep_of_untracked_files_is_refused() {
    for command in [
        "git grep --no-index KEY",
        "git grep --untracked KEY",
        "git grep -n --untracked KEY src",
    ] {
        let why = check(command).unwrap_err().to_string();
        assert!(
            why.contains("untracked") || why.contains("--no-index"),
            "{command}: {why}"
        );
    }
    assert!(check("git grep -n KEY src").is_ok());
    assert!(
        check("git diff --no-index a.txt b.txt").is_ok(),
        "its operands are judged as paths by the permission decision"
    );
}
