//! The command line of CONTRACT.md, parsed by clap. Values stay raw here; `config::resolve`
//! combines them with the environment.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use crate::planning::Mode;
use crate::provider::ProviderKind;

/// A full-screen terminal coding agent.
#[derive(Debug, Parser)]
#[command(
    name = "harness9",
    version,
    about,
    propagate_version = true,
    // `harness9 help` is ours: it also prints reference topics (`help hooks`).
    disable_help_subcommand = true,
    after_long_help = "The model's web_search: offered when `web.search` names a search backend \
in $HARNESS9_HOME/settings.json, or as the provider's own search (anthropic, responses, for a \
model the catalogue says has it) where web_search is allowed without asking; otherwise the \
model is not offered it."
)]
pub struct Cli {
    #[command(flatten)]
    pub options: RunOptions,

    /// Resume the most recent session of this working directory.
    #[arg(long = "continue", conflicts_with = "resume")]
    pub continue_session: bool,

    /// Resume a session: by id (a unique prefix is enough) or name; without one, pick it.
    #[arg(long, value_name = "ID", num_args = 0..=1, default_missing_value = "")]
    pub resume: Option<String>,

    /// Run the session in git worktree NAME of this repository (branch harness9/NAME), made
    /// when missing, reused when it exists.
    #[arg(long, value_name = "NAME")]
    pub worktree: Option<String>,

    #[command(flatten)]
    pub display: DisplayFlags,

    #[command(subcommand)]
    pub command: Option<Command>,
}

/// The full-screen TUI's display flags: the TUI's and `attach`'s own, not every command's
/// (`exec --help` does not list them).
#[derive(Debug, Clone, Copy, Default, Args)]
pub struct DisplayFlags {
    /// Run in the terminal's main screen: the transcript stays in its scrollback on exit.
    #[arg(long)]
    pub no_alt_screen: bool,

    /// Colours for a dark or a light terminal [default: the terminal's background, else dark].
    #[arg(long, value_enum)]
    pub theme: Option<crate::config::display::Theme>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run one task headlessly, then exit.
    Exec(ExecArgs),
    /// List stored sessions, newest first.
    Sessions(SessionsArgs),
    /// Run one command in the configured sandbox, to see what it allows.
    Sandbox(SandboxArgs),
    /// Serve the HTTP API: other programs open, watch and drive sessions.
    Serve(ServeArgs),
    /// The full-screen TUI as a client of a `harness9 serve` instance.
    Attach(AttachArgs),
    /// Run evaluation tasks with the configured provider and count the passes.
    Eval(EvalArgs),
    /// Manage MCP servers ($HARNESS9_HOME/mcp.json and the project's .mcp.json).
    Mcp(McpArgs),
    /// The language servers this folder may use.
    Lsp(LspArgs),
    /// Be an Agent Client Protocol agent on stdin/stdout, for editors (Zed, JetBrains, Neovim).
    Acp,
    /// List, search or remove long-term memories.
    Memory(MemoryArgs),
    /// The git worktrees harness9 made for sessions: list, merge back, remove.
    Worktree(WorktreeArgs),
    /// Print a completion script for SHELL (bash, zsh, fish, powershell) on stdout.
    Completions {
        shell: super::cli_docs::CompletionShell,
    },
    /// Print the man page (roff) on stdout: `harness9 man | man -l -`.
    Man,
    /// Print the help of a command, or a topic of the reference: `harness9 help hooks`.
    Help {
        /// A command (`exec`, `sessions`, ...) or a topic (`hooks`).
        topic: Option<String>,
    },
}

#[derive(Debug, Args)]
pub struct LspArgs {
    #[command(subcommand)]
    pub action: LspAction,
}

#[derive(Debug, Subcommand)]
pub enum LspAction {
    /// Each known language server: its files, its program, and whether it can start here.
    List,
}

#[derive(Debug, Args)]
pub struct WorktreeArgs {
    #[command(subcommand)]
    pub action: WorktreeAction,
}

#[derive(Debug, Subcommand)]
pub enum WorktreeAction {
    /// Each worktree with its branch, session, and the work it holds.
    List,
    /// Merge worktree NAME's branch into the branch it started from (a clean merge only).
    Merge { name: String },
    /// Remove worktree NAME and its branch (refused while it holds unmerged work).
    Remove {
        name: String,
        /// Remove it even with uncommitted changes or unmerged commits, which are lost.
        #[arg(long)]
        force: bool,
    },
}

