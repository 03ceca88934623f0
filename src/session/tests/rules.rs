//! Issue 29 point 4 through the session's requests: an allow rule planted in
//! `.harness9/settings.local.json` while the session runs still asks; `Request::ConfirmRules`
//! (the TUI's `/rules`) lets it count.

use super::*;

fn approval(update: &Update) -> bool {
    matches!(update, Update::Engine(e) if matches!(e.kind, EventKind::ApprovalRequired(_)))
}

#[tokio::test]
async fn a_planted_allow_rule_still_asks_until_the_user_confirms_it() {
    let fixture = Fixture::new();
    let provider = scripted([
        write_call("w1", "a.txt"),
        text("Refused."),
        write_call("w2", "b.txt"),
        text("Written."),
    ]);
    let mut opened = fixture
        .open(&provider, SessionChoice::New, CoreOptions::default())
        .await;
    // Planted after the session started, as a background job would.
    let local = fixture.workdir().join(".harness9/settings.local.json");
    std::fs::create_dir_all(local.parent().unwrap()).unwrap();
    std::fs::write(&local, r#"{"permissions": {"allow": ["write_file"]}}"#).unwrap();

    opened.handle.send(Request::Submit("write a".into()));
    let (asked, seen) = until(&mut opened.updates, "an approval", approval).await;
    let notices: Vec<&String> = seen
        .iter()
        .filter_map(|u| match u {
            Update::Engine(e) => match &e.kind {
                EventKind::Notice(text) => Some(text),
                _ => None,
            },
            _ => None,
        })
        .collect();
    assert!(
        notices.iter().any(|n| n.contains("gained allow rules")),
        "{notices:?}"
    );
    let Update::Engine(event) = asked else {
        unreachable!()
    };
    let EventKind::ApprovalRequired(request) = event.kind else {
        unreachable!()
    };
    opened.handle.send(Request::AnswerApproval {
        id: request.id,
        decision: ApprovalDecision::Deny { reason: None },
    });
    until(&mut opened.updates, "run end", run_ended).await;
    assert!(!fixture.workdir().join("a.txt").exists());

    opened.handle.send(Request::ConfirmRules);
    until(&mut opened.updates, "the confirmation", |u| {
        matches!(u, Update::Engine(e)
            if matches!(&e.kind, EventKind::Notice(t) if t.contains("confirmed") && t.contains("write_file")))
    })
    .await;
    opened.handle.send(Request::Submit("write b".into()));
    let (_, seen) = until(&mut opened.updates, "run end", run_ended).await;
    assert!(!seen.iter().any(approval), "it asked again");
    assert!(fixture.workdir().join("b.txt").exists());
    close(&mut opened).await;
}
