//! What an edit would change, shown before it is approved: the unified diff (with its line
//! numbers) of `edit_file` or `write_file` applied to the file as it is now. It is computed on
//! the engine's side, where files may be read, and carried by the approval request, so no front
//! end ever reads the user's files. Nothing is written; a preview that cannot be made (the text
//! does not match once, the file is not text or too big, a rule denies reading it, it is a
//! secret file) is `None`, and the front end shows the call's own strings instead.

use std::path::Path;

use serde_json::Value;

use super::read_file::{MAX_READ_BYTES, read_prefix};
use super::{EditorFiles, diff};
use crate::files::paths;
use crate::files::protected;

/// The diff `tool` would make with `arguments`, if it is an edit that can be previewed.
/// `read_denied` says whether a deny rule covers reading a resolved path: the permission
/// check's judgement (`permission::read_denied`), passed in by the engine, which sits above both.
pub fn edit_preview(
    tool: &str,
    arguments: &Value,
    workdir: &Path,
    read_denied: impl Fn(&Path) -> bool,
) -> Option<String> {
    edit_preview_in_editor(tool, arguments, workdir, read_denied, None)
}

/// `edit_preview` where `editor` holds the files (ACP): once the path is judged as for the
/// disk, the editor's buffer is the text the edit applies to (an unsaved buffer, or a file only
/// the editor holds), as it is for the edit itself. Blocking (run off the async threads).
pub fn edit_preview_in_editor(
    tool: &str,
    arguments: &Value,
    workdir: &Path,
    read_denied: impl Fn(&Path) -> bool,
    editor: Option<&dyn EditorFiles>,
) -> Option<String> {
    let text = |key: &str| arguments.get(key).and_then(Value::as_str);
    let path = paths::resolve(workdir, text("path")?);
    // The preview reaches front ends (and `exec --json`): what they may not read, it never
    // shows, not even as the context lines around a change.
    if read_denied(&path) || protected::is_secret_file(&path) {
        return None;
    }
    let shown = paths::display(workdir, &path);
    let sensitive = |path: &Path| read_denied(path) || protected::is_secret_file(path);
    let held = || super::editor_files::read_blocking(editor, &path);
    let before = match read_prefix(workdir, text("path")?, &sensitive, MAX_READ_BYTES) {
        Ok(prefix) if !prefix.cut => match held() {
            Some(buffer) => buffer,
            None => String::from_utf8(prefix.bytes).ok()?,
        },
        Ok(_) => return None,
        // Not on disk, but the editor holds it.
        Err(super::read_file::NotReadable::Io(e))
            if e.kind() == std::io::ErrorKind::NotFound
                && let Some(buffer) = held() =>
        {
            buffer
        }
        // A file to be created: everything is added.
        Err(super::read_file::NotReadable::Io(e))
            if e.kind() == std::io::ErrorKind::NotFound && tool == "write_file" =>
        {
            String::new()
        }
        Err(_) => return None,
    };
    let after = applied(tool, arguments, &before)?;
    Some(diff::unified(&shown, &before, &after))
}

