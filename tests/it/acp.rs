//! `harness9 acp`, the real binary, driven as an editor drives it (JSON-RPC lines on its stdin
//! and stdout) against the mock model server: sessions, streamed turns, tool calls with diffs,
//! permission requests, cancel, load, modes, and an editor that goes away mid-turn.

mod editor;
mod editor_side;

use serde_json::{Value, json};

pub use editor::{Editor, texts, updates};

use crate::exec::Run;
use crate::support::{
    Gate, MockLlm, Reply, Split, openai_text_chunk, openai_text_sse, openai_tool_sse,
};

/// An OpenAI stream that thinks `thought`, then says `text`.
pub fn thinking_sse(thought: &str, text: &str) -> Vec<u8> {
    let chunk = json!({
        "id": "chatcmpl-test", "object": "chat.completion.chunk", "created": 1, "model": "gpt-4o",
        "choices": [{"index": 0, "delta": {"reasoning_content": thought}, "finish_reason": null}],
    });
    let mut body = format!("data: {chunk}\n\n").into_bytes();
    body.extend(openai_text_sse(text));
    body
}

/// Two turns that each write a file (`notes.txt`, then `other.txt`) and then say so.
pub fn push_writes(mock: &MockLlm) {
    for (id, file, content, said) in [
        ("call_w1", "notes.txt", "hello\n", "Written."),
        ("call_w2", "other.txt", "nope\n", "Not written."),
    ] {
        let args = json!({"path": file, "content": content}).to_string();
        mock.push(sse(openai_tool_sse(id, "write_file", &args)));
        mock.push(sse(openai_text_sse(said)));
    }
}

pub fn sse(body: Vec<u8>) -> Reply {
    Reply::Sse {
        body,
        split: Split::Whole,
    }
}

/// An answer that starts with `head` and holds the rest until the test opens the gate.
fn gated(mock: &MockLlm, head: &str, rest: &str) -> Gate {
    let gate = Gate::default();
    mock.push(Reply::Gated {
        head: openai_text_chunk(head),
        rest: openai_text_sse(rest),
        gate: gate.clone(),
    });
    gate
}

/// harness9 acp, initialized, with a new session in the run's folder.
fn with_session(run: &Run, mock: &MockLlm) -> (Editor, String) {
    let mut editor = Editor::start(run, mock);
    editor.initialize();
    let session = editor.new_session(run);
    (editor, session)
}

/// Waits for the first answer text of the turn; returns it.
fn first_text(editor: &mut Editor) -> Value {
    loop {
        let message = editor.next();
        if message["params"]["update"]["sessionUpdate"] == "agent_message_chunk" {
            return message["params"]["update"]["content"]["text"].clone();
        }
    }
}

#[test]
fn acp_prompt_streams_thought_and_text_and_ends_the_turn() {
    let mock = MockLlm::start_in_background();
    let run = Run::new();
    mock.push(sse(thinking_sse("Let me think.", "Hello from harness9.")));
    let mut editor = Editor::start(&run, &mock);
    let init = editor.initialize();
    assert_eq!(
        init["result"]["authMethods"],
        json!([]),
        "a key is configured: {init}"
    );
    let (answer, _) = editor.call("session/new", json!({"cwd": run.workdir, "mcpServers": []}));
    let session = answer["result"]["sessionId"].as_str().unwrap().to_owned();
    assert_eq!(
        answer["result"]["modes"]["currentModeId"], "default",
        "{answer}"
    );
    let id = editor.prompt(&session, "say hello");
    let (answer, notifications) = editor.answer_to(id, |r| panic!("asked {r}"));
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    assert_eq!(
        texts(&notifications, "agent_thought_chunk"),
        "Let me think."
    );
    assert_eq!(
        texts(&notifications, "agent_message_chunk"),
        "Hello from harness9."
    );
    // The slash commands follow the answer to session/new.
    let commands = updates(&notifications, "available_commands_update");
    assert_eq!(commands.len(), 1, "{notifications:?}");
    assert_eq!(commands[0]["availableCommands"][0]["name"], "compact");
    assert_eq!(editor.close(), Some(0));
}

