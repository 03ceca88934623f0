//! The allowlist: each read-only program with the options it may be given. What is not listed is
//! refused; options that write a file or run a program are listed in `refused` only to explain.

use super::options::{Allowed, ArgumentRefusal, listed, operands};

/// A command's own check of its arguments.
type Check = fn(&[String]) -> Result<(), ArgumentRefusal>;

pub(super) struct Spec {
    pub name: &'static str,
    pub allowed: Allowed,
    /// The most operands accepted (`uniq IN`), `None` for any number.
    pub max_operands: Option<usize>,
    /// Whether a glob may stand among the operands: true when every operand is a file only read.
    pub globs: bool,
    /// A check of its own instead of the option table.
    pub special: Option<Check>,
}

/// Programs `xargs` may run: every option they have only reads, so words from `xargs`'s input
/// cannot change what they do.
pub(super) const XARGS_SAFE: &[&str] = &[
    "cat",
    "wc",
    "head",
    "grep",
    "egrep",
    "fgrep",
    "ls",
    "stat",
    "du",
    "md5sum",
    "sha1sum",
    "sha256sum",
    "basename",
    "dirname",
    "echo",
];

const fn spec(name: &'static str, allowed: Allowed) -> Spec {
    Spec {
        name,
        allowed,
        max_operands: None,
        globs: true,
        special: None,
    }
}

const fn special(name: &'static str, check: Check) -> Spec {
    Spec {
        name,
        allowed: Allowed::NONE,
        max_operands: None,
        globs: false,
        special: Some(check),
    }
}

const fn flags(flags: &'static str, valued: &'static str) -> Allowed {
    Allowed {
        flags,
        valued,
        optional: "",
        attached: "",
        numeric: false,
        refused: &[],
    }
}

const HEAD_TAIL: Allowed = Allowed {
    flags: "-q -v -z --quiet --silent --verbose --zero-terminated",
    valued: "-n -c --lines --bytes",
    optional: "",
    attached: "",
    numeric: true,
    refused: &[
        ("-f", "`tail -f` never ends"),
        ("-F", "`tail -F` never ends"),
        ("--follow", "`tail --follow` never ends"),
    ],
};

const GREP: Allowed = Allowed {
    flags: "-E -F -G -P -i -y -v -w -x -c -L -l -o -q -s -b -H -h -n -T -Z -z -r -R -a -I -U \
        --extended-regexp --fixed-strings --basic-regexp --perl-regexp --ignore-case \
        --no-ignore-case --invert-match --word-regexp --line-regexp --count --files-with-matches \
        --files-without-match --only-matching --quiet --silent --no-messages --byte-offset \
        --with-filename --no-filename --line-number --initial-tab --null --null-data --recursive \
        --dereference-recursive --text --line-buffered",
    valued: "-e -f -m -A -B -C -d -D --regexp --file --max-count --after-context \
        --before-context --context --include --exclude --exclude-dir --exclude-from --label \
        --binary-files --directories --devices",
    optional: "--color --colour",
    attached: "",
    numeric: true,
    refused: &[],
};

const RG: Allowed = Allowed {
    flags: "-n -N -i -S -s -w -v -l -c -F -x -o -u -L -H -I -0 -a -p -q -U -P -h --line-number \
        --no-line-number --ignore-case --smart-case --case-sensitive --word-regexp \
        --invert-match --files-with-matches --files-without-match --count --count-matches \
        --fixed-strings --line-regexp --only-matching --follow --no-heading --heading \
        --with-filename --no-filename --hidden --no-ignore --no-ignore-vcs --no-ignore-dot \
        --no-ignore-parent --no-ignore-global --files --type-list --json --vimgrep --stats \
        --multiline --multiline-dotall --pcre2 --trim --column --no-column --no-messages --quiet \
        --null --text --passthru --unrestricted --pretty --no-config --sort-files --byte-offset \
        --crlf --no-unicode --include-zero --line-buffered --block-buffered \
        --max-columns-preview",
    valued: "-g -t -T -e -f -A -B -C -m -M -j -r -E -d --glob --iglob --type --type-not --regexp \
        --file --after-context --before-context --context --max-count --max-columns --threads \
        --replace --encoding --max-depth --maxdepth --max-filesize --sort --sortr --color \
        --colors --context-separator --field-match-separator --path-separator --type-add",
    optional: "",
    attached: "",
    numeric: false,
    refused: &[
        ("--pre", "`rg --pre` runs a program on every file"),
        (
            "--pre-glob",
            "`rg --pre-glob` chooses files for a `--pre` program",
        ),
        ("--hostname-bin", "`rg --hostname-bin` runs a program"),
        ("-z", "`rg -z` runs decompression programs"),
        (
            "--search-zip",
            "`rg --search-zip` runs decompression programs",
        ),
    ],
};

