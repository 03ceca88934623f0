//! Paths the model names, made absolute against the working directory with `..` and symlinks
//! resolved, so "is this inside the working directory?" has one honest answer.

use std::path::{Component, Path, PathBuf};

/// `raw` resolved against `workdir`: absolute, `.`/`..` folded, and symlinks of the part that
/// exists resolved (a file about to be created resolves through its existing parent).
pub fn resolve(workdir: &Path, raw: &str) -> PathBuf {
    let joined = if Path::new(raw).is_absolute() {
        PathBuf::from(raw)
    } else {
        workdir.join(raw)
    };
    let lexical = fold(&joined);
    // Canonicalize the longest existing ancestor, then put the rest back.
    let mut existing = lexical.as_path();
    let mut rest = Vec::new();
    loop {
        if let Ok(real) = existing.canonicalize() {
            let mut out = real;
            for part in rest.iter().rev() {
                out.push(part);
            }
            return out;
        }
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_owned());
                existing = parent;
            }
            _ => return lexical,
        }
    }
}

/// Whether `path` (already resolved) lies inside `workdir` (canonical).
pub fn is_inside(workdir: &Path, path: &Path) -> bool {
    path.starts_with(workdir)
}

/// `.` and `..` removed without touching the file system.
pub fn fold(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// `path` shown relative to `workdir` when inside it.
pub fn display(workdir: &Path, path: &Path) -> String {
    path.strip_prefix(workdir)
        .map(|p| p.display().to_string())
        .unwrap_or_else(|_| path.display().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dot_dot_and_symlinks_are_resolved() {
        let dir = tempfile::tempdir().unwrap();
        let work = dir.path().canonicalize().unwrap().join("work");
        std::fs::create_dir_all(work.join("src")).unwrap();
        let outside = dir.path().canonicalize().unwrap().join("outside");
        std::fs::create_dir_all(&outside).unwrap();
        std::os::unix::fs::symlink(&outside, work.join("link")).unwrap();

        assert!(is_inside(&work, &resolve(&work, "src/new.rs")));
        assert!(is_inside(&work, &resolve(&work, "src/../README.md")));
        assert!(!is_inside(&work, &resolve(&work, "../outside/x")));
        assert!(
            !is_inside(&work, &resolve(&work, "link/x.txt")),
            "a symlink out is outside"
        );
        assert!(!is_inside(&work, &resolve(&work, "/etc/passwd")));
        assert!(is_inside(&work, &resolve(&work, "new/deep/file.txt")));
    }
}
