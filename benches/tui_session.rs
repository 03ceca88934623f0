//! The real TUI binary (release) in a pseudo-terminal against a local mock server: time from
//! process start to the first frame, CPU seconds to render a 20,000-token answer streamed as
//! fast as the server can send it, idle CPU over 10 s, and resident memory idle and after the
//! answer. Run with `cargo bench --bench tui_session`; it prints a table for PERFORMANCE.md.
//! `-- paint` measures only the first paint at 120x40 (a fresh home each run, then a home whose
//! sessions.db holds 10,000 sessions); `-- soak` runs 1,000 turns, each with a tool call of a
//! few KB, and reports resident memory and keystroke-to-echo time at the start and the end.
//! `HARNESS9_BENCH_BIN` runs another build of the binary (to compare two commits). For the
//! soak, `SOAK_TURNS` shortens it and `SOAK_HOLD=N` keeps the process N seconds after the last
//! measure (its pid is printed), to read its `/proc/PID/smaps` or attach a debugger.
//! `-- exec` measures the headless side instead: the peak resident memory (the kernel's
//! `ru_maxrss` of the finished process) of `harness9 exec` streaming the same 20,000-token
//! answer, of `exec` against a server that refuses connections, and of `harness9 sessions`.

#[path = "../tests/it/support.rs"]
#[allow(dead_code)]
mod support;

use std::io::{Read, Write};
use std::num::NonZeroU16;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use portable_pty::{CommandBuilder, PtySize, native_pty_system};
use support::{MockLlm, Reply, Split};

const TOKENS: usize = 20_000;

struct Session {
    parser: Arc<Mutex<vt100::Parser>>,
    writer: Box<dyn Write + Send>,
    child: Box<dyn portable_pty::Child + Send + Sync>,
    _master: Box<dyn portable_pty::MasterPty + Send>,
    pid: u32,
}

impl Session {
    fn start(home: &Path, workdir: &Path, mock: &MockLlm) -> (Session, Duration) {
        Self::start_with(home, workdir, mock, &[], "Ask harness9 to do something")
    }

    /// Starts harness9 with `args`; the time is until the screen shows `ready`.
    fn start_with(
        home: &Path,
        workdir: &Path,
        mock: &MockLlm,
        args: &[&str],
        ready: &str,
    ) -> (Session, Duration) {
        Self::start_sized(home, workdir, mock, args, ready, (200, 60))
    }

    fn start_sized(
        home: &Path,
        workdir: &Path,
        mock: &MockLlm,
        args: &[&str],
        ready: &str,
        (cols, rows): (u16, u16),
    ) -> (Session, Duration) {
        let pair = native_pty_system()
            .openpty(PtySize {
                rows,
                cols,
                pixel_width: 0,
                pixel_height: 0,
            })
            .unwrap();
        let binary = std::env::var("HARNESS9_BENCH_BIN")
            .unwrap_or_else(|_| env!("CARGO_BIN_EXE_harness9").to_owned());
        let mut command = CommandBuilder::new(binary);
        // A folder trusted for the run: the measures are of the conversation's screen, not of
        // the trust question (which would otherwise come first in this fresh folder).
        command.arg("--trust");
        command.args(args);
        command.cwd(workdir);
        command.env_clear();
        command.env("PATH", std::env::var("PATH").unwrap_or_default());
        command.env("TERM", "xterm-256color");
        command.env("HOME", home);
        command.env("HARNESS9_HOME", home);
        command.env("OPENAI_API_KEY", "sk-bench");
        command.env("OPENAI_BASE_URL", mock.openai_base());
        // The theme is known: the background is not asked (a pty harness never answers).
        command.env("COLORFGBG", "15;0");
        // glibc allocator settings, passed through to see what the allocator keeps.
        for (key, value) in std::env::vars().filter(|(k, _)| k.starts_with("MALLOC_")) {
            command.env(key, value);
        }
        let started = Instant::now();
        let child = pair.slave.spawn_command(command).unwrap();
        drop(pair.slave);
        let pid = child.process_id().unwrap();
        let mut reader = pair.master.try_clone_reader().unwrap();
        let writer = pair.master.take_writer().unwrap();
        let parser = Arc::new(Mutex::new(vt100::Parser::new(
            NonZeroU16::new(rows).unwrap(),
            NonZeroU16::new(cols).unwrap(),
            0,
        )));
        let feed = Arc::clone(&parser);
        std::thread::spawn(move || {
            let mut buffer = [0u8; 65536];
            while let Ok(n) = reader.read(&mut buffer) {
                if n == 0 {
                    break;
                }
                feed.lock().unwrap().process(&buffer[..n]);
            }
        });
        let session = Session {
            parser,
            writer,
            child,
            _master: pair.master,
            pid,
        };
        session.wait_for(ready);
        let first_frame = started.elapsed();
        (session, first_frame)
    }

