//! Issue 32 point 3 at the engine: what a running call prints comes out as `tool_output`
//! events before its result, and a call the user interrupts gives the model (and the
//! transcript) what it printed until then, marked as interrupted.

use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::tests::{builder, call, calls_reply, tool, until};
use super::*;
use crate::provider::ScriptedProvider;
use crate::schema::ToolKind;

/// A command that prints a line, then runs until it is stopped.
fn ticking() -> Arc<dyn crate::tools::Tool> {
    tool("tick", ToolKind::ReadOnly, |_, ctx| async move {
        if let Some(sink) = crate::tools::progress::output() {
            let _ = sink.send("tick 1\n".to_owned());
        }
        ctx.cancel.cancelled().await;
        tokio::time::sleep(Duration::from_secs(30)).await;
        Ok("never".into())
    })
}

#[tokio::test]
async fn an_interrupted_call_gives_what_it_printed_so_far() {
    let provider = Arc::new(ScriptedProvider::new([calls_reply(
        "",
        vec![call("t1", "tick", "{}")],
    )]));
    let engine = Arc::new(builder(&provider, vec![ticking()]).build());
    let cancel = CancellationToken::new();
    let mut rx = engine.run_stream("count".into(), cancel.clone());
    let mut seen = Vec::new();
    let printed = until(&mut rx, "tool_output", &mut seen).await;
    let EventKind::ToolOutput(output) = &printed.kind else {
        unreachable!()
    };
    assert_eq!(
        (output.tool_call_id.as_str(), output.chunk.as_str()),
        ("t1", "tick 1\n")
    );
    assert_eq!(
        printed.to_json()["data"],
        serde_json::json!({"tool_call_id": "t1", "chunk": "tick 1\n"})
    );
    cancel.cancel();
    let result = until(&mut rx, "tool_result", &mut seen).await;
    let EventKind::ToolResult(outcome) = result.kind else {
        unreachable!()
    };
    let text = &outcome.result.output;
    assert!(outcome.result.is_error, "{text}");
    assert!(
        text.starts_with("tick 1\ncancelled: the user interrupted"),
        "{text}"
    );
}
