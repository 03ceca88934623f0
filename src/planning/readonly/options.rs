//! Checks a command's arguments against the options it is allowed: every option must be listed,
//! a valued option takes its value, and what is left are the operands.

/// The options one command accepts. Long options are matched whole: GNU tools accept any
/// unambiguous prefix (`--out` for `--output`), and such a prefix is simply not on the list.
pub(super) struct Allowed {
    /// Options without a value: `-l`, `--all`.
    pub flags: &'static str,
    /// Options with a value: the next word, attached to a short one (`-n5`), or after `=`.
    pub valued: &'static str,
    /// Long options whose value is optional and only given after `=` (`--color[=WHEN]`).
    pub optional: &'static str,
    /// Short options whose value is optional and only attached (`git diff -U5`, `-U`): they
    /// never take the next word. Listing an option here or among the flags, never as valued
    /// when it is not, keeps a misreading on the safe side: the next word is checked as an
    /// option of its own.
    pub attached: &'static str,
    /// Whether `-NUM` is accepted (`head -20`, `grep -3`, `git log -5`).
    pub numeric: bool,
    /// Options refused with a specific reason (the rest of the unknown ones get a generic one).
    pub refused: &'static [(&'static str, &'static str)],
}

/// Why a listed command's arguments are not read-only. Its Display is a clause for the model,
/// read after "because" (`NotReadOnly::Arguments`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ArgumentRefusal {
    /// A valued option is the last word: what follows it would be read as its value.
    #[error("`{program} {option}` lacks its value")]
    LacksValue { program: String, option: String },
    #[error(
        "`{program} {option}` is not an option known to only read (only listed read-only \
         options are accepted)"
    )]
    UnknownOption { program: String, option: String },
    /// The allowlist's own reason for refusing an option (`date -s` sets the system clock).
    #[error("{0}")]
    Listed(&'static str),
    /// A form of the command its own check refuses, in that check's words.
    #[error("{0}")]
    Form(String),
}

impl Allowed {
    pub(super) const NONE: Allowed = Allowed {
        flags: "",
        valued: "",
        optional: "",
        attached: "",
        numeric: false,
        refused: &[],
    };
}

/// The operands of `args` (words that are not options or their values), or why an option is
/// refused. `program` names the command in messages.
pub(super) fn operands<'a>(
    program: &str,
    allowed: &Allowed,
    args: &'a [String],
) -> Result<Vec<&'a str>, ArgumentRefusal> {
    let mut operands = Vec::new();
    let mut at = 0;
    let mut only_operands = false;
    while let Some(arg) = args.get(at) {
        at += 1;
        if only_operands || arg == "-" || !arg.starts_with('-') {
            operands.push(arg.as_str());
            continue;
        }
        if arg == "--" {
            only_operands = true;
            continue;
        }
        if let Some(long) = arg.strip_prefix("--") {
            let (name, value) = match long.split_once('=') {
                Some((name, value)) => (format!("--{name}"), Some(value)),
                None => (arg.clone(), None),
            };
            let name = name.as_str();
            let known = if listed(allowed.valued, name) {
                if value.is_none() {
                    if args.get(at).is_none() {
                        return Err(ArgumentRefusal::LacksValue {
                            program: program.to_owned(),
                            option: name.to_owned(),
                        });
                    }
                    at += 1;
                }
                true
            } else if listed(allowed.optional, name) {
                true
            } else {
                listed(allowed.flags, name) && value.is_none()
            };
            if !known {
                return Err(refusal(program, name, allowed));
            }
            continue;
        }
        if allowed.numeric && arg[1..].chars().all(|c| c.is_ascii_digit()) {
            continue;
        }
        if listed(allowed.flags, arg.as_str()) {
            continue;
        }
        // A cluster of short options (`-la`, `-n5`, `-A3`).
        for (i, c) in arg.char_indices().skip(1) {
            let short = format!("-{c}");
            if listed(allowed.flags, short.as_str()) {
                continue;
            }
            if listed(allowed.attached, short.as_str()) {
                break;
            }
            if listed(allowed.valued, short.as_str()) {
                if i + c.len_utf8() == arg.len() {
                    if args.get(at).is_none() {
                        return Err(ArgumentRefusal::LacksValue {
                            program: program.to_owned(),
                            option: short,
                        });
                    }
                    at += 1;
                }
                break;
            }
            return Err(refusal(program, &short, allowed));
        }
    }
    Ok(operands)
}

fn refusal(program: &str, option: &str, allowed: &Allowed) -> ArgumentRefusal {
    match allowed.refused.iter().find(|(name, _)| *name == option) {
        Some((_, why)) => ArgumentRefusal::Listed(why),
        None => ArgumentRefusal::UnknownOption {
            program: program.to_owned(),
            option: option.to_owned(),
        },
    }
}

/// Whether `name` is one of the space-separated names of `list` (tables of options are kept as
/// such strings: one line holds many options, and the lookup is as cheap as a slice's).
pub(crate) fn listed(list: &str, name: &str) -> bool {
    list.split_ascii_whitespace().any(|item| item == name)
}