const LS: Allowed = Allowed {
    flags: "-a -A -l -h -R -t -r -S -d -1 -F -G -i -p -s -n -k -L -c -u -U -v -X -x -m -B -o -g \
        -Q -C -H -N -Z -f --all --almost-all --human-readable --recursive --reverse --size \
        --directory --classify --group-directories-first --full-time --inode --numeric-uid-gid \
        --dereference --literal --si --ignore-backups --no-group --author --escape --quote-name \
        --dereference-command-line --kibibytes --context --file-type",
    valued: "-I -w -T --time-style --sort --ignore --hide --width --tabsize --indicator-style \
        --format --block-size --time --quoting-style",
    optional: "--color --colour --hyperlink",
    attached: "",
    numeric: false,
    refused: &[],
};

const SORT: Allowed = Allowed {
    flags: "-b -d -f -g -i -M -h -n -R -r -V -c -C -s -u -z -m --ignore-leading-blanks \
        --dictionary-order --ignore-case --general-numeric-sort --ignore-nonprinting \
        --month-sort --human-numeric-sort --numeric-sort --random-sort --reverse --version-sort \
        --check --stable --unique --zero-terminated --merge",
    valued: "-k -t -S --key --field-separator --buffer-size --parallel --sort",
    optional: "",
    attached: "",
    numeric: false,
    refused: &[
        ("-o", "`sort -o` writes its output to a file"),
        ("--output", "`sort --output` writes its output to a file"),
        (
            "--compress-program",
            "`sort --compress-program` runs a program",
        ),
        (
            "-T",
            "`sort -T` writes temporary files to a directory of its choosing",
        ),
        (
            "--temporary-directory",
            "`sort --temporary-directory` writes temporary files",
        ),
    ],
};

const UNIQ: Allowed = Allowed {
    flags: "-c -d -D -i -u -z --count --repeated --ignore-case --unique --zero-terminated",
    valued: "-f -s -w --skip-fields --skip-chars --check-chars",
    optional: "--all-repeated --group",
    attached: "",
    numeric: false,
    refused: &[],
};

const CHECKSUM: Allowed = flags(
    "-b -t -c -w -z --binary --text --check --quiet --status --strict --warn --tag --zero \
        --ignore-missing",
    "",
);

