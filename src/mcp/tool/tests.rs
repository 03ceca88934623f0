use serde_json::json;

use super::*;
use crate::schema::is_mcp_tool;

fn valid(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_NAME_LEN
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

#[test]
fn names_follow_the_providers_rules() {
    assert_eq!(
        tool_name("github", "list_issues"),
        "mcp__github__list_issues"
    );
    assert_eq!(server_part("my.server__x"), "my_server_x");
    assert_eq!(server_part("__"), "server");
    let dotted = tool_name("fs", "read.file");
    assert!(
        valid(&dotted) && dotted.starts_with("mcp__fs__read_file_"),
        "{dotted}"
    );
    // Two tools that clean up alike stay apart.
    assert_ne!(tool_name("fs", "read.file"), tool_name("fs", "read/file"));
    let long = "x".repeat(100);
    for name in [
        tool_name("a-very-long-server-name-indeed-yes", &long),
        tool_name("s", "ünïcødé tool"),
        tool_name("s", ""),
    ] {
        assert!(valid(&name), "{name}");
        assert!(is_mcp_tool(&name), "{name}");
    }
    assert_ne!(tool_name("s", &long), tool_name("s", &format!("{long}y")));
    assert!(!is_mcp_tool("mcp__x"));
    assert!(!is_mcp_tool("bash"));
}

#[test]
fn schemas_become_plain_object_schemas() {
    let map = |v: serde_json::Value| v.as_object().unwrap().clone();
    assert_eq!(
        normalise_schema(&map(json!({}))),
        json!({"type": "object", "properties": {}})
    );
    let odd = json!({
        "$schema": "http://json-schema.org/draft-07/schema#",
        "anyOf": [{"required": ["a"]}, {"required": ["b"]}],
        "properties": {"a": {"type": "string"}},
        "required": "a"
    });
    assert_eq!(
        normalise_schema(&map(odd)),
        json!({"type": "object", "properties": {"a": {"type": "string"}}})
    );
}

#[test]
fn results_join_text_keep_structure_and_name_binaries() {
    let wire = json!({
        "content": [
            {"type": "text", "text": "first"},
            {"type": "image", "data": "aGVsbG8=", "mimeType": "image/png"},
            {"type": "resource", "resource": {"uri": "file:///a.txt", "text": "body"}},
            {"type": "resource_link", "uri": "file:///b", "name": "b"},
            {"type": "text", "text": "{\"n\":1}"}
        ],
        "structuredContent": {"n": 1},
        "isError": false
    });
    let result: rmcp::model::CallToolResult = serde_json::from_value(wire).unwrap();
    let (text, is_error) = render_result(&result);
    assert!(!is_error);
    assert_eq!(
        text,
        "first\n[image image/png, 8 bytes base64]\n[resource file:///a.txt]\nbody\n\
         [resource file:///b (b)]\n{\"n\":1}"
    );
    let structured_only: rmcp::model::CallToolResult =
        serde_json::from_value(json!({"content": [], "structuredContent": {"k": [1]}})).unwrap();
    assert_eq!(render_result(&structured_only).0, "{\"k\":[1]}");
    let failed: rmcp::model::CallToolResult = serde_json::from_value(
        json!({"content": [{"type": "text", "text": "no such repo"}], "isError": true}),
    )
    .unwrap();
    assert_eq!(render_result(&failed), ("no such repo".to_owned(), true));
}

#[test]
fn long_results_are_capped() {
    let big = "y".repeat(OUTPUT_LIMIT * 3);
    let result: rmcp::model::CallToolResult =
        serde_json::from_value(json!({"content": [{"type": "text", "text": big}]})).unwrap();
    let (text, _) = render_result(&result);
    assert!(text.len() < OUTPUT_LIMIT + 200, "{}", text.len());
}
