//! Every built-in tool in a temporary directory, through the registry as the engine calls it.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use harness9::permission::rules::PermissionRules;
use harness9::permission::{CallInput, Verdict, decide};
use harness9::planning::{Mode, TodoStatus, TodoStore};
use harness9::schema::{ToolCall, ToolResult};
use harness9::tools::{Registry, ToolContext, WriteFile, builtin_registry};
use serde_json::json;
use tokio_util::sync::CancellationToken;

struct Workspace {
    _dir: tempfile::TempDir,
    root: PathBuf,
    registry: Registry,
    todos: Arc<TodoStore>,
}

impl Workspace {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap().join("work");
        std::fs::create_dir_all(&root).unwrap();
        Workspace {
            _dir: dir,
            root,
            registry: builtin_registry(),
            todos: Arc::default(),
        }
    }

    fn write(&self, path: &str, content: impl AsRef<[u8]>) {
        let path = self.root.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, content).unwrap();
    }

    fn read(&self, path: &str) -> String {
        std::fs::read_to_string(self.root.join(path)).unwrap()
    }

    fn ctx(&self, mode: Mode, cancel: CancellationToken) -> ToolContext {
        ToolContext {
            workdir: self.root.clone(),
            cancel,
            mode,
            todos: Arc::clone(&self.todos),
            read_guard: Default::default(),
            outputs: None,
            editor_files: None,
            editor_terminal: None,
        }
    }

    async fn call(&self, name: &str, arguments: serde_json::Value) -> ToolResult {
        self.call_in(Mode::Yolo, name, arguments).await
    }

    async fn call_in(&self, mode: Mode, name: &str, arguments: serde_json::Value) -> ToolResult {
        let call = ToolCall {
            id: "t1".into(),
            name: name.into(),
            arguments: arguments.to_string(),
        };
        self.registry
            .execute(&call, &self.ctx(mode, CancellationToken::new()))
            .await
    }
}

fn ok(result: &ToolResult) -> &str {
    assert!(!result.is_error, "expected success, got: {}", result.output);
    &result.output
}

fn err(result: &ToolResult) -> &str {
    assert!(result.is_error, "expected an error, got: {}", result.output);
    &result.output
}

#[tokio::test]
async fn read_file_numbers_pages_and_refuses_what_it_cannot_show() {
    let ws = Workspace::new();
    let text: String = (1..=10).map(|i| format!("line {i}\n")).collect();
    ws.write("a.txt", &text);
    let out = ws
        .call(
            "read_file",
            json!({"path": "a.txt", "offset": 3, "limit": 2}),
        )
        .await;
    assert_eq!(
        ok(&out),
        "     3\tline 3\n     4\tline 4\n[a.txt has 10 lines; shown 3-4. Read on with offset=5.]"
    );
    let out = ws.call("read_file", json!({"path": "a.txt"})).await;
    assert!(ok(&out).ends_with("    10\tline 10"));

    ws.write("long.txt", "x".repeat(5000));
    assert!(ok(&ws.call("read_file", json!({"path": "long.txt"})).await).ends_with("… [line cut]"));
    ws.write("blob.bin", [0u8, 1, 2, 3, 0, 255]);
    assert!(
        err(&ws.call("read_file", json!({"path": "blob.bin"})).await)
            .contains("binary file (6 bytes)")
    );
    assert!(
        err(&ws.call("read_file", json!({"path": "missing.rs"})).await)
            .contains("missing.rs does not exist")
    );
    std::fs::create_dir_all(ws.root.join("src")).unwrap();
    assert!(err(&ws.call("read_file", json!({"path": "src"})).await).contains("Use list_dir"));
    assert!(
        err(&ws
            .call("read_file", json!({"path": "a.txt", "offset": 99}))
            .await)
        .contains("past the end")
    );
}