#[test]
fn acp_edit_asks_permission_with_a_diff_allowed_then_denied() {
    let mock = MockLlm::start_in_background();
    let run = Run::new();
    push_writes(&mock);
    let (mut editor, session) = with_session(&run, &mock);

    let id = editor.prompt(&session, "write notes.txt");
    let mut asked = Vec::new();
    let (answer, notifications) = editor.answer_to(id, |request| {
        asked.push(request.clone());
        json!({"outcome": {"outcome": "selected", "optionId": "allow_once"}})
    });
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    assert_eq!(asked.len(), 1, "{asked:?}");
    let request = &asked[0];
    assert_eq!(request["method"], "session/request_permission");
    let options: Vec<(&str, &str)> = request["params"]["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| (o["optionId"].as_str().unwrap(), o["kind"].as_str().unwrap()))
        .collect();
    assert_eq!(options[0], ("allow_once", "allow_once"));
    assert_eq!(options[1], ("allow_session", "allow_always"));
    assert_eq!(options.last(), Some(&("deny", "reject_once")));
    assert_eq!(request["params"]["toolCall"]["kind"], "edit");
    let calls = updates(&notifications, "tool_call");
    assert_eq!(calls.len(), 1, "{notifications:?}");
    assert_eq!(calls[0]["kind"], "edit");
    assert_eq!(calls[0]["title"], "Write notes.txt");
    assert_eq!(calls[0]["content"][0]["type"], "diff");
    assert_eq!(calls[0]["content"][0]["newText"], "hello\n");
    assert_eq!(
        calls[0]["locations"][0]["path"],
        run.workdir.join("notes.txt").display().to_string()
    );
    let done = updates(&notifications, "tool_call_update");
    assert_eq!(done.last().unwrap()["status"], "completed");
    assert_eq!(
        std::fs::read_to_string(run.workdir.join("notes.txt")).unwrap(),
        "hello\n"
    );

    let id = editor.prompt(&session, "write other.txt");
    let (answer, notifications) = editor.answer_to(
        id,
        |_| json!({"outcome": {"outcome": "selected", "optionId": "deny"}}),
    );
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    assert!(
        !run.workdir.join("other.txt").exists(),
        "denied, not written"
    );
    let done = updates(&notifications, "tool_call_update");
    assert_eq!(
        done.last().unwrap()["status"],
        "failed",
        "{notifications:?}"
    );
    assert_eq!(texts(&notifications, "agent_message_chunk"), "Not written.");
}

#[test]
fn acp_cancel_mid_stream_ends_cancelled_and_the_session_goes_on() {
    let mock = MockLlm::start_in_background();
    let run = Run::new();
    let gate = Gate::default();
    mock.push(Reply::Gated {
        head: openai_text_chunk("The first words"),
        rest: openai_text_sse(" never shown"),
        gate: gate.clone(),
    });
    mock.push(sse(openai_text_sse("Still here.")));
    let mut editor = Editor::start(&run, &mock);
    editor.initialize();
    let session = editor.new_session(&run);
    let id = editor.prompt(&session, "talk slowly");
    loop {
        let message = editor.next();
        if message["params"]["update"]["sessionUpdate"] == "agent_message_chunk" {
            assert_eq!(
                message["params"]["update"]["content"]["text"],
                "The first words"
            );
            break;
        }
    }
    editor.notify("session/cancel", json!({"sessionId": session}));
    let (answer, _) = editor.answer_to(id, |r| panic!("asked {r}"));
    assert_eq!(answer["result"]["stopReason"], "cancelled", "{answer}");
    gate.open();

    let id = editor.prompt(&session, "are you there?");
    let (answer, notifications) = editor.answer_to(id, |r| panic!("asked {r}"));
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    assert_eq!(texts(&notifications, "agent_message_chunk"), "Still here.");
}

#[test]
fn acp_load_replays_the_stored_conversation_and_modes_switch() {
    let mock = MockLlm::start_in_background();
    let run = Run::new();
    mock.push(sse(openai_text_sse("The answer is 4.")));
    let (mut editor, session) = with_session(&run, &mock);
    let id = editor.prompt(&session, "what is 2 + 2?");
    let (answer, _) = editor.answer_to(id, |r| panic!("asked {r}"));
    assert_eq!(answer["result"]["stopReason"], "end_turn");
    assert_eq!(editor.close(), Some(0));

    let mut editor = Editor::start(&run, &mock);
    editor.initialize();
    let (answer, notifications) = editor.call(
        "session/load",
        json!({"sessionId": session, "cwd": run.workdir, "mcpServers": []}),
    );
    assert!(answer.get("error").is_none(), "{answer}");
    assert_eq!(answer["result"]["modes"]["currentModeId"], "default");
    assert_eq!(
        texts(&notifications, "user_message_chunk"),
        "what is 2 + 2?"
    );
    assert_eq!(
        texts(&notifications, "agent_message_chunk"),
        "The answer is 4."
    );

    let (answer, notifications) = editor.call(
        "session/set_mode",
        json!({"sessionId": session, "modeId": "plan"}),
    );
    assert!(answer.get("error").is_none(), "{answer}");
    let switched = updates(&notifications, "current_mode_update");
    assert_eq!(switched.len(), 1, "{notifications:?}");
    assert_eq!(switched[0]["currentModeId"], "plan");
    let (answer, _) = editor.call(
        "session/set_mode",
        json!({"sessionId": session, "modeId": "turbo"}),
    );
    assert_eq!(answer["error"]["code"], -32602, "{answer}");

    // The stored sessions of this folder, and the model as a selector.
    let (answer, _) = editor.call("session/list", json!({"cwd": run.workdir}));
    let listed = answer["result"]["sessions"].as_array().unwrap();
    assert_eq!(listed.len(), 1, "{answer}");
    assert_eq!(listed[0]["sessionId"], session.as_str());
    assert_eq!(listed[0]["title"], "what is 2 + 2?");
    let (answer, _) = editor.call(
        "session/set_config_option",
        json!({"sessionId": session, "configId": "model", "value": "gpt-4.1-mini"}),
    );
    let model = &answer["result"]["configOptions"][0];
    assert_eq!(model["id"], "model", "{answer}");
    assert_eq!(model["category"], "model");
    assert_eq!(model["currentValue"], "gpt-4.1-mini");
}

#[test]
fn acp_editor_that_goes_away_mid_turn_ends_harness9_and_loses_nothing() {
    let mock = MockLlm::start_in_background();
    let run = Run::new();
    let gate = gated(&mock, "Half an answer", "");
    let (mut editor, session) = with_session(&run, &mock);
    editor.prompt(&session, "a prompt worth keeping");
    first_text(&mut editor);
    assert_eq!(editor.close(), Some(0));
    gate.open();

    let mut editor = Editor::start(&run, &mock);
    editor.initialize();
    let (answer, notifications) = editor.call(
        "session/load",
        json!({"sessionId": session, "cwd": run.workdir, "mcpServers": []}),
    );
    assert!(answer.get("error").is_none(), "{answer}");
    assert_eq!(
        texts(&notifications, "user_message_chunk"),
        "a prompt worth keeping"
    );
}

#[test]
fn acp_without_a_key_offers_an_auth_method_that_names_the_variable() {
    let run = Run::new();
    let mut command = std::process::Command::new(assert_cmd::cargo::cargo_bin!("harness9"));
    command
        .arg("acp")
        .current_dir(&run.workdir)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", &run.home)
        .env("HARNESS9_HOME", &run.home);
    let mut editor = Editor::spawn(command);
    let init = editor.initialize();
    let methods = init["result"]["authMethods"].as_array().unwrap();
    assert_eq!(methods.len(), 1, "{init}");
    let description = methods[0]["description"].as_str().unwrap();
    assert!(description.contains("API_KEY"), "{description}");
    assert!(description.contains(".env"), "{description}");
    let (answer, _) = editor.call("session/new", json!({"cwd": run.workdir, "mcpServers": []}));
    assert_eq!(answer["error"]["code"], -32000, "{answer}");
}

#[test]
fn acp_a_plan_is_reviewed_and_carried_out_in_auto_edit_within_the_turn() {
    let mock = MockLlm::start_in_background();
    let run = Run::new();
    let todos = |status: &str| {
        json!({"todos": [{"content": "write the file", "status": status}]}).to_string()
    };
    mock.push(sse(openai_tool_sse("t1", "todo_write", &todos("pending"))));
    mock.push(sse(openai_text_sse("Here is the plan.")));
    mock.push(sse(openai_tool_sse(
        "t2",
        "todo_write",
        &todos("completed"),
    )));
    mock.push(sse(openai_text_sse("All done.")));
    let (mut editor, session) = with_session(&run, &mock);
    editor.call(
        "session/set_mode",
        json!({"sessionId": session, "modeId": "plan"}),
    );
    let id = editor.prompt(&session, "plan it");
    let mut asked = Vec::new();
    let (answer, notifications) = editor.answer_to(id, |request| {
        asked.push(request.clone());
        json!({"outcome": {"outcome": "selected", "optionId": "plan_auto_edit"}})
    });
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert_eq!(asked[0]["params"]["toolCall"]["kind"], "switch_mode");
    let switched = updates(&notifications, "current_mode_update");
    assert_eq!(switched.len(), 1, "{notifications:?}");
    assert_eq!(switched[0]["currentModeId"], "auto-edit");
    let said = texts(&notifications, "agent_message_chunk");
    assert!(said.starts_with("Here is the plan."), "{said}");
    assert!(said.contains("All done."), "{said}");
    let plans = updates(&notifications, "plan");
    assert_eq!(plans.last().unwrap()["entries"][0]["status"], "completed");
}
