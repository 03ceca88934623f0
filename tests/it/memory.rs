//! Long-term memory through the real binary: written in one session, in the next session's
//! system prompt and found by `memory_search`, shown and removed by `harness9 memory`.

use serde_json::Value;

use crate::exec::{Run, json_lines};
use crate::support::{MockLlm, Reply, Split, openai_text_sse, openai_tool_sse};

fn system_prompt(request: &Value) -> String {
    request["messages"][0]["content"]
        .as_str()
        .unwrap_or("")
        .to_owned()
}

fn tool_output(request: &Value) -> String {
    let messages = request["messages"].as_array().unwrap();
    let tool = messages.iter().rev().find(|m| m["role"] == "tool").unwrap();
    tool["content"].as_str().unwrap().to_owned()
}

fn reply_tool(mock: &MockLlm, name: &str, arguments: &str) {
    mock.push(Reply::Sse {
        body: openai_tool_sse("call_1", name, arguments),
        split: Split::Whole,
    });
}

fn reply_text(mock: &MockLlm, text: &str) {
    mock.push(Reply::Sse {
        body: openai_text_sse(text),
        split: Split::Whole,
    });
}

fn ok(output: &std::process::Output) -> String {
    assert_eq!(
        output.status.code(),
        Some(0),
        "stderr: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
fn a_memory_written_in_one_session_is_in_the_next_ones_prompt_and_search() {
    let mock = MockLlm::start_in_background();
    let run = Run::new();
    let fact = r#"{"content": "The quokka service listens on port 7401.", "title": "quokka port"}"#;
    reply_tool(&mock, "memory_write", fact);
    reply_text(&mock, "Noted.");
    ok(&run.exec(&mock, &["exec", "--json", "remember the port"]));
    let first = mock.requests();
    assert!(
        !system_prompt(&first[0].body).contains("# Memories"),
        "nothing to remember yet"
    );
    assert!(tool_output(&first[1].body).starts_with("Remembered as #1"));
    // The same fact again only counts up.
    reply_tool(&mock, "memory_write", fact);
    reply_text(&mock, "Noted again.");
    ok(&run.exec(&mock, &["exec", "--json", "remember it again"]));
    assert!(tool_output(&mock.requests()[3].body).starts_with("Already remembered as #1"));

    reply_tool(&mock, "memory_search", r#"{"query": "which port quokka"}"#);
    reply_text(&mock, "Port 7401.");
    ok(&run.exec(&mock, &["exec", "--json", "which port?"]));
    let requests = mock.requests();
    let prompt = system_prompt(&requests[4].body);
    assert!(
        prompt.contains("# Memories")
            && prompt.contains("- [project] quokka port: The quokka service listens on port 7401."),
        "{prompt}"
    );
    // Taken once: the second request of the session carries the same prompt.
    assert_eq!(system_prompt(&requests[5].body), prompt);
    let found = tool_output(&requests[5].body);
    assert!(found.contains("listens on port 7401. (#1)"), "{found}");

    let md = std::fs::read_to_string(run.home.join("memory/MEMORY.md")).unwrap();
    assert!(md.contains("quokka port: The quokka service"), "{md}");

    let listed = json_lines(ok(&run.exec(&mock, &["memory", "list", "--json"])).as_bytes());
    assert_eq!(listed[0][0]["use_count"], 2);
    assert_eq!(listed[0][0]["scope"], "project");
    let searched = ok(&run.exec(&mock, &["memory", "search", "quokka"]));
    assert!(searched.starts_with("#1"), "{searched}");
    assert!(ok(&run.exec(&mock, &["memory", "rm", "1"])).contains("removed memory #1"));
    assert_eq!(ok(&run.exec(&mock, &["memory", "list"])), "no memories\n");
    let missing = run.exec(&mock, &["memory", "rm", "1"]);
    assert_eq!(missing.status.code(), Some(1));
    let md = std::fs::read_to_string(run.home.join("memory/MEMORY.md")).unwrap();
    assert!(!md.contains("quokka"), "{md}");
}

#[test]
fn a_user_memory_is_not_written_headlessly_without_yolo() {
    let mock = MockLlm::start_in_background();
    let run = Run::new();
    reply_tool(
        &mock,
        "memory_write",
        r#"{"content": "The user likes terse answers.", "scope": "user"}"#,
    );
    reply_text(&mock, "Could not.");
    ok(&run.exec(&mock, &["exec", "--json", "remember globally"]));
    let refused = tool_output(&mock.requests()[1].body);
    assert!(refused.contains("--mode yolo"), "{refused}");
    assert_eq!(
        ok(&run.exec(&mock, &["memory", "list", "--all"])),
        "no memories\n"
    );
}
