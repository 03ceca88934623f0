//! The stages of the tool-call chain, in the order `engine` puts them: the observability span,
//! the bound on output no tool bounded itself, the user's `PreToolUse`/`PostToolUse` command
//! hooks, and last the permission decision, so it judges the arguments as the hooks left them.

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::{Map, Value, json};

use super::Hooks;
use super::chain::{ChainCall, Step, ToolHook};
use super::settings::HookEvent;
use crate::permission::rules::PermissionRules;
use crate::permission::{self, CallInput, Scope, Verdict};
use crate::schema::{ToolResult, fence_outside};

/// Opens the `tool_call` span the call runs in (interaction > turn > tool call).
pub struct ObserveStage;

#[async_trait]
impl ToolHook for ObserveStage {
    fn name(&self) -> &'static str {
        "observability"
    }

    async fn before(&self, call: &mut ChainCall) -> Step {
        call.span = tracing::info_span!("tool_call", name = %call.name(), id = %call.id);
        Step::Continue
    }
}

/// Bytes of output kept from a tool that does not bound its own (every built-in does).
pub const OUTPUT_BOUND: usize = 64 * 1024;

/// Cuts the middle out of an oversized result of a tool that does not bound its own output
/// (`Tool::bounds_own_output`), keeping its head and tail.
pub struct OutputBound;

#[async_trait]
impl ToolHook for OutputBound {
    fn name(&self) -> &'static str {
        "output bound"
    }

    async fn after(&self, call: &mut ChainCall, result: &mut ToolResult, executed: bool) {
        if !executed || call.tool.bounds_own_output() || result.output.len() <= OUTPUT_BOUND {
            return;
        }
        let mut kept = crate::tools::output::HeadTail::new(OUTPUT_BOUND);
        kept.push(result.output.as_bytes());
        result.output = kept.finish();
    }
}

/// The permission decision (`permission::decide`) as a stage.
pub struct PermissionStage {
    pub rules: Arc<PermissionRules>,
    /// Whether a tool of this session created a file (the checkpoints know; none without).
    pub created: Option<Arc<permission::CreatedInSession>>,
}

#[async_trait]
impl ToolHook for PermissionStage {
    fn name(&self) -> &'static str {
        "permission"
    }

    async fn before(&self, call: &mut ChainCall) -> Step {
        // The path judged is the path opened: one outside the working directory is pinned to
        // what it resolves to now.
        if let Some(pinned) =
            permission::pin_outside_path(call.name(), &call.arguments, &call.workdir)
        {
            call.arguments = pinned;
        }
        let mut input = CallInput::new(
            call.tool.as_ref(),
            &call.arguments,
            call.mode,
            &call.workdir,
        );
        input.hook_allowed = call.hook_allowed;
        let outputs = (!call.session_id.is_empty())
            .then(|| crate::tools::output::outputs_dir(self.rules.home(), &call.session_id));
        input.outputs = outputs.as_deref();
        input.created = self.created.as_deref();
        match permission::decide(&input, &call.granted, &self.rules) {
            Verdict::Run => Step::Continue,
            Verdict::Ask { reason, scope } => Step::Ask { reason, scope },
            Verdict::Deny { reason } => Step::Deny { reason },
        }
    }
}

/// The user's `PreToolUse` and `PostToolUse` command hooks.
pub struct CommandStage {
    pub hooks: Arc<Hooks>,
}

impl CommandStage {
    fn fields(call: &ChainCall) -> Map<String, Value> {
        let mut fields = Map::new();
        fields.insert("tool_name".into(), json!(call.name()));
        fields.insert("tool_input".into(), call.arguments.clone());
        fields.insert("tool_use_id".into(), json!(call.id));
        fields.insert("permission_mode".into(), json!(call.mode.as_str()));
        fields
    }
}