    fn screen(&self) -> String {
        self.parser.lock().unwrap().screen().contents()
    }

    fn wait_for(&self, text: &str) {
        let until = Instant::now() + Duration::from_secs(120);
        while !self.screen().contains(text) {
            assert!(
                Instant::now() < until,
                "timed out waiting for {text:?}:\n{}",
                self.screen()
            );
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    fn send(&mut self, text: &str) {
        self.writer.write_all(text.as_bytes()).unwrap();
        self.writer.flush().unwrap();
    }

    /// User + system CPU seconds the process has used.
    fn cpu_seconds(&self) -> f64 {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.pid)).unwrap();
        let fields: Vec<&str> = stat
            .rsplit(')')
            .next()
            .unwrap()
            .split_whitespace()
            .collect();
        let ticks: u64 = fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap();
        ticks as f64 / unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64
    }

    /// `RssAnon`, `RssFile` and `RssShmem` in MB.
    fn rss_parts(&self) -> String {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid)).unwrap();
        status
            .lines()
            .filter(|l| l.starts_with("Rss"))
            .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
            .collect::<Vec<_>>()
            .join(", ")
    }

    fn rss_mb(&self) -> f64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid)).unwrap();
        let kb: f64 = status
            .lines()
            .find(|l| l.starts_with("VmRSS:"))
            .unwrap()
            .split_whitespace()
            .nth(1)
            .unwrap()
            .parse()
            .unwrap();
        kb / 1024.0
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let _ = self.child.kill();
    }
}

/// A 20,000-token markdown answer as OpenAI-style SSE, one token per chunk.
fn long_answer() -> Vec<u8> {
    let mut out = String::new();
    let chunk = |text: &str| {
        format!(
            "data: {{\"choices\":[{{\"index\":0,\"delta\":{{\"content\":{}}},\"finish_reason\":null}}]}}\n\n",
            serde_json::to_string(text).unwrap()
        )
    };
    for i in 0..TOKENS {
        let token = match i % 400 {
            0 => "\n\n## Section\n\n".to_owned(),
            100 => "\n\n```rust\nfn main() {\n    let x = 1;\n}\n```\n\n".to_owned(),
            200 => "\n\n- a list item with `code`\n- another **bold** item\n\n".to_owned(),
            _ if i % 25 == 0 => "\n\n".to_owned(),
            _ => format!("word{i} "),
        };
        out.push_str(&chunk(&token));
    }
    out.push_str(&chunk(" THE-END-OF-THE-ANSWER"));
    out.push_str("data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n");
    out.push_str("data: {\"choices\":[],\"usage\":{\"prompt_tokens\":100,\"completion_tokens\":20000}}\n\ndata: [DONE]\n\n");
    out.into_bytes()
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(|a, b| a.partial_cmp(b).unwrap());
    values[values.len() / 2]
}

