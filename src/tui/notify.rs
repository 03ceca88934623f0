//! Nudges when the agent waits for the user: when an approval waits or a run ends while the
//! terminal is not focused (focus events), or a run ends after more than `LONG_RUN`, the TUI
//! rings the bell and sends an OSC 9 notification (a desktop notification in terminals that
//! show them). The `"tui"` settings (`bell`, `notify`) turn either off. Deciding is here and
//! pure; the runner writes the bytes.

use std::time::Duration;

use crate::engine::EventKind;

/// A run longer than this ends with a nudge even in a focused terminal.
pub const LONG_RUN: Duration = Duration::from_secs(10);

/// What the TUI may do to get the user's attention, and whether the terminal has the focus.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Notify {
    pub bell: bool,
    pub osc9: bool,
    /// The terminal has the focus (until it says otherwise: terminals without focus events
    /// never do).
    pub focused: bool,
}

impl Default for Notify {
    fn default() -> Self {
        Notify {
            bell: true,
            osc9: true,
            focused: true,
        }
    }
}

impl Notify {
    /// The notification `kind` calls for (its text), given how long the run has gone on.
    pub fn decide(&self, kind: &EventKind, ran: Option<Duration>) -> Option<String> {
        if !self.bell && !self.osc9 {
            return None;
        }
        let long = ran.is_some_and(|d| d > LONG_RUN);
        match kind {
            EventKind::ApprovalRequired(request) if !self.focused => {
                Some(format!("harness9: approve {}?", request.tool_call.name))
            }
            EventKind::Done(_) if !self.focused || long => {
                Some("harness9: the run finished".into())
            }
            EventKind::Error(_) if !self.focused || long => {
                Some("harness9: the run stopped with an error".into())
            }
            _ => None,
        }
    }

    /// The bytes for `text`: BEL, then OSC 9 (its text without control characters, so it
    /// cannot end the sequence early).
    pub fn bytes(&self, text: &str) -> String {
        let mut out = String::new();
        if self.bell {
            out.push('\x07');
        }
        if self.osc9 {
            let clean: String = text.chars().filter(|c| !c.is_control()).collect();
            out.push_str(&format!("\x1b]9;{clean}\x07"));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{ApprovalRequest, DoneInfo, Failure, FailureKind};
    use crate::schema::ToolCall;

    fn approval() -> EventKind {
        let call = ToolCall {
            id: "c".into(),
            name: "bash".into(),
            arguments: "{}".into(),
        };
        let (request, _answer) =
            ApprovalRequest::new(call, "r".into(), "s".into(), "--allow", None);
        EventKind::ApprovalRequired(request)
    }

    #[test]
    fn a_waiting_approval_or_an_ended_run_nudges_only_when_unfocused_or_long() {
        let focused = Notify::default();
        let away = Notify {
            focused: false,
            ..Notify::default()
        };
        let done = EventKind::Done(DoneInfo::default());
        let short = Some(Duration::from_secs(2));
        let long = Some(Duration::from_secs(11));
        assert_eq!(focused.decide(&approval(), short), None);
        assert_eq!(
            away.decide(&approval(), short).as_deref(),
            Some("harness9: approve bash?")
        );
        assert_eq!(focused.decide(&done, short), None);
        assert!(focused.decide(&done, long).is_some());
        assert!(away.decide(&done, short).is_some());
        let failed = EventKind::Error(Failure::new(FailureKind::Model, "x"));
        assert!(away.decide(&failed, None).is_some());
        assert_eq!(away.decide(&EventKind::ActionDelta("x".into()), None), None);
        let off = Notify {
            bell: false,
            osc9: false,
            focused: false,
        };
        assert_eq!(off.decide(&approval(), None), None);
    }

    #[test]
    fn the_bytes_are_bel_and_osc9_and_either_can_be_off() {
        let both = Notify::default();
        assert_eq!(both.bytes("hi\x07\x1b]x"), "\x07\x1b]9;hi]x\x07");
        let no_bell = Notify {
            bell: false,
            ..Notify::default()
        };
        assert_eq!(no_bell.bytes("hi"), "\x1b]9;hi\x07");
        let no_osc = Notify {
            osc9: false,
            ..Notify::default()
        };
        assert_eq!(no_osc.bytes("hi"), "\x07");
    }
}
