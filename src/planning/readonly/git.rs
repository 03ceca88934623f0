//! `git`: the subcommands that only read, each with the options it may be given. Global options
//! that change configuration or the repository (`-c`, `--config-env`, `-C`, `--git-dir`,
//! `--exec-path`) are refused: configuration can run programs (`core.fsmonitor`,
//! `diff.external`, `core.pager`), and another directory brings its own configuration.

use super::options::{Allowed, ArgumentRefusal, listed, operands};

/// Options of `git log`, `git show`, `git diff` and their kin: formatting, limiting and diff
/// options. `--output`, `--ext-diff` and `--textconv` are not among them. `git diff --no-index`
/// compares files outside the repository: the permission decision judges its operands as
/// paths, and the directories among them file by file.
const LOG_FLAGS: &str = "--oneline --stat --shortstat --numstat --name-only --name-status \
    --patch -p -u --no-patch -s --graph --all --abbrev-commit --no-abbrev-commit --reverse \
    --first-parent --merges --no-merges --follow --relative-date --cached --staged --no-color \
    --summary --full-history --simplify-by-decoration --pickaxe-all --no-renames --minimal \
    --patience --histogram --raw --check --exit-code --quiet --left-right --cherry-pick \
    --cherry-mark --boundary --topo-order --date-order --no-walk --source --parents --children \
    -z --no-prefix --function-context -W --ignore-blank-lines --ignore-cr-at-eol \
    --ignore-all-space -w --ignore-space-change -b --ignore-space-at-eol --full-index --binary \
    --no-ext-diff --no-textconv --merge-base -R --text -a --compact-summary --mailmap \
    --use-mailmap --no-mailmap --notes --no-notes --no-decorate --cumulative --name-rev -m -c \
    --cc --combined-all-paths --remove-empty --dense --sparse --ancestry-path --branches --tags \
    --remotes --no-merges --invert-grep -i --regexp-ignore-case --all-match --basic-regexp \
    --extended-regexp -E --fixed-strings -F --perl-regexp -P --count --log-size --walk-reflogs \
    -g --date-order --author-date-order --no-min-parents --no-max-parents --show-linear-break \
    --irreversible-delete -D --no-indent-heuristic --indent-heuristic --no-relative \
    --ita-invisible-in-index --ita-visible-in-index --shortstat --dirstat --expand-tabs \
    --no-expand-tabs --no-standard-notes -t -r --root --always --show-pulls --single-worktree \
    --numbered --no-index";

/// Short options that take the next word as their value, as git reads them.
const LOG_VALUED: &str = "-n -S -G -L";

/// Long options with a value. Git accepts many of them only as `--name=value`; listing them as
/// optional keeps `--name` alone from swallowing the next word, which is then checked itself.
const LOG_OPTIONAL: &str = "--decorate --color --word-diff --color-words --color-moved --stat \
    --dirstat --relative --submodule --ignore-submodules --branches --tags --remotes \
    --find-renames --find-copies --break-rewrites --pretty --abbrev --notes --show-notes \
    --first-parent --diff-merges --decorate-refs --decorate-refs-exclude --max-count --skip \
    --since --after --until --before --author --committer --grep --unified --diff-filter \
    --format --date --min-parents --max-parents --stat-width --stat-name-width --stat-count \
    --inter-hunk-context --anchored --encoding --exclude --glob --diff-algorithm --src-prefix \
    --dst-prefix --line-prefix --find-object --word-diff-regex";

const LOG_REFUSED: &[(&str, &str)] = &[
    ("--output", "`git --output` writes a file"),
    (
        "--ext-diff",
        "`git --ext-diff` runs the configured external diff program",
    ),
    (
        "--textconv",
        "`git --textconv` runs configured conversion programs",
    ),
    (
        "--show-signature",
        "`git --show-signature` runs the configured gpg program",
    ),
];

