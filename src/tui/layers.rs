//! The screen as one stack of layers, bottom to top (helix's compositor is the model): the
//! conversation, then whatever is drawn over it. The same stack decides what is drawn last and
//! which layer gets the keys, so a dialog drawn over the picker also takes the keys, never the
//! query hidden under it. Each layer draws itself and lists its hints for the input rule; its
//! keys are in `keymap::action`.

use ratatui::Frame;
use ratatui::layout::Rect;

use super::app::App;
use super::keymap::Layer;

impl App {
    /// The layers on screen, bottom to top; the last one has the focus.
    pub fn layers(&self) -> Vec<Layer> {
        let mut stack = vec![Layer::Main];
        if self.picker.is_some() {
            stack.push(Layer::Picker);
        }
        if self.plan_ready() && self.approvals.is_empty() && !self.running {
            stack.push(Layer::PlanReview);
        }
        if self.mcp_panel.is_some() {
            stack.push(Layer::McpPanel);
        }
        if self.memory_panel.is_some() {
            stack.push(Layer::MemoryPanel);
        }
        if self.child_view.is_some() {
            stack.push(Layer::TaskTranscript);
        }
        if self.rewind.is_some() {
            stack.push(Layer::Rewind);
        }
        if self.restore_question.is_some() {
            stack.push(Layer::RestoreQuestion);
        }
        if !self.approvals.is_empty() {
            stack.push(Layer::Approval);
            if self.deny_reason.is_some() {
                stack.push(Layer::DenyReason);
            }
        }
        if self.help {
            stack.push(Layer::Help);
        }
        if self.extension.is_some() {
            stack.push(Layer::Extension);
        }
        if self.trust.is_some() {
            stack.push(Layer::Trust);
        }
        stack
    }

    /// The layer with the focus: the top of the stack.
    pub fn layer(&self) -> Layer {
        self.layers().last().copied().unwrap_or(Layer::Main)
    }

    /// The hints of the focused layer, shown in the rule above the input.
    pub fn hints(&self) -> &'static str {
        match self.layer() {
            Layer::Main if self.busy() => {
                " Enter queues · Esc or Ctrl+C interrupt · Shift+Enter newline · ? keys "
            }
            Layer::Main => " Enter send · Shift+Enter newline · / commands · ? keys ",
            Layer::Picker => " type to search · ↑↓ choose · Enter resumes · Esc closes ",
            Layer::PlanReview => " answer the plan review above ",
            Layer::Approval => " answer the approval above: y · a · n · d ",
            Layer::DenyReason => " Enter sends the reason · Esc goes back ",
            Layer::Help => " Esc closes the help · ↑↓ scroll ",
            Layer::Trust => " t trusts this folder · n or Esc does not ",
            Layer::Extension => " a approves · n or Esc leaves it off for now ",
            Layer::McpPanel => " ↑↓ choose · r reconnects · d disables · Esc closes ",
            Layer::MemoryPanel => super::memory_panel::hints(self),
            Layer::TaskTranscript => {
                " ↑↓ scroll · Tab next task · r reads again · Ctrl+O folds · Esc closes "
            }
            Layer::Rewind => " ↑↓ choose · Enter files and conversation · c · f · Esc closes ",
            Layer::RestoreQuestion => " o overwrites · k keeps yours · n or Esc restores nothing ",
        }
    }
}

/// Draws the layers over the conversation (`Main` is drawn by `view::draw` first), bottom to
/// top, in `body`.
pub(super) fn draw_over(app: &mut App, frame: &mut Frame, body: Rect) {
    for layer in app.layers() {
        match layer {
            Layer::Main => {
                if app.layer() == Layer::Main {
                    super::view::draw_popup(app, frame, body);
                }
            }
            Layer::Picker => {
                if let Some(picker) = &app.picker {
                    super::picker::draw(picker, &app.session.session_id, frame, body);
                }
            }
            Layer::PlanReview => super::plan_review::draw(app, frame, body),
            Layer::Approval => {
                if let Some(request) = app.approvals.front().cloned() {
                    let most = super::overlays::draw_approval(app, &request, frame, body);
                    app.overlay_scroll = app.overlay_scroll.min(most);
                }
            }
            // Drawn inside the approval it answers.
            Layer::DenyReason => {}
            Layer::Help => {
                let most = super::overlays::draw_help(app, frame, body);
                app.overlay_scroll = app.overlay_scroll.min(most);
            }
            Layer::Trust => {
                if let Some(workdir) = &app.trust {
                    super::overlays::draw_trust(workdir, frame, body);
                }
            }
            Layer::Extension => {
                if let Some(extension) = &app.extension {
                    super::extension_prompt::draw(extension, frame, body);
                }
            }
            Layer::Rewind => {
                if let Some(list) = &app.rewind {
                    super::rewind::draw_list(list, frame, body);
                }
            }
            Layer::RestoreQuestion => {
                if let Some(question) = &app.restore_question {
                    super::rewind::draw_question(question, frame, body);
                }
            }
            Layer::McpPanel => {
                if let Some(selected) = app.mcp_panel {
                    super::mcp_panel::draw(app, selected, frame, body);
                }
            }
            Layer::MemoryPanel => {
                if let Some(panel) = &app.memory_panel {
                    super::memory_panel::draw(panel, frame, body);
                }
            }
            Layer::TaskTranscript => {
                let most = super::subagents::draw(app, frame, body);
                app.overlay_scroll = app.overlay_scroll.min(most);
            }
        }
    }
}
