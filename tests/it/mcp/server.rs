//! The MCP server the tests talk to, written with `rmcp`'s server side: over stdio (this test
//! binary started again as a child, see `stdio_server_entry`) and over Streamable HTTP on
//! 127.0.0.1. `legacy` makes it an older server that knows only the `initialize` handshake.
//! Its tools: `echo` (read-only), `add` (structured result), `fail` (an error result), `crash`
//! (the process exits mid-call), `hang` (never answers; records the client's cancellation),
//! `change` (adds the tool `added` and says the list changed), `env` (a variable of its own
//! environment). Its prompt: `review FILE FOCUS` (held until released, for a slow server).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, DiscoverRequestMethod,
    DiscoverResult, GetPromptRequestParams, GetPromptResponse, GetPromptResult, Implementation,
    InitializeResult, ListPromptsResult, ListResourcesResult, ListToolsResult,
    PaginatedRequestParams, Prompt, PromptArgument, PromptMessage, ProtocolVersion,
    ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, Resource,
    ResourceContents, Role, ServerCapabilities, Tool, ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{Value, json};

/// The environment variable that turns the child into the stdio server (`modern` or `legacy`).
pub const SERVER_ENV: &str = "HARNESS9_TEST_MCP_SERVER";

#[derive(Default)]
pub struct ServerState {
    pub changed: AtomicBool,
    pub cancelled: AtomicUsize,
    pub cancel_seen: tokio::sync::Notify,
    pub hang_started: tokio::sync::Notify,
    /// A slow server: `get_prompt` answers only once `release_prompt` is notified.
    pub hold_prompts: AtomicBool,
    pub release_prompt: tokio::sync::Notify,
    pub prompts_answered: AtomicUsize,
}

#[derive(Clone)]
pub struct TestServer {
    pub legacy: bool,
    pub state: Arc<ServerState>,
}

impl TestServer {
    pub fn new(legacy: bool) -> Self {
        TestServer {
            legacy,
            state: Arc::default(),
        }
    }
}

fn tool(name: &'static str, description: &'static str, schema: Value, read_only: bool) -> Tool {
    let Value::Object(schema) = schema else {
        unreachable!("schemas here are objects")
    };
    let mut tool = Tool::new(name, description, Arc::new(schema));
    if read_only {
        tool.annotations = Some(ToolAnnotations::new().read_only(true));
    }
    tool
}

fn text(value: &str) -> CallToolResponse {
    CallToolResult::success(vec![ContentBlock::text(value)]).into()
}