#[tokio::test]
async fn write_file_creates_replaces_atomically_and_keeps_permissions() {
    use std::os::unix::fs::PermissionsExt;
    let ws = Workspace::new();
    let out = ws
        .call(
            "write_file",
            json!({"path": "deep/new/file.txt", "content": "one\ntwo\n"}),
        )
        .await;
    assert_eq!(ok(&out), "Created deep/new/file.txt (2 lines, 8 bytes).");
    assert_eq!(ws.read("deep/new/file.txt"), "one\ntwo\n");

    ws.write("run.sh", "echo old\n");
    std::fs::set_permissions(
        ws.root.join("run.sh"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    let out = ws
        .call(
            "write_file",
            json!({"path": "run.sh", "content": "echo new\n"}),
        )
        .await;
    let text = ok(&out);
    assert!(
        text.contains("-echo old") && text.contains("+echo new"),
        "{text}"
    );
    let mode = std::fs::metadata(ws.root.join("run.sh"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o755, "permissions survive the rename");
    let leftovers: Vec<_> = std::fs::read_dir(&ws.root)
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".tmp"))
        .collect();
    assert!(
        leftovers.is_empty(),
        "no temporary files left: {leftovers:?}"
    );
}

#[tokio::test]
async fn edit_file_replaces_exactly_once_or_says_why_not() {
    let ws = Workspace::new();
    ws.write("lib.rs", "fn a() {}\nfn b() {}\nfn a() {}\n");
    let out = ws
        .call(
            "edit_file",
            json!({"path": "lib.rs", "old_string": "fn b() {}", "new_string": "fn b() { todo() }"}),
        )
        .await;
    let text = ok(&out);
    assert!(text.starts_with("Edited lib.rs: 1 replacement."));
    assert!(
        text.contains("--- a/lib.rs")
            && text.contains("+++ b/lib.rs")
            && text.contains("-fn b() {}")
            && text.contains("+fn b() { todo() }")
    );
    assert_eq!(
        ws.read("lib.rs"),
        "fn a() {}\nfn b() { todo() }\nfn a() {}\n"
    );

    let out = ws
        .call(
            "edit_file",
            json!({"path": "lib.rs", "old_string": "fn a() {}", "new_string": "fn c() {}"}),
        )
        .await;
    assert!(
        err(&out).contains("occurs 2 times in lib.rs (at lines 1, 3)"),
        "{}",
        out.output
    );
    let out = ws.call("edit_file", json!({"path": "lib.rs", "old_string": "fn a() {}", "new_string": "fn c() {}", "replace_all": true})).await;
    assert!(ok(&out).contains("2 replacements"));

    let out = ws
        .call(
            "edit_file",
            json!({"path": "lib.rs", "old_string": "fn  c()  {}", "new_string": "x"}),
        )
        .await;
    assert!(
        err(&out).contains("differs only in whitespace"),
        "{}",
        out.output
    );
    let out = ws
        .call(
            "edit_file",
            json!({"path": "nope.rs", "old_string": "a", "new_string": "b"}),
        )
        .await;
    assert!(err(&out).contains("nope.rs does not exist"));
}

#[tokio::test]
async fn search_tools_respect_gitignore_and_sort() {
    let ws = Workspace::new();
    ws.write(".gitignore", "target/\n*.log\n");
    ws.write("src/main.rs", "fn main() {\n    println!(\"needle\");\n}\n");
    ws.write("src/lib/util.rs", "// NEEDLE in caps\n");
    ws.write("b.rs", "needle\n");
    ws.write("target/debug/out.rs", "needle\n");
    ws.write("debug.log", "needle\n");
    ws.write(".git/config", "needle\n");

    let out = ws.call("glob", json!({"pattern": "**/*.rs"})).await;
    assert_eq!(ok(&out), "b.rs\nsrc/lib/util.rs\nsrc/main.rs");
    let out = ws.call("glob", json!({"pattern": "*.rs"})).await;
    assert_eq!(ok(&out), "b.rs", "* stays within a directory");

    let out = ws.call("grep", json!({"pattern": "needle"})).await;
    assert_eq!(
        ok(&out),
        "b.rs:1:needle\nsrc/main.rs:2:    println!(\"needle\");"
    );
    let out = ws
        .call(
            "grep",
            json!({"pattern": "needle", "case_insensitive": true, "glob": "*.rs", "path": "src"}),
        )
        .await;
    assert_eq!(
        ok(&out),
        "src/lib/util.rs:1:// NEEDLE in caps\nsrc/main.rs:2:    println!(\"needle\");"
    );
    assert!(err(&ws.call("grep", json!({"pattern": "("})).await).contains("not a valid regex"));
    assert_eq!(
        ok(&ws.call("grep", json!({"pattern": "absent"})).await),
        "No matches for `absent`."
    );

    let out = ws.call("list_dir", json!({})).await;
    assert_eq!(ok(&out), ".gitignore\nb.rs\nsrc/");
    assert!(err(&ws.call("list_dir", json!({"path": "b.rs"})).await).contains("Use read_file"));
}

#[tokio::test]
async fn listings_are_capped_with_a_note() {
    let ws = Workspace::new();
    for i in 0..1200 {
        ws.write(&format!("f/{i:04}.txt"), "x");
    }
    let out = ws.call("glob", json!({"pattern": "f/*.txt"})).await;
    let text = ok(&out);
    assert_eq!(text.lines().filter(|l| l.starts_with("f/")).count(), 1000);
    assert!(text.ends_with("[200 more files not shown; narrow the search to see them]"));
}

#[tokio::test]
async fn bash_runs_in_the_workdir_and_reports_exit_status() {
    let ws = Workspace::new();
    let out = ws
        .call("bash", json!({"command": "pwd; echo err >&2; echo out"}))
        .await;
    assert_eq!(
        ok(&out),
        format!("{}\nerr\nout\nexit status: 0", ws.root.display())
    );
    let out = ws
        .call("bash", json!({"command": "echo failing; exit 3"}))
        .await;
    assert_eq!(err(&out), "failing\nexit status: 3");
    let out = ws
        .call("bash", json!({"command": "printf '\\xff\\xfeok'"}))
        .await;
    assert!(ok(&out).contains("ok"), "non-UTF-8 output is shown lossily");
    let out = ws
        .call(
            "bash",
            json!({"command": "read line; echo \"got [$line]\""}),
        )
        .await;
    assert!(
        out.output.contains("got []"),
        "stdin is closed: {}",
        out.output
    );
}

#[tokio::test]
async fn bash_caps_ten_megabytes_of_output() {
    let ws = Workspace::new();
    let out = ws
        .call(
            "bash",
            json!({"command": "head -c 10000000 /dev/zero | tr '\\0' 'a'; echo; echo THE-END"}),
        )
        .await;
    let text = ok(&out);
    assert!(text.len() < 40_000, "{} bytes kept", text.len());
    assert!(text.contains("bytes of output cut"));
    assert!(
        text.ends_with("THE-END\nexit status: 0"),
        "the tail is kept"
    );
}

fn alive(pid: i32) -> bool {
    // A zombie has already died; only its parent has not collected it yet.
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat
            .rsplit(')')
            .next()
            .unwrap_or("")
            .trim_start()
            .starts_with('Z'),
        Err(_) => false,
    }
}

