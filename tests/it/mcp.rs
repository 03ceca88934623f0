//! MCP servers as tools: a server written with `rmcp` inside this suite (stdio as a child
//! process, Streamable HTTP on 127.0.0.1; the stateless 2026-07-28 revision and an older
//! `initialize`-only one), reached through the manager and the registry as the engine uses
//! them; `exec` runs; `mcp add/list/remove`; the reference server from npm when installed.

mod cli;
mod exec;
pub mod raw_server;
pub mod server;
mod standard;

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use harness9::mcp::config::{Scope, ServerSpec, parse};
use harness9::mcp::{McpManager, Status};
use harness9::planning::{Mode, TodoStore};
use harness9::schema::{ToolCall, ToolResult};
use harness9::tools::{Registry, ToolContext};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::support::PATIENCE;
use server::{TestServer, serve_http, stdio_definition};

pub fn spec(name: &str, definition: &Value) -> ServerSpec {
    ServerSpec {
        name: name.to_owned(),
        scope: Scope::User,
        transport: parse(definition, &|var| std::env::var(var).ok()),
    }
}

struct Servers {
    manager: McpManager,
    registry: Registry,
    workdir: PathBuf,
    _dir: tempfile::TempDir,
}

impl Servers {
    async fn start(specs: Vec<ServerSpec>) -> Servers {
        let dir = tempfile::tempdir().unwrap();
        let workdir = dir.path().canonicalize().unwrap();
        let manager = McpManager::start(specs, Vec::new(), workdir.clone());
        assert!(manager.wait_ready(PATIENCE).await, "servers still starting");
        let mut registry = Registry::new();
        registry.set_late_tools(Arc::new(manager.clone()));
        Servers {
            manager,
            registry,
            workdir,
            _dir: dir,
        }
    }

    fn ctx(&self, cancel: CancellationToken) -> ToolContext {
        ToolContext {
            workdir: self.workdir.clone(),
            cancel,
            mode: Mode::Yolo,
            todos: Arc::new(TodoStore::default()),
            read_guard: Default::default(),
            outputs: None,
            editor_files: None,
            editor_terminal: None,
        }
    }

    async fn call_with(
        &self,
        name: &str,
        arguments: Value,
        cancel: CancellationToken,
    ) -> ToolResult {
        let call = ToolCall {
            id: "c1".into(),
            name: name.into(),
            arguments: arguments.to_string(),
        };
        self.registry.execute(&call, &self.ctx(cancel)).await
    }

    async fn call(&self, name: &str, arguments: Value) -> ToolResult {
        self.call_with(name, arguments, CancellationToken::new())
            .await
    }

    fn status(&self, name: &str) -> harness9::mcp::ServerStatus {
        self.manager
            .statuses()
            .into_iter()
            .find(|s| s.name == name)
            .unwrap()
    }

    /// Waits for the next change of statuses or tools until `done` holds.
    async fn until(&self, what: &str, done: impl Fn(&McpManager) -> bool) {
        let mut changes = self.manager.subscribe();
        let wait = async {
            while !done(&self.manager) {
                changes.changed().await.unwrap();
            }
        };
        tokio::time::timeout(PATIENCE, wait)
            .await
            .unwrap_or_else(|_| panic!("timed out waiting for {what}"));
    }
}

