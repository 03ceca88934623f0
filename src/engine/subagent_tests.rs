//! Sub-agents through the real loop: a parent whose model calls `task`, children built by the
//! launcher, and a provider that answers the parent and each child by what it is sent.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::subagent::{SubagentBase, SubagentLauncher};
use super::tests::{call, drain, fake_bash, weather};
use super::*;
use crate::agents::{AgentCatalog, AgentDefinition, AgentModel, AgentSource, AgentTools};
use crate::provider::{ChunkReceiver, Completion};
use crate::schema::{Message, RetryNotice, StreamChunk, ToolCall};
use crate::tools::{Registry, Tool};

/// What the provider is asked: the messages, the tools offered, and the call's cancellation.
pub(crate) struct Request {
    pub messages: Vec<Message>,
    pub tools: Vec<String>,
    pub cancel: CancellationToken,
}

type Answer = Pin<Box<dyn Future<Output = Result<Message, ProviderError>> + Send>>;

/// A provider whose every answer is a closure of the request.
pub(crate) struct FnProvider {
    answer: Box<dyn Fn(Request) -> Answer + Send + Sync>,
}

impl FnProvider {
    pub(crate) fn new<F, Fut>(answer: F) -> Arc<Self>
    where
        F: Fn(Request) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Message, ProviderError>> + Send + 'static,
    {
        Arc::new(FnProvider {
            answer: Box::new(move |request| Box::pin(answer(request))),
        })
    }
}

#[async_trait]
impl LlmProvider for FnProvider {
    fn name(&self) -> &str {
        "scripted"
    }
    fn model(&self) -> &str {
        "script"
    }
    async fn generate(
        &self,
        messages: &[Message],
        tools: &[crate::schema::ToolDefinition],
        cancel: &CancellationToken,
        _on_retry: &(dyn Fn(RetryNotice) + Send + Sync),
    ) -> Result<Completion, ProviderError> {
        let message = (self.answer)(Request {
            messages: messages.to_vec(),
            tools: tools.iter().map(|t| t.name.clone()).collect(),
            cancel: cancel.clone(),
        })
        .await?;
        Ok(Completion {
            message,
            usage: Some(usage()),
            stop: None,
        })
    }
    fn generate_stream(
        &self,
        messages: &[Message],
        tools: &[crate::schema::ToolDefinition],
        cancel: CancellationToken,
    ) -> ChunkReceiver {
        let answer = (self.answer)(Request {
            messages: messages.to_vec(),
            tools: tools.iter().map(|t| t.name.clone()).collect(),
            cancel,
        });
        let (tx, rx) = mpsc::channel(16);
        tokio::spawn(async move {
            let chunk = match answer.await {
                Ok(message) => {
                    if !message.content.is_empty() {
                        let _ = tx
                            .send(StreamChunk::TextDelta(message.content.clone()))
                            .await;
                    }
                    StreamChunk::Done {
                        message,
                        usage: Some(usage()),
                    }
                }
                Err(error) => StreamChunk::Error(error),
            };
            let _ = tx.send(chunk).await;
        });
        rx
    }
}

fn usage() -> crate::schema::Usage {
    crate::schema::Usage {
        input_tokens: 100,
        output_tokens: 10,
        ..Default::default()
    }
}

/// The agent a request is for: `None` for the parent.
pub(crate) fn agent_of(request: &Request) -> Option<String> {
    let system = &request.messages.first()?.content;
    let start = system.find("# Your role: the `")? + "# Your role: the `".len();
    let end = system[start..].find('`')?;
    Some(system[start..start + end].to_owned())
}

/// The user's prompt of a request (its first user message).
pub(crate) fn prompt_of(request: &Request) -> String {
    request
        .messages
        .iter()
        .find(|m| m.role == crate::schema::Role::User)
        .map(|m| m.content.clone())
        .unwrap_or_default()
}

pub(crate) fn has_results(request: &Request) -> bool {
    request.messages.iter().any(Message::is_tool_result)
}

pub(crate) fn calls(text: &str, calls: Vec<ToolCall>) -> Message {
    let mut message = Message::assistant(text);
    message.tool_calls = calls;
    message
}

pub(crate) fn task_call(id: &str, agent: &str, prompt: &str) -> ToolCall {
    call(
        id,
        "task",
        &serde_json::json!({"agent": agent, "description": format!("job {id}"), "prompt": prompt})
            .to_string(),
    )
}

