//! Whether this turn's request may offer the provider's own web search in place of our
//! `web_search` tool. The provider's search runs inside its answer, where nobody can be asked,
//! so it is offered only when a `web_search` call would run without asking here: an allow rule
//! `web_search`, the session's "allow always" of it, or `yolo`. A deny or ask rule, plan mode's
//! refusals, and a `PreToolUse` hook that would judge the call all keep our own tool (which
//! asks, or is refused, as usual). It leaks no more than our tool would: the queries leave
//! for a search engine either way, only from the provider's servers instead of this machine.
//! The provider still declines the mark when it cannot use it (`provider::server_search`).

use serde_json::json;

use super::AgentEngine;
use crate::hooks::HookEvent;
use crate::permission::{self, CallInput, Verdict};
use crate::planning::Mode;
use crate::schema::ToolDefinition;

/// Our tool that a provider may run itself.
const WEB_SEARCH: &str = "web_search";

/// Which web search a session's `web_search` can be, as `/status` says it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WebSearch {
    /// Our tool through the search backend the user configured (a provider that searches
    /// itself may still run the call in its place where it would run unasked).
    Backend,
    /// No backend: the provider's own server-side search, offered where a call would run
    /// unasked.
    Provider,
    /// Neither: `web_search` is not offered to the model.
    Unavailable,
}

impl WebSearch {
    /// The line a status shows.
    pub fn label(self) -> &'static str {
        match self {
            WebSearch::Backend => "web search: the configured backend",
            WebSearch::Provider => {
                "web search: the provider's own, where web_search may run without asking"
            }
            WebSearch::Unavailable => {
                "web search: none (no backend is configured, so web_search is not offered)"
            }
        }
    }
}

impl AgentEngine {
    /// Which web search applies here: decided as `offer_provider_search` decides what a
    /// request offers (our tool when it works here, else the provider's own, else none).
    pub fn web_search(&self) -> WebSearch {
        match self.registry.get(WEB_SEARCH) {
            Some(tool) if tool.works_here() => WebSearch::Backend,
            Some(_) if self.provider().searches_web() => WebSearch::Provider,
            _ => WebSearch::Unavailable,
        }
    }

    /// Marks `web_search` in `tools` as one the provider may run, when a call of it would run
    /// unasked in `mode`; then leaves out a tool that cannot work here unless the provider
    /// runs it (our `web_search` without a backend): the model is never offered a tool that
    /// can only fail.
    pub(super) fn offer_provider_search(&self, tools: &mut Vec<ToolDefinition>, mode: Mode) {
        self.mark_provider_search(tools, mode);
        let provider_searches = self.provider().searches_web();
        tools.retain(|definition| {
            (definition.provider_may_run && provider_searches)
                || self
                    .registry
                    .get(&definition.name)
                    .is_none_or(|tool| tool.works_here())
        });
    }

