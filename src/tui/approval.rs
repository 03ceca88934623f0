//! The approval as a layer: the tool calls waiting for the user's answer, first shown first,
//! opened by the first `ApprovalRequired` and closed when the last is answered (or the run
//! ends). It owns the queue, the reason typed for a denial and how far a call too long for the
//! screen is scrolled; each answer goes back to the engine through the request's responder.
//! Its choices are the ones the request offers: no session-wide grant where the session would
//! not remember it, `r` only with a rule to write.

use std::borrow::Cow;
use std::collections::VecDeque;

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui_textarea::TextArea;

use super::app::new_input;
use super::compositor::{Layer, Outcome, Shared};
use super::keymap::{Action, Focus};
use super::layer_scroll::LayerScroll;
use crate::engine::{ApprovalDecision, ApprovalRequest};

pub(super) struct Approval {
    /// The calls waiting, the one shown first.
    requests: VecDeque<ApprovalRequest>,
    /// The reason typed for denying the call shown, while it is typed.
    deny_reason: Option<TextArea<'static>>,
    /// How far the call shown is scrolled when it does not fit (settled by `prepare`).
    scroll: LayerScroll,
}

impl Approval {
    pub fn new(request: ApprovalRequest) -> Self {
        Approval {
            requests: VecDeque::from([request]),
            deny_reason: None,
            scroll: LayerScroll::default(),
        }
    }

    /// Another call waits behind the ones already asked.
    pub fn push(&mut self, request: ApprovalRequest) {
        self.requests.push_back(request);
    }

    /// How many calls wait.
    pub fn waiting(&self) -> usize {
        self.requests.len()
    }

    /// The call shown.
    pub(super) fn shown(&self) -> Option<&ApprovalRequest> {
        self.requests.front()
    }

    /// The reason being typed for a denial, if it is.
    pub(super) fn deny_reason(&self) -> Option<&TextArea<'static>> {
        self.deny_reason.as_ref()
    }

    /// The first line of the call shown (the furthest is settled at each frame).
    pub(super) fn scroll_top(&self) -> u16 {
        self.scroll.top()
    }

    /// The run ended: none of the calls can run any more.
    pub fn deny_all(&mut self) {
        for request in self.requests.drain(..) {
            request.respond(ApprovalDecision::Deny { reason: None });
        }
        self.deny_reason = None;
    }

    /// Answers the call shown; the layer closes after the last one.
    fn answer(&mut self, decision: ApprovalDecision) -> Outcome {
        self.scroll = LayerScroll::default();
        self.deny_reason = None;
        let mut flash = None;
        if let Some(request) = self.requests.pop_front() {
            if let ApprovalDecision::Deny {
                reason: Some(reason),
            } = &decision
            {
                flash = Some(format!("denied: {reason}"));
            }
            request.respond(decision);
        }
        let outcome = if self.requests.is_empty() {
            Outcome::close(Vec::new())
        } else {
            Outcome::done()
        };
        match flash {
            Some(flash) => outcome.flash(flash),
            None => outcome,
        }
    }

    /// Whether "allow for the rest of this session" is one of the answers.
    fn offers_always(&self) -> bool {
        self.shown().is_some_and(|request| request.always_offered)
    }

    /// Whether "always allow calls like this" (a rule written) is one of the answers.
    fn offers_rule(&self) -> bool {
        self.shown()
            .is_some_and(|request| request.suggested_rule.is_some())
    }
}

impl Layer for Approval {
    fn focus(&self) -> Focus {
        Focus::Approval
    }

    fn mode(&self) -> Focus {
        if self.deny_reason.is_some() {
            Focus::DenyReason
        } else {
            Focus::Approval
        }
    }

    fn update(&mut self, action: Action, shared: &Shared) -> Outcome {
        if self.scroll.update(action, shared.viewport) {
            return Outcome::done();
        }
        match action {
            Action::ApproveOnce => self.answer(ApprovalDecision::AllowOnce),
            Action::ApproveAlways if self.offers_always() => {
                self.answer(ApprovalDecision::AllowAlways)
            }
            Action::ApproveAlways => {
                let scope = self.shown().map(|r| r.always_scope.clone());
                Outcome::done().flash(format!(
                    "no allow for the session here: {}",
                    scope.unwrap_or_default()
                ))
            }
            Action::ApproveRule if self.offers_rule() => self.answer(ApprovalDecision::AllowRule),
            Action::Deny => self.answer(ApprovalDecision::Deny { reason: None }),
            Action::DenyWithReason => {
                let mut reason = new_input();
                reason.set_placeholder_text("Tell the model what to do instead, then Enter");
                self.deny_reason = Some(reason);
                Outcome::done()
            }
            Action::SendDenyReason => {
                let text = self
                    .deny_reason
                    .take()
                    .map(|r| r.lines().join("\n"))
                    .unwrap_or_default();
                let reason = (!text.trim().is_empty()).then_some(text);
                self.answer(ApprovalDecision::Deny { reason })
            }
            // Esc while the reason is typed: back to the choices.
            Action::Close => {
                self.deny_reason = None;
                Outcome::done()
            }
            Action::Edit(key) => {
                if let Some(reason) = &mut self.deny_reason {
                    super::editing::edit(reason, key);
                }
                Outcome::done()
            }
            // Ctrl+C is the app's: it interrupts the run the call belongs to.
            Action::ClearOrQuit => Outcome::pass(),
            _ => Outcome::done(),
        }
    }

    fn prepare(&mut self, area: Rect) {
        if let Some(laid) = super::approval_view::lay_out(self, area) {
            self.scroll.found_end(laid.most);
            self.scroll.drawn();
        }
    }

    fn draw(&self, _: &Shared, frame: &mut Frame, area: Rect) {
        super::approval_view::draw(self, frame, area);
    }

    fn hints(&self) -> Cow<'static, str> {
        if self.deny_reason.is_some() {
            return " Enter sends the reason · Esc goes back ".into();
        }
        let mut keys = vec!["y"];
        if self.offers_always() {
            keys.push("a");
        }
        if self.offers_rule() {
            keys.push("r");
        }
        keys.extend(["n", "d"]);
        let scroll = if self.scroll.most() > 0 {
            " · ↑↓ PgUp PgDn scroll the call"
        } else {
            ""
        };
        format!(" answer the approval above: {}{scroll} ", keys.join(" · ")).into()
    }

    fn paste(&mut self, text: &str) -> bool {
        match &mut self.deny_reason {
            Some(reason) => {
                reason.insert_str(text);
                true
            }
            None => false,
        }
    }

    fn dialog(&self) -> Option<String> {
        self.shown()
            .map(|request| format!("approval:{}", request.id))
    }
}