#[tokio::test]
async fn both_transports_and_both_protocol_generations_list_and_call_tools() {
    let modern_http = serve_http(TestServer::new(false)).await;
    let legacy_http = serve_http(TestServer::new(true)).await;
    let servers = Servers::start(vec![
        spec("stdio", &stdio_definition("modern")),
        spec("old-stdio", &stdio_definition("legacy")),
        spec("web", &json!({"type": "http", "url": modern_http})),
        spec(
            "old.web",
            &json!({"type": "http", "url": legacy_http, "headers": {"X-Test": "1"}}),
        ),
    ])
    .await;
    for (name, part, protocol) in [
        ("stdio", "stdio", "2026-07-28"),
        ("old-stdio", "old-stdio", "2025-11-25"),
        ("web", "web", "2026-07-28"),
        ("old.web", "old_web", "2025-11-25"),
    ] {
        let status = servers.status(name);
        assert_eq!(status.status, Status::Connected, "{name}");
        assert_eq!(status.protocol, protocol, "{name}");
        let echo = format!("mcp__{part}__echo");
        assert!(status.tools.contains(&echo), "{name}: {:?}", status.tools);
        let result = servers.call(&echo, json!({"message": "hi"})).await;
        assert!(!result.is_error, "{name}: {}", result.output);
        assert_eq!(fenced(&result.output), "echo: hi");
    }
    assert_eq!(servers.manager.connected(), 4);
    // The schemas the providers get are plain object schemas.
    let definitions = servers.registry.available_tools(Mode::Default);
    let echo = definitions
        .iter()
        .find(|d| d.name == "mcp__web__echo")
        .unwrap();
    assert_eq!(echo.input_schema["type"], "object");
    assert!(echo.description.contains("Says the message back."));
}

#[tokio::test]
async fn errors_structured_results_and_bad_arguments_come_back_to_the_model() {
    let url = serve_http(TestServer::new(false)).await;
    let servers = Servers::start(vec![spec("t", &json!({"type": "http", "url": url}))]).await;
    let failed = servers.call("mcp__t__fail", json!({})).await;
    assert!(failed.is_error);
    assert_eq!(fenced(&failed.output), "the repository does not exist");
    let sum = servers.call("mcp__t__add", json!({"a": 1, "b": 2})).await;
    assert!(!sum.is_error, "{}", sum.output);
    assert_eq!(
        serde_json::from_str::<Value>(&fenced(&sum.output)).unwrap(),
        json!({"sum": 3.0})
    );
    let bad = servers.call("mcp__t__echo", json!({"message": 5})).await;
    assert!(
        bad.is_error && bad.output.contains("must be a string"),
        "{}",
        bad.output
    );
}

#[tokio::test]
async fn a_server_that_crashes_mid_call_fails_the_call_and_can_be_reconnected() {
    let servers = Servers::start(vec![spec("c", &stdio_definition("legacy"))]).await;
    let crashed = servers.call("mcp__c__crash", json!({})).await;
    assert!(crashed.is_error, "{}", crashed.output);
    assert!(
        crashed.output.contains("MCP server `c`"),
        "{}",
        crashed.output
    );
    servers
        .until("the crash to show", |m| {
            matches!(m.statuses()[0].status, Status::Failed(_))
        })
        .await;
    assert!(servers.registry.available_tools(Mode::Default).is_empty());
    assert!(
        servers
            .manager
            .take_notices()
            .iter()
            .any(|n| n.contains("`c` stopped")),
    );
    assert!(servers.manager.reconnect("c"));
    servers
        .until("the reconnection", |m| {
            m.statuses()[0].status == Status::Connected
        })
        .await;
    let again = servers
        .call("mcp__c__echo", json!({"message": "back"}))
        .await;
    assert_eq!(fenced(&again.output), "echo: back");
}

#[tokio::test]
async fn cancelling_a_call_that_never_answers_tells_the_server() {
    for legacy in [false, true] {
        let server = TestServer::new(legacy);
        let state = Arc::clone(&server.state);
        let url = serve_http(server).await;
        let servers = Servers::start(vec![spec("h", &json!({"type": "http", "url": url}))]).await;
        let cancel = CancellationToken::new();
        let started = state.hang_started.notified();
        let call = servers.call_with("mcp__h__hang", json!({}), cancel.clone());
        let stop = async {
            let _ = tokio::time::timeout(PATIENCE, started).await;
            cancel.cancel();
        };
        let (result, ()) = tokio::join!(call, stop);
        assert!(
            result.is_error && result.output.contains("cancelled"),
            "{}",
            result.output
        );
        let seen = state.cancel_seen.notified();
        if state.cancelled.load(Ordering::SeqCst) == 0 {
            tokio::time::timeout(PATIENCE, seen)
                .await
                .expect("the server hears of the cancellation");
        }
        assert_eq!(
            state.cancelled.load(Ordering::SeqCst),
            1,
            "legacy: {legacy}"
        );
    }
}

