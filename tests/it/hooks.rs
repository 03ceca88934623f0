//! Issue 15 through the real binary: command hooks from settings.json at each moment, written
//! as small shell scripts, with the model a mock on 127.0.0.1.

use std::path::Path;
use std::process::Output;

use serde_json::{Value, json};

use crate::exec::{Run, json_lines};
use crate::support::{MockLlm, Recorded, Reply, Split, openai_text_sse, openai_tool_sse};

fn answer(mock: &MockLlm, text: &str) {
    mock.push(Reply::Sse {
        body: openai_text_sse(text),
        split: Split::Whole,
    });
}

fn tool_call(mock: &MockLlm, name: &str, arguments: Value) {
    mock.push(Reply::Sse {
        body: openai_tool_sse("call_1", name, &arguments.to_string()),
        split: Split::Whole,
    });
}

/// `{"hooks": {event: [{"matcher", "hooks": [{"type": "command", "command", "timeout"?}]}]}}`
fn hooks(entries: &[(&str, &str, &str)]) -> Value {
    let mut events = serde_json::Map::new();
    for (event, matcher, command) in entries {
        let list = events.entry(event.to_string()).or_insert_with(|| json!([]));
        list.as_array_mut().unwrap().push(json!({
            "matcher": matcher,
            "hooks": [{"type": "command", "command": command}],
        }));
    }
    json!({ "hooks": events })
}

fn write_json(path: &Path, value: &Value) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, serde_json::to_string_pretty(value).unwrap()).unwrap();
}

/// The user's settings (`$HARNESS9_HOME/settings.json`).
fn user_settings(run: &Run, value: &Value) {
    write_json(&run.home.join("settings.json"), value);
}

fn exec(run: &Run, mock: &MockLlm, args: &[&str]) -> (Output, Vec<Value>) {
    let output = run.exec(mock, args);
    let events = json_lines(&output.stdout);
    (output, events)
}

