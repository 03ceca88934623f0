//! Whether this turn's request may offer the provider's own web search in place of our
//! `web_search` tool. The provider's search runs inside its answer, where nobody can be asked,
//! so it is offered only when a `web_search` call would run without asking here: an allow rule
//! `web_search`, the session's "allow always" of it, or `yolo`. A deny or ask rule, plan mode's
//! refusals, and a `PreToolUse` hook that would judge the call all keep our own tool (which
//! asks, or is refused, as usual). It leaks no more than our tool would: the queries leave
//! for a search engine either way, only from the provider's servers instead of this machine.

use serde_json::json;

use super::AgentEngine;
use crate::hooks::HookEvent;
use crate::permission::{self, CallInput, Verdict};
use crate::planning::Mode;
use crate::schema::ToolDefinition;

/// Our tool that a provider may run itself.
const WEB_SEARCH: &str = "web_search";

impl AgentEngine {
    /// Marks `web_search` in `tools` as one the provider may run, when a call of it would run
    /// unasked in `mode`.
    pub(super) fn offer_provider_search(&self, tools: &mut [ToolDefinition], mode: Mode) {
        let Some(definition) = tools.iter_mut().find(|tool| tool.name == WEB_SEARCH) else {
            return;
        };
        let Some(tool) = self.registry.get(WEB_SEARCH) else {
            return;
        };
        if self
            .hooks
            .running_label(HookEvent::PreToolUse, Some(WEB_SEARCH))
            .is_some()
        {
            return;
        }
        let granted = self
            .allowed
            .lock()
            .map(|set| set.clone())
            .unwrap_or_default();
        // Any query: the decision about `web_search` does not depend on its words.
        let arguments = json!({"query": ""});
        let call = CallInput::new(tool.as_ref(), &arguments, mode, &self.workdir);
        definition.provider_may_run =
            permission::decide(&call, &granted, &self.rules) == Verdict::Run;
    }
}
