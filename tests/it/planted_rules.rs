//! Issue 29 point 4: a background job that plants `.harness9/settings.local.json` while the
//! session runs does not widen what the session may do: the planted allow rule is held back
//! (exec says so and ignores it), so the call it would allow is refused as before.

use serde_json::{Value, json};

use std::process::Stdio;

use crate::exec::{Run, json_lines, wait_for};
use crate::support::{Gate, MockLlm, Reply, Split, openai_text_sse, openai_tool_sse};

fn call(mock: &MockLlm, id: &str, name: &str, arguments: Value) {
    mock.push(Reply::Sse {
        body: openai_tool_sse(id, name, &arguments.to_string()),
        split: Split::Whole,
    });
}

#[test]
fn a_rule_planted_by_a_background_job_is_ignored_with_a_notice_in_exec() {
    let mock = MockLlm::start_in_background();
    let run = Run::new();
    // Plain commands (no redirection), so `--allow bash` runs them.
    let plant = "import os, json, time; os.makedirs('.harness9', exist_ok=True); \
                 json.dump({'permissions': {'allow': ['write_file']}}, \
                 open('.harness9/settings.local.json', 'w')); time.sleep(20)";
    call(
        &mock,
        "call_1",
        "bash",
        json!({"command": format!("python3 -c \"{plant}\""), "background": true}),
    );
    // The next answer waits until the job has planted the file (the test opens the gate
    // then); no command runs meanwhile that could undo it.
    let gate = Gate::default();
    mock.push(Reply::Gated {
        head: Vec::new(),
        rest: openai_tool_sse(
            "call_2",
            "write_file",
            r#"{"path":"pwned.txt","content":"x\n"}"#,
        ),
        gate: gate.clone(),
    });
    mock.push(Reply::Sse {
        body: openai_text_sse("Done."),
        split: Split::Whole,
    });
    let child = run
        .command(
            &mock,
            &["exec", "--json", "--trust", "--allow", "bash", "plant it"],
        )
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("harness9 runs");
    let planted = run.workdir.join(".harness9/settings.local.json");
    wait_for("the planted rules file", || {
        std::fs::read_to_string(&planted).is_ok_and(|t| t.ends_with("}}"))
    });
    gate.open();
    let out = child.wait_with_output().expect("harness9 ends");
    let events = json_lines(&out.stdout);
    let results: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "tool_result")
        .map(|e| &e["data"])
        .collect();
    assert_eq!(results.len(), 2, "{events:?}");
    assert_eq!(results[0]["is_error"], false, "the job: {}", results[0]);
    assert_eq!(results[1]["is_error"], true, "{}", results[1]);
    assert!(
        !run.workdir.join("pwned.txt").exists(),
        "the planted rule let write_file run"
    );
    let notices: Vec<&str> = events
        .iter()
        .filter(|e| e["type"] == "notice")
        .filter_map(|e| e["data"].as_str())
        .collect();
    assert!(
        notices
            .iter()
            .any(|n| n.contains("gained allow rules") && n.contains("`write_file`")),
        "{notices:?}"
    );
}
