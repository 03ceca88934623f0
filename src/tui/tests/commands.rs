//! `/clear`, `/export`, `/status`, `/init`, `/help`, and what a skill run shows.

use super::*;

fn send(app: &mut App, text: &str) -> Vec<Effect> {
    app.set_input(text);
    app.handle_key(key(KeyCode::Enter))
}

#[test]
fn clear_starts_a_new_session() {
    let mut app = app();
    assert_eq!(
        send(&mut app, "/clear"),
        [Effect::Request(Request::NewSession)]
    );
    assert!(
        app.flash()
            .text
            .as_deref()
            .unwrap()
            .contains("--resume 01234567")
    );
    app.run_mut().running = true;
    assert!(
        send(&mut app, "/clear").is_empty(),
        "not in the middle of a run"
    );
}

#[test]
fn export_writes_the_transcript_as_markdown_to_a_new_file_only() {
    let mut app = app();
    app.transcript_mut()
        .push(EntryKind::User("fix the parser".into()));
    app.transcript_mut().push(EntryKind::Thinking {
        text: "weighing the split".into(),
        streaming: false,
    });
    app.transcript_mut().push(EntryKind::Assistant {
        text: "Done: `split` trims.".into(),
        streaming: false,
    });
    app.transcript_mut()
        .tool_started(call("1", "bash", r#"{"command":"cargo test"}"#));
    app.transcript_mut()
        .tool_finished(&ToolResult::ok("1", "ok ``` fenced\nexit status: 0"), None);
    let commands = send(&mut app, "/export notes.md");
    let [
        Effect::Request(Request::Export {
            file,
            markdown,
            overwrite: false,
        }),
    ] = &commands[..]
    else {
        panic!("{commands:?}")
    };
    assert_eq!(file, "notes.md");
    assert!(markdown.contains("## You\n\nfix the parser"), "{markdown}");
    // Issue 32: the thinking is harness9's, not under the user's heading.
    assert!(
        markdown.contains("fix the parser\n\n## harness9 (thinking)\n\n> weighing the split"),
        "{markdown}"
    );
    assert!(
        markdown.contains("## harness9\n\nDone: `split` trims."),
        "{markdown}"
    );
    assert!(
        markdown.contains("**bash** `cargo test`\n\n````\nok ``` fenced"),
        "{markdown}"
    );
    let default = send(&mut app, "/export");
    assert!(
        matches!(&default[..], [Effect::Request(Request::Export { file, .. })] if file == "harness9-01234567.md")
    );
    // The file itself is written by the session core (`session::tests::exports`).
}

/// Which web search applies is the session's fact (`engine::WebSearch`), shown as it comes.
#[test]
fn status_says_which_web_search_applies() {
    let mut app = app();
    assert!(send(&mut app, "/status").is_empty());
    assert!(screen(&mut app, 100, 30).contains("web search: unknown"));
    let label = crate::engine::WebSearch::Unavailable.label();
    let session = app.session().clone();
    app.show_session(
        session,
        crate::tui::app::Facts {
            skills: Vec::new(),
            hooks: Vec::new(),
            models: Vec::new(),
            sandbox: Some("sandbox: off".into()),
            web_search: Some(label.into()),
            inline: false,
        },
    );
    assert!(send(&mut app, "/status").is_empty());
    let text = screen(&mut app, 120, 40);
    assert!(
        text.contains("web search: none (no backend is configured"),
        "{text}"
    );
}

#[test]
fn status_shows_provider_model_session_sandbox_and_context() {
    let mut app = app();
    app.facts_mut().sandbox = Some("sandbox: workspace-write".into());
    app.run_mut().tokens = Some(TokenUpdate {
        input_tokens: 50_000,
        output_tokens: 0,
        context_window: 200_000,
        estimated: false,
        ..TokenUpdate::default()
    });
    assert!(send(&mut app, "/status").is_empty());
    let text = screen(&mut app, 100, 30);
    for part in [
        "provider: anthropic",
        "model: claude-sonnet-4-20250514",
        "session: 0123456789abcdef",
        "sandbox: workspace-write",
        "context: 50000 of 200000 tokens (25%)",
    ] {
        assert!(text.contains(part), "{part}: {text}");
    }
}

#[test]
fn init_and_skills_send_the_request_but_show_what_was_typed() {
    let mut app = app();
    let commands = send(&mut app, "/init");
    assert!(
        matches!(&commands[..], [Effect::Request(Request::Submit(p))] if p.contains("AGENTS.md")),
        "{commands:?}"
    );
    let text = screen(&mut app, 100, 30);
    assert!(
        text.contains("› /init") && !text.contains("Write an AGENTS"),
        "{text}"
    );
    let mut app = self::app();
    app.facts_mut().skills = vec![("deploy".into(), "ship it".into())];
    let commands = send(&mut app, "/deploy to staging");
    assert!(
        matches!(&commands[..], [Effect::Request(Request::Submit(p))] if p.contains("use_skill"))
    );
    let text = screen(&mut app, 100, 30);
    assert!(
        text.contains("› /deploy to staging") && !text.contains("use_skill"),
        "{text}"
    );
}

#[test]
fn the_cost_adds_up_on_the_status_line_and_cost_breaks_it_down() {
    let mut app = app();
    let update = |input, output, cached, cost| crate::engine::Event {
        turn: 1,
        kind: EventKind::TokenUpdate(TokenUpdate {
            input_tokens: input,
            output_tokens: output,
            context_window: 200_000,
            estimated: false,
            after_call: true,
            cache_read_tokens: cached,
            cache_write_tokens: 0,
            cost_usd: cost,
        }),
    };
    // An estimate before the call counts nothing.
    app.handle_engine(crate::engine::Event {
        turn: 1,
        kind: EventKind::TokenUpdate(TokenUpdate {
            input_tokens: 99_999,
            estimated: true,
            ..TokenUpdate::default()
        }),
    });
    assert!(
        !screen(&mut app, 120, 24).contains('$'),
        "no cost before a priced call"
    );
    app.handle_engine(update(5_000, 200, 4_000, Some(0.0021)));
    app.handle_engine(update(6_000, 100, 5_000, Some(0.0009)));
    let text = screen(&mut app, 120, 24);
    assert!(text.contains("$0.0030"), "{text}");
    assert!(send(&mut app, "/cost").is_empty());
    let text = screen(&mut app, 120, 30);
    assert!(
        text.contains(
            "$0.0030 for 2000 input, 9000 cached input read, 0 written to the cache, 300 output"
        ),
        "{text}"
    );
}

#[test]
fn cost_breaks_the_spend_down_by_model_when_more_than_one_answered() {
    let mut app = app();
    let update = |input, output, cost| crate::engine::Event {
        turn: 1,
        kind: EventKind::TokenUpdate(TokenUpdate {
            input_tokens: input,
            output_tokens: output,
            context_window: 200_000,
            estimated: false,
            cost_usd: cost,
            ..TokenUpdate::default()
        }),
    };
    app.session_mut().model = "claude-sonnet-4".into();
    app.handle_engine(update(1_000, 100, Some(0.0045)));
    assert!(send(&mut app, "/cost").is_empty());
    let text = screen(&mut app, 140, 30);
    assert!(
        text.contains(
            "$0.0045 for 1000 input, 0 cached input read, 0 written to the cache, 100 \
             output tokens (claude-sonnet-4)"
        ),
        "one model: one line: {text}"
    );
    // `/model` switched; the next calls are the other model's. An estimate counts for nobody.
    app.session_mut().model = "claude-opus-4".into();
    app.handle_engine(crate::engine::Event {
        turn: 2,
        kind: EventKind::TokenUpdate(TokenUpdate {
            input_tokens: 50_000,
            estimated: true,
            ..TokenUpdate::default()
        }),
    });
    app.handle_engine(update(2_000, 10, Some(0.03)));
    app.handle_engine(update(3_000, 20, Some(0.05)));
    assert!(send(&mut app, "/cost").is_empty());
    let text = screen(&mut app, 140, 40);
    assert!(
        text.contains("cost since this screen opened: $0.0845 for 6000 input"),
        "{text}"
    );
    assert!(
        text.contains(
            "claude-sonnet-4: $0.0045 for 1000 input, 0 cached input read, 0 written \
             to the cache, 100 output tokens"
        ),
        "{text}"
    );
    assert!(
        text.contains(
            "claude-opus-4: $0.0800 for 5000 input, 0 cached input read, 0 written to \
             the cache, 30 output tokens"
        ),
        "{text}"
    );
}

#[test]
fn model_without_a_name_lists_the_catalogues_models() {
    let mut app = app();
    app.facts_mut().models = vec![
        ("claude-sonnet-4".into(), Some(200_000)),
        ("claude-opus-4".into(), Some(200_000)),
    ];
    assert!(send(&mut app, "/model").is_empty());
    let text = screen(&mut app, 100, 30);
    assert!(text.contains("known models of this provider"), "{text}");
    assert!(text.contains("claude-opus-4, 200k tokens"), "{text}");
    assert_eq!(
        send(&mut app, "/model claude-opus-4"),
        [Effect::Request(Request::SetModel("claude-opus-4".into()))]
    );
}

#[test]
fn cost_counts_a_server_without_usage_by_harness9s_estimate_and_says_so() {
    let mut app = app();
    // A server that sends no usage: the engine's estimate of the finished call.
    app.handle_engine(crate::engine::Event {
        turn: 1,
        kind: EventKind::TokenUpdate(TokenUpdate {
            input_tokens: 1_200,
            output_tokens: 40,
            context_window: 8_192,
            estimated: true,
            after_call: true,
            ..TokenUpdate::default()
        }),
    });
    assert!(send(&mut app, "/cost").is_empty());
    let text = screen(&mut app, 200, 30);
    assert!(
        text.contains(
            "unknown (the server sent no usage: the tokens are harness9's count) for about 1200 \
             input, 0 cached input read, 0 written to the cache, 40 output tokens"
        ),
        "{text}"
    );
}

/// `/worktree` asks the session core (issue 35), which answers with lines the transcript shows;
/// arguments it does not take get its usage, and nothing is asked.
#[test]
fn worktree_asks_the_core_and_shows_its_answer() {
    use crate::session::worktrees::{WorktreeAction, WorktreeReport};
    let mut app = app();
    assert_eq!(
        send(&mut app, "/worktree"),
        [Effect::Request(Request::Worktrees(WorktreeAction::List))]
    );
    assert_eq!(
        send(&mut app, "/worktree merge fix"),
        [Effect::Request(Request::Worktrees(WorktreeAction::Merge {
            name: "fix".into()
        }))]
    );
    assert_eq!(
        send(&mut app, "/worktree remove fix --force"),
        [Effect::Request(Request::Worktrees(
            WorktreeAction::Remove {
                name: "fix".into(),
                force: true
            }
        ))]
    );
    assert!(send(&mut app, "/worktree merge").is_empty());
    assert!(
        screen(&mut app, 120, 30).contains("/worktree merge NAME"),
        "usage shown"
    );
    app.take_update(Update::Worktrees(WorktreeReport {
        lines: vec!["fix  harness9/fix  /src/app.worktrees/fix  1 unmerged commit(s)".into()],
        failed: false,
    }));
    let text = screen(&mut app, 120, 30);
    assert!(
        text.contains("fix  harness9/fix  /src/app.worktrees/fix"),
        "{text}"
    );
}

#[test]
fn help_lists_every_slash_command_from_the_popups_table() {
    let mut app = app();
    send(&mut app, "/help");
    let mut seen = String::new();
    for _ in 0..120 {
        seen.push_str(&screen(&mut app, 100, 30));
        app.handle_key(key(KeyCode::Down));
    }
    for command in crate::tui::slash::COMMANDS {
        assert!(
            seen.contains(command.name),
            "{} not listed:\n{seen}",
            command.name
        );
        let start: String = command.help.chars().take(20).collect();
        assert!(
            seen.contains(&start),
            "{}'s help not listed:\n{seen}",
            command.name
        );
    }
}