#[async_trait]
impl ToolHook for CommandStage {
    fn name(&self) -> &'static str {
        "PreToolUse hook"
    }

    async fn before(&self, call: &mut ChainCall) -> Step {
        let event = HookEvent::PreToolUse;
        if self.hooks.matching(event, Some(call.name())).is_empty() {
            return Step::Continue;
        }
        let said = self
            .hooks
            .run(
                event,
                Some(call.name()),
                &call.session_id,
                Self::fields(call),
                &call.cancel,
            )
            .await;
        call.notices.extend(said.notices);
        if let Some(reason) = said.block {
            return Step::Deny {
                reason: format!(
                    "A PreToolUse hook refused this call:\n{}",
                    fence_outside("a PreToolUse hook's reason", &reason)
                ),
            };
        }
        let reason = |why: String, default: &str| {
            if why.trim().is_empty() {
                default.to_owned()
            } else {
                why
            }
        };
        let allow = match said.permission {
            Some((super::Permission::Deny, why)) => {
                return Step::Deny {
                    reason: format!(
                        "A PreToolUse hook refused this call: {}",
                        reason(why, "no reason given")
                    ),
                };
            }
            Some((super::Permission::Ask, why)) => {
                return Step::Ask {
                    reason: format!("a PreToolUse hook asks: {}", reason(why, "no reason given")),
                    // Never remembered: the hook decides each call anew.
                    scope: Scope {
                        key: format!("hook-ask:{}", call.id),
                        description: "this call only: the hook asks about each call".into(),
                    },
                };
            }
            Some((super::Permission::Allow, why)) => {
                Some(reason(why, "a PreToolUse hook allowed it"))
            }
            None => None,
        };
        match (said.updated_input, allow) {
            (Some(arguments), allow) => Step::Rewrite {
                arguments,
                reason: allow
                    .clone()
                    .unwrap_or_else(|| "a PreToolUse hook's updatedInput".into()),
                allow: allow.is_some(),
            },
            (None, Some(reason)) => Step::Allow { reason },
            (None, None) => Step::Continue,
        }
    }

    async fn after(&self, call: &mut ChainCall, result: &mut ToolResult, executed: bool) {
        let event = HookEvent::PostToolUse;
        if !executed || self.hooks.matching(event, Some(call.name())).is_empty() {
            return;
        }
        let mut fields = Self::fields(call);
        fields.insert(
            "tool_response".into(),
            json!({"output": result.output, "is_error": result.is_error}),
        );
        let said = self
            .hooks
            .run(
                event,
                Some(call.name()),
                &call.session_id,
                fields,
                &call.cancel,
            )
            .await;
        call.notices.extend(said.notices);
        // The tool has run; what the hook says goes to the model beside its result.
        for (what, text) in [("says", said.block), ("adds", said.context)] {
            if let Some(text) = text {
                let fenced = fence_outside(&format!("a PostToolUse hook {what}"), &text);
                result.output.push_str(&format!("\n\n{fenced}"));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::planning::Mode;
    use crate::schema::ToolKind;
    use crate::tools::{Tool, ToolContext, ToolError};

    /// A tool that leaves its output unbounded (as an MCP server's may).
    struct Unbounded;

    #[async_trait]
    impl Tool for Unbounded {
        fn name(&self) -> &'static str {
            "unbounded"
        }
        fn description(&self) -> &'static str {
            "test"
        }
        fn input_schema(&self) -> Value {
            json!({"type": "object"})
        }
        fn kind(&self) -> ToolKind {
            ToolKind::ReadOnly
        }
        async fn execute(&self, _: Value, _: &ToolContext) -> Result<String, ToolError> {
            Ok(String::new())
        }
    }

    fn call(tool: Arc<dyn Tool>) -> ChainCall {
        ChainCall {
            tool,
            id: "c".into(),
            arguments: json!({}),
            mode: Mode::Default,
            workdir: "/".into(),
            session_id: String::new(),
            granted: Default::default(),
            hook_allowed: false,
            rewritten: false,
            span: tracing::Span::none(),
            notices: Vec::new(),
            cancel: Default::default(),
        }
    }

    #[tokio::test]
    async fn only_output_no_tool_bounded_is_cut() {
        let big = "x".repeat(OUTPUT_BOUND * 3);
        let mut result = ToolResult::ok("c", big.clone());
        OutputBound
            .after(&mut call(Arc::new(Unbounded)), &mut result, true)
            .await;
        assert!(result.output.len() < OUTPUT_BOUND + 200);
        assert!(result.output.contains("bytes of output cut"));
        // A built-in bounds its own output: left as it is.
        let mut result = ToolResult::ok("c", big.clone());
        OutputBound
            .after(
                &mut call(Arc::new(crate::tools::ReadFile)),
                &mut result,
                true,
            )
            .await;
        assert_eq!(result.output.len(), big.len());
    }
}