/// Every listed program, by name.
static SPECS: &[Spec] = &[
    spec("ls", LS),
    spec(
        "cat",
        flags(
            "-A -b -e -E -n -s -t -T -u -v --number --number-nonblank --show-all --show-ends \
                --show-tabs --squeeze-blank --show-nonprinting",
            "",
        ),
    ),
    spec("head", HEAD_TAIL),
    spec("tail", HEAD_TAIL),
    spec(
        "wc",
        flags(
            "-l -w -c -m -L --lines --words --bytes --chars --max-line-length",
            "",
        ),
    ),
    spec("grep", GREP),
    spec("egrep", GREP),
    spec("fgrep", GREP),
    spec("rg", RG),
    spec("sort", SORT),
    Spec {
        max_operands: Some(1),
        globs: false,
        ..spec("uniq", UNIQ)
    },
    spec(
        "cut",
        flags(
            "-s -z -n --complement --only-delimited --zero-terminated",
            "-b -c -f -d --bytes --characters --fields --delimiter --output-delimiter",
        ),
    ),
    spec("nl", flags("-p", "-b -n -w -s -v -i -h -f -d")),
    spec("tac", flags("-b -r", "-s")),
    spec("rev", Allowed::NONE),
    Spec {
        globs: false,
        ..spec("tr", flags("-c -C -d -s -t", ""))
    },
    spec(
        "diff",
        Allowed {
            flags: "-u -c -r -N -q -s -i -w -b -B -a -y -p -t -T -E -Z --brief --recursive \
                --new-file --ignore-case --ignore-all-space --ignore-space-change \
                --ignore-blank-lines --text --side-by-side --show-c-function --minimal \
                --report-identical-files --expand-tabs --initial-tab --strip-trailing-cr \
                --suppress-common-lines --left-column --speed-large-files --ignore-tab-expansion \
                --ignore-trailing-space --unidirectional-new-file",
            valued: "-U -C -W -x --label --width --exclude --line-format",
            optional: "--unified --context --color",
            attached: "",
            numeric: false,
            refused: &[],
        },
    ),
    spec(
        "cmp",
        flags(
            "-b -l -s --print-bytes --verbose --quiet --silent",
            "-i -n --ignore-initial --bytes",
        ),
    ),
    spec(
        "comm",
        flags(
            "-1 -2 -3 -i -z --check-order --nocheck-order --total --zero-terminated",
            "--output-delimiter",
        ),
    ),
    spec(
        "stat",
        flags(
            "-L -f -t --dereference --file-system --terse",
            "-c --format --printf",
        ),
    ),
    spec(
        "file",
        flags(
            "-b -i -L -h -k -N -E --mime --mime-type --mime-encoding --brief --dereference \
                --no-dereference --keep-going",
            "",
        ),
    ),
    spec(
        "du",
        flags(
            "-s -h -a -c -k -m -b -x -L -l -0 --summarize --human-readable --apparent-size \
                --total --si --all --one-file-system --dereference --count-links --null --bytes",
            "-d -B -t --max-depth --exclude --block-size --threshold",
        ),
    ),
    spec(
        "df",
        Allowed {
            optional: "--output",
            ..flags(
                "-h -T -i -l -a -k -m -P -H --human-readable --print-type --inodes --local --all \
                    --total --si --portability",
                "-t -x -B --type --exclude-type --block-size",
            )
        },
    ),
    spec("which", flags("-a", "")),
    spec("whereis", flags("-b -m -s -u", "")),
    spec("type", flags("-a -t -p -P -f", "")),
    spec(
        "uname",
        flags(
            "-a -s -n -r -v -m -p -i -o --all --kernel-name --nodename --kernel-release \
                --kernel-version --machine --processor --hardware-platform --operating-system",
            "",
        ),
    ),
    Spec {
        max_operands: Some(0),
        ..spec("whoami", Allowed::NONE)
    },
    spec(
        "id",
        flags(
            "-u -g -G -n -r -z --user --group --groups --name --real",
            "",
        ),
    ),
    Spec {
        max_operands: Some(0),
        ..spec("pwd", flags("-L -P", ""))
    },
    spec(
        "realpath",
        flags(
            "-e -m -s -q -L -P -z --canonicalize-existing --canonicalize-missing --no-symlinks \
                --strip --quiet --logical --physical --zero",
            "--relative-to --relative-base",
        ),
    ),
    spec(
        "readlink",
        flags(
            "-f -e -m -n -q -s -v -z --canonicalize --canonicalize-existing \
                --canonicalize-missing --no-newline --quiet --silent --verbose --zero",
            "",
        ),
    ),
    spec("basename", flags("-a -z --multiple --zero", "-s --suffix")),
    spec("dirname", flags("-z --zero", "")),
    spec("md5sum", CHECKSUM),
    spec("sha1sum", CHECKSUM),
    spec("sha224sum", CHECKSUM),
    spec("sha256sum", CHECKSUM),
    spec("sha384sum", CHECKSUM),
    spec("sha512sum", CHECKSUM),
    spec("b2sum", CHECKSUM),
    spec("cksum", CHECKSUM),
    spec(
        "tree",
        Allowed {
            flags: "-a -d -f -i -l -x -s -h -D -F -C -n -J -p -u -g -t -r -v -U -c -q -N -Q -A \
                -S --noreport --dirsfirst --gitignore --du --prune --matchdirs --ignore-case \
                --inodes --device --si --filesfirst --fflinks --noreport",
            valued: "-L -I -P --charset --filelimit --sort --timefmt",
            optional: "",
            attached: "",
            numeric: false,
            refused: &[
                ("-o", "`tree -o` writes its output to a file"),
                ("-R", "`tree -R` writes an output file in every directory"),
                ("-H", "`tree -H` writes HTML meant for output files"),
                (
                    "--fromfile",
                    "`tree --fromfile` reads a listing instead of the disk",
                ),
            ],
        },
    ),
    spec("od", flags("-b -c -d -o -s -x -v", "-A -t -N -j -w")),
    spec("hexdump", flags("-C -b -c -d -o -x -v", "-n -s")),
    Spec {
        max_operands: Some(1),
        ..spec("xxd", flags("-p -u -b -i -e -a -ps -C", "-l -s -c -g -o"))
    },
    spec(
        "strings",
        flags(
            "-a -d -f -w --all --print-file-name",
            "-n -t -e --bytes --radix --encoding",
        ),
    ),
    spec(
        "column",
        flags(
            "-t -n -x -e --table",
            "-s -c -o -N --separator --output-separator",
        ),
    ),
    spec("paste", flags("-s -z --serial", "-d --delimiters")),
    spec("fold", flags("-b -s", "-w --width")),
    spec("expand", flags("-i --initial", "-t --tabs")),
    Spec {
        globs: false,
        ..spec(
            "seq",
            Allowed {
                numeric: true,
                ..flags("-w --equal-width", "-s -f --separator --format")
            },
        )
    },
    Spec {
        max_operands: Some(1),
        globs: false,
        ..spec("cd", flags("-L -P", ""))
    },
    special("echo", |_| Ok(())),
    special("true", |_| Ok(())),
    special("false", |_| Ok(())),
    special("test", |_| Ok(())),
    special("[", |_| Ok(())),
    special("printf", check_printf),
    special("date", check_date),
    special("jq", check_jq),
];

