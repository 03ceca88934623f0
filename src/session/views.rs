//! The session's view types: what `Update` and `Request` carry of the store's sessions and
//! memories, the background jobs, the MCP servers, the checkpoints and the clipboard. They are
//! plain data owned by the session, converted from the internals at the core's edge (the `From`
//! impls below), so a front end depends on the session's vocabulary and never on storage,
//! tools, MCP, checkpoint or context. Field names follow the internals', so a front end reads
//! them as before.

use std::path::PathBuf;
use std::time::Duration;

use crate::engine::{Failure, FailureKind};

/// What a session's model calls used and cost, summed over its life.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct SessionTotals {
    /// Prompt tokens not read from or written to a cache.
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cache_read_tokens: u64,
    pub cache_write_tokens: u64,
    /// The cost of the calls whose model had known prices.
    pub cost_usd: f64,
}

/// A stored session as lists show it.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionSummary {
    pub id: String,
    pub name: Option<String>,
    pub title: String,
    pub workdir: String,
    pub provider: String,
    pub model: String,
    pub mode: String,
    /// Unix time in milliseconds.
    pub created_at: i64,
    pub updated_at: i64,
    pub message_count: u64,
    pub totals: SessionTotals,
}

impl SessionSummary {
    /// The name when it has one, else the title.
    pub fn label(&self) -> &str {
        self.name.as_deref().unwrap_or(&self.title)
    }
}

/// A session found by a search: the session and a piece of the matching text.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionHit {
    pub session: SessionSummary,
    pub snippet: String,
}

/// Where a long-term memory applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemoryScope {
    /// This working directory only.
    Project,
    /// Every session of this user.
    User,
}

impl MemoryScope {
    pub fn as_str(self) -> &'static str {
        match self {
            MemoryScope::Project => "project",
            MemoryScope::User => "user",
        }
    }
}

/// A long-term memory as `/memory` and `harness9 memory` show it.
#[derive(Debug, Clone, PartialEq)]
pub struct Memory {
    pub id: i64,
    pub title: String,
    pub content: String,
    pub category: String,
    pub scope: MemoryScope,
    /// '' for a `user` memory.
    pub workdir: String,
    pub importance: i64,
    pub created_at: i64,
    pub updated_at: i64,
    pub last_used_at: Option<i64>,
    pub use_count: i64,
}

impl Memory {
    /// The memory as one line, as the digest and `MEMORY.md` write it.
    pub fn line(&self) -> String {
        crate::memory::long_term::line(self.scope.as_str(), &self.title, &self.content)
    }
}

/// A background command as `/ps` shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobSummary {
    pub id: String,
    pub command: String,
    pub running: bool,
    /// How long it has run (until its end, once ended).
    pub elapsed: Duration,
    /// How it ended (status and time); `None` while it runs.
    pub ended: Option<JobEnd>,
    /// Its last lines.
    pub tail: String,
}

/// How a background command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JobEnd {
    /// The exit status; `None`: ended by a signal (stopped).
    pub status: Option<i32>,
    /// When it ended.
    pub at: std::time::SystemTime,
}

/// Where an MCP server stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum McpStatus {
    Starting,
    Connected,
    Failed(String),
    Disabled,
}

impl std::fmt::Display for McpStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            McpStatus::Starting => f.write_str("starting"),
            McpStatus::Connected => f.write_str("connected"),
            McpStatus::Failed(reason) => write!(f, "failed: {reason}"),
            McpStatus::Disabled => f.write_str("disabled"),
        }
    }
}

/// An MCP server as front ends show it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpServer {
    pub name: String,
    /// The file that configures it: `user` or `project`.
    pub scope: &'static str,
    pub status: McpStatus,
    /// Its tools as the model sees them (`mcp__server__tool`).
    pub tools: Vec<String>,
    /// Its prompts, offered as slash commands.
    pub prompts: Vec<McpPromptInfo>,
    /// Its resources' URIs, attachable as `@server:uri`.
    pub resources: Vec<String>,
}

/// A server's prompt, offered as the slash command `/mcp__server__prompt`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpPromptInfo {
    pub command: String,
    pub description: String,
    pub arguments: Vec<String>,
}

/// A prompt of the session's current conversation, as `/rewind` lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptPoint {
    /// The prompt message's place in the stored conversation.
    pub seq: i64,
    pub text: String,
    /// Files changed by this prompt and the ones after it (what a rewind of files restores).
    pub files: usize,
}

/// What a restore does with files changed since the checkpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Conflicts {
    /// Write nothing while there is any; name them (the user is asked).
    Ask,
    /// Restore them too: the user said so.
    Overwrite,
    /// Restore the others and leave these as they are.
    Keep,
}

/// What a restore did, or (`asking`) would have to ask first.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RestoreReport {
    /// Files put back as they were before.
    pub restored: Vec<PathBuf>,
    /// Files the prompt created, removed again.
    pub removed: Vec<PathBuf>,
    /// Files changed since the prompt left them.
    pub changed_since: Vec<PathBuf>,
    /// Nothing was written: `changed_since` waits for the user's answer.
    pub asking: bool,
    /// Files that could not be put back, and why.
    pub failed: Vec<(PathBuf, String)>,
    /// What the checkpoints could not cover.
    pub notes: Vec<String>,
}

/// An image taken from the clipboard: the file the core kept it in, and its size.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClipboardImage {
    pub path: PathBuf,
    pub width: u32,
    pub height: u32,
}

