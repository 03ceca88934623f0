//! harness9's tool calls as the editor shows them: a kind (its icon), a title a person reads,
//! the files they touch (so the editor can follow along), and content: the old and new text of
//! an edit, the output of a command.

use std::path::{Path, PathBuf};

use agent_client_protocol::v1::schema as acp;
use serde_json::Value;

use crate::schema::{ToolCall, ToolResult};

/// Output shown in the editor at most; the model got all of it.
const MAX_SHOWN_OUTPUT: usize = 32 * 1024;

/// The editor's icon for a tool.
pub fn kind_of(name: &str) -> acp::ToolKind {
    match name {
        "read_file" | "list_dir" | "use_skill" => acp::ToolKind::Read,
        "write_file" | "edit_file" => acp::ToolKind::Edit,
        "bash" => acp::ToolKind::Execute,
        "grep" | "glob" => acp::ToolKind::Search,
        "web_fetch" | "web_search" => acp::ToolKind::Fetch,
        "todo_write" | crate::schema::TASK_TOOL => acp::ToolKind::Think,
        _ => acp::ToolKind::Other,
    }
}

fn text_arg<'a>(args: &'a Value, key: &str) -> Option<&'a str> {
    args.get(key).and_then(Value::as_str)
}

/// A one-line title: what the call does, in words.
pub fn title_of(call: &ToolCall) -> String {
    let args = call.arguments_value();
    let arg = |key: &str| text_arg(&args, key).unwrap_or("").to_owned();
    let line = |text: String| text.lines().next().unwrap_or("").to_owned();
    match call.name.as_str() {
        "read_file" => format!("Read {}", arg("path")),
        "list_dir" => format!("List {}", arg("path")),
        "write_file" => format!("Write {}", arg("path")),
        "edit_file" => format!("Edit {}", arg("path")),
        "bash" => format!("Run `{}`", line(arg("command"))),
        "grep" => format!("Search for `{}`", arg("pattern")),
        "glob" => format!("Find files `{}`", arg("pattern")),
        "web_fetch" => format!("Fetch {}", arg("url")),
        "web_search" => format!("Search the web for {}", arg("query")),
        "todo_write" => "Update the plan".to_owned(),
        "use_skill" => format!("Use the {} skill", arg("name")),
        crate::schema::TASK_TOOL => format!("Task: {}", line(arg("description"))),
        name => name.to_owned(),
    }
}

/// The file a call's `path` names, made absolute against the session's folder.
fn path_of(args: &Value, workdir: &Path) -> Option<PathBuf> {
    let path = text_arg(args, "path").filter(|p| !p.is_empty())?;
    Some(workdir.join(path))
}

/// Where the call looks or writes (file and line), for the editor to follow.
pub fn locations_of(call: &ToolCall, workdir: &Path) -> Vec<acp::ToolCallLocation> {
    let args = call.arguments_value();
    let Some(path) = path_of(&args, workdir) else {
        return Vec::new();
    };
    let line = args
        .get("offset")
        .and_then(Value::as_u64)
        .and_then(|n| u32::try_from(n).ok());
    vec![acp::ToolCallLocation::new(path).line(line)]
}

/// An edit's change as old and new text of its file (the editor shows the diff).
pub fn diff_of(call: &ToolCall, workdir: &Path) -> Option<acp::Diff> {
    let args = call.arguments_value();
    let path = path_of(&args, workdir)?;
    match call.name.as_str() {
        "edit_file" => Some(
            acp::Diff::new(path, text_arg(&args, "new_string")?)
                .old_text(text_arg(&args, "old_string").map(str::to_owned)),
        ),
        "write_file" => Some(acp::Diff::new(path, text_arg(&args, "content")?)),
        _ => None,
    }
}

/// The call as it starts: `tool_call`.
pub fn started(call: &ToolCall, workdir: &Path, id: &str) -> acp::ToolCall {
    let mut content = Vec::new();
    if let Some(diff) = diff_of(call, workdir) {
        content.push(acp::ToolCallContent::Diff(diff));
    }
    acp::ToolCall::new(id.to_owned(), title_of(call))
        .kind(kind_of(&call.name))
        .status(acp::ToolCallStatus::InProgress)
        .locations(locations_of(call, workdir))
        .content(content)
        .raw_input(call.arguments_value())
}

