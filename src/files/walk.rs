//! The one way the search tools walk a tree: `.gitignore` (also outside a git repository),
//! `.ignore` and global git excludes respected, hidden files included, `.git` itself skipped.
//! What a walk finds is judged by the `ReadGuard`: a secret file or a denied path found by a walk
//! is skipped (the tool says so), since nobody approved reading it.

use std::path::Path;
use std::sync::Arc;

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

/// Decides which files a walk may read. Secret files are always withheld; the engine adds the
/// deny rules (`permission`), so the walk and the decision judge paths alike.
#[derive(Clone, Default)]
pub struct ReadGuard {
    denied: Option<Arc<DeniedCheck>>,
}

/// Whether a deny rule covers reading a path.
type DeniedCheck = dyn Fn(&Path) -> bool + Send + Sync;

impl ReadGuard {
    /// A guard that also withholds every path `denied` says a deny rule covers.
    pub fn new(denied: impl Fn(&Path) -> bool + Send + Sync + 'static) -> Self {
        ReadGuard {
            denied: Some(Arc::new(denied)),
        }
    }

    /// Whether a walk must not read `path` (absolute, as the walk found it).
    pub fn withholds(&self, path: &Path) -> bool {
        super::protected::is_secret_file(path)
            || self.denied.as_ref().is_some_and(|denied| denied(path))
    }
}

/// A note naming the files a walk withheld.
pub fn withheld_note(workdir: &Path, withheld: &[std::path::PathBuf]) -> String {
    if withheld.is_empty() {
        return String::new();
    }
    let mut names: Vec<String> = withheld
        .iter()
        .map(|p| super::paths::display(workdir, p))
        .collect();
    names.sort();
    format!(
        "\n[not searched: {} (secret files or denied by a rule); name one as `path` to ask \
         the user for it]",
        names.join(", ")
    )
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