#[tokio::test]
async fn a_call_dropped_by_the_tool_timeout_tells_the_server() {
    let server = TestServer::new(false);
    let state = Arc::clone(&server.state);
    let url = serve_http(server).await;
    let servers = Servers::start(vec![spec("h", &json!({"type": "http", "url": url}))]).await;
    // The engine's timeout drops the call's future, as this does once the server has it.
    let started = state.hang_started.notified();
    let call = servers.call("mcp__h__hang", json!({}));
    tokio::select! {
        result = call => panic!("the hanging call answered: {result:?}"),
        () = started => {}
    }
    let seen = state.cancel_seen.notified();
    if state.cancelled.load(Ordering::SeqCst) == 0 {
        tokio::time::timeout(PATIENCE, seen)
            .await
            .expect("the server hears of the cancellation");
    }
}

#[tokio::test]
async fn a_changed_tool_list_joins_at_the_next_look() {
    for (mode, part) in [("legacy", "l"), ("modern", "m")] {
        let servers = Servers::start(vec![spec(part, &stdio_definition(mode))]).await;
        let added = format!("mcp__{part}__added");
        assert!(!servers.status(part).tools.contains(&added));
        let changed = servers
            .call(&format!("mcp__{part}__change"), json!({}))
            .await;
        assert_eq!(fenced(&changed.output), "changed");
        servers
            .until(&format!("{added} ({mode})"), |m| {
                m.statuses()[0].tools.contains(&added)
            })
            .await;
        let ran = servers.call(&added, json!({})).await;
        assert_eq!(fenced(&ran.output), "the added tool ran");
    }
}

#[tokio::test]
async fn a_changed_tool_list_over_streamable_http_joins_at_the_next_look() {
    // The notification comes on the answering request's stream (a stateless server) or on the
    // session's (a legacy one); either way the list is fetched again.
    for (legacy, part) in [(false, "hm"), (true, "hl")] {
        let url = serve_http(TestServer::new(legacy)).await;
        let servers = Servers::start(vec![spec(part, &json!({"type": "http", "url": url}))]).await;
        assert_eq!(servers.status(part).status, Status::Connected);
        let added = format!("mcp__{part}__added");
        assert!(!servers.status(part).tools.contains(&added));
        let changed = servers
            .call(&format!("mcp__{part}__change"), json!({}))
            .await;
        assert_eq!(fenced(&changed.output), "changed");
        servers
            .until(&format!("{added} (legacy: {legacy})"), |m| {
                m.statuses()[0].tools.contains(&added)
            })
            .await;
        let ran = servers.call(&added, json!({})).await;
        assert_eq!(fenced(&ran.output), "the added tool ran");
    }
}

#[tokio::test]
async fn a_servers_prompt_is_offered_and_filled_with_the_arguments_given() {
    for legacy in [false, true] {
        let url = serve_http(TestServer::new(legacy)).await;
        let servers = Servers::start(vec![spec("s", &json!({"type": "http", "url": url}))]).await;
        let prompts = servers.status("s").prompts;
        assert_eq!(prompts.len(), 1);
        assert_eq!(prompts[0].command, "mcp__s__review");
        assert_eq!(prompts[0].arguments, ["file", "focus"]);
        let text = servers
            .manager
            .get_prompt("mcp__s__review", "src/main.rs error handling and naming")
            .await
            .unwrap();
        assert_eq!(
            text,
            "Review src/main.rs with a focus on error handling and naming."
        );
        assert!(
            servers
                .manager
                .get_prompt("mcp__s__nope", "")
                .await
                .is_err()
        );
    }
}