/// The text `tool` (`edit_file` or `write_file`) would leave of a file that holds `before`;
/// `None` when it is no edit, or its text does not match once (nor `replace_all` every time).
pub fn applied(tool: &str, arguments: &Value, before: &str) -> Option<String> {
    let text = |key: &str| arguments.get(key).and_then(Value::as_str);
    match tool {
        "write_file" => Some(text("content")?.to_owned()),
        "edit_file" => {
            let (old, new) = (text("old_string")?, text("new_string")?);
            let count = if old.is_empty() {
                0
            } else {
                before.matches(old).count()
            };
            let every = arguments.get("replace_all").and_then(Value::as_bool) == Some(true);
            match count {
                1 => Some(before.replacen(old, new, 1)),
                n if n > 1 && every => Some(before.replace(old, new)),
                _ => None,
            }
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// No deny rule: the permission check's judgement is the engine's to pass in.
    fn allowed(_: &Path) -> bool {
        false
    }

    #[test]
    fn an_edit_is_previewed_with_the_files_own_line_numbers() {
        let dir = tempfile::tempdir().unwrap();
        let text: String = (1..=20).map(|n| format!("line {n}\n")).collect();
        std::fs::write(dir.path().join("a.txt"), &text).unwrap();
        let call = json!({"path": "a.txt", "old_string": "line 12\n", "new_string": "twelve\n"});
        let diff = edit_preview("edit_file", &call, dir.path(), allowed).unwrap();
        assert!(diff.contains("@@ -9,7 +9,7 @@"), "{diff}");
        assert!(diff.contains("-line 12\n+twelve"), "{diff}");
        // Nothing was written.
        assert_eq!(
            std::fs::read_to_string(dir.path().join("a.txt")).unwrap(),
            text
        );
        // Ambiguous or missing text: no preview.
        let twice = json!({"path": "a.txt", "old_string": "line 1", "new_string": "x"});
        assert_eq!(edit_preview("edit_file", &twice, dir.path(), allowed), None);
        let new_file = json!({"path": "b.txt", "content": "one\ntwo\n"});
        let diff = edit_preview("write_file", &new_file, dir.path(), allowed).unwrap();
        assert!(diff.contains("+one\n+two"), "{diff}");
    }

    /// An editor holding `buffer.txt` unsaved and `only-here.txt` never saved.
    struct Buffers;

    #[async_trait::async_trait]
    impl EditorFiles for Buffers {
        async fn read_text(&self, path: &Path) -> Result<String, super::super::EditorFileError> {
            match path.file_name().and_then(|n| n.to_str()) {
                Some("buffer.txt") => Ok("unsaved one\n".into()),
                Some("only-here.txt") => Ok("held two\n".into()),
                _ => Err(super::super::EditorFileError::Failed("not open".into())),
            }
        }
        async fn write_text(&self, _: &Path, _: &str) -> Result<(), super::super::EditorFileError> {
            Ok(())
        }
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn the_preview_is_of_the_editors_buffer_and_a_file_only_it_holds() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("buffer.txt"), "disk one\n").unwrap();
        std::fs::write(dir.path().join(".env"), "one\n").unwrap();
        let root = dir.path().to_path_buf();
        let preview = move |tool: &'static str, call: Value| {
            let root = root.clone();
            tokio::task::spawn_blocking(move || {
                edit_preview_in_editor(tool, &call, &root, allowed, Some(&Buffers))
            })
        };
        let call = json!({"path": "buffer.txt", "old_string": "one", "new_string": "1"});
        let diff = preview("edit_file", call).await.unwrap().unwrap();
        assert!(diff.contains("-unsaved one\n+unsaved 1"), "{diff}");
        let call = json!({"path": "only-here.txt", "old_string": "two", "new_string": "2"});
        let diff = preview("edit_file", call).await.unwrap().unwrap();
        assert!(diff.contains("-held two\n+held 2"), "{diff}");
        // write_file over a buffer shows the buffer's text as the old text.
        let call = json!({"path": "buffer.txt", "content": "new\n"});
        let diff = preview("write_file", call).await.unwrap().unwrap();
        assert!(diff.contains("-unsaved one\n+new"), "{diff}");
        // A secret is still never previewed, nor is the editor asked for it.
        let call = json!({"path": ".env", "old_string": "one", "new_string": "2"});
        assert_eq!(preview("edit_file", call).await.unwrap(), None);
    }

    #[test]
    fn a_secret_file_is_never_previewed() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(".env"), "KEY=hunter2\nOTHER=1\n").unwrap();
        let call = json!({"path": ".env", "old_string": "OTHER=1", "new_string": "OTHER=2"});
        assert_eq!(edit_preview("edit_file", &call, dir.path(), allowed), None);
    }

    #[test]
    fn a_file_a_deny_rule_covers_is_never_previewed() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "one\n").unwrap();
        let call = json!({"path": "a.txt", "old_string": "one", "new_string": "two"});
        let denied = |path: &Path| path.ends_with("a.txt");
        assert_eq!(edit_preview("edit_file", &call, dir.path(), denied), None);
    }
}
