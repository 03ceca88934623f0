//! Wrappers that only run the next word (`command`, `env`, `sudo`, `xargs`...) peeled off a
//! simple command, and the commands a command runs in turn (`bash -c SCRIPT`, `eval`,
//! `find -exec`).

use super::Reason;
use super::words::Word;

/// The options of one wrapper: those without a value and those taking one (as the next word,
/// attached to a short option, or after `=` for a long one).
struct Options {
    flags: &'static str,
    valued: &'static str,
}

/// Where the wrapped command starts, or why the options are not understood.
fn skip_options(words: &[Word], from: usize, options: &Options) -> Result<usize, String> {
    let mut at = from;
    while let Some(word) = words.get(at) {
        let arg = word.text.as_str();
        if word.dynamic.is_some() {
            return Err("a wrapper's option is only known when it runs".into());
        }
        if arg == "--" {
            return Ok(at + 1);
        }
        if !arg.starts_with('-') || arg == "-" {
            return Ok(at);
        }
        if let Some(long) = arg.strip_prefix("--") {
            let name = format!("--{}", long.split('=').next().unwrap_or(long));
            if listed(options.flags, name.as_str()) && !long.contains('=') {
                at += 1;
            } else if listed(options.valued, name.as_str()) {
                at += if long.contains('=') { 1 } else { 2 };
            } else {
                return Err(format!("the wrapper option `{arg}` is not understood"));
            }
            continue;
        }
        let mut consumed = 1;
        for (i, c) in arg.char_indices().skip(1) {
            let short = format!("-{c}");
            if listed(options.flags, short.as_str()) {
                continue;
            }
            if listed(options.valued, short.as_str()) {
                if i + c.len_utf8() == arg.len() {
                    consumed = 2;
                }
                break;
            }
            if c.is_ascii_digit() && listed(options.valued, "-NUM") {
                break;
            }
            return Err(format!("the wrapper option `{arg}` is not understood"));
        }
        at += consumed;
    }
    Ok(at)
}

const SUDO: Options = Options {
    flags: "-A -b -E -H -k -n -P -S --askpass --background --preserve-env --set-home \
        --non-interactive --stdin --reset-timestamp",
    valued: "-u -g -C -D -p -r -t -T -U --user --group --chdir --host --prompt --role --type \
        --command-timeout --other-user --close-from",
};

/// Strips wrappers off `words` until the program actually run comes first; what a wrapper
/// changes about the run (another user, variables, input words) is added to `reasons`.
pub(super) fn peel(mut words: Vec<Word>, reasons: &mut Vec<Reason>) -> Vec<Word> {
    loop {
        let Some(first) = words.first() else {
            return words;
        };
        if first.dynamic.is_some() {
            return words;
        }
        let name = first
            .text
            .rsplit('/')
            .next()
            .unwrap_or(&first.text)
            .to_owned();
        let start = match wrapped_start(&name, &words, reasons) {
            Ok(Some(start)) => start,
            Ok(None) => return words,
            Err(why) => {
                reasons.push(Reason::Other(why));
                return words;
            }
        };
        if start >= words.len() {
            // The wrapper alone (`env`, `sudo -v`): it is the program.
            return words;
        }
        words.drain(..start);
    }
}

/// Where the command wrapped by `name` starts, `None` when `name` is not a wrapper.
fn wrapped_start(
    name: &str,
    words: &[Word],
    reasons: &mut Vec<Reason>,
) -> Result<Option<usize>, String> {
    let has = |option: &str| words.iter().skip(1).any(|w| w.text == option);
    let start = match name {
        "builtin" => 1,
        "nohup" => {
            // With output on a terminal it writes `nohup.out`.
            reasons.push(Reason::Other("`nohup` may write `nohup.out`".into()));
            1
        }
        "coproc" => {
            reasons.push(Reason::Other("`coproc` runs it in the background".into()));
            1
        }
        "command" => {
            let start = skip_options(
                words,
                1,
                &Options {
                    flags: "-p -v -V",
                    valued: "",
                },
            )?;
            if words[1..start]
                .iter()
                .any(|w| w.text.contains('v') || w.text.contains('V'))
            {
                // `command -v x` looks `x` up; it does not run it.
                return Ok(None);
            }
            start
        }
        "exec" => skip_options(
            words,
            1,
            &Options {
                flags: "-c -l",
                valued: "-a",
            },
        )?,
        "env" => {
            let options = Options {
                flags: "-i -0 -v --ignore-environment --null --debug",
                valued: "-u -C --unset --chdir",
            };
            if words
                .iter()
                .skip(1)
                .any(|w| w.text.starts_with("-S") || w.text.starts_with("--split-string"))
            {
                return Err("`env -S` splits a string into a command".into());
            }
            let mut start = skip_options(words, 1, &options)?;
            while let Some(word) = words.get(start) {
                if word.text == "-" {
                    start += 1;
                } else if is_assignment(&word.text) {
                    reasons.push(Reason::Other(format!(
                        "`env` sets a variable for the command (`{}`)",
                        super::words::short(&word.text)
                    )));
                    start += 1;
                } else {
                    break;
                }
            }
            start
        }
        "time" => {
            if has("-o")
                || has("-a")
                || words
                    .iter()
                    .any(|w| w.text.starts_with("--output") || w.text.starts_with("--append"))
            {
                return Err("`time -o` writes a file".into());
            }
            skip_options(
                words,
                1,
                &Options {
                    flags: "-p -v -q --verbose --portability --quiet",
                    valued: "-f --format",
                },
            )?
        }
        "nice" => skip_options(
            words,
            1,
            &Options {
                flags: "",
                valued: "-n --adjustment -NUM",
            },
        )?,
        "ionice" => skip_options(
            words,
            1,
            &Options {
                flags: "-t",
                valued: "-c -n --class --classdata",
            },
        )?,
        "setsid" => skip_options(
            words,
            1,
            &Options {
                flags: "-c -f -w --ctty --fork --wait",
                valued: "",
            },
        )?,
        "stdbuf" => skip_options(
            words,
            1,
            &Options {
                flags: "",
                valued: "-i -o -e --input --output --error",
            },
        )?,
        "timeout" => {
            let start = skip_options(
                words,
                1,
                &Options {
                    flags: "-v -f --verbose --foreground --preserve-status",
                    valued: "-s -k --signal --kill-after",
                },
            )?;
            // The duration comes before the command.
            start + 1
        }
        "sudo" | "doas" => {
            if name == "sudo"
                && [
                    "-s",
                    "-i",
                    "-e",
                    "-l",
                    "-v",
                    "-K",
                    "--shell",
                    "--login",
                    "--edit",
                    "--list",
                    "--validate",
                ]
                .iter()
                .any(|o| has(o))
            {
                return Err(format!(
                    "`{name}` with these options does more than run the next command"
                ));
            }
            let options = if name == "sudo" {
                SUDO
            } else {
                Options {
                    flags: "-n -s",
                    valued: "-u -C -a",
                }
            };
            if name == "doas" && has("-s") {
                return Err("`doas -s` runs a shell".into());
            }
            reasons.push(Reason::Other(format!("`{name}` runs it as another user")));
            let mut start = skip_options(words, 1, &options)?;
            while words.get(start).is_some_and(|w| is_assignment(&w.text)) {
                reasons.push(Reason::Other(format!(
                    "`{name}` sets a variable for the command"
                )));
                start += 1;
            }
            start
        }
        "xargs" => {
            reasons.push(Reason::XargsInput);
            skip_options(
                words,
                1,
                &Options {
                    // `-i`, `-e`, `-l` and `--replace`, `--eof`, `--max-lines` take an optional
                    // value that is only ever attached: as flags they never swallow the command.
                    flags: "-0 -r -t -x -p -o -i -e -l --null --no-run-if-empty --verbose --exit \
                        --interactive --open-tty --replace --eof --max-lines",
                    valued: "-n -L -P -d -I -s -a -E --max-args --max-procs --delimiter \
                        --max-chars --arg-file --process-slot-var",
                },
            )?
        }
        _ => return Ok(None),
    };
    Ok(Some(start))
}

