//! `harness9 attach` carries what the local TUI keeps in its own core to the served session:
//! plan review's auto-continue (issue 33 point 4).

use crate::serve_client::Server;
use crate::support::{MockLlm, Reply, Split, openai_text_sse};
use crate::tui::{Pty, harness9};
use crate::workflows::todo_call;

/// The plan is reviewed in the attached TUI and carried out to the end by the served session,
/// as it is locally (`workflows::a_plan_is_reviewed_and_carried_out_by_auto_continue`); before,
/// only the first item ran.
#[test]
fn an_attached_plan_review_carries_the_whole_plan_out() {
    let mock = MockLlm::start_in_background();
    for body in [
        todo_call("p1", ["pending", "pending", "pending"]),
        openai_text_sse("Here is the plan."),
        todo_call("w1", ["completed", "pending", "pending"]),
        openai_text_sse("The parser is read."),
        todo_call("w2", ["completed", "completed", "pending"]),
        openai_text_sse("Split is fixed."),
        todo_call("w3", ["completed", "completed", "completed"]),
        openai_text_sse("All three items are done."),
    ] {
        mock.push(Reply::Sse {
            body,
            split: Split::Whole,
        });
    }
    let server = Server::start(&mock, &["--mode", "plan"], &[]);
    let env = vec![
        ("HOME", server.run.home.display().to_string()),
        ("HARNESS9_HOME", server.run.home.display().to_string()),
        ("COLORFGBG", "15;0".into()),
    ];
    let mut pty = Pty::spawn(
        harness9(),
        &["attach", &server.url],
        &server.run.workdir,
        &env,
    );
    pty.wait_for(" plan ");
    pty.send("plan the parser fix\r");
    pty.wait_for_all(&["The plan is ready", "○ fix split", "continuing by itself"]);
    pty.send("a");
    pty.wait_for_all(&["All three items are done.", " default "]);
    assert_eq!(
        mock.requests().len(),
        8,
        "the plan and three continuation rounds, no more"
    );
}