/// The spec of `program`, if it is listed.
pub(super) fn lookup(program: &str) -> Option<&'static Spec> {
    SPECS.iter().find(|s| s.name == program)
}

pub(super) fn check_with(spec: &Spec, args: &[String]) -> Result<(), ArgumentRefusal> {
    if let Some(check) = spec.special {
        return check(args);
    }
    let operands = operands(spec.name, &spec.allowed, args)?;
    if let Some(max) = spec.max_operands
        && operands.len() > max
    {
        return Err(match spec.name {
            "uniq" => ArgumentRefusal::Listed("`uniq` with two file arguments writes the second"),
            "xxd" => ArgumentRefusal::Listed("`xxd` with two file arguments writes the second"),
            name => ArgumentRefusal::Form(format!("`{name}` takes at most {max} argument(s) here")),
        });
    }
    Ok(())
}

fn check_printf(args: &[String]) -> Result<(), ArgumentRefusal> {
    match args.first() {
        Some(first) if first.starts_with("-v") => Err(ArgumentRefusal::Listed(
            "`printf -v` assigns a shell variable",
        )),
        Some(first) if first.starts_with('-') && first != "--" => Err(ArgumentRefusal::Form(
            format!("`printf {first}` is not understood"),
        )),
        _ => Ok(()),
    }
}

