//! Planning: the execution modes (what may run without asking; the one place that names them
//! and their order) and the session's todo list. The approval decision lives with the engine.

pub mod readonly;
mod todo;

use std::fmt;

pub use todo::{TodoItem, TodoStatus, TodoStore};

/// The approval and planning mode of a session (CONTRACT.md, Modes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, clap::ValueEnum)]
pub enum Mode {
    /// Read-only tools run; `bash`, `write_file` and `edit_file` need approval.
    #[default]
    Default,
    /// File edits inside the working directory run; `bash` needs approval.
    AutoEdit,
    /// Only read-only tools and `todo_write`; the model plans and changes nothing.
    Plan,
    /// Everything runs without asking.
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

    #[test]
    fn names_round_trip() {
        for mode in Mode::ALL {
            assert_eq!(Mode::parse(mode.as_str()), Some(mode));
        }
    }
}