    fn mark_provider_search(&self, tools: &mut [ToolDefinition], mode: Mode) {
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
        // Any query: the decision about `web_search` does not depend on its words.
        let arguments = json!({"query": ""});
        let call = CallInput::new(tool.as_ref(), &arguments, mode, &self.workdir);
        // A poisoned lock grants nothing, as an empty set would.
        definition.provider_may_run = self
            .allowed
            .lock()
            .is_ok_and(|granted| permission::decide(&call, &granted, &self.rules) == Verdict::Run);
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;
    use std::sync::Arc;

    use tokio_util::sync::CancellationToken;

    use super::super::tests::{call, calls_reply, drain, text_reply, until};
    use super::super::{AgentEngine, ApprovalDecision, EventKind};
    use crate::hooks::{CommandHook, HookEvent, Hooks, Matcher, Origin};
    use crate::permission::rules::PermissionRules;
    use crate::planning::Mode;
    use crate::provider::{ScriptStep, ScriptedProvider};
    use crate::tools::Registry;
    use crate::web::WebSettings;

    /// An engine with our `web_search` (no backend), the user's settings `home_settings`, in
    /// `mode`, answering `steps`.
    fn engine(
        work: &Path,
        home_settings: &str,
        mode: Mode,
        steps: Vec<ScriptStep>,
    ) -> (Arc<AgentEngine>, Arc<ScriptedProvider>) {
        engine_with_hooks(work, home_settings, mode, steps, Vec::new())
    }

    fn engine_with_hooks(
        work: &Path,
        home_settings: &str,
        mode: Mode,
        steps: Vec<ScriptStep>,
        hooks: Vec<CommandHook>,
    ) -> (Arc<AgentEngine>, Arc<ScriptedProvider>) {
        let home = work.join("home");
        std::fs::create_dir_all(&home).unwrap();
        std::fs::write(home.join("settings.json"), home_settings).unwrap();
        let rules = Arc::new(PermissionRules::new(work, &home, true));
        let provider = Arc::new(ScriptedProvider::new(steps).searching_the_web());
        let mut registry = Registry::new();
        // A backend that is never reached: these tests judge what the request offers.
        let settings = WebSettings {
            search: Some(crate::web::SearchBackend::Searx(
                "http://127.0.0.1:9/search".into(),
            )),
            ..WebSettings::default()
        };
        crate::web::register(&mut registry, &settings);
        let engine = AgentEngine::builder(provider.clone(), Arc::new(registry), work)
            .permission_rules(rules)
            .mode(mode)
            .hooks(Arc::new(Hooks::new(hooks, work)))
            .build();
        (Arc::new(engine), provider)
    }

    /// Whether the first request let the provider run `web_search`.
    async fn offered(home_settings: &str, mode: Mode) -> bool {
        let dir = tempfile::tempdir().unwrap();
        let work = dir.path().canonicalize().unwrap();
        let (engine, provider) = engine(&work, home_settings, mode, vec![text_reply("ok")]);
        drain(engine.run_stream("search".into(), CancellationToken::new())).await;
        let calls = provider.calls();
        assert!(calls[0].tools.contains(&"web_search".to_owned()));
        calls[0].provider_may_run == ["web_search"]
    }

    #[tokio::test]
    async fn the_providers_search_is_offered_only_where_ours_would_run_unasked() {
        let none = "{}";
        let allow = r#"{"permissions": {"allow": ["web_search"]}}"#;
        let allow_and_ask = r#"{"permissions": {"allow": ["web_search"], "ask": ["web_search"]}}"#;
        let allow_and_deny =
            r#"{"permissions": {"allow": ["web_search"], "deny": ["web_search"]}}"#;
        // Asking is the default: the queries would leave without the user's word.
        assert!(!offered(none, Mode::Default).await);
        assert!(!offered(none, Mode::AutoEdit).await);
        assert!(!offered(none, Mode::Plan).await);
        assert!(offered(allow, Mode::Default).await);
        assert!(offered(allow, Mode::Plan).await, "plan mode allows reading");
        assert!(offered(none, Mode::Yolo).await);
        assert!(!offered(allow_and_ask, Mode::Default).await);
        assert!(!offered(allow_and_deny, Mode::Default).await);
        assert!(
            !offered(allow_and_deny, Mode::Yolo).await,
            "deny holds in yolo"
        );
    }

    #[tokio::test]
    async fn allowing_our_search_for_the_session_offers_the_providers_from_the_next_call() {
        let dir = tempfile::tempdir().unwrap();
        let work = dir.path().canonicalize().unwrap();
        let steps = vec![
            calls_reply("", vec![call("1", "web_search", r#"{"query":"rust"}"#)]),
            text_reply("ok"),
        ];
        let (engine, provider) = engine(&work, "{}", Mode::Default, steps);
        let mut rx = engine.run_stream("search".into(), CancellationToken::new());
        let mut seen = Vec::new();
        let EventKind::ApprovalRequired(request) =
            until(&mut rx, "approval_required", &mut seen).await.kind
        else {
            unreachable!()
        };
        request.respond(ApprovalDecision::AllowAlways);
        drain(rx).await;
        let calls = provider.calls();
        assert!(calls[0].provider_may_run.is_empty(), "asked first");
        assert_eq!(calls[1].provider_may_run, ["web_search"]);
    }

    #[tokio::test]
    async fn a_pre_tool_use_hook_for_web_search_keeps_our_tool_so_it_can_judge_the_call() {
        let dir = tempfile::tempdir().unwrap();
        let work = dir.path().canonicalize().unwrap();
        let hook = |matcher| CommandHook {
            event: HookEvent::PreToolUse,
            matcher,
            command: "true".into(),
            timeout: std::time::Duration::from_secs(5),
            origin: Origin::User,
            file: "settings.json".into(),
        };
        let offered_with = |hooks| {
            let (engine, provider) = engine_with_hooks(
                &work,
                r#"{"permissions": {"allow": ["web_search"]}}"#,
                Mode::Default,
                vec![text_reply("ok")],
                hooks,
            );
            async move {
                drain(engine.run_stream("search".into(), CancellationToken::new())).await;
                provider.calls()[0].provider_may_run == ["web_search"]
            }
        };
        assert!(!offered_with(vec![hook(Matcher::All)]).await);
        assert!(!offered_with(vec![hook(Matcher::Names(vec!["web_search".into()]))]).await);
        assert!(offered_with(vec![hook(Matcher::Names(vec!["bash".into()]))]).await);
    }

    /// `/status` says which search applies, as the requests offer it.
    #[tokio::test]
    async fn the_web_search_that_applies_is_the_backend_else_the_providers_else_none() {
        use super::WebSearch;
        let source = |backend: bool, searches: bool| {
            let mut provider = ScriptedProvider::new(Vec::new());
            if searches {
                provider = provider.searching_the_web();
            }
            let settings = WebSettings {
                search: backend
                    .then(|| crate::web::SearchBackend::Searx("http://127.0.0.1:9/search".into())),
                ..WebSettings::default()
            };
            let mut registry = Registry::new();
            crate::web::register(&mut registry, &settings);
            AgentEngine::builder(Arc::new(provider), Arc::new(registry), std::env::temp_dir())
                .build()
                .web_search()
        };
        assert_eq!(source(true, false), WebSearch::Backend);
        assert_eq!(source(true, true), WebSearch::Backend);
        assert_eq!(source(false, true), WebSearch::Provider);
        assert_eq!(source(false, false), WebSearch::Unavailable);
        let bare = AgentEngine::builder(
            Arc::new(ScriptedProvider::new(Vec::new()).searching_the_web()),
            Arc::new(Registry::new()),
            std::env::temp_dir(),
        )
        .build();
        assert_eq!(bare.web_search(), WebSearch::Unavailable, "no tool, none");
    }

    /// Without a search backend our `web_search` can only fail: it is offered only when the
    /// provider runs its own search in its place, and never where that search is not offered.
    #[tokio::test]
    async fn without_a_backend_web_search_is_offered_only_as_the_providers_own() {
        let first_request = |searches: bool, settings: &'static str, mode: Mode| async move {
            let dir = tempfile::tempdir().unwrap();
            let work = dir.path().canonicalize().unwrap();
            let home = work.join("home");
            std::fs::create_dir_all(&home).unwrap();
            std::fs::write(home.join("settings.json"), settings).unwrap();
            let rules = Arc::new(PermissionRules::new(&work, &home, true));
            let mut provider = ScriptedProvider::new(vec![text_reply("ok")]);
            if searches {
                provider = provider.searching_the_web();
            }
            let provider = Arc::new(provider);
            let mut registry = Registry::new();
            crate::web::register(&mut registry, &WebSettings::default());
            let engine = Arc::new(
                AgentEngine::builder(provider.clone(), Arc::new(registry), &work)
                    .permission_rules(rules)
                    .mode(mode)
                    .build(),
            );
            drain(engine.run_stream("search".into(), CancellationToken::new())).await;
            let call = provider.calls()[0].clone();
            (call.tools, call.provider_may_run)
        };
        let allow = r#"{"permissions": {"allow": ["web_search"]}}"#;
        let (tools, _) = first_request(false, allow, Mode::Default).await;
        assert!(
            tools.contains(&"web_fetch".to_owned()) && !tools.contains(&"web_search".to_owned()),
            "{tools:?}"
        );
        let (tools, _) = first_request(true, "{}", Mode::Default).await;
        assert!(
            !tools.contains(&"web_search".to_owned()),
            "it would ask, so the provider's search is not offered: {tools:?}"
        );
        let (tools, marked) = first_request(true, allow, Mode::Default).await;
        assert!(tools.contains(&"web_search".to_owned()), "{tools:?}");
        assert_eq!(marked, ["web_search"]);
    }
}
