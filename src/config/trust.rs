//! Folder trust (CONTRACT "Folder trust"): `$HARNESS9_HOME/trusted.json` lists the folders the
//! user trusted, by canonical path. Only an exact entry trusts a folder: trusting a parent does
//! not trust what is cloned under it later. A linked git worktree is trusted with its repository
//! (the top of the worktree as the repository's main working tree), when the repository names
//! it back. An unreadable or malformed file trusts nothing.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The file's name under `$HARNESS9_HOME`.
pub const TRUST_FILE: &str = "trusted.json";

#[derive(Debug, Default, Serialize, Deserialize)]
struct TrustFile {
    #[serde(default)]
    trusted: Vec<PathBuf>,
}

/// Why a folder could not be remembered as trusted.
#[derive(Debug, thiserror::Error)]
pub enum TrustError {
    #[error("cannot read {path}: {reason}")]
    Read { path: String, reason: String },
    #[error("cannot write {path}: {reason}")]
    Write { path: String, reason: String },
}

fn trust_file(home: &Path) -> PathBuf {
    home.join(TRUST_FILE)
}

/// Whether the user trusted `workdir` (a canonical path) before, or the repository whose
/// linked worktree it is.
pub fn is_trusted(home: &Path, workdir: &Path) -> bool {
    match read(home) {
        Ok(file) => {
            let main = crate::worktree::main_of_linked(workdir);
            file.trusted
                .iter()
                .any(|dir| dir == workdir || main.as_deref() == Some(dir.as_path()))
        }
        Err(error) => {
            tracing::warn!("[trust] {error}; no folder counts as trusted");
            false
        }
    }
}

/// Adds `workdir` to the trusted folders. A file that cannot be parsed is left as it is (it
/// may hold the user's other entries): the error says so instead.
pub fn remember(home: &Path, workdir: &Path) -> Result<(), TrustError> {
    let mut file = read(home)?;
    if file.trusted.iter().any(|dir| dir == workdir) {
        return Ok(());
    }
    file.trusted.push(workdir.to_path_buf());
    let path = trust_file(home);
    let write_error = |reason: String| TrustError::Write {
        path: path.display().to_string(),
        reason,
    };
    crate::private_home::create_dir(home).map_err(|e| write_error(e.to_string()))?;
    let text = serde_json::to_string_pretty(&file).map_err(|e| write_error(e.to_string()))?;
    // Written beside and renamed over, so a crash never leaves half a file.
    let partial = home.join(format!("{TRUST_FILE}.partial"));
    std::fs::write(&partial, text + "\n").map_err(|e| write_error(e.to_string()))?;
    std::fs::rename(&partial, &path).map_err(|e| write_error(e.to_string()))
}

fn read(home: &Path) -> Result<TrustFile, TrustError> {
    let path = trust_file(home);
    let read_error = |reason: String| TrustError::Read {
        path: path.display().to_string(),
        reason,
    };
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(TrustFile::default()),
        Err(e) => return Err(read_error(e.to_string())),
    };
    serde_json::from_str(&text).map_err(|e| read_error(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_remembered_folder_is_trusted_and_its_parent_and_children_are_not() {
        let home = tempfile::tempdir().unwrap();
        let work = Path::new("/srv/repo");
        assert!(!is_trusted(home.path(), work));
        remember(home.path(), work).unwrap();
        remember(home.path(), work).unwrap();
        assert!(is_trusted(home.path(), work));
        assert!(!is_trusted(home.path(), Path::new("/srv")));
        assert!(!is_trusted(home.path(), Path::new("/srv/repo/sub")));
        let text = std::fs::read_to_string(home.path().join(TRUST_FILE)).unwrap();
        assert_eq!(text.matches("/srv/repo").count(), 1, "{text}");
    }

    #[test]
    fn a_malformed_file_trusts_nothing_and_is_not_overwritten() {
        let home = tempfile::tempdir().unwrap();
        let path = home.path().join(TRUST_FILE);
        std::fs::write(&path, "{\"trusted\": [\"/srv/repo\",]}").unwrap();
        assert!(!is_trusted(home.path(), Path::new("/srv/repo")));
        assert!(remember(home.path(), Path::new("/other")).is_err());
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "{\"trusted\": [\"/srv/repo\",]}"
        );
    }

    #[test]
    fn trusting_a_repository_trusts_its_worktrees_and_nothing_that_copies_their_git_file() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let (main, home) = (root.join("app"), root.join("home"));
        std::fs::create_dir_all(&main).unwrap();
        let git = |args: &[&str]| {
            let identity = ["-c", "user.name=t", "-c", "user.email=t@example.com"];
            let all: Vec<&str> = identity.iter().chain(args).copied().collect();
            crate::worktree::git::run(&main, &all).unwrap();
        };
        git(&["init", "-q", "-b", "main"]);
        git(&["commit", "-q", "--allow-empty", "-m", "first"]);
        let linked = root.join("app.worktrees/x");
        git(&[
            "worktree",
            "add",
            "-q",
            "-b",
            "harness9/x",
            &linked.to_string_lossy(),
        ]);
        let impostor = root.join("impostor");
        std::fs::create_dir(&impostor).unwrap();
        std::fs::copy(linked.join(".git"), impostor.join(".git")).unwrap();
        assert!(!is_trusted(&home, &linked));
        remember(&home, &main).unwrap();
        assert!(is_trusted(&home, &linked));
        assert!(!is_trusted(&home, &impostor));
        assert!(!is_trusted(&home, &linked.join("sub")));
    }
}
