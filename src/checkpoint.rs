//! Checkpoints (issue 21): before a prompt's first change to a file, the file's state is kept,
//! so `/undo` and `/rewind` can put it back. One place records, the `CheckpointStage` of the
//! tool-call chain that every tool call passes: an edit tool's `written_paths` are kept before
//! it runs; around a tool that runs commands (`bash`, an MCP tool) the working directory is
//! walked before and after, and what changed is recorded from the walk before. Contents are
//! kept by their SHA-256 in `$HARNESS9_HOME/checkpoints/` (`objects`), never in the user's
//! repository (no `git stash`, no commits, no index); a checkpoint is a row of `sessions.db`
//! tied to the session's messages by the last message stored before its prompt (`after_seq`).
//!
//! Restoring (`restore`) never overwrites silently: a file whose content is no longer what the
//! prompt left is named, and the caller asks the user before anything is written.

pub mod cleanup;
pub mod objects;
mod recorder;
pub mod restore;
mod scan;
mod stage;

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

pub use recorder::Checkpoints;
pub use restore::{Conflicts, IoCause, RestoreFailure, RestoreReport};
pub use stage::CheckpointStage;

/// Files larger than this are not kept: a change to one is reported as not restorable.
pub const MAX_KEPT: u64 = 8 * 1024 * 1024;

/// What a file was before the prompt changed it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum Before {
    /// It did not exist (the prompt created it): restoring deletes it.
    Absent,
    /// Its content is the object `hash`, with these permission bits.
    Kept { hash: String, mode: u32 },
    /// It existed but was not kept (too large, unreadable): it cannot be restored.
    NotKept { reason: String },
}

/// One file a prompt changed: its state before, and the content it was left with (`None`: the
/// prompt deleted it), to tell whether someone changed it since.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileChange {
    pub before: Before,
    pub after: Option<String>,
}

/// What one prompt changed: the files by absolute path, and plain notes on what could not be
/// tracked (a background command's later writes, say).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Changes {
    pub files: BTreeMap<PathBuf, FileChange>,
    #[serde(default)]
    pub notes: BTreeSet<String>,
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