#[derive(Debug, Args)]
pub struct MemoryArgs {
    #[command(subcommand)]
    pub action: MemoryAction,
}

#[derive(Debug, Subcommand)]
pub enum MemoryAction {
    /// This project's and the user's memories, most important first.
    List {
        /// Every project's memories.
        #[arg(long)]
        all: bool,
        /// One JSON array.
        #[arg(long)]
        json: bool,
    },
    /// The memories matching TEXT, best first.
    Search {
        text: String,
        #[arg(long)]
        json: bool,
    },
    /// Remove memory ID (the number `list` shows).
    Rm { id: i64 },
}

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// The address to listen on; one other than loopback needs HARNESS9_SERVE_TOKEN.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:7979")]
    pub listen: std::net::SocketAddr,

    /// How long a client may take to send a request's headers, in milliseconds (a connection
    /// that takes longer, or idles that long between requests, is closed).
    #[arg(long, value_name = "MS", default_value_t = 10_000, hide = true)]
    pub header_timeout_ms: u64,

    /// The most connections open at once, within the descriptors the process may open.
    #[arg(long, value_name = "N", default_value_t = 256, hide = true)]
    pub max_connections: usize,

    /// The most connections one client address may hold open at once.
    #[arg(long, value_name = "N", default_value_t = 64, hide = true)]
    pub max_connections_per_client: usize,
}

#[derive(Debug, Args)]
pub struct AttachArgs {
    /// The server's address, as `harness9 serve` printed it (http://127.0.0.1:7979).
    #[arg(value_name = "URL")]
    pub url: String,

    /// A session of the server to drive (its id, a unique prefix, or its name); without it, a
    /// new one.
    #[arg(long, value_name = "ID")]
    pub session: Option<String>,

    #[command(flatten)]
    pub display: DisplayFlags,
}

#[derive(Debug, Args)]
pub struct McpArgs {
    #[command(subcommand)]
    pub action: McpAction,
}

/// Which file `mcp add` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum McpScope {
    /// `<workdir>/.mcp.json`, shared with the project.
    Project,
    /// `$HARNESS9_HOME/mcp.json`, yours in every folder.
    User,
}

#[derive(Debug, Subcommand)]
pub enum McpAction {
    /// Connect to each configured server and show its status and tools.
    List {
        /// Print one JSON array instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Add a server: `mcp add NAME -- CMD ARGS...` (stdio) or `mcp add NAME --url URL`.
    Add {
        name: String,
        /// Which file to write [default: user].
        #[arg(long, value_enum, default_value = "user")]
        scope: McpScope,
        /// An environment variable for a stdio server, `K=V` (repeatable).
        #[arg(long = "env", value_name = "K=V")]
        env: Vec<String>,
        /// A Streamable HTTP server's URL.
        #[arg(long, value_name = "URL", conflicts_with = "command")]
        url: Option<String>,
        /// A header for an HTTP server, `'K: V'` (repeatable).
        #[arg(long = "header", value_name = "K: V", requires = "url")]
        header: Vec<String>,
        /// The stdio server's command and its arguments, after `--`.
        #[arg(last = true, value_name = "CMD")]
        command: Vec<String>,
    },
    /// Log in to an HTTP server with OAuth (in your browser); its tokens are kept, 0600, in
    /// $HARNESS9_HOME/mcp-oauth/.
    Login { name: String },
    /// Forget an HTTP server's OAuth tokens.
    Logout { name: String },
    /// Remove a server from the file that defines it.
    Remove {
        name: String,
        /// Which file [default: whichever defines it].
        #[arg(long, value_enum)]
        scope: Option<McpScope>,
    },
}

#[derive(Debug, Args)]
pub struct SandboxArgs {
    /// The command and its arguments, after `--`.
    #[arg(last = true, required = true, value_name = "CMD")]
    pub command: Vec<std::ffi::OsString>,
}

#[derive(Debug, Args)]
pub struct ExecArgs {
    /// Print one JSON event per line on stdout, and nothing else.
    #[arg(long)]
    pub json: bool,

    /// Also print the engine's log (`[engine] …` lines) on stderr, as `RUST_LOG=harness9=info`
    /// would.
    #[arg(short = 'v', long)]
    pub verbose: bool,

    /// Continue the most recent session of this working directory.
    #[arg(long = "continue", conflicts_with = "session")]
    pub continue_session: bool,