fn main() {
    if std::env::args().any(|a| a == "--test" || a == "--list") {
        return; // `cargo test --benches` only checks that it builds.
    }
    if std::env::args().any(|a| a == "paint") {
        return first_paint();
    }
    if std::env::args().any(|a| a == "soak") {
        return soak();
    }
    if std::env::args().any(|a| a == "exec") {
        return headless_peaks();
    }
    let mock = MockLlm::start_in_background();
    let dir = tempfile::tempdir().unwrap();
    let (home, workdir) = (dir.path().join("home"), dir.path().join("repo"));
    std::fs::create_dir_all(&workdir).unwrap();

    let mut first_frames = Vec::new();
    for _ in 0..7 {
        let (session, first) = Session::start(&home, &workdir, &mock);
        first_frames.push(first.as_secs_f64() * 1000.0);
        drop(session);
    }

    let (mut session, _) = Session::start(&home, &workdir, &mock);
    std::thread::sleep(Duration::from_secs(1));
    let rss_idle = session.rss_mb();
    let idle_before = session.cpu_seconds();
    std::thread::sleep(Duration::from_secs(10));
    let idle_cpu = session.cpu_seconds() - idle_before;

    mock.push(Reply::Sse {
        body: long_answer(),
        split: Split::Whole,
    });
    let before = session.cpu_seconds();
    let started = Instant::now();
    session.send("write a long answer\r");
    session.wait_for("THE-END-OF-THE-ANSWER");
    // The run is over when the status line stops showing the turn's spinner.
    let until = Instant::now() + Duration::from_secs(60);
    while session.screen().lines().last().is_some_and(|l| {
        l.contains('⠋')
            || l.contains('⠙')
            || l.contains('⠹')
            || l.contains('⠸')
            || l.contains('⠼')
            || l.contains('⠴')
            || l.contains('⠦')
            || l.contains('⠧')
            || l.contains('⠇')
            || l.contains('⠏')
    }) {
        assert!(Instant::now() < until);
        std::thread::sleep(Duration::from_millis(5));
    }
    let wall = started.elapsed();
    let answer_cpu = session.cpu_seconds() - before;
    let rss_after = session.rss_mb();

    // A stored session of 5,000 messages, resumed: time until its last answer is on screen.
    let resume_id = {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async {
            let store = harness9::memory::SessionStore::open(&home.join("sessions.db")).unwrap();
            let record = store
                .create(harness9::memory::NewSession {
                    workdir: workdir.canonicalize().unwrap().display().to_string(),
                    provider: "openai".into(),
                    model: "gpt-4o".into(),
                    mode: "default".into(),
                })
                .await
                .unwrap();
            let mut messages = Vec::new();
            for i in 0..2_500 {
                messages.push(harness9::schema::Message::user(format!(
                    "question {i} about the parser"
                )));
                messages.push(harness9::schema::Message::assistant(format!(
                    "Answer {i}: the parser's `split` needs **care**.\n\n- point one\n- point two"
                )));
            }
            messages.push(harness9::schema::Message::user("the very last question"));
            messages.pop();
            messages.push(harness9::schema::Message::assistant(
                "THE-LAST-STORED-ANSWER",
            ));
            store.append(&record.id, &messages).await.unwrap();
            store.flush().await.unwrap();
            record.id
        })
    };
    let mut resumes = Vec::new();
    for _ in 0..5 {
        let (session, took) = Session::start_with(
            &home,
            &workdir,
            &mock,
            &["--resume", &resume_id],
            "THE-LAST-STORED-ANSWER",
        );
        resumes.push(took.as_secs_f64() * 1000.0);
        drop(session);
    }

    println!("| measure | value | target |");
    println!("| --- | --- | --- |");
    println!(
        "| process start to first frame (median of 7) | {:.1} ms (min {:.1}, max {:.1}) | < 30 ms |",
        median(first_frames.clone()),
        first_frames.iter().cloned().fold(f64::MAX, f64::min),
        first_frames.iter().cloned().fold(0.0, f64::max)
    );
    println!(
        "| CPU to render a {TOKENS}-token answer | {answer_cpu:.2} s (wall {:.2} s) | < 0.5 s |",
        wall.as_secs_f64()
    );
    println!("| idle CPU over 10 s | {idle_cpu:.2} s | 0 |");
    println!("| resident memory idle | {rss_idle:.1} MB | < 25 MB |");
    println!("| resident memory after the answer | {rss_after:.1} MB | |");
    println!(
        "| resume a 5,000-message session to its first frame (median of 5) | {:.1} ms | |",
        median(resumes)
    );
}

