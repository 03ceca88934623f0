//! Protected names below the top of the workdir (issue 29 point 13): a nested repository's
//! `.git` (its hooks and config run when the user runs git there, or when `git status` in the
//! workdir enters it as a submodule), a subfolder's `.env*`, `.harness9/` or `.mcp.json`.
//! Landlock cannot refuse single names and a mount needs a path that exists, so a bounded
//! walk finds the existing ones before a command (they are mounted read-only like the top's)
//! and the new ones after it (they are undone). Invariant: a walk that stopped at its bound
//! says so (`complete` is false); it never passes for a full one.

use std::collections::{BTreeSet, VecDeque};
use std::path::{Path, PathBuf};

use crate::files::protected::is_protected_name;

/// At most this many directories are listed per walk (about 10 µs each). A tree larger than
/// that is reported as not fully checked.
const MAX_DIRS: usize = 20_000;

/// What one walk found below the workdir's top.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Nested {
    /// Every protected entry in a subdirectory of the workdir (not those directly in it,
    /// which the guard names itself), links included; never entered.
    pub entries: BTreeSet<PathBuf>,
    /// The subdirectories holding them.
    pub dirs: BTreeSet<PathBuf>,
    /// Whether every directory was listed.
    pub complete: bool,
}

/// Walks `workdir` breadth first, without following links, entering neither protected
/// entries nor `skip` (`$HARNESS9_HOME`, when it lies inside).
pub fn walk(workdir: &Path, skip: &Path) -> Nested {
    let mut found = Nested {
        complete: true,
        ..Nested::default()
    };
    let mut queue = VecDeque::from([workdir.to_path_buf()]);
    let mut listed = 0;
    while let Some(dir) = queue.pop_front() {
        if listed == MAX_DIRS {
            found.complete = false;
            break;
        }
        listed += 1;
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if is_protected_name(&entry.file_name()) {
                if dir != workdir {
                    found.entries.insert(path);
                    found.dirs.insert(dir.clone());
                }
                continue;
            }
            // `DirEntry::file_type` does not follow links.
            if entry.file_type().is_ok_and(|t| t.is_dir()) && path != skip {
                queue.push_back(path);
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn protected_names_are_found_at_any_depth_and_not_entered() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for sub in [
            "pkg/.git/hooks",
            "a/b/c/.harness9",
            "top/.git/modules/x/.git",
        ] {
            std::fs::create_dir_all(root.join(sub)).unwrap();
        }
        std::fs::write(root.join("a/b/.env.local"), "").unwrap();
        std::fs::write(root.join("a/.mcp.json"), "").unwrap();
        std::fs::write(root.join(".env"), "").unwrap();
        std::os::unix::fs::symlink("/etc", root.join("pkg/.ENV")).unwrap();
        let found = walk(root, Path::new(""));
        let expected: BTreeSet<PathBuf> = [
            "pkg/.git",
            "pkg/.ENV",
            "a/b/c/.harness9",
            "a/b/.env.local",
            "a/.mcp.json",
            "top/.git",
        ]
        .iter()
        .map(|p| root.join(p))
        .collect();
        assert_eq!(found.entries, expected);
        assert!(found.complete);
        assert!(found.dirs.contains(&root.join("a/b/c")));
    }
}
