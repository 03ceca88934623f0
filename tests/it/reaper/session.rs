//! The reaper as sessions use it: background `bash` jobs outside the sandbox, through the
//! registry and through the real binary in `exec` mode.

use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;

use harness9::planning::Mode;
use harness9::sandbox::Sandbox;
use harness9::schema::ToolCall;
use harness9::tools::{Bash, ToolContext, builtin_registry_with};
use serde_json::json;

use super::{Escaped, binary, escaping, fifo, read_pid};
use crate::background::{call, results};
use crate::exec::{Run, json_lines};
use crate::support::{MockLlm, Reply, Split, openai_text_sse};

/// Outside the sandbox without asking: yolo, sandbox off.
const OUTSIDE: &[&str] = &["exec", "--json", "--mode", "yolo", "--sandbox", "off", "go"];

#[tokio::test(flavor = "multi_thread")]
async fn dropping_the_registry_stops_what_a_job_started_outside_its_group() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = fifo(dir.path());
    let bash = Bash::new(Arc::new(Sandbox::disabled(dir.path())), None).with_reaper(binary());
    let registry = builtin_registry_with(bash);
    let ctx = ToolContext {
        workdir: dir.path().to_owned(),
        cancel: Default::default(),
        mode: Mode::Yolo,
        todos: Arc::default(),
        read_guard: Default::default(),
        outputs: None,
        editor_files: None,
        editor_terminal: None,
    };
    let start = ToolCall {
        id: "1".into(),
        name: "bash".into(),
        arguments: json!({"command": escaping(&fifo), "background": true}).to_string(),
    };
    let result = registry.execute(&start, &ctx).await;
    assert!(!result.is_error, "{}", result.output);
    let escaped = tokio::task::spawn_blocking(move || Escaped(read_pid(&fifo)))
        .await
        .unwrap();
    // The session ends: its registry, and with it the jobs, are dropped.
    drop(registry);
    let ended = tokio::task::spawn_blocking(move || escaped.ended())
        .await
        .unwrap();
    assert!(ended, "the escaped process outlived the session");
}

/// Leaves the process group and session, writes its pid into `escaped.pid` and runs on.
const ESCAPE: &str = "setsid sh -c 'echo $$ > escaped.pid; exec sleep 1000' >/dev/null 2>&1 &";

/// Waits (inside the command, with a deadline) until `file` is written, then prints it.
fn await_file(file: &str) -> String {
    format!("for i in $(seq 100); do [ -s {file} ] && break; sleep 0.1; done; cat {file}")
}

