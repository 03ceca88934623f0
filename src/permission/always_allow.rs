//! "Always allow calls like this": adds a rule to `<workdir>/.harness9/settings.local.json`, the
//! personal file that git ignores. A file it cannot parse is never rewritten (the user's other
//! rules would be lost): it says so instead and writes nothing.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

/// Why a rule could not be written, in words for the notice.
#[derive(Debug, thiserror::Error)]
pub enum AlwaysAllowError {
    #[error(
        "{path} could not be read as settings JSON ({problem}); it was left as it is and nothing \
         was written. Fix it by hand and add `{rule}` to permissions.allow"
    )]
    Unparsable {
        path: String,
        problem: String,
        rule: String,
    },
    #[error("could not write {path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
}

/// Adds `rule` to the allow list of `file` (creating it), then makes sure git ignores it.
/// Returns the path written.
pub fn add_allow(file: &Path, rule: &str) -> Result<PathBuf, AlwaysAllowError> {
    let shown = file.display().to_string();
    let io = |source| AlwaysAllowError::Io {
        path: shown.clone(),
        source,
    };
    let mut value = match std::fs::read_to_string(file) {
        Ok(text) if text.trim().is_empty() => json!({}),
        Ok(text) => serde_json::from_str::<Value>(&text).map_err(|e| unparsable(file, rule, e))?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => json!({}),
        Err(e) => return Err(io(e)),
    };
    let list = allow_list(&mut value).ok_or_else(|| AlwaysAllowError::Unparsable {
        path: shown.clone(),
        problem: "`permissions.allow` is not a list inside an object".into(),
        rule: rule.to_owned(),
    })?;
    if !list.iter().any(|r| r == rule) {
        list.push(json!(rule));
    }
    if let Some(parent) = file.parent() {
        std::fs::create_dir_all(parent).map_err(io)?;
        ignore_in_git(parent).map_err(io)?;
    }
    let text = serde_json::to_string_pretty(&value).map_err(|e| io(std::io::Error::other(e)))?;
    crate::files::write_atomic(file, format!("{text}\n").as_bytes()).map_err(io)?;
    Ok(file.to_owned())
}

fn unparsable(file: &Path, rule: &str, error: serde_json::Error) -> AlwaysAllowError {
    AlwaysAllowError::Unparsable {
        path: file.display().to_string(),
        problem: error.to_string(),
        rule: rule.to_owned(),
    }
}

/// `permissions.allow` of a settings object, created when missing; `None` when something on
/// the way has another type (it is not ours to replace).
fn allow_list(value: &mut Value) -> Option<&mut Vec<Value>> {
    let root = value.as_object_mut()?;
    let permissions = root
        .entry("permissions")
        .or_insert_with(|| json!({}))
        .as_object_mut()?;
    permissions
        .entry("allow")
        .or_insert_with(|| json!([]))
        .as_array_mut()
}

/// The files `add_allow` writes for `file`: the settings file and the `.gitignore` beside it
/// (harness9's own writes, which `/undo` leaves alone).
pub fn files_written(file: &Path) -> [PathBuf; 2] {
    [file.to_owned(), file.with_file_name(GITIGNORE)]
}

/// The name of the ignore file kept next to the local settings.
const GITIGNORE: &str = ".gitignore";
const LOCAL_NAME: &str = "settings.local.json";

/// What harness9 writes as `.harness9/.gitignore` when there is none: the local settings and
/// the ignore file itself, so that `git status` shows nothing new after "always allow".
const OWN_GITIGNORE: &str = "/settings.local.json\n/.gitignore\n";
/// What harness9 wrote before it ignored the file itself.
const OLDER_OWN_GITIGNORE: &str = "/settings.local.json\n";

