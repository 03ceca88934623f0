//! Session store and compaction benchmarks on a database of 10,000 sessions and 100,000
//! messages (plus one session of 5,000 messages), made once under target/. Run with
//! `cargo bench --bench memory`.

use std::path::PathBuf;
use std::sync::OnceLock;

use divan::Bencher;
use harness9::memory::{
    Compactor, NewSession, SessionStore, SlidingWindow, Summarization, TokenBudget,
};
use harness9::provider::{ScriptStep, ScriptedProvider};
use harness9::schema::{Message, ToolCall, ToolResult};
use rusqlite::params;
use tokio_util::sync::CancellationToken;

fn main() {
    divan::main();
}

const SESSIONS: usize = 10_000;
const MESSAGES_PER_SESSION: usize = 10;
const BIG_SESSION: usize = 5_000;

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// One realistic turn: a prompt, a tool call, its result, an answer.
fn turn(i: usize) -> Vec<Message> {
    let mut call = Message::assistant(format!("Let me check module {i}."));
    call.tool_calls = vec![ToolCall {
        id: format!("c{i}"),
        name: "grep".into(),
        arguments: format!(r#"{{"pattern":"fn handler_{i}"}}"#),
    }];
    vec![
        Message::user(format!(
            "Why does handler {i} fail when the queue is empty?"
        )),
        call,
        Message::tool_result(&ToolResult::ok(
            format!("c{i}"),
            format!("src/queue.rs:{i}:fn handler_{i}(q: &Queue) -> Result<()> {{ q.pop()? }}"),
        )),
        Message::assistant(format!(
            "Handler {i} calls pop on an empty queue; it should check first."
        )),
    ]
}

struct Fixture {
    store: SessionStore,
    big_session: String,
    workdir: String,
}

fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/bench-sessions.db");
        let fresh = !path.exists();
        let store = SessionStore::open(&path).unwrap();
        let runtime = runtime();
        if fresh {
            // Bulk-load in one transaction: the benchmark measures reads, not this setup.
            runtime
                .block_on(store.call(|conn| {
                    let tx = conn.transaction()?;
                    for s in 0..SESSIONS {
                        let id = format!("bench{s:06}");
                        tx.execute(
                            "INSERT INTO sessions (id, workdir, title, created_at, updated_at, message_count)
                             VALUES (?1, ?2, ?3, ?4, ?4, ?5)",
                            params![id, format!("/repo/{}", s % 50), format!("Why does handler {s} fail"), s as i64, MESSAGES_PER_SESSION as i64],
                        )?;
                        let messages: Vec<Message> = (0..MESSAGES_PER_SESSION / 4 + 1).flat_map(|t| turn(s * 3 + t)).take(MESSAGES_PER_SESSION).collect();
                        for (seq, m) in messages.iter().enumerate() {
                            tx.execute(
                                "INSERT INTO messages (session_id, seq, role, content, body, created_at) VALUES (?1, ?2, ?3, ?4, ?5, 0)",
                                params![id, seq as i64 + 1, m.role.as_str(), m.content, serde_json::to_string(m).unwrap()],
                            )?;
                            tx.execute("INSERT INTO messages_fts (rowid, text) VALUES (?1, ?2)", params![tx.last_insert_rowid(), m.content])?;
                        }
                    }
                    tx.commit()
                }))
                .unwrap();
            let big = runtime
                .block_on(store.create(NewSession { workdir: "/big".into(), provider: "openai".into(), model: "gpt-4o".into(), mode: "default".into() }))
                .unwrap();
            let messages: Vec<Message> = (0..BIG_SESSION / 4).flat_map(turn).collect();
            runtime.block_on(store.append(&big.id, &messages)).unwrap();
        }
        let big_session = runtime.block_on(store.latest("/big")).unwrap().unwrap().id;
        Fixture { store, big_session, workdir: "/repo/7".into() }
    })
}

#[divan::bench(sample_count = 30)]
fn save_a_turn(bencher: Bencher) {
    let f = fixture();
    let runtime = runtime();
    let session = runtime
        .block_on(f.store.create(NewSession {
            workdir: "/save".into(),
            provider: "openai".into(),
            model: "gpt-4o".into(),
            mode: "default".into(),
        }))
        .unwrap();
    let messages = turn(1);
    bencher.bench(|| {
        runtime
            .block_on(f.store.append(&session.id, &messages))
            .unwrap()
    });
}

#[divan::bench(sample_count = 20)]
fn load_5000_message_session(bencher: Bencher) {
    let f = fixture();
    let runtime = runtime();
    bencher.bench(|| {
        let messages = runtime.block_on(f.store.load_all(&f.big_session)).unwrap();
        assert_eq!(messages.len(), BIG_SESSION);
    });
}

#[divan::bench(sample_count = 20)]
fn list_all_10000_sessions(bencher: Bencher) {
    let f = fixture();
    let runtime = runtime();
    bencher
        .bench(|| assert!(runtime.block_on(f.store.list(None, 20_000)).unwrap().len() > SESSIONS));
}