#[test]
fn bash_kill_stops_an_escaped_process_and_the_job_runs_until_then() {
    let mock = MockLlm::start_in_background();
    let run = Run::new();
    let job = format!(
        "{ESCAPE} {}; echo \"key=[$OPENAI_API_KEY]\"; grep CapBnd /proc/self/status; \
         echo $$ > shell.pid",
        await_file("escaped.pid")
    );
    call(
        &mock,
        "c1",
        "bash",
        json!({"command": job, "background": true}),
    );
    // Until the job's shell itself has ended.
    let shell_ended = format!(
        "{}; for i in $(seq 100); do kill -0 $(cat shell.pid) 2>/dev/null || exit 0; \
         sleep 0.1; done; exit 1",
        await_file("shell.pid")
    );
    call(&mock, "c2", "bash", json!({"command": shell_ended}));
    // The shell has ended, the escaped process has not: the job still runs.
    call(&mock, "c3", "bash_output", json!({"id": "1"}));
    call(&mock, "c4", "bash_kill", json!({"id": "1"}));
    call(
        &mock,
        "c5",
        "bash",
        json!({"command": "pid=$(cat escaped.pid); for i in $(seq 100); do \
                           kill -0 $pid 2>/dev/null || exit 0; sleep 0.1; done; \
                           echo still alive; exit 1"}),
    );
    mock.push(Reply::Sse {
        body: openai_text_sse("Stopped."),
        split: Split::Whole,
    });
    let out = run.exec(&mock, OUTSIDE);
    let pid: i32 = std::fs::read_to_string(run.workdir.join("escaped.pid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let escaped = Escaped(pid);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let results = results(&json_lines(&out.stdout));
    assert_eq!(results.len(), 5, "{results:?}");
    assert_eq!(results[1]["is_error"], false, "{results:?}");
    let log = results[2]["output"].as_str().unwrap();
    assert!(log.contains("still running"), "{log}");
    // The key stays hidden and CAP_SYS_PTRACE dropped, as without the reaper.
    assert!(log.contains("key=[]"), "{log}");
    let bounding = log
        .lines()
        .find_map(|l| l.strip_prefix("CapBnd:"))
        .unwrap_or_else(|| panic!("{log}"));
    let bounding = u64::from_str_radix(bounding.trim(), 16).unwrap();
    assert_eq!(
        bounding & (1 << 19),
        0,
        "CAP_SYS_PTRACE is in the bounding set"
    );
    assert_eq!(results[4]["is_error"], false, "{results:?}");
    assert!(escaped.ended());
}

#[test]
fn the_end_of_the_session_stops_an_escaped_process() {
    let mock = MockLlm::start_in_background();
    let run = Run::new();
    let job = format!("{ESCAPE} {}", await_file("escaped.pid"));
    call(
        &mock,
        "c1",
        "bash",
        json!({"command": job, "background": true}),
    );
    call(
        &mock,
        "c2",
        "bash",
        json!({"command": await_file("escaped.pid")}),
    );
    mock.push(Reply::Sse {
        body: openai_text_sse("Started."),
        split: Split::Whole,
    });
    let out = run.exec(&mock, OUTSIDE);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let pid = read_pid_file(&run.workdir.join("escaped.pid"));
    assert!(
        Escaped(pid).ended(),
        "the escaped process outlived the session"
    );
}

fn read_pid_file(path: &Path) -> i32 {
    std::fs::read_to_string(path)
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

#[test]
fn a_sigkilled_harness9_takes_an_escaped_process_with_it() {
    let mock = MockLlm::start_in_background();
    let run = Run::new();
    // Outside the working directory, which harness9 may read.
    let fifo = fifo(run.workdir.parent().unwrap());
    call(
        &mock,
        "c1",
        "bash",
        json!({"command": escaping(&fifo), "background": true}),
    );
    // harness9 then waits on the provider, the job running.
    mock.push(Reply::Hang);
    let mut harness9 = run
        .command(&mock, OUTSIDE)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let escaped = Escaped(read_pid(&fifo));
    harness9.kill().unwrap();
    harness9.wait().unwrap();
    assert!(escaped.ended(), "the escaped process outlived harness9");
}

/// The host pid of the process whose `argv[0]` is `marker` (a sandboxed process knows only its
/// pid inside the sandbox's namespace), looked for until it has exec'd, for 10 s at most.
fn pid_named(marker: &str) -> i32 {
    let find = || {
        std::fs::read_dir("/proc")
            .ok()?
            .flatten()
            .filter_map(|entry| entry.file_name().to_str()?.parse::<i32>().ok())
            .find(|pid| {
                std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|cmdline| {
                    cmdline.split(|b| *b == 0).next() == Some(marker.as_bytes())
                })
            })
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        if let Some(pid) = find() {
            return pid;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no process named {marker}"
        );
        std::thread::yield_now();
    }
}

#[test]
fn a_sigkilled_harness9_takes_a_sandboxed_jobs_processes_with_it() {
    let mock = MockLlm::start_in_background();
    let run = Run::new();
    // Inside the working directory, which the sandbox lets the command write.
    let fifo = fifo(&run.workdir);
    let marker = format!("h9-sandboxed-job-{}", std::process::id());
    let command = format!(
        "echo $$ > {fifo}; exec -a {marker} sleep 1000",
        fifo = fifo.display()
    );
    call(
        &mock,
        "c1",
        "bash",
        json!({"command": command, "background": true}),
    );
    mock.push(Reply::Hang);
    let mut harness9 = run
        .command(
            &mock,
            &[
                "exec",
                "--json",
                "--mode",
                "yolo",
                "--sandbox",
                "workspace-write",
                "go",
            ],
        )
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    read_pid(&fifo);
    let sandboxed = Escaped(pid_named(&marker));
    harness9.kill().unwrap();
    harness9.wait().unwrap();
    assert!(
        sandboxed.ended(),
        "the sandboxed job outlived the SIGKILLed harness9"
    );
}
