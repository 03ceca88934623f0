//! The tool-call chain (design: the registry wrapped in hooks). Each stage's `before` sees the
//! call in order and may let it go on, allow it, ask the user, refuse it or rewrite its
//! arguments, with a reason; its `after` sees the result in reverse order, and only for stages
//! whose `before` let the call go on (a stage that refused it, and those after it, never saw
//! it). A refusal stops the chain at once and becomes an error result; an ask is remembered
//! while later stages still may refuse. Rewritten arguments are checked against the tool's
//! schema and plan mode again, and every later stage (the permission decision is the last)
//! judges the new ones.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::Arc;

use async_trait::async_trait;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::permission::Scope;
use crate::planning::Mode;
use crate::schema::ToolResult;
use crate::tools::Tool;

/// A call going through the chain.
pub struct ChainCall {
    pub tool: Arc<dyn Tool>,
    /// The model's id of the call.
    pub id: String,
    /// Parsed and checked; a stage's rewrite replaces them.
    pub arguments: Value,
    pub mode: Mode,
    /// Canonical.
    pub workdir: PathBuf,
    pub session_id: String,
    /// Scope keys the user answered "allow always" in this session.
    pub granted: HashSet<String>,
    /// A hook allowed the call: the ordinary approval of its kind is not asked (never a deny
    /// rule, a protected path, plan mode or the other asks that guard something).
    pub hook_allowed: bool,
    /// Whether a stage rewrote the arguments.
    pub rewritten: bool,
    /// The span the call runs in (the observability stage opens it).
    pub span: tracing::Span,
    /// For the user, shown as notices once the stage is done.
    pub notices: Vec<String>,
    pub cancel: CancellationToken,
}

impl ChainCall {
    pub fn name(&self) -> &str {
        self.tool.name()
    }
}

/// What a stage's `before` says.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// No objection.
    Continue,
    /// Let it run without the ordinary approval; later stages may still ask or refuse.
    Allow { reason: String },
    /// Ask the user before it runs (later stages may still refuse).
    Ask { reason: String, scope: Scope },
    /// Refuse it: the model gets `reason` as an error result.
    Deny { reason: String },
    /// Run it with these arguments instead (`allow` as `Step::Allow`).
    Rewrite {
        arguments: Value,
        reason: String,
        allow: bool,
    },
}

/// One stage of the chain.
#[async_trait]
pub trait ToolHook: Send + Sync {
    fn name(&self) -> &'static str;

    async fn before(&self, _call: &mut ChainCall) -> Step {
        Step::Continue
    }

    /// `executed` is false when the call never ran (refused, or the user said no): `result` is
    /// then the error the model gets.
    async fn after(&self, _call: &mut ChainCall, _result: &mut ToolResult, _executed: bool) {}
}

/// What the chain decided.
#[derive(Debug, Clone, PartialEq)]
pub enum Gate {
    Run,
    Ask { reason: String, scope: Scope },
    Deny { reason: String },
}

/// Proof of how far a call got: `after` runs exactly the stages whose `before` let it pass.
#[must_use = "the after-steps of the stages that saw the call must run"]
#[derive(Debug)]
pub struct Passed {
    ran: usize,
}

/// The stages, in the order their `before` runs.
#[derive(Clone, Default)]
pub struct ToolChain {
    stages: Vec<Arc<dyn ToolHook>>,
}

impl ToolChain {
    pub fn new(stages: Vec<Arc<dyn ToolHook>>) -> Self {
        ToolChain { stages }
    }