#[tokio::test]
async fn a_mentioned_resource_is_attached_to_the_prompt() {
    let url = serve_http(TestServer::new(false)).await;
    let servers = Servers::start(vec![spec("s", &json!({"type": "http", "url": url}))]).await;
    assert_eq!(servers.status("s").resources, ["mem://notes"]);
    let prompt = "Summarise @s:mem://notes, and @s:mem://missing. Not @other:x or a@b:c".to_owned();
    let attached = servers.manager.attach_resources(prompt.clone()).await;
    let (typed, rest) = attached
        .split_once(harness9::context::mentions::ATTACHMENTS_MARKER)
        .unwrap();
    assert_eq!(typed, prompt);
    assert!(
        rest.contains("<mcp-resource server=\"s\" uri=\"mem://notes\">\nthe notes say 42\n"),
        "{rest}"
    );
    assert!(
        rest.contains("uri=\"mem://missing\">\n(not attached:"),
        "{rest}"
    );
    assert!(!rest.contains("other"), "{rest}");
    // Nothing mentioned: the prompt is unchanged.
    assert_eq!(
        servers.manager.attach_resources("hello".into()).await,
        "hello"
    );
}

#[tokio::test]
async fn plan_mode_offers_only_read_only_annotated_tools() {
    let url = serve_http(TestServer::new(false)).await;
    let servers = Servers::start(vec![spec("p", &json!({"type": "http", "url": url}))]).await;
    let offered: Vec<String> = servers
        .registry
        .available_tools(Mode::Plan)
        .into_iter()
        .map(|d| d.name)
        .collect();
    assert_eq!(offered, ["mcp__p__echo"]);
    let call = ToolCall {
        id: "c".into(),
        name: "mcp__p__add".into(),
        arguments: "{}".into(),
    };
    let refused = servers.registry.prepare(&call, Mode::Plan).err().unwrap();
    assert!(
        refused.0.contains("not available in plan mode"),
        "{refused}"
    );
    // The read-only one is offered, and still asks (its server's word is no proof).
    let echo = servers.registry.get("mcp__p__echo").unwrap();
    let arguments = json!({"message": "x"});
    let rules = harness9::permission::rules::PermissionRules::none();
    for mode in [Mode::Plan, Mode::Default, Mode::AutoEdit] {
        let input =
            harness9::permission::CallInput::new(echo.as_ref(), &arguments, mode, &servers.workdir);
        let verdict = harness9::permission::decide(&input, &Default::default(), &rules);
        assert!(
            matches!(verdict, harness9::permission::Verdict::Ask { .. }),
            "{mode:?}: {verdict:?}"
        );
    }
    assert_eq!(
        harness9::permission::suggested_rule(echo.as_ref(), &arguments, &servers.workdir)
            .as_deref(),
        Some("mcp__p__echo")
    );
}

#[tokio::test]
async fn a_server_that_cannot_start_is_failed_with_its_reason_never_fatal() {
    let servers = Servers::start(vec![
        spec("missing", &json!({"command": "/nonexistent/mcp-server"})),
        spec(
            "unset",
            &json!({"command": "${HARNESS9_TEST_UNSET_VARIABLE}"}),
        ),
        spec(
            "refused",
            &json!({"type": "http", "url": "http://127.0.0.1:9/mcp"}),
        ),
    ])
    .await;
    for status in servers.manager.statuses() {
        let Status::Failed(reason) = &status.status else {
            panic!("{status:?}");
        };
        assert!(!reason.is_empty());
    }
    let notices = servers.manager.take_notices();
    assert_eq!(notices.len(), 3, "{notices:?}");
    assert!(
        notices
            .iter()
            .any(|n| n.contains("HARNESS9_TEST_UNSET_VARIABLE"))
    );
}

/// The fields of `/proc/PID/stat` after the command name: state, ppid, pgrp, ...
fn stat(pid: u32) -> Vec<String> {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .unwrap_or_default()
        .rsplit_once(") ")
        .map(|(_, rest)| rest.split(' ').map(str::to_owned).collect())
        .unwrap_or_default()
}

/// Gone, or a zombie waiting for its parent.
fn ended(pid: u32) -> bool {
    stat(pid).first().is_none_or(|state| state == "Z")
}

