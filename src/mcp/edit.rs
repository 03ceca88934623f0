//! `mcp add` and `mcp remove` as edits of one JSON file: only the named entry of `mcpServers`
//! changes; every other key, server and field (ours or another tool's) is kept. A file that
//! does not parse is never rewritten. Writes are atomic.

use std::path::Path;

use serde_json::{Map, Value};

#[derive(Debug, thiserror::Error)]
pub enum EditError {
    #[error("{path} is not valid JSON ({reason}); fix it by hand, it was left as it is")]
    Unparsable { path: String, reason: String },
    #[error("{path}: {what}; fix it by hand, it was left as it is")]
    Shape { path: String, what: String },
    #[error("cannot {action} {path}: {reason}")]
    Io {
        action: &'static str,
        path: String,
        reason: String,
    },
}

/// A stdio server's definition, as Claude Code writes it.
pub fn stdio_definition(command: &str, args: &[String], env: &[(String, String)]) -> Value {
    let mut object = Map::new();
    object.insert("command".into(), Value::String(command.to_owned()));
    object.insert(
        "args".into(),
        Value::Array(args.iter().cloned().map(Value::String).collect()),
    );
    if !env.is_empty() {
        object.insert("env".into(), pairs(env));
    }
    Value::Object(object)
}

/// A Streamable HTTP server's definition.
pub fn http_definition(url: &str, headers: &[(String, String)]) -> Value {
    let mut object = Map::new();
    object.insert("type".into(), Value::String("http".into()));
    object.insert("url".into(), Value::String(url.to_owned()));
    if !headers.is_empty() {
        object.insert("headers".into(), pairs(headers));
    }
    Value::Object(object)
}

fn pairs(pairs: &[(String, String)]) -> Value {
    Value::Object(
        pairs
            .iter()
            .map(|(k, v)| (k.clone(), Value::String(v.clone())))
            .collect(),
    )
}

/// Adds (or replaces) server `name` in `path`; returns whether one was replaced.
pub fn add(path: &Path, name: &str, definition: Value) -> Result<bool, EditError> {
    let mut root = read(path)?;
    let servers = servers_mut(path, &mut root)?;
    let replaced = servers.insert(name.to_owned(), definition).is_some();
    write(path, &root)?;
    Ok(replaced)
}

/// Removes server `name` from `path`; returns whether it was there (the file is untouched
/// when it was not).
pub fn remove(path: &Path, name: &str) -> Result<bool, EditError> {
    if !path.exists() {
        return Ok(false);
    }
    let mut root = read(path)?;
    let removed = servers_mut(path, &mut root)?.remove(name).is_some();
    if removed {
        write(path, &root)?;
    }
    Ok(removed)
}

/// Whether `path` defines server `name`.
pub fn contains(path: &Path, name: &str) -> bool {
    read(path)
        .ok()
        .and_then(|root| root.get("mcpServers")?.get(name).cloned())
        .is_some()
}

fn read(path: &Path) -> Result<Value, EditError> {
    let shown = path.display().to_string();
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Value::Object(Map::new())),
        Err(e) => {
            return Err(EditError::Io {
                action: "read",
                path: shown,
                reason: e.to_string(),
            });
        }
    };
    if text.trim().is_empty() {
        return Ok(Value::Object(Map::new()));
    }
    serde_json::from_str(&text).map_err(|e| EditError::Unparsable {
        path: shown,
        reason: e.to_string(),
    })
}

fn servers_mut<'a>(
    path: &Path,
    root: &'a mut Value,
) -> Result<&'a mut Map<String, Value>, EditError> {
    let shape = |what: &str| EditError::Shape {
        path: path.display().to_string(),
        what: what.to_owned(),
    };
    let object = root
        .as_object_mut()
        .ok_or_else(|| shape("the file is not a JSON object"))?;
    let servers = object
        .entry("mcpServers")
        .or_insert_with(|| Value::Object(Map::new()));
    if servers.is_null() {
        *servers = Value::Object(Map::new());
    }
    servers
        .as_object_mut()
        .ok_or_else(|| shape("`mcpServers` is not an object"))
}

fn write(path: &Path, root: &Value) -> Result<(), EditError> {
    let io = |e: std::io::Error| EditError::Io {
        action: "write",
        path: path.display().to_string(),
        reason: e.to_string(),
    };
    let text = serde_json::to_string_pretty(root).map_err(|e| io(std::io::Error::other(e)))?;
    crate::files::write_atomic(path, format!("{text}\n").as_bytes()).map_err(io)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn add_and_remove_keep_what_they_do_not_understand() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".mcp.json");
        let original = json!({
            "someOtherTool": {"keep": true},
            "mcpServers": {
                "old": {"command": "old-srv", "x-extra": [1, 2], "disabled": true}
            }
        });
        std::fs::write(&path, original.to_string()).unwrap();
        let definition = stdio_definition(
            "npx",
            &["-y".into(), "srv".into()],
            &[("K".into(), "V".into())],
        );
        assert!(!add(&path, "new", definition.clone()).unwrap());
        let written: Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(written["someOtherTool"], json!({"keep": true}));
        assert_eq!(written["mcpServers"]["old"], original["mcpServers"]["old"]);
        assert_eq!(
            written["mcpServers"]["new"],
            json!({"command": "npx", "args": ["-y", "srv"], "env": {"K": "V"}})
        );
        assert!(contains(&path, "new"));
        assert!(remove(&path, "new").unwrap());
        assert!(!remove(&path, "new").unwrap());
        let after: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(after, original);
    }

    #[test]
    fn a_file_that_does_not_parse_is_never_rewritten() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("mcp.json");
        std::fs::write(&path, "{\"mcpServers\": ").unwrap();
        let error = add(&path, "x", http_definition("http://127.0.0.1:1/mcp", &[])).unwrap_err();
        assert!(matches!(error, EditError::Unparsable { .. }));
        assert!(remove(&path, "x").is_err());
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "{\"mcpServers\": ");
        std::fs::write(&path, "[1]").unwrap();
        assert!(matches!(
            add(&path, "x", json!({})).unwrap_err(),
            EditError::Shape { .. }
        ));
    }

    #[test]
    fn an_http_definition_has_the_claude_code_shape() {
        assert_eq!(
            http_definition(
                "https://h/mcp",
                &[("Authorization".into(), "Bearer ${T}".into())]
            ),
            json!({"type": "http", "url": "https://h/mcp", "headers": {"Authorization": "Bearer ${T}"}})
        );
    }
}
