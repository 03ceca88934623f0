//! `/mcp`'s log in and log out through the core: an HTTP server's tokens forgotten (or said to
//! be none), a server the session does not have or that is not HTTP refused with a failure.

use super::*;
use crate::config::{EditorMcpServer, EditorMcpTransport};

async fn next_notice_or_failure(opened: &mut Opened) -> Update {
    let (found, _) = until(&mut opened.updates, "a notice or a failure", |u| {
        matches!(
            u,
            Update::Failed(_)
                | Update::Engine(Event {
                    kind: EventKind::Notice(_),
                    ..
                })
        )
    })
    .await;
    found
}

#[tokio::test]
async fn logging_out_forgets_tokens_and_a_server_that_cannot_log_in_is_refused() {
    let mut fixture = Fixture::new();
    // Nothing listens there: the server stays failed, its login state is what is tested.
    fixture.settings.editor_mcp = vec![EditorMcpServer {
        name: "docs".into(),
        transport: EditorMcpTransport::Http {
            url: "http://127.0.0.1:9/mcp".into(),
            headers: Vec::new(),
        },
    }];
    let provider = scripted([]);
    let mut opened = fixture
        .open(&provider, SessionChoice::New, CoreOptions::default())
        .await;
    let tokens =
        crate::mcp::oauth::token_file(&fixture.settings.home, "docs", "http://127.0.0.1:9/mcp");
    std::fs::create_dir_all(tokens.parent().unwrap()).unwrap();
    std::fs::write(&tokens, "{}").unwrap();
    opened.handle.send(Request::McpLogout("docs".into()));
    let said = next_notice_or_failure(&mut opened).await;
    assert!(
        matches!(&said, Update::Engine(Event { kind: EventKind::Notice(t), .. }) if t == "forgot the tokens of `docs`"),
        "{said:?}"
    );
    assert!(!tokens.exists());
    opened.handle.send(Request::McpLogout("docs".into()));
    let said = next_notice_or_failure(&mut opened).await;
    assert!(
        matches!(&said, Update::Engine(Event { kind: EventKind::Notice(t), .. }) if t == "`docs` had no tokens"),
        "{said:?}"
    );
    opened.handle.send(Request::McpLogin("nowhere".into()));
    let said = next_notice_or_failure(&mut opened).await;
    assert!(
        matches!(&said, Update::Failed(f) if f.kind == FailureKind::NotFound && f.message.contains("`nowhere`")),
        "{said:?}"
    );
    close(&mut opened).await;
}