const LOG: Allowed = Allowed {
    flags: LOG_FLAGS,
    valued: LOG_VALUED,
    optional: LOG_OPTIONAL,
    attached: "-U -B -C -M -l",
    numeric: true,
    refused: LOG_REFUSED,
};

const fn allowed(flags: &'static str, valued: &'static str) -> Allowed {
    Allowed {
        flags,
        valued,
        optional: "",
        attached: "",
        numeric: false,
        refused: &[],
    }
}

/// Subcommands that only read (names separated by spaces), each with the options it may be
/// given.
const SUBCOMMANDS: &[(&str, Allowed)] = &[
    (
        "status",
        Allowed {
            optional: "--porcelain --untracked-files --ignored --ignore-submodules --column \
                --find-renames",
            ..allowed(
                "-s --short -b --branch --long -z --show-stash --ahead-behind --no-ahead-behind \
                    -v --verbose --no-renames -uno -unormal -uall -u",
                "",
            )
        },
    ),
    (
        "blame annotate",
        Allowed {
            optional: "--date --since --abbrev",
            attached: "-M -C",
            ..allowed(
                "-l -t -s -e -w -p -f -n -c -b --porcelain --line-porcelain --root --show-name \
                    --show-number --show-email --show-stats --minimal --incremental",
                "-L --ignore-rev",
            )
        },
    ),
    (
        "grep",
        Allowed {
            optional: "--color --max-depth --threads",
            attached: "",
            numeric: true,
            refused: &[
                (
                    "-O",
                    "`git grep -O` opens the matches with a program of its argument's choosing",
                ),
                (
                    "--open-files-in-pager",
                    "`git grep --open-files-in-pager` runs a program",
                ),
                ("--ext-grep", "`git grep --ext-grep` is not supported"),
                (
                    "--textconv",
                    "`git grep --textconv` runs configured conversion programs",
                ),
                (
                    "--untracked",
                    "`git grep --untracked` reads untracked files too, where secrets such as \
                     `.env` live; search tracked files, or use `grep`/`rg` on named paths",
                ),
                (
                    "--no-index",
                    "`git grep --no-index` reads untracked files too, where secrets such as \
                     `.env` live; search tracked files, or use `grep`/`rg` on named paths",
                ),
            ],
            ..allowed(
                "-n -i -I -w -v -l -L -c -E -F -G -P -h -H -p -W -o -q -z -a --line-number \
                    --ignore-case --word-regexp --invert-match --files-with-matches --name-only \
                    --files-without-match --count --extended-regexp --fixed-strings \
                    --basic-regexp --perl-regexp --heading --break --show-function \
                    --function-context --cached --exclude-standard \
                    --no-exclude-standard --only-matching --quiet --all-match --and --or --not ( \
                    ) --full-name --recurse-submodules --text --column --null --no-color",
                "-e -f -A -B -C -m --max-count --after-context --before-context --context",
            )
        },
    ),
    (
        "ls-files",
        Allowed {
            optional: "--abbrev",
            ..allowed(
                "-c -d -m -o -i -s -u -k -z -t -v -f --cached --deleted --modified --others \
                    --ignored --stage --unmerged --killed --exclude-standard --directory \
                    --no-empty-directory --error-unmatch --full-name --recurse-submodules --eol \
                    --deduplicate --sparse",
                "-x --exclude -X --exclude-from --exclude-per-directory --format --with-tree",
            )
        },
    ),
    (
        "ls-tree",
        Allowed {
            optional: "--abbrev",
            ..allowed(
                "-r -d -t -l -z --name-only --name-status --object-only --full-name --full-tree \
                    --long",
                "--format",
            )
        },
    ),
    (
        "rev-parse",
        Allowed {
            optional: "--short --abbrev-ref --branches --tags --remotes --path-format \
                --disambiguate",
            ..allowed(
                "--show-toplevel --git-dir --verify -q --quiet --is-inside-work-tree \
                    --is-inside-git-dir --is-bare-repository --is-shallow-repository \
                    --show-prefix --show-cdup --symbolic-full-name --symbolic --all \
                    --absolute-git-dir --git-common-dir --show-superproject-working-tree \
                    --show-object-format --revs-only --no-revs --flags --no-flags --sq --not \
                    --local-env-vars --shared-index-path",
                "--default --prefix --git-path --resolve-git-dir",
            )
        },
    ),
    (
        "describe",
        Allowed {
            optional: "--dirty --broken --abbrev",
            ..allowed(
                "--tags --always --long --exact-match --contains --all --first-parent --debug",
                "--match --exclude --candidates",
            )
        },
    ),
    (
        "cat-file",
        allowed(
            "-t -s -p -e --allow-unknown-type --mailmap --use-mailmap",
            "",
        ),
    ),
    (
        "merge-base",
        allowed(
            "--all --octopus --independent --is-ancestor --fork-point -a",
            "",
        ),
    ),
    (
        "show-ref",
        allowed(
            "--head --tags --heads --branches -d --dereference -s --hash --verify -q --quiet \
                --exists",
            "",
        ),
    ),
    (
        "for-each-ref",
        allowed(
            "--ignore-case --omit-empty -s --shell -p --perl --python --tcl",
            "--format --sort --count --points-at --exclude",
        ),
    ),
    (
        "name-rev",
        allowed(
            "--name-only --tags --all --always --no-undefined",
            "--refs --exclude",
        ),
    ),
    (
        "count-objects",
        allowed("-v -H --verbose --human-readable", ""),
    ),
    (
        "check-ignore",
        allowed(
            "-v -n -q -z --verbose --non-matching --quiet --no-index",
            "",
        ),
    ),
    ("check-attr", allowed("-a --all --cached -z", "--source")),
];