fn notices(events: &[Value]) -> String {
    events
        .iter()
        .filter(|e| e["type"] == "notice")
        .map(|e| e["data"].as_str().unwrap_or_default().to_owned())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The first tool result the model got back (in the second request).
fn first_tool_result(requests: &[Recorded]) -> String {
    requests[1].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .unwrap()["content"]
        .as_str()
        .unwrap()
        .to_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn a_pre_tool_use_exit_2_refuses_a_bash_call_and_the_model_gets_the_reason() {
    let mock = MockLlm::start_in_background();
    let run = Run::new();
    user_settings(
        &run,
        &hooks(&[("PreToolUse", "bash", "echo 'no shell today' >&2; exit 2")]),
    );
    tool_call(&mock, "bash", json!({"command": "touch made"}));
    answer(&mock, "Done.");
    // Hooks run in yolo too.
    let (output, _) = exec(&run, &mock, &["exec", "--json", "--mode", "yolo", "go"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let result = first_tool_result(&mock.requests());
    assert!(result.contains("no shell today"), "{result}");
    assert_fenced(&result, "a PreToolUse hook's reason", "no shell today");
    assert!(!run.workdir.join("made").exists());
}

#[test]
fn json_decisions_deny_allow_and_updated_input_which_is_decided_again() {
    let mock = MockLlm::start_in_background();
    let run = Run::new();
    let script = r#"input=$(cat)
case "$input" in
  *denyme*) echo '{"hookSpecificOutput": {"permissionDecision": "deny", "permissionDecisionReason": "denied by policy"}}' ;;
  *allowme*) echo '{"hookSpecificOutput": {"permissionDecision": "allow", "permissionDecisionReason": "fine"}}' ;;
  *rewriteme*) echo '{"hookSpecificOutput": {"permissionDecision": "allow", "updatedInput": {"command": "touch rewritten"}}}' ;;
  *sneak*) echo '{"hookSpecificOutput": {"updatedInput": {"command": "touch sneaked"}}}' ;;
esac"#;
    user_settings(&run, &hooks(&[("PreToolUse", "bash", script)]));

    // deny, even in yolo.
    tool_call(&mock, "bash", json!({"command": "touch denyme"}));
    answer(&mock, "Done.");
    let (output, _) = exec(&run, &mock, &["exec", "--json", "--mode", "yolo", "a"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(first_tool_result(&mock.requests()).contains("denied by policy"));
    assert!(!run.workdir.join("denyme").exists());

    // allow: a command that would ask (and so be refused headless) runs.
    let allowed = MockLlm::start_in_background();
    tool_call(&allowed, "bash", json!({"command": "touch allowme"}));
    answer(&allowed, "Done.");
    let (output, _) = exec(&run, &allowed, &["exec", "--json", "b"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(
        run.workdir.join("allowme").exists(),
        "{}",
        first_tool_result(&allowed.requests())
    );

    // updatedInput with allow: what runs is the rewritten command.
    let rewritten = MockLlm::start_in_background();
    tool_call(&rewritten, "bash", json!({"command": "touch rewriteme"}));
    answer(&rewritten, "Done.");
    let (output, events) = exec(&run, &rewritten, &["exec", "--json", "c"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(run.workdir.join("rewritten").exists());
    assert!(!run.workdir.join("rewriteme").exists());
    assert!(
        notices(&events).contains("changed the arguments"),
        "{events:?}"
    );

    // updatedInput alone is decided again like any call: `touch` asks, and nobody can answer.
    let sneaky = MockLlm::start_in_background();
    tool_call(&sneaky, "bash", json!({"command": "ls sneak"}));
    answer(&sneaky, "Done.");
    let (output, _) = exec(&run, &sneaky, &["exec", "--json", "d"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(!run.workdir.join("sneaked").exists());
    assert!(first_tool_result(&sneaky.requests()).contains("needs the user's approval"));
}

#[test]
fn a_hooks_allow_never_lifts_a_deny_rule_a_protected_path_or_plan_mode() {
    let mock = MockLlm::start_in_background();
    let run = Run::new();
    let allow = r#"echo '{"hookSpecificOutput": {"permissionDecision": "allow", "permissionDecisionReason": "always fine"}}'"#;
    let mut settings = hooks(&[("PreToolUse", "*", allow)]);
    settings["permissions"] = json!({"deny": ["bash(touch *)"]});
    user_settings(&run, &settings);

    tool_call(&mock, "bash", json!({"command": "touch denied"}));
    answer(&mock, "Done.");
    let (output, _) = exec(&run, &mock, &["exec", "--json", "--mode", "yolo", "a"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let result = first_tool_result(&mock.requests());
    assert!(result.contains("bash(touch *)"), "{result}");
    assert!(!run.workdir.join("denied").exists());

    // A protected path still asks (and so is refused headless).
    let protected = MockLlm::start_in_background();
    tool_call(
        &protected,
        "write_file",
        json!({"path": ".env", "content": "OPENAI_BASE_URL=http://evil"}),
    );
    answer(&protected, "Done.");
    let (output, _) = exec(
        &run,
        &protected,
        &["exec", "--json", "--mode", "auto-edit", "b"],
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(!run.workdir.join(".env").exists());

    // Plan mode still refuses what changes things.
    let plan = MockLlm::start_in_background();
    tool_call(
        &plan,
        "write_file",
        json!({"path": "plan.txt", "content": "x"}),
    );
    answer(&plan, "Done.");
    let (output, _) = exec(&run, &plan, &["exec", "--json", "--mode", "plan", "c"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(!run.workdir.join("plan.txt").exists());
}

#[test]
fn a_post_tool_use_formatter_changes_a_written_file_and_its_stderr_reaches_the_model() {
    let mock = MockLlm::start_in_background();
    let run = Run::new();
    let formatter = r#"f=$(jq -r .tool_input.path); sed -i 's/messy/tidy/' "$f"; echo "formatted $f" >&2; exit 2"#;
    user_settings(
        &run,
        &hooks(&[("PostToolUse", "write_file|edit_file", formatter)]),
    );
    tool_call(
        &mock,
        "write_file",
        json!({"path": "out.txt", "content": "messy code\n"}),
    );
    answer(&mock, "Done.");
    let (output, _) = exec(&run, &mock, &["exec", "--json", "--mode", "auto-edit", "w"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let text = std::fs::read_to_string(run.workdir.join("out.txt")).unwrap();
    assert_eq!(text, "tidy code\n");
    let result = first_tool_result(&mock.requests());
    assert!(result.contains("formatted out.txt"), "{result}");
    assert_fenced(&result, "a PostToolUse hook says", "formatted out.txt");
}

/// Issue 29 point 15: `text` reaches the model inside one fence of data from outside that names
/// `source` and closes after it.
fn assert_fenced(sent: &str, source: &str, text: &str) {
    let nonces = harness9::schema::outside_nonces(sent);
    let fenced = nonces
        .iter()
        .filter(|(opening, _)| *opening)
        .any(|(_, nonce)| {
            let open = format!("[data from outside {nonce}: {source};");
            let close = format!("[end of data from outside {nonce}]");
            match (sent.find(&open), sent.find(text), sent.find(&close)) {
                (Some(o), Some(t), Some(c)) => o < t && t < c,
                _ => false,
            }
        });
    assert!(fenced, "{text} is not fenced as {source}: {sent}");
}

#[test]
fn user_prompt_submit_and_session_start_add_context_and_exit_2_drops_the_prompt() {
    let mock = MockLlm::start_in_background();
    let run = Run::new();
    let gate = r#"if jq -r .prompt | grep -q secret; then echo 'no secrets in prompts' >&2; exit 2; fi; echo 'CONTEXT-42'"#;
    user_settings(
        &run,
        &hooks(&[
            ("UserPromptSubmit", "", gate),
            ("SessionStart", "", "echo SESSION-7"),
        ]),
    );
    answer(&mock, "Done.");
    let (output, _) = exec(&run, &mock, &["exec", "--json", "hello"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let sent = mock.requests()[0].body["messages"].to_string();
    assert!(
        sent.contains("CONTEXT-42") && sent.contains("SESSION-7"),
        "{sent}"
    );
    assert_fenced(&sent, "a UserPromptSubmit hook's context", "CONTEXT-42");
    assert_fenced(&sent, "a SessionStart hook's context", "SESSION-7");

    let dropped = MockLlm::start_in_background();
    let (output, events) = exec(&run, &dropped, &["exec", "--json", "my secret"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(
        dropped.requests().is_empty(),
        "the prompt reached the model"
    );
    assert!(
        notices(&events).contains("no secrets in prompts"),
        "{events:?}"
    );
}

#[test]
fn a_blocking_stop_hook_continues_the_run_three_times_at_most() {
    let mock = MockLlm::start_in_background();
    let run = Run::new();
    user_settings(
        &run,
        &hooks(&[("Stop", "", "echo 'run the tests first' >&2; exit 2")]),
    );
    mock.set_fallback(Reply::Sse {
        body: openai_text_sse("Done."),
        split: Split::Whole,
    });
    let (output, events) = exec(&run, &mock, &["exec", "--json", "go"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let requests = mock.requests();
    assert_eq!(requests.len(), 4, "one answer and three continuations");
    let last = requests[3].body["messages"].to_string();
    assert!(last.contains("run the tests first"), "{last}");
    let said = notices(&events);
    assert!(said.contains("3 times in a row"), "{said}");
    assert_eq!(events.last().unwrap()["type"], "done");
}

#[test]
fn a_hook_past_its_timeout_is_killed_with_its_child_and_the_session_goes_on() {
    let mock = MockLlm::start_in_background();
    let run = Run::new();
    let slow = format!(
        "sleep 300 & echo $! > {}; wait",
        run.workdir.join("child.pid").display()
    );
    let mut settings = hooks(&[("PreToolUse", "bash", &slow)]);
    settings["hooks"]["PreToolUse"][0]["hooks"][0]["timeout"] = json!(1);
    // A missing command and garbage output are notices too.
    settings["hooks"]["PreToolUse"].as_array_mut().unwrap().extend([
        json!({"matcher": "bash", "hooks": [{"type": "command", "command": "/nonexistent/hook"}]}),
        json!({"matcher": "bash", "hooks": [{"type": "command", "command": "echo '{garbage'"}]}),
    ]);
    user_settings(&run, &settings);
    tool_call(&mock, "bash", json!({"command": "touch made"}));
    answer(&mock, "Done.");
    let (output, events) = exec(&run, &mock, &["exec", "--json", "--mode", "yolo", "go"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(run.workdir.join("made").exists(), "the call went on");
    let said = notices(&events);
    assert!(said.contains("past its timeout"), "{said}");
    assert!(said.contains("exit status 127"), "{said}");
    assert!(said.contains("not valid JSON"), "{said}");
    let pid: i32 = std::fs::read_to_string(run.workdir.join("child.pid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(
        crate::support::process_ended(pid),
        "the hook's child still runs"
    );
}

/// A project hook that leaves a mark when it runs.
fn project_hook(run: &Run, mark: &str) {
    write_json(
        &run.workdir.join(".harness9/settings.json"),
        &hooks(&[("UserPromptSubmit", "", &format!("touch {mark}"))]),
    );
}

#[test]
fn an_untrusted_folders_hooks_do_not_run_and_trust_approves_them_for_exec() {
    let mock = MockLlm::start_in_background();
    let run = Run::new();
    project_hook(&run, "hook-ran");
    mock.set_fallback(Reply::Sse {
        body: openai_text_sse("Done."),
        split: Split::Whole,
    });
    let (output, events) = exec(&run, &mock, &["exec", "--json", "hi"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(!run.workdir.join("hook-ran").exists());
    assert!(notices(&events).contains("hooks"), "{events:?}");
    let (output, _) = exec(&run, &mock, &["exec", "--json", "--trust", "hi"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(run.workdir.join("hook-ran").exists());
}

#[test]
fn a_trusted_projects_hook_runs_once_approved_and_asks_again_after_a_change() {
    use harness9::config::{approved, trust};
    let mock = MockLlm::start_in_background();
    mock.set_fallback(Reply::Sse {
        body: openai_text_sse("Done."),
        split: Split::Whole,
    });
    let run = Run::new();
    let workdir = run.workdir.canonicalize().unwrap();
    trust::remember(&run.home, &workdir).unwrap();
    project_hook(&run, "first");
    let (output, events) = exec(&run, &mock, &["exec", "--json", "hi"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(!run.workdir.join("first").exists(), "ran before approval");
    assert!(notices(&events).contains("not approved"), "{events:?}");

    // The user approves this definition (what the TUI's question writes).
    let approve = |run: &Run| {
        let text = std::fs::read_to_string(run.workdir.join(".harness9/settings.json")).unwrap();
        let value: Value = serde_json::from_str(&text).unwrap();
        let hash = approved::definition_hash(&value["hooks"], &workdir);
        approved::approve(
            &run.home,
            &workdir,
            approved::ExtensionKind::Hooks,
            ".harness9/settings.json",
            &hash,
        )
        .unwrap();
    };
    approve(&run);
    let (output, _) = exec(&run, &mock, &["exec", "--json", "hi"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(run.workdir.join("first").exists());

    // Changed (a pull, or the model): not run until approved again.
    project_hook(&run, "second");
    let (output, events) = exec(&run, &mock, &["exec", "--json", "hi"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(!run.workdir.join("second").exists(), "a changed hook ran");
    assert!(notices(&events).contains("not approved"), "{events:?}");
    approve(&run);
    let (output, _) = exec(&run, &mock, &["exec", "--json", "hi"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(run.workdir.join("second").exists());
}

#[test]
fn the_tui_asks_about_a_projects_hooks_shows_one_running_and_lists_them() {
    use crate::tui::{Pty, env, harness9, press_until, press_until_screen};
    let mock = MockLlm::start_in_background();
    let run = Run::new();
    // The hook waits for the test's go-ahead, so the status line can be seen while it runs.
    let waiting = "while [ ! -e go ]; do sleep 0.05; done";
    write_json(
        &run.workdir.join(".harness9/settings.json"),
        &hooks(&[("UserPromptSubmit", "", waiting)]),
    );
    answer(&mock, "All done here.");
    let mut pty = Pty::spawn(harness9(), &[], &run.workdir, &env(&run, &mock));
    pty.wait_for_all(&[
        "Approve this project's extension?",
        "while [ ! -e go ]",
        ".harness9/settings.json",
    ]);
    press_until_screen(&mut pty, "a", |s| {
        !s.contains("Approve this project's extension?")
    });
    // The session's own screen (the question's has no sandbox on its status line).
    pty.wait_for("sandbox: ");
    let approvals = std::fs::read_to_string(run.home.join("approved.json")).unwrap();
    assert!(approvals.contains(".harness9/settings.json"), "{approvals}");

    pty.send("hello there");
    // Keys typed just after the extension question has handed the terminal to the session can
    // sit unread until more input arrives (the question runs an event loop of its own, with its
    // own crossterm EventStream): a focus report, which changes nothing here, is sent until the
    // typed text shows.
    press_until(&mut pty, "\x1b[I", "hello there");
    pty.send("\r");
    pty.wait_for("running UserPromptSubmit hook");
    std::fs::write(run.workdir.join("go"), "").unwrap();
    pty.wait_for("All done here.");

    pty.send("/hooks\r");
    pty.wait_for_all(&["UserPromptSubmit: while", "project, approved"]);
    pty.send("\x04");
}

#[test]
fn a_pre_compact_hook_runs_before_an_automatic_compaction_with_its_trigger() {
    let mock = MockLlm::start_in_background();
    let run = Run::new();
    let long: String = (0..3000).map(|i| format!("word{i} ")).collect();
    // An answer without a usage count, so the next run judges its size by its own estimate.
    let finish = r#"data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"gpt-4o","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#;
    let mut body = crate::support::openai_text_chunk(&long);
    body.extend_from_slice(format!("{finish}\n\ndata: [DONE]\n\n").as_bytes());
    mock.push(Reply::Sse {
        body,
        split: Split::Whole,
    });
    let marker = run.workdir.join("precompact.json");
    user_settings(
        &run,
        &hooks(&[(
            "PreCompact",
            "",
            &format!(
                "cat > {}; echo compacting soon >&2; exit 1",
                marker.display()
            ),
        )]),
    );
    let (first, _) = exec(&run, &mock, &["exec", "--json", "write a lot"]);
    assert_eq!(first.status.code(), Some(0), "{}", stderr(&first));
    assert!(!marker.exists(), "no compaction yet");
    // The next run starts over the window: the history is compacted first, after the hook.
    // Before summarising, the memory extractor reads the folded part: nothing durable.
    mock.push(Reply::Json(crate::support::openai_text_json("NONE")));
    mock.push(Reply::Json(crate::support::openai_text_json(
        "The user asked for a long text and got it.",
    )));
    answer(&mock, "Short answer.");
    let (second, events) = exec(
        &run,
        &mock,
        &[
            "exec",
            "--json",
            "--continue",
            "--context-window",
            "8000",
            "and a short one",
        ],
    );
    assert_eq!(second.status.code(), Some(0), "{}", stderr(&second));
    let types: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    let text = std::fs::read_to_string(&marker)
        .unwrap_or_else(|e| panic!("{e}: {types:?} {}", notices(&events)));
    let input: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(input["hook_event_name"], "PreCompact");
    assert_eq!(input["trigger"], "auto", "{input}");
    assert!(
        events.iter().any(|e| e["type"] == "compaction"),
        "{events:?}"
    );
    // A hook that fails is a notice; the compaction and the run go on.
    assert!(
        notices(&events).contains("compacting soon"),
        "{}",
        notices(&events)
    );
}

#[test]
fn the_tui_asks_about_a_projects_mcp_server_in_the_same_question() {
    use crate::tui::{Pty, env, harness9, press_until_screen};
    let mock = MockLlm::start_in_background();
    let run = Run::new();
    write_json(
        &run.workdir.join(".mcp.json"),
        &json!({"mcpServers": {"tracker": {"command": "tracker-mcp", "args": ["--stdio"]}}}),
    );
    let mut pty = Pty::spawn(harness9(), &[], &run.workdir, &env(&run, &mock));
    pty.wait_for_all(&["Approve this project's extension?", "tracker", "MCP server"]);
    press_until_screen(&mut pty, "a", |s| {
        !s.contains("Approve this project's extension?")
    });
    // The approval is written when the answer is taken (the status line may be busy saying
    // that the server, which does not exist here, failed to start).
    let file = run.home.join("approved.json");
    let until = std::time::Instant::now() + crate::support::PATIENCE;
    while !file.exists() {
        assert!(std::time::Instant::now() < until, "no approved.json");
        std::thread::yield_now();
    }
    let approvals: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let entry = &approvals["approved"][0];
    assert_eq!(entry["kind"], "mcp_server", "{approvals}");
    assert_eq!(entry["name"], "tracker", "{approvals}");
    pty.send("\x04");
}
