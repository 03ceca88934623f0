//! Issue 32 point 5 through the core: `/undo` never removes what harness9 wrote itself (the rule
//! an approval wrote to `.harness9/settings.local.json` and the `.gitignore` beside it), and says
//! "removed" for a file the prompt created.

use super::*;
use crate::session::{Conflicts, Restore};

fn bash_call(id: &str, command: &str) -> ScriptStep {
    let mut message = Message::assistant("");
    message.tool_calls = vec![ToolCall {
        id: id.into(),
        name: "bash".into(),
        arguments: serde_json::json!({ "command": command }).to_string(),
    }];
    ScriptStep::Reply(message)
}

#[tokio::test]
async fn undo_leaves_the_rule_harness9_wrote_and_says_removed_for_a_created_file() {
    let fixture = Fixture::new();
    let dir = fixture.workdir().to_owned();
    let provider = scripted([bash_call("b1", "touch made.txt"), text("made")]);
    let mut opened = fixture
        .open(&provider, SessionChoice::New, CoreOptions::default())
        .await;
    opened.handle.send(Request::Submit("make a file".into()));
    // "Always allow": harness9 writes the rule and the .gitignore that keeps it out of git.
    answer_next_approval(&mut opened, ApprovalDecision::AllowRule).await;
    until(&mut opened.updates, "run end", run_ended).await;
    let ignore = dir.join(".harness9/.gitignore");
    let local = dir.join(".harness9/settings.local.json");
    assert!(dir.join("made.txt").exists());
    assert!(ignore.exists() && local.exists(), "the rule was written");

    opened.handle.send(Request::Restore {
        what: Restore::Undo,
        conflicts: Conflicts::Ask,
    });
    let (done, _) = until(&mut opened.updates, "restored", |u| {
        matches!(u, Update::Restored(_) | Update::Failed(_))
    })
    .await;
    let Update::Restored(restored) = done else {
        panic!("{done:?}")
    };
    assert!(!dir.join("made.txt").exists(), "{restored:?}");
    assert!(
        ignore.exists(),
        "harness9's own .gitignore stays: {restored:?}"
    );
    assert!(local.exists(), "{restored:?}");
    assert_eq!(
        restored.report.removed,
        [dir.join("made.txt")],
        "{restored:?}"
    );
    assert!(restored.report.restored.is_empty(), "{restored:?}");
    assert!(restored.report.failed.is_empty(), "{restored:?}");
    assert!(
        restored.text.contains("removed made.txt") && !restored.text.contains("restored"),
        "{}",
        restored.text
    );
    close(&mut opened).await;
}