#[tokio::test]
async fn a_stdio_server_runs_in_its_own_process_group_which_is_killed_at_shutdown() {
    // The server starts a helper of its own first (`sleep`), as `npx` servers do.
    let mut definition = stdio_definition("modern");
    let mut args = vec![
        json!("-c"),
        json!("sleep 1000 & exec \"$0\" \"$@\""),
        definition["command"].clone(),
    ];
    args.extend(definition["args"].as_array().unwrap().iter().cloned());
    definition["command"] = json!("sh");
    definition["args"] = Value::Array(args);
    let servers = Servers::start(vec![spec("g", &definition)]).await;
    let child = servers
        .status("g")
        .pid
        .expect("a stdio server has a process");
    let fields = stat(child);
    assert_eq!(fields[1], std::process::id().to_string(), "our child");
    assert_eq!(
        fields[2],
        child.to_string(),
        "it leads its own process group"
    );
    let helper: u32 = std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .find(|&pid| stat(pid).get(1) == Some(&child.to_string()))
        .expect("the server's helper process");
    assert_eq!(
        stat(helper)[2],
        child.to_string(),
        "the helper is in the group"
    );
    servers.manager.shutdown();
    let gone = async {
        while !(ended(child) && ended(helper)) {
            tokio::task::yield_now().await;
        }
    };
    tokio::time::timeout(PATIENCE, gone)
        .await
        .expect("the server's whole group is killed");
}

#[tokio::test]
async fn the_reference_server_everything_from_npm() {
    let bin = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join(".ci/cache/mcp/node_modules/.bin/mcp-server-everything");
    let bin = std::env::var_os("HARNESS9_MCP_EVERYTHING")
        .map(PathBuf::from)
        .unwrap_or(bin);
    if !bin.exists() {
        println!(
            "mcp::the_reference_server_everything_from_npm DID NOT RUN: {} is not installed \
             (.ci/run installs it with npm; or set HARNESS9_MCP_EVERYTHING)",
            bin.display()
        );
        return;
    }
    let servers = Servers::start(vec![spec(
        "everything",
        &json!({"command": bin.display().to_string(), "args": ["stdio"]}),
    )])
    .await;
    let status = servers.status("everything");
    assert_eq!(status.status, Status::Connected, "{status:?}");
    assert!(
        status.tools.contains(&"mcp__everything__echo".to_owned()),
        "{:?}",
        status.tools
    );
    let echo = servers
        .call("mcp__everything__echo", json!({"message": "hello"}))
        .await;
    assert!(!echo.is_error, "{}", echo.output);
    assert!(echo.output.contains("hello"), "{}", echo.output);
    let sum = servers
        .call("mcp__everything__get-sum", json!({"a": 2, "b": 3}))
        .await;
    assert!(sum.output.contains('5'), "{}", sum.output);
}

/// An MCP result as the model gets it is fenced as data from outside naming its server (issue 29
/// point 15): the text inside the one fence, or a failure when it is not fenced.
fn fenced(output: &str) -> String {
    let nonces = harness9::schema::outside_nonces(output);
    let Some((true, nonce)) = nonces.first() else {
        panic!("not fenced: {output}");
    };
    let open_end = output.find('\n').unwrap_or(0);
    assert!(
        output[..open_end].starts_with(&format!("[data from outside {nonce}: MCP server `")),
        "{output}"
    );
    let close = format!("\n[end of data from outside {nonce}]");
    assert!(output.ends_with(&close), "{output}");
    output[open_end + 1..output.len() - close.len()].to_owned()
}

#[tokio::test]
async fn roots_follow_the_working_directory_when_it_changes() {
    let servers = Servers::start(vec![spec("r", &raw_server::raw_definition("plain", None))]).await;
    let before = servers.call("mcp__r__roots", json!({})).await;
    let workdir = servers.workdir.display().to_string();
    assert!(before.output.contains(&workdir), "{}", before.output);
    let elsewhere = servers.workdir.join("sub");
    servers.manager.set_root(elsewhere.clone());
    let after = servers.call("mcp__r__roots", json!({})).await;
    assert!(
        after.output.contains(&format!("{}/", elsewhere.display())),
        "{}",
        after.output
    );
}