/// `NAME=value` as `env` and `sudo` read it.
fn is_assignment(word: &str) -> bool {
    match word.split_once('=') {
        Some((name, _)) => {
            !name.is_empty()
                && !name.starts_with(|c: char| c.is_ascii_digit())
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        }
        None => false,
    }
}

/// A script a command runs in turn.
pub(super) enum Script {
    Literal(String),
    Dynamic,
}

const SHELLS: &str = "sh bash zsh dash ksh mksh ash busybox";

/// The scripts `words` runs: `bash -c SCRIPT`, `eval WORDS`.
pub(super) fn scripts(words: &[Word]) -> Vec<Script> {
    let Some(first) = words.first() else {
        return Vec::new();
    };
    let name = first.text.rsplit('/').next().unwrap_or(&first.text);
    if name == "eval" {
        let rest = &words[1..];
        if rest.iter().any(|w| w.dynamic.is_some()) {
            return vec![Script::Dynamic];
        }
        let text: Vec<&str> = rest.iter().map(|w| w.text.as_str()).collect();
        return vec![Script::Literal(text.join(" "))];
    }
    if !listed(SHELLS, name) {
        return Vec::new();
    }
    let mut at = 1;
    // `busybox sh -c …`
    if name == "busybox"
        && words
            .get(1)
            .is_some_and(|w| listed(SHELLS, w.text.as_str()))
    {
        at = 2;
    }
    let mut inline = false;
    while let Some(word) = words.get(at) {
        let arg = word.text.as_str();
        if word.dynamic.is_some() {
            return vec![Script::Dynamic];
        }
        if arg == "--" || arg == "-" {
            at += 1;
            break;
        }
        let short = (arg.starts_with('-') || arg.starts_with('+')) && !arg.starts_with("--");
        if short {
            inline |= arg.contains('c');
            // `-o option` and `-O shopt` take the next word.
            at += if arg.contains('o') || arg.contains('O') {
                2
            } else {
                1
            };
        } else if arg.starts_with("--") {
            at += 1;
        } else {
            break;
        }
    }
    if !inline {
        return Vec::new();
    }
    match words.get(at) {
        Some(script) if script.dynamic.is_none() => vec![Script::Literal(script.text.clone())],
        Some(_) => vec![Script::Dynamic],
        None => Vec::new(),
    }
}

/// The commands `find -exec/-execdir/-ok/-okdir … ;` runs.
pub(super) fn find_exec(words: &[Word]) -> Vec<Vec<Word>> {
    let is_find = words
        .first()
        .is_some_and(|w| w.text.rsplit('/').next() == Some("find"));
    if !is_find {
        return Vec::new();
    }
    let mut found = Vec::new();
    let mut current: Option<Vec<Word>> = None;
    for word in &words[1..] {
        match &mut current {
            Some(command) if word.text == ";" || word.text == "+" => {
                found.push(std::mem::take(command));
                current = None;
            }
            Some(command) => command.push(word.clone()),
            None if matches!(word.text.as_str(), "-exec" | "-execdir" | "-ok" | "-okdir") => {
                current = Some(Vec::new())
            }
            None => {}
        }
    }
    found.extend(current);
    found.retain(|c| !c.is_empty());
    found
}

/// Whether `name` is one of the space-separated names of `list`.
fn listed(list: &str, name: &str) -> bool {
    list.split_ascii_whitespace().any(|item| item == name)
}
