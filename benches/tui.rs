//! Frame time of the TUI: a 200x60 screen over a 10,000-entry transcript while an answer streams
//! in, drawn into ratatui's `TestBackend` through the real view code. Run with
//! `cargo bench --bench tui`; `cargo bench --bench tui_session` measures the real binary.

use std::time::Duration;

use divan::Bencher;
use harness9::engine::{Event, EventKind};
use harness9::planning::Mode;
use harness9::schema::{ToolCall, ToolResult};
use harness9::tui::{self, App, EntryKind, SessionView};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

fn main() {
    divan::main();
}

fn app_with_history(entries: usize) -> App {
    tui::highlight::load_now();
    let mut app = App::new(SessionView {
        session_id: "bench".into(),
        provider: "openai".into(),
        model: "gpt-4o".into(),
        workdir: "/work/repo".into(),
        mode: Mode::Default,
        context_window: 128_000,
    });
    for i in 0..entries / 4 {
        app.transcript_mut().push(EntryKind::User(format!(
            "question {i}: why does handler {i} fail?"
        )));
        app.transcript_mut().push(EntryKind::Assistant {
            text: format!("Handler **{i}** calls `pop` on an empty queue.\n\n- check first\n- then pop\n\n```rust\nfn handler_{i}(q: &mut Queue) {{\n    if let Some(x) = q.pop() {{ use_it(x) }}\n}}\n```"),
            streaming: false,
        });
        let call = ToolCall {
            id: format!("c{i}"),
            name: "grep".into(),
            arguments: format!(r#"{{"pattern":"handler_{i}"}}"#),
        };
        app.transcript_mut().tool_started(call);
        app.transcript_mut().tool_finished(
            &ToolResult::ok(
                format!("c{i}"),
                "src/queue.rs:10:fn handler\nsrc/queue.rs:20:handler()",
            ),
            Some(Duration::from_millis(3)),
        );
        app.transcript_mut().push(EntryKind::Notice {
            text: format!("turn {i} done"),
            tone: tui::Tone::Quiet,
        });
    }
    app.set_running(true);
    app
}

#[divan::bench(sample_count = 50)]
fn frame_200x60_10000_entries_while_streaming(bencher: Bencher) {
    let mut app = app_with_history(10_000);
    let mut terminal = Terminal::new(TestBackend::new(200, 60)).unwrap();
    terminal.draw(|f| tui::draw(&mut app, f)).unwrap();
    let mut n = 0u64;
    bencher.bench_local(|| {
        n += 1;
        app.handle_engine(Event {
            turn: 1,
            kind: EventKind::ActionDelta(format!("token{n} ")),
        });
        if n.is_multiple_of(40) {
            app.handle_engine(Event {
                turn: 1,
                kind: EventKind::ActionDelta("\n\n".into()),
            });
        }
        terminal.draw(|f| tui::draw(&mut app, f)).unwrap();
    });
}

#[divan::bench(sample_count = 20)]
fn first_draw_of_a_10000_entry_transcript(bencher: Bencher) {
    bencher
        .with_inputs(|| {
            (
                app_with_history(10_000),
                Terminal::new(TestBackend::new(200, 60)).unwrap(),
            )
        })
        .bench_local_values(|(mut app, mut terminal)| {
            terminal.draw(|f| tui::draw(&mut app, f)).unwrap();
        });
}

/// Eight sub-agents stream into their task blocks (issue 17) over the same transcript: a
/// child's deltas change its block's step at most once, and only the running blocks in view are
/// laid out again.
#[divan::bench(sample_count = 50)]
fn frame_200x60_10000_entries_while_8_children_stream(bencher: Bencher) {
    use harness9::engine::SubagentEvent;
    let mut app = app_with_history(10_000);
    for c in 0..8 {
        app.handle_engine(Event {
            turn: 1,
            kind: EventKind::ToolStart(ToolCall {
                id: format!("task{c}"),
                name: "task".into(),
                arguments: format!(
                    r#"{{"agent":"explore","description":"search part {c}","prompt":"p"}}"#
                ),
            }),
        });
    }
    let mut terminal = Terminal::new(TestBackend::new(200, 60)).unwrap();
    terminal.draw(|f| tui::draw(&mut app, f)).unwrap();
    let mut n = 0u64;
    bencher.bench_local(|| {
        n += 1;
        let kind = if n.is_multiple_of(40) {
            EventKind::ToolStart(ToolCall {
                id: format!("g{n}"),
                name: "grep".into(),
                arguments: format!(r#"{{"pattern":"needle_{n}"}}"#),
            })
        } else {
            EventKind::ActionDelta(format!("token{n} "))
        };
        app.handle_engine(Event {
            turn: 1,
            kind: EventKind::Subagent(SubagentEvent {
                task_id: format!("task{}", n % 8),
                agent: "explore".into(),
                event: Box::new(Event { turn: 1, kind }),
            }),
        });
        terminal.draw(|f| tui::draw(&mut app, f)).unwrap();
    });
}