/// First paint in a 120x40 terminal: the welcome screen with its input line, from process
/// start; 9 runs each with a fresh home, alternating with 9 inline (`--no-alt-screen`), then 9
/// with a sessions.db of 10,000 sessions.
fn first_paint() {
    let mock = MockLlm::start_in_background();
    let dir = tempfile::tempdir().unwrap();
    let workdir = dir.path().join("repo");
    std::fs::create_dir_all(&workdir).unwrap();
    let paint_with = |home: &Path, args: &[&str]| {
        let (session, took) = Session::start_sized(
            home,
            &workdir,
            &mock,
            args,
            "Ask harness9 to do something",
            (120, 40),
        );
        drop(session);
        took.as_secs_f64() * 1000.0
    };
    let paint = |home: &Path| paint_with(home, &[]);
    // Alternating, so both modes see the same load.
    let (mut fresh, mut inline) = (Vec::new(), Vec::new());
    for i in 0..9 {
        fresh.push(paint(&dir.path().join(format!("fresh-{i}"))));
        inline.push(paint_with(
            &dir.path().join(format!("inline-{i}")),
            &["--no-alt-screen"],
        ));
    }
    let big = dir.path().join("big");
    std::fs::create_dir_all(&big).unwrap();
    let made = Instant::now();
    fill_sessions(&big.join("sessions.db"), &workdir, 10_000);
    eprintln!(
        "10,000 sessions made in {:.1} s",
        made.elapsed().as_secs_f64()
    );
    let full: Vec<f64> = (0..9).map(|_| paint(&big)).collect();
    let show = |v: &[f64]| {
        format!(
            "{:.1} ms (min {:.1}, max {:.1})",
            median(v.to_vec()),
            v.iter().cloned().fold(f64::MAX, f64::min),
            v.iter().cloned().fold(0.0, f64::max)
        )
    };
    println!(
        "| first paint at 120x40, fresh home (median of 9) | {} |",
        show(&fresh)
    );
    println!(
        "| first paint at 120x40 inline (--no-alt-screen), fresh home (median of 9) | {} |",
        show(&inline)
    );
    println!(
        "| first paint at 120x40, sessions.db with 10,000 sessions (median of 9) | {} |",
        show(&full)
    );
}

/// `count` sessions over 50 working directories (this one among them), two messages each.
fn fill_sessions(db: &Path, workdir: &Path, count: usize) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let store = harness9::memory::SessionStore::open(db).unwrap();
        let here = workdir.canonicalize().unwrap().display().to_string();
        for i in 0..count {
            let record = store
                .create(harness9::memory::NewSession {
                    workdir: if i % 50 == 0 {
                        here.clone()
                    } else {
                        format!("/work/project-{}", i % 50)
                    },
                    provider: "openai".into(),
                    model: "gpt-4o".into(),
                    mode: "default".into(),
                })
                .await
                .unwrap();
            let messages = [
                harness9::schema::Message::user(format!("task {i}: fix the parser")),
                harness9::schema::Message::assistant(format!("Done with task {i}.")),
            ];
            store.append(&record.id, &messages).await.unwrap();
        }
        store.flush().await.unwrap();
    });
}

/// Median milliseconds from a keystroke to its echo on screen, over `n` keys.
fn echo_ms(session: &mut Session, n: usize) -> f64 {
    let mut times = Vec::new();
    for i in 1..=n {
        let typed = "x".repeat(i);
        let started = Instant::now();
        session.send("x");
        session.wait_for(&format!("› {typed}"));
        times.push(started.elapsed().as_secs_f64() * 1000.0);
    }
    // Ctrl+U empties the input again.
    session.send("\x15");
    session.wait_for("Ask harness9 to do something");
    median(times)
}

