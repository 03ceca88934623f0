//! `/mcp`, the status line's count of connected MCP servers, servers' prompts as slash
//! commands, and their resources in the `@` completion.

use super::*;
use crate::tui::keymap::Focus;
use crate::tui::mcp_panel::McpView;

/// The servers as the session core reports them.
fn statuses() -> Vec<crate::session::McpServer> {
    use crate::session::{McpPromptInfo, McpServer, McpStatus};
    vec![
        McpServer {
            name: "github".into(),
            scope: "user",
            status: McpStatus::Connected,
            tools: vec![
                "mcp__github__list_issues".into(),
                "mcp__github__create_pr".into(),
            ],
            prompts: vec![McpPromptInfo {
                command: "mcp__github__review".into(),
                description: "Review a pull request.".into(),
                arguments: vec!["pr".into(), "focus".into()],
            }],
            resources: vec!["repo://readme".into()],
        },
        McpServer {
            name: "docs".into(),
            scope: "project",
            status: McpStatus::Failed("cannot start `docs-srv`: No such file or directory".into()),
            tools: Vec::new(),
            prompts: Vec::new(),
            resources: Vec::new(),
        },
    ]
}

/// The servers as the app keeps them.
fn servers() -> Vec<McpView> {
    statuses().iter().map(McpView::from_status).collect()
}

#[test]
fn the_status_line_counts_connected_servers_only_when_there_are_any() {
    let mut app = app();
    assert!(!screen(&mut app, 160, 10).contains("mcp "));
    *app.mcp_mut() = servers();
    let shown = screen(&mut app, 160, 10);
    assert!(shown.contains("mcp 1/2"), "{shown}");
}

#[test]
fn the_mcp_panel_shows_servers_and_tools_and_answers_with_commands() {
    let mut app = app();
    *app.mcp_mut() = servers();
    assert!(type_text(&mut app, "/mcp").is_empty());
    assert!(app.handle_key(key(KeyCode::Enter)).is_empty());
    assert_eq!(app.layer(), Focus::McpPanel);
    let shown = screen(&mut app, 100, 20);
    assert!(shown.contains("github (user) connected"), "{shown}");
    assert!(shown.contains("mcp__github__list_issues"), "{shown}");
    assert!(
        shown.contains("docs (project) failed: cannot start"),
        "{shown}"
    );
    // Keys go to the panel, not the input.
    assert_eq!(
        app.handle_key(key(KeyCode::Char('r'))),
        [Effect::Request(Request::McpReconnect("github".into()))]
    );
    app.handle_key(key(KeyCode::Down));
    assert_eq!(
        app.handle_key(key(KeyCode::Char('d'))),
        [Effect::Request(Request::McpDisable("docs".into()))]
    );
    assert!(app.input_text().is_empty());
    app.handle_key(key(KeyCode::Esc));
    assert_eq!(app.layer(), Focus::Main);
    assert!(!screen(&mut app, 100, 20).contains("MCP servers"));
}

#[test]
fn a_servers_prompt_is_a_slash_command_with_completion() {
    let mut app = app();
    *app.mcp_mut() = servers();
    type_text(&mut app, "/mcp__gi");
    let popup = app.popup();
    assert_eq!(popup.len(), 1);
    assert_eq!(popup[0].insert, "/mcp__github__review");
    assert_eq!(popup[0].label, "/mcp__github__review PR FOCUS");
    app.set_input("/mcp__github__review 42 error handling");
    assert_eq!(
        app.handle_key(key(KeyCode::Enter)),
        [Effect::Request(Request::McpPrompt {
            command: "mcp__github__review".into(),
            args: "42 error handling".into(),
        })]
    );
    // The fetched text is sent as the prompt, or queued behind a running turn.
    assert_eq!(
        app.send_or_queue("Review PR 42".into()),
        [Effect::Request(Request::Submit("Review PR 42".into()))]
    );
    assert_eq!(
        app.send_or_queue("Review PR 43".into()),
        [Effect::Request(Request::SetQueue(vec![
            "Review PR 43".into()
        ]))]
    );
    // An unknown one is not sent anywhere.
    app.set_input("/mcp__github__nope");
    assert!(app.handle_key(key(KeyCode::Enter)).is_empty());
}

#[test]
fn completion_offers_a_servers_resources_after_at() {
    let mut app = app();
    *app.mcp_mut() = servers();
    type_text(&mut app, "summarise @git");
    let popup = app.popup();
    assert_eq!(popup[0].insert, "@github:repo://readme ");
    assert_eq!(popup[0].help, "MCP resource");
}

#[test]
fn a_prompt_being_fetched_leaves_the_input_working_and_is_sent_when_it_arrives() {
    let mut app = app();
    app.take_update(Update::Mcp {
        servers: std::sync::Arc::new(statuses()),
        notices: vec!["MCP server `docs` failed: cannot start".into()],
    });
    assert_eq!(*app.mcp(), servers());
    assert!(screen(&mut app, 100, 20).contains("MCP server `docs` failed"));
    app.set_input("/mcp__github__review 42 tests");
    assert_eq!(
        app.handle_key(key(KeyCode::Enter)),
        [Effect::Request(Request::McpPrompt {
            command: "mcp__github__review".into(),
            args: "42 tests".into(),
        })]
    );
    assert!(screen(&mut app, 100, 20).contains("fetching /mcp__github__review"));
    // Nothing waits for the server: typing goes on.
    type_text(&mut app, "meanwhile");
    assert!(screen(&mut app, 100, 20).contains("meanwhile"));
    assert_eq!(
        app.take_update(Update::McpPrompt {
            command: "mcp__github__review".into(),
            result: Ok("Review PR 42".into()),
        }),
        [Effect::Request(Request::Submit("Review PR 42".into()))]
    );
    assert_eq!(app.input_text(), "meanwhile");
    // A failure is a notice, and nothing is sent.
    assert!(
        app.take_update(Update::McpPrompt {
            command: "mcp__github__review".into(),
            result: Err(crate::session::Failure::new(
                crate::session::FailureKind::Provider,
                "the server did not answer within 10s",
            )),
        })
        .is_empty()
    );
    let shown = screen(&mut app, 100, 20);
    assert!(
        shown.contains("/mcp__github__review: the server did not answer"),
        "{shown}"
    );
}

/// Issue 30: `/mcp` logs in to a server that needs authorization (`l`) and forgets its tokens
/// (`o`), through the session core.
#[test]
fn the_mcp_panel_logs_in_and_out_of_a_server_that_needs_authorization() {
    let mut app = app();
    let mut statuses = statuses();
    statuses[0].status = crate::session::McpStatus::Failed(
        "it needs authorization (HTTP 401): `harness9 mcp login github` logs in".into(),
    );
    *app.mcp_mut() = statuses.iter().map(McpView::from_status).collect();
    type_text(&mut app, "/mcp");
    app.handle_key(key(KeyCode::Enter));
    let shown = screen(&mut app, 100, 20);
    assert!(shown.contains("needs authorization: l logs in"), "{shown}");
    assert_eq!(
        app.handle_key(key(KeyCode::Char('l'))),
        [Effect::Request(Request::McpLogin("github".into()))]
    );
    assert!(screen(&mut app, 100, 20).contains("logging in"));
    assert_eq!(
        app.handle_key(key(KeyCode::Char('o'))),
        [Effect::Request(Request::McpLogout("github".into()))]
    );
}