/// The call as a permission request shows it (the same fields as `started`).
pub fn asked(call: &ToolCall, workdir: &Path) -> acp::ToolCallUpdate {
    let mut fields = acp::ToolCallUpdateFields::new()
        .title(title_of(call))
        .kind(kind_of(&call.name))
        .locations(locations_of(call, workdir))
        .raw_input(call.arguments_value());
    if let Some(diff) = diff_of(call, workdir) {
        fields = fields.content(vec![acp::ToolCallContent::Diff(diff)]);
    }
    acp::ToolCallUpdate::new(call.id.clone(), fields)
}

/// The call as it ended: `tool_call_update` with its status and what it gave. An edit keeps
/// its diff (the content sent at the start) unless it failed, and a command run in a terminal
/// embedded in its call (`in_terminal`) keeps that terminal, which shows its whole output.
pub fn finished(
    result: &ToolResult,
    name: &str,
    id: &str,
    in_terminal: bool,
) -> acp::ToolCallUpdate {
    let status = if result.is_error {
        acp::ToolCallStatus::Failed
    } else {
        acp::ToolCallStatus::Completed
    };
    let mut fields = acp::ToolCallUpdateFields::new().status(status);
    let is_edit = matches!(name, "edit_file" | "write_file");
    if !in_terminal && (result.is_error || !is_edit) {
        fields = fields.content(vec![output_content(&result.output, name == "bash")]);
    }
    acp::ToolCallUpdate::new(id.to_owned(), fields)
}

/// A tool's output as content: a command's in a code block, so the editor keeps its layout.
fn output_content(output: &str, command: bool) -> acp::ToolCallContent {
    let shown = if output.len() > MAX_SHOWN_OUTPUT {
        let mut end = MAX_SHOWN_OUTPUT;
        while !output.is_char_boundary(end) {
            end -= 1;
        }
        format!("{}\n… ({} more bytes)", &output[..end], output.len() - end)
    } else {
        output.to_owned()
    };
    let text = if command {
        format!("```\n{shown}\n```")
    } else {
        shown
    };
    acp::ToolCallContent::from(acp::ContentBlock::Text(acp::TextContent::new(text)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(name: &str, args: Value) -> ToolCall {
        ToolCall {
            id: "call_1".into(),
            name: name.into(),
            arguments: args.to_string(),
        }
    }

    #[test]
    fn an_edit_is_an_edit_of_its_file_with_old_and_new_text() {
        let edit = call(
            "edit_file",
            serde_json::json!({"path": "src/a.rs", "old_string": "a", "new_string": "b"}),
        );
        let started = started(&edit, Path::new("/repo"), "call_1");
        let json = serde_json::to_value(&started).unwrap();
        assert_eq!(json["kind"], "edit");
        assert_eq!(json["title"], "Edit src/a.rs");
        assert_eq!(json["locations"][0]["path"], "/repo/src/a.rs");
        assert_eq!(json["content"][0]["type"], "diff");
        assert_eq!(json["content"][0]["oldText"], "a");
        assert_eq!(json["content"][0]["newText"], "b");
    }

    #[test]
    fn a_command_shows_its_output_in_a_block_and_a_failure_fails() {
        let update = finished(&ToolResult::error("c", "boom"), "bash", "c", false);
        let json = serde_json::to_value(&update).unwrap();
        assert_eq!(json["status"], "failed");
        assert_eq!(json["content"][0]["content"]["text"], "```\nboom\n```");
        // Run in a terminal embedded in the call: the terminal stays its content.
        let in_terminal = finished(&ToolResult::ok("c", "out"), "bash", "c", true);
        let json = serde_json::to_value(&in_terminal).unwrap();
        assert_eq!(json["status"], "completed");
        assert!(json.get("content").is_none(), "{json}");
        let read = call("read_file", serde_json::json!({"path": "a", "offset": 7}));
        let locations = locations_of(&read, Path::new("/r"));
        assert_eq!(locations[0].line, Some(7));
        assert_eq!(kind_of("grep"), acp::ToolKind::Search);
    }
}
