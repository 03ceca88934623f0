//! The one way the search tools walk a tree: `.gitignore` (also outside a git repository),
//! `.ignore` and global git excludes respected, hidden files included, `.git` itself skipped.

use std::path::Path;

use ignore::WalkBuilder;

/// A walker over `root` set up the same way for every tool.
pub fn walker(root: &Path) -> WalkBuilder {
    let mut builder = WalkBuilder::new(root);
    builder
        .hidden(false)
        .git_ignore(true)
        .git_global(true)
        .git_exclude(true)
        .require_git(false)
        .parents(true)
        .filter_entry(|entry| entry.file_name() != ".git");
    builder
}

/// A note for the end of a capped listing.
pub fn left_out_note(kept: usize, total: usize, what: &str) -> String {
    if total > kept {
        format!(
            "\n[{} more {what} not shown; narrow the search to see them]",
            total - kept
        )
    } else {
        String::new()
    }
}