/// `date` prints; with `-s`/`--set` or an operand other than `+FORMAT` it sets the clock.
fn check_date(args: &[String]) -> Result<(), ArgumentRefusal> {
    let allowed = Allowed {
        flags: "-u -R --utc --universal --rfc-email --debug",
        valued: "-d -r --date --reference --rfc-3339",
        optional: "--iso-8601",
        attached: "",
        numeric: false,
        refused: &[
            ("-s", "`date -s` sets the system clock"),
            ("--set", "`date --set` sets the system clock"),
            ("-f", "`date -f` reads dates from a file"),
            ("--file", "`date --file` reads dates from a file"),
        ],
    };
    // `-I` takes its format attached only (`-Iseconds`).
    let args: Vec<String> = args
        .iter()
        .filter(|a| !(a.starts_with("-I") && a[2..].chars().all(|c| c.is_ascii_lowercase())))
        .cloned()
        .collect();
    for operand in operands("date", &allowed, &args)? {
        if !operand.starts_with('+') {
            return Err(ArgumentRefusal::Form(format!(
                "`date {operand}` would set the clock; only `+FORMAT` operands are accepted"
            )));
        }
    }
    Ok(())
}

/// `jq FILTER [FILES]`: no module search paths, no filter files from elsewhere.
fn check_jq(args: &[String]) -> Result<(), ArgumentRefusal> {
    let allowed = Allowed {
        flags: "-r -c -e -s -n -S -j -a -C -M -R --raw-output --compact-output --exit-status \
            --slurp --null-input --sort-keys --join-output --ascii-output --color-output \
            --monochrome-output --raw-input --tab",
        valued: "--indent",
        optional: "",
        attached: "",
        numeric: false,
        refused: &[("-L", "`jq -L` loads modules from a directory")],
    };
    // `--arg NAME VALUE` and `--argjson NAME JSON` take two words.
    let mut rest = Vec::new();
    let mut at = 0;
    while let Some(arg) = args.get(at) {
        if arg == "--arg" || arg == "--argjson" {
            at += 3;
        } else {
            rest.push(arg.clone());
            at += 1;
        }
    }
    operands("jq", &allowed, &rest).map(|_| ())
}

/// `find PATHS EXPRESSION`: only tests and printing actions; nothing that runs, deletes or
/// writes a file.
pub(super) fn check_find(args: &[String]) -> Result<(), ArgumentRefusal> {
    const TESTS_WITH_VALUE: &str = "-name -iname -path -ipath -wholename -iwholename -regex \
        -iregex -type -xtype -size -mtime -mmin -atime -amin -ctime -cmin -newer -anewer -cnewer \
        -perm -user -group -uid -gid -links -inum -samefile -maxdepth -mindepth -regextype \
        -printf -lname -ilname -fstype -used";
    const TESTS: &str = "-empty -nouser -nogroup -readable -writable -executable -true -false \
        -depth -mount -xdev -follow -noleaf -daystart -print -print0 -ls -prune -quit -not -and \
        -or -a -o ! ( ) , -H -L -P -ignore_readdir_race -noignore_readdir_race";
    const WRITES: &[(&str, &str)] = &[
        ("-exec", "`find -exec` runs a command"),
        ("-execdir", "`find -execdir` runs a command"),
        ("-ok", "`find -ok` runs a command"),
        ("-okdir", "`find -okdir` runs a command"),
        ("-delete", "`find -delete` deletes files"),
        ("-fprint", "`find -fprint` writes a file"),
        ("-fprint0", "`find -fprint0` writes a file"),
        ("-fprintf", "`find -fprintf` writes a file"),
        ("-fls", "`find -fls` writes a file"),
    ];
    let mut at = 0;
    while let Some(arg) = args.get(at) {
        at += 1;
        let arg = arg.as_str();
        if let Some((_, why)) = WRITES.iter().find(|(name, _)| *name == arg) {
            return Err(ArgumentRefusal::Listed(why));
        }
        if listed(TESTS, arg) {
            continue;
        }
        // `-newerXY REFERENCE` (`-newermt 2024-01-01`).
        let newer = arg.len() == 8 && arg.starts_with("-newer");
        if listed(TESTS_WITH_VALUE, arg) || newer {
            if args.get(at).is_none() {
                return Err(ArgumentRefusal::LacksValue {
                    program: "find".into(),
                    option: arg.to_owned(),
                });
            }
            at += 1;
            continue;
        }
        if arg.starts_with('-') {
            return Err(ArgumentRefusal::Form(format!(
                "`find {arg}` is not a test or action known to only read"
            )));
        }
        // A starting path (or a stray operand, which `find` itself refuses).
    }
    Ok(())
}