impl ServerHandler for TestServer {
    fn get_info(&self) -> InitializeResult {
        InitializeResult::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .enable_prompts()
                .enable_resources()
                .build(),
        )
        .with_server_info(Implementation::new("harness9-test-server", "1.0.0"))
    }

    async fn discover(
        &self,
        _context: RequestContext<RoleServer>,
    ) -> Result<DiscoverResult, ErrorData> {
        if self.legacy {
            // What a server of the `initialize` era answers to a method it does not know.
            return Err(ErrorData::method_not_found::<DiscoverRequestMethod>());
        }
        Ok(DiscoverResult::from_server_info(
            ProtocolVersion::KNOWN_VERSIONS.to_vec(),
            self.get_info(),
        ))
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        let arguments = vec![PromptArgument::new("file"), PromptArgument::new("focus")];
        Ok(ListPromptsResult {
            prompts: vec![Prompt::new(
                "review",
                Some("Review a file."),
                Some(arguments),
            )],
            ..Default::default()
        })
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        if self.state.hold_prompts.load(Ordering::SeqCst) {
            self.state.release_prompt.notified().await;
        }
        self.state.prompts_answered.fetch_add(1, Ordering::SeqCst);
        let arguments = request.arguments.unwrap_or_default();
        let get = |key: &str| {
            arguments
                .get(key)
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned()
        };
        Ok(GetPromptResult::new(vec![PromptMessage::new_text(
            Role::User,
            format!("Review {} with a focus on {}.", get("file"), get("focus")),
        )])
        .into())
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        Ok(ListResourcesResult {
            resources: vec![Resource::new("mem://notes", "notes")],
            ..Default::default()
        })
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        if request.uri != "mem://notes" {
            return Err(ErrorData::invalid_params(
                format!("no resource {}", request.uri),
                None,
            ));
        }
        Ok(ReadResourceResult::new(vec![ResourceContents::text(
            "the notes say 42",
            "mem://notes",
        )])
        .into())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let message = json!({"type": "object", "properties": {"message": {"type": "string"}},
                             "required": ["message"]});
        let mut tools = vec![
            tool("echo", "Says the message back.", message, true),
            tool(
                "add",
                "Adds two numbers.",
                json!({"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}}),
                false,
            ),
            tool("fail", "Always fails.", json!({"type": "object"}), false),
            tool(
                "crash",
                "Exits the server.",
                json!({"type": "object"}),
                false,
            ),
            tool("hang", "Never answers.", json!({"type": "object"}), false),
            tool("change", "Adds a tool.", json!({}), false),
            tool(
                "env",
                "Reads an environment variable of the server.",
                json!({"type": "object", "properties": {"name": {"type": "string"}}}),
                false,
            ),
        ];
        if self.state.changed.load(Ordering::SeqCst) {
            tools.push(tool(
                "added",
                "Appeared later.",
                json!({"type": "object"}),
                false,
            ));
        }
        Ok(ListToolsResult {
            tools,
            ..Default::default()
        })
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let arguments = Value::Object(request.arguments.clone().unwrap_or_default());
        match request.name.as_ref() {
            "echo" => Ok(text(&format!(
                "echo: {}",
                arguments["message"].as_str().unwrap_or("")
            ))),
            "add" => {
                let sum =
                    arguments["a"].as_f64().unwrap_or(0.0) + arguments["b"].as_f64().unwrap_or(0.0);
                Ok(CallToolResult::structured(json!({"sum": sum})).into())
            }
            "fail" => Ok(CallToolResult::error(vec![ContentBlock::text(
                "the repository does not exist",
            )])
            .into()),
            "crash" => std::process::exit(3),
            "hang" => {
                self.state.hang_started.notify_one();
                context.ct.cancelled().await;
                self.state.cancelled.fetch_add(1, Ordering::SeqCst);
                self.state.cancel_seen.notify_one();
                Ok(text("cancelled"))
            }
            "change" => {
                self.state.changed.store(true, Ordering::SeqCst);
                let _ = context.peer.notify_tool_list_changed().await;
                Ok(text("changed"))
            }
            "added" => Ok(text("the added tool ran")),
            "env" => {
                let name = arguments["name"].as_str().unwrap_or("");
                Ok(text(&format!(
                    "{name}={}",
                    std::env::var(name).unwrap_or_else(|_| "<unset>".into())
                )))
            }
            other => Err(ErrorData::invalid_params(format!("no tool {other}"), None)),
        }
    }
}

/// A Streamable HTTP server on 127.0.0.1 (stateful sessions for a legacy one, as such servers
/// keep `Mcp-Session-Id`); returns its URL.
pub async fn serve_http(server: TestServer) -> String {
    use rmcp::transport::StreamableHttpService;
    use rmcp::transport::streamable_http_server::StreamableHttpServerConfig;
    use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
    let legacy = server.legacy;
    let mut config = StreamableHttpServerConfig::default().with_sse_keep_alive(None);
    config.legacy_session_mode = legacy;
    let service = StreamableHttpService::new(
        move || Ok(server.clone()),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let router = axum::Router::new().nest_service("/mcp", service);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let _ = axum::serve(listener, router).await;
    });
    format!("http://{addr}/mcp")
}

/// Not a test: when started as a child with `SERVER_ENV` set, this test binary serves MCP on
/// its stdin and stdout (`-q` keeps libtest's own output to a first line that is not JSON,
/// which the client skips). In a normal test run it returns at once.
#[test]
fn stdio_server_entry() {
    let Ok(mode) = std::env::var(SERVER_ENV) else {
        return;
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async move {
        use rmcp::ServiceExt;
        let server = TestServer::new(mode == "legacy");
        if let Ok(running) = server.serve(rmcp::transport::stdio()).await {
            let _ = running.waiting().await;
        }
    });
    std::process::exit(0);
}

/// The `.mcp.json` entry that starts this binary as the stdio server.
pub fn stdio_definition(mode: &str) -> Value {
    let exe = std::env::current_exe().unwrap();
    json!({
        "command": exe.display().to_string(),
        "args": ["--exact", "mcp::server::stdio_server_entry", "--nocapture", "--test-threads", "1", "-q"],
        "env": {SERVER_ENV: mode}
    })
}

/// `serve_http` on a runtime of its own (for a `harness9` process to reach while the test
/// blocks on it); also returns how many DELETE requests (sessions ended) it has seen.
pub fn serve_http_in_background(server: TestServer) -> (String, Arc<AtomicUsize>) {
    use rmcp::transport::StreamableHttpService;
    use rmcp::transport::streamable_http_server::StreamableHttpServerConfig;
    use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
    let deletes = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&deletes);
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async move {
            let mut config = StreamableHttpServerConfig::default().with_sse_keep_alive(None);
            config.legacy_session_mode = server.legacy;
            let service = StreamableHttpService::new(
                move || Ok(server.clone()),
                Arc::new(LocalSessionManager::default()),
                config,
            );
            let count = move |request: axum::extract::Request, next: axum::middleware::Next| {
                if request.method() == axum::http::Method::DELETE {
                    counted.fetch_add(1, Ordering::SeqCst);
                }
                next.run(request)
            };
            let router = axum::Router::new()
                .nest_service("/mcp", service)
                .layer(axum::middleware::from_fn(count));
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let addr = listener.local_addr().unwrap();
            tx.send(format!("http://{addr}/mcp")).unwrap();
            let _ = axum::serve(listener, router).await;
        });
    });
    (rx.recv().unwrap(), deletes)
}