/// Makes sure git ignores `settings.local.json` in `dir` (the `.harness9` directory): a
/// `.harness9/.gitignore` naming it. It travels with the folder, works outside a repository's
/// root and without touching `.git/`. A file of the user's own is only added to.
fn ignore_in_git(dir: &Path) -> std::io::Result<()> {
    let path = dir.join(GITIGNORE);
    let existing = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(e),
    };
    if existing.is_empty() || existing == OLDER_OWN_GITIGNORE {
        return crate::files::write_atomic(&path, OWN_GITIGNORE.as_bytes());
    }
    if existing
        .lines()
        .any(|line| matches!(line.trim(), LOCAL_NAME | "/settings.local.json"))
    {
        return Ok(());
    }
    let mut text = existing;
    if !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str("/settings.local.json\n");
    crate::files::write_atomic(&path, text.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_the_local_file_and_ignores_it_in_git() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join(".harness9").join(LOCAL_NAME);
        add_allow(&file, "bash(cargo test*)").unwrap();
        add_allow(&file, "bash(cargo test*)").unwrap();
        let written: Value =
            serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        assert_eq!(
            written,
            json!({"permissions": {"allow": ["bash(cargo test*)"]}})
        );
        let ignore = std::fs::read_to_string(dir.path().join(".harness9/.gitignore")).unwrap();
        assert_eq!(ignore, "/settings.local.json\n/.gitignore\n", "named once");
    }

    /// Issue 32: after "always allow" in a git repository `git status` shows nothing new: the
    /// `.gitignore` harness9 writes ignores itself as well as the local settings (one an older
    /// harness9 wrote gets the line too; a user's own file is only added to).
    #[test]
    fn git_status_stays_clean_after_always_allow() {
        let dir = tempfile::tempdir().unwrap();
        let git = |args: &[&str]| {
            let out = std::process::Command::new("git")
                .args(args)
                .current_dir(dir.path())
                .output()
                .unwrap();
            String::from_utf8_lossy(&out.stdout).into_owned()
        };
        git(&["init", "-q"]);
        let file = dir.path().join(".harness9").join(LOCAL_NAME);
        add_allow(&file, "bash(cargo test*)").unwrap();
        assert_eq!(git(&["status", "--porcelain", "--untracked-files=all"]), "");
        let ignore = dir.path().join(".harness9/.gitignore");
        std::fs::write(&ignore, "/settings.local.json\n").unwrap();
        add_allow(&file, "bash(ls*)").unwrap();
        assert_eq!(git(&["status", "--porcelain", "--untracked-files=all"]), "");
        std::fs::write(&ignore, "notes/\n").unwrap();
        add_allow(&file, "bash(echo*)").unwrap();
        assert_eq!(
            std::fs::read_to_string(&ignore).unwrap(),
            "notes/\n/settings.local.json\n",
            "a user's own file is only added to"
        );
    }

    #[test]
    fn keeps_the_other_rules_and_never_rewrites_a_file_it_cannot_parse() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join(LOCAL_NAME);
        std::fs::write(
            &file,
            r#"{"permissions": {"deny": ["bash(rm *)"], "allow": ["bash(ls*)"]}, "x": 1}"#,
        )
        .unwrap();
        add_allow(&file, "bash(echo*)").unwrap();
        let written: Value =
            serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        assert_eq!(written["permissions"]["deny"], json!(["bash(rm *)"]));
        assert_eq!(
            written["permissions"]["allow"],
            json!(["bash(ls*)", "bash(echo*)"])
        );
        assert_eq!(written["x"], 1);

        // Finding 6: a trailing comma made it rewrite the file and drop the user's deny rules.
        let broken = r#"{"permissions": {"deny": ["bash(rm *)"],}}"#;
        std::fs::write(&file, broken).unwrap();
        let error = add_allow(&file, "bash(echo*)").unwrap_err();
        assert!(error.to_string().contains("nothing was written"), "{error}");
        assert_eq!(std::fs::read_to_string(&file).unwrap(), broken);

        std::fs::write(&file, r#"{"permissions": {"allow": "bash"}}"#).unwrap();
        assert!(add_allow(&file, "bash(echo*)").is_err());
        assert_eq!(
            std::fs::read_to_string(&file).unwrap(),
            r#"{"permissions": {"allow": "bash"}}"#
        );
    }
}