    pub fn stage_names(&self) -> Vec<&'static str> {
        self.stages.iter().map(|s| s.name()).collect()
    }

    /// Runs the `before` of each stage in order.
    pub async fn before(&self, call: &mut ChainCall) -> (Gate, Passed) {
        let mut asked: Option<(String, Scope)> = None;
        for (index, stage) in self.stages.iter().enumerate() {
            match stage.before(call).await {
                Step::Continue => {}
                Step::Allow { reason } => {
                    call.hook_allowed = true;
                    tracing::info!(
                        "[hooks] {} allowed `{}`: {reason}",
                        stage.name(),
                        call.name()
                    );
                }
                Step::Ask { reason, scope } => {
                    asked.get_or_insert((reason, scope));
                }
                Step::Deny { reason } => return (Gate::Deny { reason }, Passed { ran: index }),
                Step::Rewrite {
                    arguments,
                    reason,
                    allow,
                } => {
                    if let Err(problem) =
                        crate::tools::check_arguments(call.tool.as_ref(), &arguments, call.mode)
                    {
                        let reason = format!(
                            "{} changed the arguments of this call into ones that cannot run: \
                             {problem}",
                            stage.name()
                        );
                        return (Gate::Deny { reason }, Passed { ran: index });
                    }
                    call.arguments = arguments;
                    call.rewritten = true;
                    call.hook_allowed |= allow;
                    call.notices.push(format!(
                        "{} changed the arguments of `{}`: {reason}",
                        stage.name(),
                        call.name()
                    ));
                }
            }
        }
        let gate = match asked {
            Some((reason, scope)) => Gate::Ask { reason, scope },
            None => Gate::Run,
        };
        (
            gate,
            Passed {
                ran: self.stages.len(),
            },
        )
    }

    /// Runs the `after` of every stage that let the call pass, in reverse order.
    pub async fn after(
        &self,
        passed: Passed,
        call: &mut ChainCall,
        result: &mut ToolResult,
        executed: bool,
    ) {
        for stage in self.stages[..passed.ran].iter().rev() {
            stage.after(call, result, executed).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    /// Records what it saw into a shared log and answers with a fixed step.
    struct Probe {
        name: &'static str,
        step: Step,
        log: Arc<Mutex<Vec<String>>>,
    }

    #[async_trait]
    impl ToolHook for Probe {
        fn name(&self) -> &'static str {
            self.name
        }
        async fn before(&self, call: &mut ChainCall) -> Step {
            self.log
                .lock()
                .unwrap()
                .push(format!("before {} {}", self.name, call.arguments));
            self.step.clone()
        }
        async fn after(&self, _call: &mut ChainCall, result: &mut ToolResult, executed: bool) {
            self.log
                .lock()
                .unwrap()
                .push(format!("after {} executed={executed}", self.name));
            result.output.push_str(self.name);
        }
    }

    fn chain(steps: Vec<(&'static str, Step)>) -> (ToolChain, Arc<Mutex<Vec<String>>>) {
        let log = Arc::new(Mutex::new(Vec::new()));
        let stages = steps
            .into_iter()
            .map(|(name, step)| {
                Arc::new(Probe {
                    name,
                    step,
                    log: Arc::clone(&log),
                }) as Arc<dyn ToolHook>
            })
            .collect();
        (ToolChain::new(stages), log)
    }

    fn call() -> ChainCall {
        ChainCall {
            tool: Arc::new(crate::tools::ReadFile),
            id: "c1".into(),
            arguments: serde_json::json!({"path": "a"}),
            mode: Mode::Default,
            workdir: PathBuf::from("/"),
            session_id: String::new(),
            granted: HashSet::new(),
            hook_allowed: false,
            rewritten: false,
            span: tracing::Span::none(),
            notices: Vec::new(),
            cancel: CancellationToken::new(),
        }
    }

    fn deny() -> Step {
        Step::Deny {
            reason: "no".into(),
        }
    }

    #[tokio::test]
    async fn before_runs_in_order_and_after_in_reverse() {
        let (chain, log) = chain(vec![
            ("a", Step::Continue),
            ("b", Step::Continue),
            ("c", Step::Continue),
        ]);
        let mut call = call();
        let (gate, passed) = chain.before(&mut call).await;
        assert_eq!(gate, Gate::Run);
        let mut result = ToolResult::ok("c1", "");
        chain.after(passed, &mut call, &mut result, true).await;
        assert_eq!(
            *log.lock().unwrap(),
            [
                "before a {\"path\":\"a\"}",
                "before b {\"path\":\"a\"}",
                "before c {\"path\":\"a\"}",
                "after c executed=true",
                "after b executed=true",
                "after a executed=true"
            ]
        );
        assert_eq!(result.output, "cba");
    }

    #[tokio::test]
    async fn a_deny_stops_the_chain_and_only_stages_that_ran_see_the_result() {
        let (chain, log) = chain(vec![
            ("a", Step::Continue),
            ("b", deny()),
            ("c", Step::Continue),
        ]);
        let mut call = call();
        let (gate, passed) = chain.before(&mut call).await;
        assert_eq!(gate, deny_gate());
        let mut result = ToolResult::error("c1", "no");
        chain.after(passed, &mut call, &mut result, false).await;
        assert_eq!(
            *log.lock().unwrap(),
            [
                "before a {\"path\":\"a\"}",
                "before b {\"path\":\"a\"}",
                "after a executed=false"
            ]
        );
        assert!(result.is_error);
    }

    fn deny_gate() -> Gate {
        Gate::Deny {
            reason: "no".into(),
        }
    }

    #[tokio::test]
    async fn an_ask_is_kept_while_a_later_stage_may_still_deny() {
        let ask = Step::Ask {
            reason: "sure?".into(),
            scope: Scope {
                key: "k".into(),
                description: "d".into(),
            },
        };
        let (asking, _) = chain(vec![("a", ask.clone()), ("b", Step::Continue)]);
        assert!(matches!(
            asking.before(&mut call()).await.0,
            Gate::Ask { .. }
        ));
        let (denying, _) = chain(vec![("a", ask), ("b", deny())]);
        assert_eq!(denying.before(&mut call()).await.0, deny_gate());
    }

    #[tokio::test]
    async fn a_rewrite_is_seen_by_later_stages_and_checked_against_the_schema() {
        let rewrite = |arguments| Step::Rewrite {
            arguments,
            reason: "why".into(),
            allow: true,
        };
        let (chain_ok, log) = chain(vec![
            ("a", rewrite(serde_json::json!({"path": "b"}))),
            ("b", Step::Continue),
        ]);
        let mut c = call();
        assert_eq!(chain_ok.before(&mut c).await.0, Gate::Run);
        assert!(c.hook_allowed && c.rewritten);
        assert_eq!(log.lock().unwrap()[1], "before b {\"path\":\"b\"}");
        let (chain_bad, _) = chain(vec![("a", rewrite(serde_json::json!({"nope": 1})))]);
        let mut c = call();
        let (gate, _) = chain_bad.before(&mut c).await;
        assert!(matches!(gate, Gate::Deny { reason } if reason.contains("schema")));
        assert_eq!(c.arguments, serde_json::json!({"path": "a"}));
    }
}
