//! Issue 32 point 7 through the core: `/compact` compacts whenever something comes before the
//! last exchange, however short the conversation, and asked during a turn it waits for the
//! turn's end instead of being refused.

use super::*;

fn compacted(update: &Update) -> bool {
    matches!(update, Update::Compacted(_))
}

#[tokio::test]
async fn compact_folds_a_short_conversation_and_waits_behind_a_running_turn() {
    let fixture = Fixture::new();
    let provider = scripted([
        text("first answer"),
        write_call("w1", "a.txt"),
        text("not written"),
        // What the compaction asks the model (facts to keep, then the summary).
        text("- the user said hello"),
        text("The user said hello and asked for a.txt, which was refused."),
        text("spare"),
    ]);
    let mut opened = fixture
        .open(&provider, SessionChoice::New, CoreOptions::default())
        .await;
    opened.handle.send(Request::Submit("hello".into()));
    until(&mut opened.updates, "run end", run_ended).await;

    // The second turn waits on an approval: it is running when /compact comes (requests are
    // handled in order, so the compaction is asked before the approval is answered).
    opened.handle.send(Request::Submit("write a.txt".into()));
    opened.handle.send(Request::Compact);
    let mut seen = answer_next_approval(&mut opened, ApprovalDecision::Deny { reason: None }).await;
    let (ended, after) = until(&mut opened.updates, "run end", run_ended).await;
    seen.extend(after);
    assert!(
        !seen.iter().any(compacted),
        "not during the turn: {seen:#?}"
    );
    assert!(
        matches!(&ended, Update::Engine(e) if matches!(e.kind, EventKind::Done(_))),
        "{ended:?}"
    );
    let (done, _) = until(&mut opened.updates, "the compaction", compacted).await;
    let Update::Compacted(Ok(Some(info))) = done else {
        panic!("compacted: {done:?}")
    };
    assert_eq!(info.strategy, "summarization", "{info:?}");
    close(&mut opened).await;
}