    /// Continue session ID (a unique prefix, or its name).
    #[arg(long, value_name = "ID")]
    pub session: Option<String>,

    /// A permission rule that allows calls, for this run only (the settings' syntax, e.g.
    /// 'bash(git status*)'); repeatable. A deny rule of any settings file still wins.
    #[arg(long = "allow", value_name = "RULE")]
    pub allow: Vec<String>,

    /// A permission rule that refuses calls, for this run only; repeatable.
    #[arg(long = "deny", value_name = "RULE")]
    pub deny: Vec<String>,

    /// Run in git worktree NAME of this repository (branch harness9/NAME), made when missing,
    /// reused when it exists.
    #[arg(long, value_name = "NAME")]
    pub worktree: Option<String>,

    /// Also write the final answer to FILE.
    #[arg(short = 'o', long = "output-last-message", value_name = "FILE")]
    pub output_last_message: Option<PathBuf>,

    /// The task; `-` reads it from standard input.
    pub prompt: String,
}

/// `harness9 eval`'s arguments.
#[derive(Debug, Clone, Args)]
pub struct EvalArgs {
    /// A folder of tasks (each a folder with task.toml), or one task [default: evals].
    #[arg(value_name = "DIR")]
    pub dir: Option<PathBuf>,

    /// One JSON object per task on stdout, and nothing else.
    #[arg(long)]
    pub json: bool,

    /// Tasks run at once.
    #[arg(short = 'j', long = "jobs", value_name = "N", default_value_t = 1)]
    pub jobs: usize,
}

#[derive(Debug, Args)]
pub struct SessionsArgs {
    /// Print one JSON array instead of a table.
    #[arg(long)]
    pub json: bool,

    /// Every working directory's sessions, not only this one's.
    #[arg(long)]
    pub all: bool,

    /// Full-text search over message contents.
    #[arg(long, value_name = "TEXT")]
    pub search: Option<String>,
}

/// Options every command takes.
#[derive(Debug, Args, Default, Clone)]
pub struct RunOptions {
    /// The directory the agent works in [default: the current directory].
    #[arg(short = 'C', long, global = true, value_name = "DIR")]
    pub workdir: Option<PathBuf>,

    /// Which wire protocol [default: HARNESS9_PROVIDER, else whichever API key is set].
    #[arg(long, global = true, value_enum)]
    pub provider: Option<ProviderKind>,

    /// The model name sent to the API [default: HARNESS9_MODEL, else gpt-4o / claude-sonnet-4-20250514].
    #[arg(short = 'm', long, global = true, value_name = "NAME")]
    pub model: Option<String>,

    /// Approval and plan mode.
    #[arg(long, global = true, value_enum)]
    pub mode: Option<Mode>,

    /// Turns per task; 0 = unlimited [default: 50].
    #[arg(long, global = true, value_name = "N")]
    pub max_turns: Option<u32>,

    /// Seconds per tool call; 0 = none [default: 60].
    #[arg(long, global = true, value_name = "SECS")]
    pub tool_timeout: Option<u64>,

    /// Tools run at once; 0 = unlimited [default: 0].
    #[arg(long, global = true, value_name = "N")]
    pub max_concurrent_tools: Option<usize>,

    /// Output tokens per call [default: 8192].
    #[arg(long, global = true, value_name = "N")]
    pub max_tokens: Option<u32>,

    /// Context window in tokens [default: known per model, else 128000].
    #[arg(long, global = true, value_name = "N")]
    pub context_window: Option<u64>,

    /// Anthropic extended thinking budget in tokens (at least 1024, below --max-tokens); 0 = off.
    #[arg(long, global = true, value_name = "N")]
    pub thinking_budget: Option<u32>,

    /// What commands run by bash may touch [default: workspace-write where the kernel allows it].
    #[arg(long, global = true, value_enum)]
    pub sandbox: Option<crate::sandbox::SandboxMode>,

    /// Reasoning effort for OpenAI-compatible reasoning models.
    #[arg(long, global = true, value_parser = ["low", "medium", "high"])]
    pub reasoning_effort: Option<String>,

    /// Treat the working directory as trusted: its settings' allow rules, hooks, MCP servers
    /// and `.env` base URLs apply (for this run; the TUI does not ask). In `exec`, the
    /// project's hooks count as approved for this run; the TUI still asks about them.
    #[arg(long, global = true)]
    pub trust: bool,
}