/// A `bash` that only says what it would run (`ran: COMMAND`), for front ends' tests that need
/// a tool which asks.
pub(crate) fn echo_bash() -> Arc<dyn Tool> {
    fake_bash()
}

/// A parent engine with `tools` and `task` over them; `extra` adds file agents.
pub(crate) fn parent_engine(
    provider: &Arc<FnProvider>,
    tools: Vec<Arc<dyn Tool>>,
    extra: Vec<AgentDefinition>,
    store: Option<crate::memory::SessionStore>,
) -> AgentEngineBuilder {
    let mut registry = Registry::new();
    for tool in tools {
        registry.register(tool).unwrap();
    }
    let mut agents = AgentCatalog::builtin();
    for agent in extra {
        agents.insert(agent);
    }
    let dyn_provider: Arc<dyn LlmProvider> = provider.clone();
    let providers_for: Arc<dyn LlmProvider> = Arc::clone(&dyn_provider);
    let base = SubagentBase {
        tools: registry.clone(),
        providers: Arc::new(move |_model: &str| Ok(Arc::clone(&providers_for))),
        small_model: None,
        workdir: std::env::temp_dir(),
        max_turns: 5,
        skills: Default::default(),
        tool_timeout: Some(Duration::from_secs(20)),
        max_concurrent_tools: 0,
        context_window: 128_000,
        hooks: Default::default(),
        rules: Arc::new(crate::permission::rules::PermissionRules::none()),
        store,
        observer: Arc::new(crate::observe::NoopObserver),
        checkpoints: None,
        language_servers: None,
    };
    SubagentLauncher::register(&mut registry, Arc::new(agents), base);
    AgentEngine::builder(dyn_provider, Arc::new(registry), std::env::temp_dir())
}

pub(crate) fn file_agent(name: &str, tools: &[&str]) -> AgentDefinition {
    AgentDefinition {
        name: name.into(),
        description: "a file agent".into(),
        tools: AgentTools::Named(tools.iter().map(|t| t.to_string()).collect()),
        disallowed: Vec::new(),
        model: AgentModel::Inherit,
        max_turns: None,
        skills: Vec::new(),
        instructions: "Do the job.".into(),
        source: AgentSource::Project("/repo/.harness9/agents/x.md".into()),
        ignored_keys: Vec::new(),
    }
}

/// What a child's request looked like.
#[derive(Debug, Clone)]
struct Seen {
    agent: String,
    prompt: String,
    user_messages: Vec<String>,
    tools: Vec<String>,
    started: Instant,
    answered: Instant,
}