#[divan::bench(sample_count = 20)]
fn list_one_directory_newest_50(bencher: Bencher) {
    let f = fixture();
    let runtime = runtime();
    bencher.bench(|| {
        assert_eq!(
            runtime
                .block_on(f.store.list(Some(&f.workdir), 50))
                .unwrap()
                .len(),
            50
        )
    });
}

#[divan::bench(sample_count = 20)]
fn fts_query_over_100000_messages(bencher: Bencher) {
    let f = fixture();
    let runtime = runtime();
    bencher.bench(|| {
        assert!(
            !runtime
                .block_on(f.store.search("handler 4242 empty", None, 50))
                .unwrap()
                .is_empty()
        )
    });
}

fn big_history() -> Vec<Message> {
    let mut history = vec![Message::system("You are harness9.")];
    history.extend((0..BIG_SESSION / 4).flat_map(turn));
    history
}

fn compact(bencher: Bencher, compactor: &dyn Compactor) {
    let history = big_history();
    let runtime = runtime();
    let cancel = CancellationToken::new();
    bencher.bench(|| {
        // The scripted provider answers at once: this is the cost without the model call.
        let provider = ScriptedProvider::new([ScriptStep::Reply(Message::assistant("summary"))]);
        let compaction = runtime
            .block_on(compactor.compact(&history, &provider, &cancel))
            .unwrap();
        assert!(compaction.keep_from > 1);
    });
}

#[divan::bench(sample_count = 10)]
fn compaction_sliding_window_5000(bencher: Bencher) {
    compact(bencher, &SlidingWindow { max_messages: 400 });
}

#[divan::bench(sample_count = 10)]
fn compaction_token_budget_5000(bencher: Bencher) {
    compact(bencher, &TokenBudget { max_tokens: 20_000 });
}

#[divan::bench(sample_count = 10)]
fn compaction_summarization_5000(bencher: Bencher) {
    compact(
        bencher,
        &Summarization {
            keep_recent_tokens: 20_000,
        },
    );
}

const PICKER_SESSIONS: usize = 10_000;
const PICKER_MESSAGES_PER_SESSION: usize = 100;

/// 10,000 sessions with 1,000,000 messages over 50 directories, for the picker.
fn picker_store() -> &'static SessionStore {
    static STORE: OnceLock<SessionStore> = OnceLock::new();
    STORE.get_or_init(|| {
        let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/bench-picker.db");
        let fresh = !path.exists();
        let store = SessionStore::open(&path).unwrap();
        if fresh {
            runtime()
                .block_on(store.call(|conn| {
                    let tx = conn.transaction()?;
                    {
                        let mut session = tx.prepare(
                            "INSERT INTO sessions (id, workdir, title, created_at, updated_at, message_count)
                             VALUES (?1, ?2, ?3, ?4, ?4, ?5)",
                        )?;
                        let mut message = tx.prepare(
                            "INSERT INTO messages (session_id, seq, role, content, body, created_at) VALUES (?1, ?2, ?3, ?4, ?5, 0)",
                        )?;
                        let mut fts = tx.prepare("INSERT INTO messages_fts (rowid, text) VALUES (?1, ?2)")?;
                        for s in 0..PICKER_SESSIONS {
                            let id = format!("pick{s:06}");
                            session.execute(params![id, format!("/repo/{}", s % 50), format!("Session {s}: fix handler {s}"), s as i64, PICKER_MESSAGES_PER_SESSION as i64])?;
                            for (seq, m) in (0..PICKER_MESSAGES_PER_SESSION / 4).flat_map(|t| turn(s * 31 + t)).enumerate() {
                                message.execute(params![id, seq as i64 + 1, m.role.as_str(), m.content, serde_json::to_string(&m).unwrap()])?;
                                fts.execute(params![tx.last_insert_rowid(), m.content])?;
                            }
                        }
                    }
                    tx.commit()
                }))
                .unwrap();
        }
        store
    })
}

/// What the picker runs when it opens: this directory's newest sessions.
#[divan::bench(sample_count = 20)]
fn picker_open_10000_sessions_1m_messages(bencher: Bencher) {
    let store = picker_store();
    let runtime = runtime();
    bencher.bench(|| {
        assert_eq!(
            runtime
                .block_on(store.list(Some("/repo/7"), 500))
                .unwrap()
                .len(),
            200
        )
    });
}

/// What one keystroke in the picker runs: title and full-text search in this directory.
#[divan::bench(sample_count = 20)]
fn picker_filter_keystroke_1m_messages(bencher: Bencher) {
    let store = picker_store();
    let runtime = runtime();
    bencher.bench(|| {
        assert!(
            !runtime
                .block_on(store.search("handler 230 empty", Some("/repo/7"), 200))
                .unwrap()
                .is_empty()
        )
    });
}

/// The same keystroke with Tab (every directory).
#[divan::bench(sample_count = 20)]
fn picker_filter_keystroke_all_directories(bencher: Bencher) {
    let store = picker_store();
    let runtime = runtime();
    bencher.bench(|| {
        assert!(
            !runtime
                .block_on(store.search("queue empty", None, 200))
                .unwrap()
                .is_empty()
        )
    });
}