/// `git branch` in its listing forms.
const BRANCH: Allowed = Allowed {
    optional: "--merged --no-merged --contains --no-contains --color --column",
    ..allowed(
        "-a -r -v -vv --all --remotes --verbose --show-current --no-color --ignore-case -i \
            --omit-empty",
        "--points-at --sort --format",
    )
};

/// `git tag` in its listing forms.
const TAG: Allowed = Allowed {
    optional: "--column --color --merged --no-merged --contains --no-contains",
    ..allowed(
        "-i --ignore-case --omit-empty",
        "--points-at --sort --format",
    )
};

/// Options before the subcommand that change nothing but output and path matching.
const GLOBAL_FLAGS: &str = "--no-pager -P --no-optional-locks --literal-pathspecs \
    --no-replace-objects --glob-pathspecs --noglob-pathspecs --icase-pathspecs";

/// `git shortlog`'s own summary options, read-only like the log options it also takes.
const SHORTLOG_FLAGS: &str = "-e --email -s -n -sn -ns -sne -nse --summary --numbered";

/// `args` are the words after `git`.
pub(super) fn check(args: &[String]) -> Result<(), ArgumentRefusal> {
    let mut at = 0;
    while let Some(arg) = args.get(at) {
        let arg = arg.as_str();
        if listed(GLOBAL_FLAGS, arg) {
            at += 1;
        } else if (arg == "--version" || arg == "version") && at + 1 == args.len() {
            return Ok(());
        } else if arg.starts_with("-c") || arg.starts_with("--config-env") {
            return Err(ArgumentRefusal::Form(format!(
                "`git {arg}` sets configuration, which can run programs \
                 (core.fsmonitor, diff.external, core.pager)"
            )));
        } else if listed(
            "-C --git-dir --work-tree --namespace --exec-path --bare",
            arg,
        ) || arg.starts_with("--git-dir=")
            || arg.starts_with("--work-tree=")
            || arg.starts_with("--exec-path=")
        {
            return Err(ArgumentRefusal::Form(format!(
                "`git {arg}` points git at another directory, whose own configuration can run \
                 programs"
            )));
        } else if arg.starts_with('-') {
            return Err(ArgumentRefusal::Form(format!(
                "`git {arg}` is not a global option known to only read"
            )));
        } else {
            break;
        }
    }
    let Some(sub) = args.get(at) else {
        return Err(ArgumentRefusal::Listed("`git` without a subcommand"));
    };
    let rest = &args[at + 1..];
    let program = format!("git {sub}");
    let p = program.as_str();
    match sub.as_str() {
        "shortlog" => {
            let log_options: Vec<String> = rest
                .iter()
                .filter(|a| !listed(SHORTLOG_FLAGS, a))
                .cloned()
                .collect();
            operands(p, &LOG, &log_options).map(|_| ())
        }
        "log" | "show" | "diff" | "whatchanged" | "rev-list" | "diff-tree" | "diff-index"
        | "diff-files" => operands(p, &LOG, rest).map(|_| ()),
        "reflog" => reflog(rest),
        "branch" => listing(p, rest, &BRANCH),
        "tag" => listing(p, rest, &TAG),
        // Remote URLs can embed credentials (`https://user:token@host/…`): names only.
        "remote" if rest.is_empty() => Ok(()),
        "remote" => Err(ArgumentRefusal::Listed(
            "`git remote` is accepted alone only: remote URLs can hold credentials, and the \
             other forms change remotes or contact a server",
        )),
        "stash" => match rest.first().map(String::as_str) {
            Some("list") => operands("git stash list", &LOG, &rest[1..]).map(|_| ()),
            Some("show") => operands("git stash show", &LOG, &rest[1..]).map(|_| ()),
            _ => Err(ArgumentRefusal::Listed(
                "`git stash` changes the working tree; only `git stash list` and \
                 `git stash show` are accepted",
            )),
        },
        "worktree" => match rest {
            [list] if list == "list" => Ok(()),
            [list, opt] if list == "list" && (opt == "--porcelain" || opt == "-v") => Ok(()),
            _ => Err(ArgumentRefusal::Listed(
                "only `git worktree list` is accepted",
            )),
        },
        "config" => Err(ArgumentRefusal::Listed(
            "`git config` is not accepted: configuration can hold credentials, and most of its \
             forms write",
        )),
        other => match SUBCOMMANDS.iter().find(|(names, _)| listed(names, other)) {
            Some((_, allowed)) => operands(p, allowed, rest).map(|_| ()),
            None => Err(ArgumentRefusal::Form(format!(
                "`git {other}` is not a read-only git command"
            ))),
        },
    }
}