/// What the store did not take, as of the session's last write.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Unsaved {
    /// Messages that are not in the store.
    pub messages: usize,
    /// A compaction that could not be recorded.
    pub compaction: bool,
    /// The last store error.
    pub error: Option<String>,
}

impl Unsaved {
    pub fn is_empty(&self) -> bool {
        self.messages == 0 && !self.compaction
    }
}

impl From<crate::memory::SessionRecord> for SessionSummary {
    fn from(record: crate::memory::SessionRecord) -> Self {
        let totals = record.totals;
        SessionSummary {
            id: record.id,
            name: record.name,
            title: record.title,
            workdir: record.workdir,
            provider: record.provider,
            model: record.model,
            mode: record.mode,
            created_at: record.created_at,
            updated_at: record.updated_at,
            message_count: record.message_count,
            totals: SessionTotals {
                input_tokens: totals.input_tokens,
                output_tokens: totals.output_tokens,
                cache_read_tokens: totals.cache_read_tokens,
                cache_write_tokens: totals.cache_write_tokens,
                cost_usd: totals.cost_usd,
            },
        }
    }
}

impl From<crate::memory::SearchHit> for SessionHit {
    fn from(hit: crate::memory::SearchHit) -> Self {
        SessionHit {
            session: hit.session.into(),
            snippet: hit.snippet,
        }
    }
}

impl From<crate::memory::long_term::MemoryRecord> for Memory {
    fn from(record: crate::memory::long_term::MemoryRecord) -> Self {
        use crate::memory::long_term::MemoryScope as Stored;
        Memory {
            id: record.id,
            title: record.title,
            content: record.content,
            category: record.category,
            scope: match record.scope {
                Stored::Project => MemoryScope::Project,
                Stored::User => MemoryScope::User,
            },
            workdir: record.workdir,
            importance: record.importance,
            created_at: record.created_at,
            updated_at: record.updated_at,
            last_used_at: record.last_used_at,
            use_count: record.use_count,
        }
    }
}

impl From<crate::tools::JobSummary> for JobSummary {
    fn from(job: crate::tools::JobSummary) -> Self {
        JobSummary {
            id: job.id,
            command: job.command,
            running: job.running,
            elapsed: job.elapsed,
            ended: job.ended.map(|end| JobEnd {
                status: end.status,
                at: end.at,
            }),
            tail: job.tail,
        }
    }
}

impl From<&crate::mcp::ServerStatus> for McpServer {
    fn from(server: &crate::mcp::ServerStatus) -> Self {
        use crate::mcp::Status;
        McpServer {
            name: server.name.clone(),
            scope: server.scope.as_str(),
            status: match &server.status {
                Status::Starting => McpStatus::Starting,
                Status::Connected => McpStatus::Connected,
                Status::Failed(reason) => McpStatus::Failed(reason.clone()),
                Status::Disabled => McpStatus::Disabled,
            },
            tools: server.tools.clone(),
            prompts: server
                .prompts
                .iter()
                .map(|p| McpPromptInfo {
                    command: p.command.clone(),
                    description: p.description.clone(),
                    arguments: p.arguments.clone(),
                })
                .collect(),
            resources: server.resources.clone(),
        }
    }
}

impl From<crate::checkpoint::PromptPoint> for PromptPoint {
    fn from(point: crate::checkpoint::PromptPoint) -> Self {
        PromptPoint {
            seq: point.seq,
            text: point.text,
            files: point.files,
        }
    }
}

impl From<Conflicts> for crate::checkpoint::Conflicts {
    fn from(conflicts: Conflicts) -> Self {
        match conflicts {
            Conflicts::Ask => crate::checkpoint::Conflicts::Ask,
            Conflicts::Overwrite => crate::checkpoint::Conflicts::Overwrite,
            Conflicts::Keep => crate::checkpoint::Conflicts::Keep,
        }
    }
}

impl From<crate::checkpoint::RestoreReport> for RestoreReport {
    fn from(report: crate::checkpoint::RestoreReport) -> Self {
        RestoreReport {
            restored: report.restored,
            removed: report.removed,
            changed_since: report.changed_since,
            asking: report.asking,
            // A front end shows why a file could not be put back; it decides nothing from it.
            failed: report
                .failed
                .into_iter()
                .map(|(path, failure)| (path, failure.to_string()))
                .collect(),
            notes: report.notes,
        }
    }
}

impl From<crate::context::clipboard::ClipboardImage> for ClipboardImage {
    fn from(image: crate::context::clipboard::ClipboardImage) -> Self {
        ClipboardImage {
            path: image.path,
            width: image.width,
            height: image.height,
        }
    }
}

impl From<crate::assemble::Unsaved> for Unsaved {
    fn from(unsaved: crate::assemble::Unsaved) -> Self {
        Unsaved {
            messages: unsaved.messages,
            compaction: unsaved.compaction,
            error: unsaved.error,
        }
    }
}

/// Why the clipboard gave no image, typed: a clipboard that cannot be read here is the
/// machine's setup, no image is nothing to find, keeping it is the disk's.
pub(super) fn clipboard_failure(error: &crate::context::clipboard::ClipboardError) -> Failure {
    use crate::context::clipboard::ClipboardError;
    let kind = match error {
        ClipboardError::Unreachable => FailureKind::Config,
        ClipboardError::NoImage | ClipboardError::Unusable(_) => FailureKind::NotFound,
        ClipboardError::Io(_) => FailureKind::Storage,
    };
    Failure::new(kind, error.to_string())
}
