//! Planning: the execution modes (what may run without asking; the one place that names them
//! and their order) and the session's todo list. The approval decision lives with the engine.

pub mod readonly;
mod todo;

use std::fmt;

pub use todo::{TodoItem, TodoStatus, TodoStore};

/// The approval and planning mode of a session (CONTRACT.md, Modes). What each one does is
/// `Mode::behaviour`, the one text every place that describes a mode shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Mode {
    #[default]
    Default,
    AutoEdit,
    Plan,
    Yolo,
}

impl Mode {
    pub const ALL: [Mode; 4] = [Mode::Default, Mode::AutoEdit, Mode::Plan, Mode::Yolo];

    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Default => "default",
            Mode::AutoEdit => "auto-edit",
            Mode::Plan => "plan",
            Mode::Yolo => "yolo",
        }
    }

    /// What runs without asking in this mode and what asks, in one sentence: the one
    /// description `--help`, `/help`, the Shift+Tab notice, the plan review and the welcome line
    /// show (docs/REFERENCE.md and the README quote it; a test holds them to it). It must stay
    /// true of `permission::decide`.
    pub fn behaviour(self) -> &'static str {
        match self {
            Mode::Default => "reads and read-only commands run; edits and other commands ask first",
            Mode::AutoEdit => {
                "edits inside the working directory and sandboxed commands run; commands outside \
                 the sandbox, and commands that delete or overwrite existing files, ask first"
            }
            Mode::Plan => "only reads and plans: nothing changes until you approve the plan",
            Mode::Yolo => "everything runs without asking (deny rules aside)",
        }
    }

    /// The notice of a switch to this mode (Shift+Tab, `/mode NAME`).
    pub fn switch_notice(self) -> String {
        format!("mode: {self} (from the next turn): {}", self.behaviour())
    }

    /// The next mode of the Shift+Tab cycle: default → auto-edit → plan → default.
    /// `yolo` is never entered by cycling; cycling from it returns to `default`.
    pub fn cycle(self) -> Mode {
        match self {
            Mode::Default => Mode::AutoEdit,
            Mode::AutoEdit => Mode::Plan,
            Mode::Plan | Mode::Yolo => Mode::Default,
        }
    }

    pub fn parse(text: &str) -> Option<Mode> {
        Mode::ALL.into_iter().find(|mode| mode.as_str() == text)
    }
}

/// `--mode`'s values, each with its `behaviour` as its help.
impl clap::ValueEnum for Mode {
    fn value_variants<'a>() -> &'a [Self] {
        &Mode::ALL
    }

    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        Some(clap::builder::PossibleValue::new(self.as_str()).help(self.behaviour()))
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shift_tab_cycles_three_modes() {
        assert_eq!(Mode::Default.cycle(), Mode::AutoEdit);
        assert_eq!(Mode::AutoEdit.cycle(), Mode::Plan);
        assert_eq!(Mode::Plan.cycle(), Mode::Default);
        assert_eq!(Mode::Yolo.cycle(), Mode::Default);
    }

    /// The reference and the README describe each mode with the words the program shows.
    #[test]
    fn the_docs_describe_each_mode_as_the_program_does() {
        let reference = include_str!("../docs/REFERENCE.md");
        let readme = include_str!("../README.md");
        for mode in Mode::ALL {
            let row = format!("| `{mode}` | {} |", mode.behaviour());
            assert!(reference.contains(&row), "docs/REFERENCE.md lacks: {row}");
            assert!(readme.contains(&row), "README.md lacks: {row}");
        }
    }

    #[test]
    fn names_round_trip() {
        for mode in Mode::ALL {
            assert_eq!(Mode::parse(mode.as_str()), Some(mode));
        }
    }
}