/// `git branch`/`git tag`: listing forms only. A name without `--list` creates one.
fn listing(p: &str, rest: &[String], allowed: &Allowed) -> Result<(), ArgumentRefusal> {
    let list = rest.iter().any(|a| a == "-l" || a == "--list");
    let without_list: Vec<String> = rest
        .iter()
        .filter(|a| *a != "-l" && *a != "--list")
        .cloned()
        .collect();
    // `git tag -n5` shows annotations.
    let without_n: Vec<String> = without_list
        .iter()
        .filter(|a| {
            !(p == "git tag" && a.starts_with("-n") && a[2..].chars().all(|c| c.is_ascii_digit()))
        })
        .cloned()
        .collect();
    let operands = operands(p, allowed, &without_n)?;
    if !operands.is_empty() && !list {
        return Err(ArgumentRefusal::Form(format!(
            "`{p}` with a name creates one; list with `{p} --list PATTERN`"
        )));
    }
    Ok(())
}

/// `git reflog` shows; `expire`, `delete` and the rest change the reflog.
fn reflog(rest: &[String]) -> Result<(), ArgumentRefusal> {
    match rest.first().map(String::as_str) {
        None => Ok(()),
        Some("show") => operands("git reflog show", &LOG, &rest[1..]).map(|_| ()),
        Some(first) if first.starts_with('-') => operands("git reflog", &LOG, rest).map(|_| ()),
        Some(other) => Err(ArgumentRefusal::Form(format!(
            "`git reflog {other}` is not accepted (`expire` and `delete` rewrite history); \
             use `git reflog show {other}`"
        ))),
    }
}