/// Waits (bounded) until `pid` is gone.
fn gone_soon(pid: i32) -> bool {
    let until = Instant::now() + Duration::from_secs(5);
    while Instant::now() < until {
        if !alive(pid) {
            return true;
        }
        std::thread::yield_now();
    }
    false
}

fn read_pid(path: &Path) -> i32 {
    std::fs::read_to_string(path)
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

#[tokio::test]
async fn a_timeout_kills_the_command_and_every_child() {
    let ws = Workspace::new();
    let started = Instant::now();
    let out = ws
        .call(
            "bash",
            json!({"command": "sleep 300 & echo $! > child.pid; sleep 300", "timeout_secs": 1}),
        )
        .await;
    assert!(err(&out).contains("timed out after 1s"));
    assert!(started.elapsed() < Duration::from_secs(5));
    let child = read_pid(&ws.root.join("child.pid"));
    assert!(
        gone_soon(child),
        "the background child {child} was left running"
    );
}

#[tokio::test]
async fn background_children_do_not_outlive_a_finished_command() {
    let ws = Workspace::new();
    let out = ws
        .call(
            "bash",
            json!({"command": "sleep 300 & echo $! > child.pid; echo started"}),
        )
        .await;
    assert!(ok(&out).starts_with("started"));
    assert!(gone_soon(read_pid(&ws.root.join("child.pid"))));
}

#[tokio::test]
async fn cancellation_stops_a_command_mid_run() {
    let ws = Workspace::new();
    let cancel = CancellationToken::new();
    let ctx = ws.ctx(Mode::Yolo, cancel.clone());
    let call = ToolCall {
        id: "c".into(),
        name: "bash".into(),
        arguments: json!({"command": "echo $$ > shell.pid; sleep 300"}).to_string(),
    };
    let registry = builtin_registry();
    let task = tokio::spawn(async move { registry.execute(&call, &ctx).await });
    let pid_file = ws.root.join("shell.pid");
    let until = Instant::now() + Duration::from_secs(10);
    while !(pid_file.exists() && std::fs::read_to_string(&pid_file).unwrap().ends_with('\n')) {
        assert!(Instant::now() < until, "the command started");
        tokio::task::yield_now().await;
    }
    let at = Instant::now();
    cancel.cancel();
    let out = task.await.unwrap();
    assert!(at.elapsed() < Duration::from_millis(500));
    assert!(err(&out).contains("cancelled"));
    assert!(gone_soon(read_pid(&pid_file)));
}

#[tokio::test]
async fn todo_write_replaces_the_list() {
    let ws = Workspace::new();
    let out = ws
        .call_in(
            Mode::Plan,
            "todo_write",
            json!({"todos": [
                {"content": "Read the parser", "status": "completed"},
                {"content": "Add a test", "status": "in_progress"},
                {"content": "Fix the bug", "status": "pending"},
            ]}),
        )
        .await;
    assert_eq!(
        ok(&out),
        "Todo list updated (1/3 done):\n[x] Read the parser\n[~] Add a test\n[ ] Fix the bug"
    );
    assert_eq!(ws.todos.snapshot().len(), 3);
    assert_eq!(ws.todos.count(TodoStatus::Pending), 1);
    let out = ws
        .call(
            "todo_write",
            json!({"todos": [{"content": "x", "status": "done"}]}),
        )
        .await;
    assert!(err(&out).contains("must be one of"));
}

#[tokio::test]
async fn plan_mode_refuses_edits_at_the_registry() {
    let ws = Workspace::new();
    let out = ws
        .call_in(
            Mode::Plan,
            "write_file",
            json!({"path": "x.txt", "content": "x"}),
        )
        .await;
    assert!(err(&out).contains("plan mode"));
    assert!(!ws.root.join("x.txt").exists(), "nothing was written");
    let out = ws
        .call_in(
            Mode::Plan,
            "edit_file",
            json!({"path": "x.txt", "old_string": "a", "new_string": "b"}),
        )
        .await;
    assert!(err(&out).contains("plan mode"));
    let offered: Vec<_> = ws
        .registry
        .available_tools(Mode::Plan)
        .into_iter()
        .map(|t| t.name)
        .collect();
    assert!(
        !offered.contains(&"write_file".to_string()) && offered.contains(&"read_file".to_string())
    );
}

#[test]
fn writing_outside_the_workdir_needs_approval_even_in_auto_edit() {
    let ws = Workspace::new();
    std::os::unix::fs::symlink(std::env::temp_dir(), ws.root.join("escape")).unwrap();
    let allowed = HashSet::new();
    for path in [
        "../outside.txt",
        "/tmp/outside.txt",
        "escape/x.txt",
        "src/../../x.txt",
    ] {
        let arguments = json!({"path": path, "content": ""});
        let verdict = decide(
            &CallInput::new(&WriteFile, &arguments, Mode::AutoEdit, &ws.root),
            &allowed,
            &PermissionRules::none(),
        );
        assert!(
            matches!(verdict, Verdict::Ask { .. }),
            "{path}: {verdict:?}"
        );
    }
    let arguments = json!({"path": "src/in.txt", "content": ""});
    let verdict = decide(
        &CallInput::new(&WriteFile, &arguments, Mode::AutoEdit, &ws.root),
        &allowed,
        &PermissionRules::none(),
    );
    assert_eq!(verdict, Verdict::Run);
}

#[tokio::test]
async fn plan_mode_runs_read_only_commands_and_refuses_the_rest_at_the_registry() {
    let ws = Workspace::new();
    ws.write("keep.txt", "keep me\n");
    let offered: Vec<_> = ws
        .registry
        .available_tools(Mode::Plan)
        .into_iter()
        .map(|t| t.name)
        .collect();
    assert!(
        offered.contains(&"bash".to_string()),
        "bash is offered in plan mode"
    );
    let out = ws
        .call_in(Mode::Plan, "bash", json!({"command": "ls && cat keep.txt"}))
        .await;
    assert!(ok(&out).contains("keep me"));
    for command in [
        "rm -rf keep.txt",
        "echo x > keep.txt",
        "find . -delete",
        "git push",
        "ls; touch new.txt",
    ] {
        let out = ws
            .call_in(Mode::Plan, "bash", json!({ "command": command }))
            .await;
        assert!(err(&out).contains("plan mode"), "{command}: {}", out.output);
    }
    assert_eq!(ws.read("keep.txt"), "keep me\n");
    assert!(!ws.root.join("new.txt").exists());
}

/// Finding 6/7 (the walk): a grep over a directory never prints a secret file's or a denied
/// file's contents that nobody approved; it names what it left out. Named as `path`, the file
/// is searched (the permission decision asked first).
#[tokio::test]
async fn grep_walks_withhold_secret_and_denied_files_and_say_so() {
    let ws = Workspace::new();
    ws.write(".env", "API_KEY=sk-live-secret\n");
    ws.write("deploy/id_rsa", "API_KEY in a private key\n");
    ws.write("private/plan.txt", "API_KEY of the plan\n");
    ws.write("src/main.rs", "let API_KEY = env();\n");
    let home = ws.root.join("../home");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(
        home.join("settings.json"),
        r#"{"permissions": {"deny": ["read_file(private/**)"]}}"#,
    )
    .unwrap();
    let rules = Arc::new(PermissionRules::new(&ws.root, &home, true));
    let mut ctx = ws.ctx(Mode::Default, CancellationToken::new());
    ctx.read_guard = harness9::permission::read_guard(rules, ws.root.clone());
    let grep = |arguments: serde_json::Value| {
        let call = ToolCall {
            id: "g".into(),
            name: "grep".into(),
            arguments: arguments.to_string(),
        };
        let (registry, ctx) = (&ws.registry, &ctx);
        async move { registry.execute(&call, ctx).await }
    };
    let walked = grep(json!({"pattern": "API_KEY"})).await;
    let out = ok(&walked);
    assert!(out.contains("src/main.rs:1:let API_KEY"), "{out}");
    for leaked in ["sk-live-secret", "private key", "of the plan"] {
        assert!(!out.contains(leaked), "{leaked}: {out}");
    }
    assert!(
        out.contains("not searched: .env, deploy/id_rsa, private/plan.txt"),
        "{out}"
    );
    let named = grep(json!({"pattern": "API_KEY", "path": ".env"})).await;
    assert!(
        ok(&named).contains("sk-live-secret"),
        "approved by the decision"
    );
}