/// 1,000 turns, each a prompt, a `read_file` of a 4 KB file and an answer, through the real
/// binary; resident memory and keystroke echo at the start and at the end.
fn soak() {
    let turns: usize = std::env::var("SOAK_TURNS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(1000);
    let mock = MockLlm::start_in_background();
    mock.forget_bodies();
    let dir = tempfile::tempdir().unwrap();
    let (home, workdir) = (dir.path().join("home"), dir.path().join("repo"));
    std::fs::create_dir_all(&workdir).unwrap();
    let notes: String = (0..80)
        .map(|i| format!("line {i:03}: the parser splits fields on commas and trims them\n"))
        .collect();
    std::fs::write(workdir.join("notes.txt"), &notes).unwrap();
    for i in 0..turns {
        mock.push(Reply::Sse {
            body: support::openai_tool_sse(
                &format!("call_{i}"),
                "read_file",
                r#"{"path":"notes.txt"}"#,
            ),
            split: Split::Whole,
        });
        mock.push(Reply::Sse {
            body: support::openai_text_sse(&format!("ANSWER-{i} read the notes.")),
            split: Split::Whole,
        });
    }
    // No compaction: the whole history stays (and is sent) for the 1,000 turns.
    let (mut session, _) = Session::start_sized(
        &home,
        &workdir,
        &mock,
        &["--context-window", "100000000"],
        "Ask harness9 to do something",
        (120, 40),
    );
    std::thread::sleep(Duration::from_secs(1));
    let rss_start = session.rss_mb();
    let echo_start = echo_ms(&mut session, 20);
    let started = Instant::now();
    let cpu_before = session.cpu_seconds();
    let mut lap = Instant::now();
    for i in 0..turns {
        session.send(&format!("turn {i}\r"));
        session.wait_for(&format!("ANSWER-{i} read the notes."));
        session.wait_for("─ Enter send");
        if (i + 1) % 100 == 0 {
            eprintln!(
                "turns {}..{}: {:.2} s, {:.1} MB",
                i - 99,
                i,
                lap.elapsed().as_secs_f64(),
                session.rss_mb()
            );
            lap = Instant::now();
        }
    }
    let wall = started.elapsed().as_secs_f64();
    let cpu = session.cpu_seconds() - cpu_before;
    std::thread::sleep(Duration::from_secs(1));
    let rss_end = session.rss_mb();
    eprintln!("at the end: {}", session.rss_parts());
    let echo_end = echo_ms(&mut session, 20);
    if let Some(hold) = std::env::var("SOAK_HOLD").ok().and_then(|s| s.parse().ok()) {
        eprintln!("holding pid {} for {hold} s", session.pid);
        std::thread::sleep(Duration::from_secs(hold));
    }
    println!(
        "| {turns} turns (prompt, read_file of 4 KB, answer) | {wall:.1} s wall, {cpu:.1} s CPU |"
    );
    println!(
        "| resident memory at the start / after {turns} turns | {rss_start:.1} MB / {rss_end:.1} MB |"
    );
    println!(
        "| keystroke to echo at the start / at the end (median of 20) | {echo_start:.1} ms / {echo_end:.1} ms |"
    );
}

/// Runs the binary to its end and returns its peak resident memory in MB (`ru_maxrss`, which
/// the kernel keeps for a process that has exited: no sampling can miss the peak).
fn peak_rss_mb(args: &[&str], home: &Path, workdir: &Path, base_url: &str) -> f64 {
    let binary = std::env::var("HARNESS9_BENCH_BIN")
        .unwrap_or_else(|_| env!("CARGO_BIN_EXE_harness9").to_owned());
    let child = std::process::Command::new(binary)
        .args(args)
        .current_dir(workdir)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("HARNESS9_HOME", home)
        .env("OPENAI_API_KEY", "sk-bench")
        .env("OPENAI_BASE_URL", base_url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: an all-zero rusage is a valid value for the kernel to fill.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `pid` is our own child, not yet waited for; both pointers are valid.
    let waited = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(waited, pid, "wait4 failed");
    std::mem::forget(child); // already reaped
    usage.ru_maxrss as f64 / 1024.0
}

fn headless_peaks() {
    let mock = MockLlm::start_in_background();
    let dir = tempfile::tempdir().unwrap();
    let (home, workdir) = (dir.path().join("home"), dir.path().join("repo"));
    std::fs::create_dir_all(&workdir).unwrap();
    let runs = 5;
    let mut answer = Vec::new();
    for _ in 0..runs {
        mock.push(Reply::Sse {
            body: long_answer(),
            split: Split::Whole,
        });
        answer.push(peak_rss_mb(
            &["exec", "--trust", "write a long answer"],
            &home,
            &workdir,
            &mock.openai_base(),
        ));
    }
    // A port that was just free: the connection is refused, retried, then reported.
    let refused = {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        format!("http://127.0.0.1:{port}/v1")
    };
    let unreachable: Vec<f64> = (0..runs)
        .map(|_| peak_rss_mb(&["exec", "--trust", "hello"], &home, &workdir, &refused))
        .collect();
    let sessions: Vec<f64> = (0..runs)
        .map(|_| peak_rss_mb(&["sessions"], &home, &workdir, &refused))
        .collect();
    println!("| peak resident memory (median of {runs}) | MB |");
    println!("| --- | --- |");
    println!(
        "| `exec` streaming a {TOKENS}-token answer | {:.1} |",
        median(answer)
    );
    println!(
        "| `exec` against a server that refuses connections | {:.1} |",
        median(unreachable)
    );
    println!("| `harness9 sessions` | {:.1} |", median(sessions));
}
