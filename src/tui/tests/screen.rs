//! What the screen shows: the status line at 40/80/200 columns in each state, the gauge of a
//! loaded session, retries numbered per failure streak, the waiting line.

use super::*;
use crate::schema::Message;

fn status(app: &mut App, width: u16) -> String {
    screen(app, width, 12)
        .lines()
        .last()
        .unwrap_or("")
        .to_owned()
}

fn long_home_app() -> App {
    let mut app = app();
    app.session_mut().workdir = "/home/someone/projects/client-work/harness9-checkout".into();
    app.facts_mut().sandbox = Some("sandbox: workspace-write".into());
    app.run_mut().tokens = Some(TokenUpdate {
        input_tokens: 120_000,
        output_tokens: 4_000,
        context_window: 200_000,
        estimated: false,
        ..TokenUpdate::default()
    });
    app
}

#[test]
fn snapshot_the_status_line_at_40_80_200_in_each_state() {
    type State = (&'static str, Box<dyn Fn(&mut App)>);
    let states: Vec<State> = vec![
        ("idle", Box::new(|_| {})),
        (
            "working",
            Box::new(|app| {
                app.run_mut().running = true;
                app.run_mut().turn = 4;
                app.run_mut().working_since = Some(std::time::Instant::now());
            }),
        ),
        (
            "retrying",
            Box::new(|app| {
                app.run_mut().running = true;
                app.run_mut().working_since = Some(std::time::Instant::now());
                app.run_mut().retry = Some("overloaded (529), the provider is busy".into());
            }),
        ),
        (
            "notice",
            Box::new(|app| {
                app.flash_mut().text = Some("queued: it is sent when the current turn ends".into());
                app.session_mut().mode = Mode::Yolo;
            }),
        ),
    ];
    for (name, set) in &states {
        for width in [40u16, 80, 200] {
            let mut app = long_home_app();
            set(&mut app);
            let line = status(&mut app, width);
            assert!(
                line.contains(app.session().mode.as_str()),
                "{name} {width}: {line}"
            );
            assert!(
                line.contains("claude-"),
                "{name} {width}: the model: {line}"
            );
            assert!(
                line.contains("eckout"),
                "{name} {width}: the directory: {line}"
            );
            insta::assert_snapshot!(format!("status_{name}_{width}"), line);
        }
    }
}

#[test]
fn a_loaded_session_shows_its_size_on_the_gauge_not_zero() {
    let mut app = app();
    let messages = vec![
        Message::user("explain the parser ".repeat(2_000)),
        Message::assistant("it splits lines ".repeat(2_000)),
    ];
    app.take_update(loaded("s2", messages));
    let line = status(&mut app, 120);
    assert!(!line.contains(" 0%"), "{line}");
    assert!(line.contains("~") && line.contains("k/200k"), "{line}");
}

fn retry(attempt: u32) -> Event {
    event(
        1,
        EventKind::Retry(RetryInfo {
            attempt,
            max_attempts: 4,
            reason: "stream cut".into(),
            delay: Duration::from_millis(500),
        }),
    )
}

#[test]
fn retries_are_numbered_per_failure_streak() {
    let mut app = app();
    type_text(&mut app, "q");
    app.handle_key(key(KeyCode::Enter));
    // The provider's retry (2/4) and then a cut stream's restart, which the engine also
    // numbers 2: one streak, so 2 then 3.
    app.handle_engine(retry(2));
    app.handle_engine(event(1, EventKind::ActionDelta("partial".into())));
    app.handle_engine(retry(2));
    let text = screen(&mut app, 100, 30);
    assert!(
        text.contains("attempt 2/4") && text.contains("attempt 3/4"),
        "{text}"
    );
    // A tool call ends the streak: the next failure is attempt 2 again.
    app.handle_engine(event(1, EventKind::ToolStart(call("t", "glob", "{}"))));
    app.handle_engine(retry(2));
    let text = screen(&mut app, 100, 30);
    assert_eq!(text.matches("attempt 2/4").count(), 2, "{text}");
}

#[test]
fn a_request_silent_for_5_s_shows_a_waiting_line_with_its_time() {
    let now = std::sync::Arc::new(std::sync::Mutex::new(std::time::Instant::now()));
    let advance = |ms: u64| *now.lock().unwrap() += Duration::from_millis(ms);
    let mut app = app_at(&now);
    type_text(&mut app, "q");
    app.handle_key(key(KeyCode::Enter));
    advance(4_900);
    assert!(!status(&mut app, 120).contains("waiting"));
    advance(2_200);
    let line = status(&mut app, 120);
    assert!(line.contains("waiting for the model 7s"), "{line}");
    // Anything from the model ends the wait; a running tool is not the model's silence.
    app.handle_engine(event(1, EventKind::ToolStart(call("t", "bash", "{}"))));
    advance(9_000);
    assert!(!status(&mut app, 120).contains("waiting"));
}

/// Each row as runs of text with their foreground colour, for a theme's snapshot.
fn colours(app: &mut App, width: u16, height: u16) -> String {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    terminal.draw(|frame| view::draw(app, frame)).unwrap();
    let buffer = terminal.backend().buffer();
    let mut out = String::new();
    for y in 0..height {
        let mut runs: Vec<(String, String)> = Vec::new();
        for x in 0..width {
            let cell = &buffer[(x, y)];
            let colour = format!("{:?}/{:?}", cell.fg, cell.bg);
            match runs.last_mut() {
                Some((c, text)) if *c == colour => text.push_str(cell.symbol()),
                _ => runs.push((colour, cell.symbol().to_owned())),
            }
        }
        let row: Vec<String> = runs
            .into_iter()
            .filter(|(_, text)| !text.trim().is_empty())
            .map(|(c, text)| format!("[{c}]{}", text.trim_end()))
            .collect();
        out.push_str(&row.join(" "));
        out.push('\n');
    }
    out
}

#[test]
fn snapshot_both_themes_with_only_readable_colours() {
    use crate::tui::theme::{self, Theme};
    for (name, chosen) in [("dark", Theme::Dark), ("light", Theme::Light)] {
        theme::set(chosen);
        let mut app = long_home_app();
        app.transcript_mut()
            .push(EntryKind::User("fix `split`".into()));
        app.transcript_mut().push(EntryKind::Assistant {
            text: "See [the issue](https://example.com): `split` drops a field.\n\n> quoted\n\n```rust\nfn a() {}\n```".into(),
            streaming: false,
        });
        app.transcript_mut()
            .tool_started(call("1", "bash", r#"{"command":"cargo test"}"#));
        app.transcript_mut().tool_finished(
            &ToolResult::ok("1", "running 3 tests\nexit status: 0"),
            Some(Duration::from_millis(900)),
        );
        app.run_mut().retry = Some("overloaded".into());
        let map = colours(&mut app, 100, 20);
        theme::set(Theme::Dark);
        // Yellow, cyan, grey or white text cannot be read on a light background; black text
        // without a background of its own cannot be read on a dark one.
        let unreadable: &[&str] = match chosen {
            Theme::Light => &["[Yellow/", "[Cyan/", "[Gray/", "[White/", "[LightYellow/"],
            Theme::Dark => &["[Black/Reset]"],
        };
        for bad in unreadable {
            assert!(!map.contains(bad), "{name}: {bad} in\n{map}");
        }
        insta::assert_snapshot!(format!("theme_{name}"), map);
    }
}

#[test]
fn wide_titles_never_run_over_the_pickers_right_edge() {
    use crate::session::{SessionHit, SessionSummary};
    let hit = |id: &str, title: &str| SessionHit {
        session: SessionSummary {
            id: id.into(),
            name: None,
            title: title.into(),
            workdir: "/work/repo".into(),
            provider: "openai".into(),
            model: "gpt-4o".into(),
            mode: "default".into(),
            created_at: 0,
            updated_at: crate::session::text::now_ms(),
            message_count: 4,
            totals: Default::default(),
        },
        snippet: "修复解析器的错误 🇯🇵🇫🇷 and more text after it".into(),
    };
    for (w, h) in [(40u16, 12u16), (80, 24)] {
        let mut app = app();
        app.handle_key(ctrl('r'));
        let generation = app
            .stack()
            .find::<crate::tui::picker::Picker>()
            .unwrap()
            .generation;
        app.take_update(Update::Sessions {
            generation,
            hits: vec![
                hit("a1", "修复解析器的错误并添加测试用例以及更多的中文内容"),
                hit("b2", "🇯🇵🇫🇷🇩🇪 flags in a long title that goes on and on"),
            ],
        });
        let mut terminal = Terminal::new(TestBackend::new(w, h)).unwrap();
        terminal
            .draw(|frame| view::render(&mut app, frame))
            .unwrap();
        let buffer = terminal.backend().buffer();
        let top = (0..h)
            .find(|&y| (0..w).any(|x| buffer[(x, y)].symbol() == "┐"))
            .expect("the picker's frame");
        let right = (0..w).find(|&x| buffer[(x, top)].symbol() == "┐").unwrap();
        for y in top + 1..h {
            let edge = buffer[(right, y)].symbol();
            if edge == "┘" {
                break;
            }
            assert_eq!(edge, "│", "{w}x{h} row {y}:\n{}", screen(&mut app, w, h));
        }
    }
}

/// Issue 32 point 3: a running command's block shows the last lines it printed as they come;
/// its result replaces them.
#[test]
fn a_running_command_shows_a_live_tail_of_its_output() {
    let mut app = app();
    app.handle_engine(event(
        1,
        EventKind::ToolStart(call("t", "bash", r#"{"command":"seq 10"}"#)),
    ));
    for i in 1..=10 {
        app.handle_engine(event(
            1,
            EventKind::ToolOutput(crate::engine::ToolOutput {
                tool_call_id: "t".into(),
                chunk: format!("tick {i}\n"),
            }),
        ));
    }
    let shown = screen(&mut app, 80, 20);
    assert!(
        shown.contains("│ tick 10") && shown.contains("│ tick 7"),
        "{shown}"
    );
    assert!(!shown.contains("tick 6"), "only the last lines: {shown}");
    app.handle_engine(event(
        1,
        EventKind::ToolResult(ToolOutcome {
            name: "bash".into(),
            result: ToolResult::ok("t", "done\nexit status: 0"),
            duration: Duration::from_millis(5),
        }),
    ));
    let shown = screen(&mut app, 80, 20);
    assert!(
        !shown.contains("│ tick") && shown.contains("done"),
        "{shown}"
    );
}

/// Issue 30: an MCP call's progress shows in its block as it comes (progress, total, message);
/// its result replaces it.
#[test]
fn an_mcp_calls_progress_shows_in_its_block() {
    let mut app = app();
    app.handle_engine(event(
        1,
        EventKind::ToolStart(call("p", "mcp__raw__progress", "{}")),
    ));
    let report = |progress: f64, total: Option<f64>, message: Option<&str>| {
        event(
            1,
            EventKind::ToolProgress(crate::engine::ToolProgress {
                tool_call_id: "p".into(),
                progress,
                total,
                message: message.map(str::to_owned),
            }),
        )
    };
    app.handle_engine(report(1.0, Some(4.0), Some("indexing\u{1b}[2J")));
    app.handle_engine(report(2.5, None, None));
    let shown = screen(&mut app, 80, 20);
    assert!(shown.contains("│ progress 1/4 (25%) · indexing"), "{shown}");
    assert!(shown.contains("│ progress 2.50"), "{shown}");
    assert!(!shown.contains('\u{1b}'), "{shown}");
    app.handle_engine(event(
        1,
        EventKind::ToolResult(ToolOutcome {
            name: "mcp__raw__progress".into(),
            result: ToolResult::ok("p", "indexed"),
            duration: Duration::from_millis(5),
        }),
    ));
    let shown = screen(&mut app, 80, 20);
    assert!(
        !shown.contains("progress 1/4") && shown.contains("indexed"),
        "{shown}"
    );
}