/// Issue 17's scripted parent: three `explore` tasks in one turn run at the same time, each sees
/// only its own prompt and the read-only tools, their results come back in call order, the
/// parent's context holds only the three answers, their usage is the parent's, and each child is
/// stored as a session linked to the parent.
#[tokio::test]
async fn three_explorers_run_at_once_and_the_parent_sees_only_their_answers() {
    let seen: Arc<Mutex<Vec<Seen>>> = Arc::default();
    let parent_requests: Arc<Mutex<Vec<Vec<Message>>>> = Arc::default();
    let all_started = Arc::new(tokio::sync::Barrier::new(3));
    let (seen_in, parents_in) = (Arc::clone(&seen), Arc::clone(&parent_requests));
    let provider = FnProvider::new(move |request: Request| {
        let (seen, parents, barrier) = (
            Arc::clone(&seen_in),
            Arc::clone(&parents_in),
            Arc::clone(&all_started),
        );
        async move {
            let Some(agent) = agent_of(&request) else {
                parents.lock().unwrap().push(request.messages.clone());
                return Ok(if has_results(&request) {
                    Message::assistant("all three found")
                } else {
                    calls(
                        "",
                        vec![
                            task_call("t1", "explore", "find alpha"),
                            task_call("t2", "explore", "find beta"),
                            task_call("t3", "explore", "find gamma"),
                        ],
                    )
                });
            };
            let started = Instant::now();
            // Each child waits here until all three are in their first model call: children
            // run one after the other would never get past it (the timeout says so).
            tokio::time::timeout(Duration::from_secs(10), barrier.wait())
                .await
                .expect("the three children run at the same time");
            let prompt = prompt_of(&request);
            seen.lock().unwrap().push(Seen {
                agent,
                prompt: prompt.clone(),
                user_messages: request
                    .messages
                    .iter()
                    .filter(|m| m.role == crate::schema::Role::User)
                    .map(|m| m.content.clone())
                    .collect(),
                tools: request.tools.clone(),
                started,
                answered: Instant::now(),
            });
            Ok(Message::assistant(format!("answer to {prompt}")))
        }
    });
    let store = crate::memory::SessionStore::open_in_memory().unwrap();
    let parent_record = store
        .create(crate::memory::NewSession {
            workdir: "/w".into(),
            provider: "scripted".into(),
            model: "script".into(),
            mode: "default".into(),
        })
        .await
        .unwrap();
    let parent_session = Arc::new(crate::memory::SqliteSession::new(
        store.clone(),
        parent_record.id.clone(),
    ));
    let engine = Arc::new(
        parent_engine(
            &provider,
            vec![weather(), fake_bash()],
            Vec::new(),
            Some(store.clone()),
        )
        .session(parent_session)
        .build(),
    );
    let events = drain(engine.run_stream("look around".into(), CancellationToken::new())).await;

    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 3);
    let latest_start = seen.iter().map(|s| s.started).max().unwrap();
    let earliest_answer = seen.iter().map(|s| s.answered).min().unwrap();
    assert!(latest_start <= earliest_answer, "the three overlapped");
    for child in &seen {
        assert_eq!(child.agent, "explore");
        assert_eq!(
            child.user_messages,
            vec![child.prompt.clone()],
            "its own prompt only"
        );
        assert_eq!(
            child.tools,
            ["get_weather"],
            "read-only tools, no bash, no task"
        );
    }

    let parents = parent_requests.lock().unwrap().clone();
    assert_eq!(parents.len(), 2);
    let context = &parents[1];
    let results: Vec<(String, String)> = context
        .iter()
        .filter(|m| m.is_tool_result())
        .map(|m| (m.tool_call_id.clone().unwrap(), m.content.clone()))
        .collect();
    assert_eq!(
        results.iter().map(|r| r.0.as_str()).collect::<Vec<_>>(),
        ["t1", "t2", "t3"],
        "in call order"
    );
    for ((_, content), word) in results.iter().zip(["alpha", "beta", "gamma"]) {
        assert!(
            content.starts_with(&format!(
                "answer to find {word}\n\n[explore sub-agent: 1 turn"
            )),
            "{content}"
        );
    }
    // System, prompt, the calls, the three answers: nothing of the children's own work.
    assert_eq!(context.len(), 6, "{context:#?}");
    assert!(
        !context
            .iter()
            .any(|m| m.content.contains("sub-agent:") && !m.is_tool_result())
    );

    let nested: Vec<&SubagentEvent> = events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::Subagent(s) => Some(s),
            _ => None,
        })
        .collect();
    for id in ["t1", "t2", "t3"] {
        let own: Vec<_> = nested.iter().filter(|s| s.task_id == id).collect();
        assert!(matches!(own[0].event.kind, EventKind::SessionStarted(_)));
        assert!(matches!(own.last().unwrap().event.kind, EventKind::Done(_)));
        assert!(own.iter().all(|s| s.agent == "explore"));
        // The child's events all come before its call's result.
        let result_at = events
            .iter()
            .position(
                |e| matches!(&e.kind, EventKind::ToolResult(o) if o.result.tool_call_id == id),
            )
            .unwrap();
        let last_nested_at = events
            .iter()
            .rposition(|e| matches!(&e.kind, EventKind::Subagent(s) if s.task_id == id))
            .unwrap();
        assert!(last_nested_at < result_at);
    }
    let EventKind::Done(done) = &events.last().unwrap().kind else {
        panic!("{:?}", events.last());
    };
    assert_eq!(
        done.input_tokens, 500,
        "two parent calls and three children's"
    );
    assert_eq!(done.output_tokens, 50);

    // Stored: three children linked to the parent, each with its own conversation, and the
    // parent's totals counting theirs.
    let children = store.children(&parent_record.id).await.unwrap();
    assert_eq!(children.len(), 3);
    for child in &children {
        assert_eq!(child.agent, "explore");
        let messages = store.load_view(&child.session.id).await.unwrap();
        assert_eq!(messages.len(), 2, "its prompt and its answer");
        assert!(messages[1].content.starts_with("answer to find "));
        assert_eq!(child.session.totals.input_tokens, 100);
    }
    let totals = store.get(&parent_record.id).await.unwrap().unwrap().totals;
    assert_eq!(totals.input_tokens, 500);
    assert!(
        store
            .list(None, 10)
            .await
            .unwrap()
            .iter()
            .all(|s| s.id == parent_record.id)
    );
}
