//! Language servers (issue 34) through `harness9 exec --json` and a scripted model: pyright (from
//! `.ci/cache/lsp`, which `.ci/run` installs with npm) reports the type error an edit introduces
//! and nothing after the edit that fixes it, and answers the `lsp` tool's definition and
//! references; a tiny fake server shows that a crashed server is started again and that an
//! untrusted folder starts none.

use std::path::{Path, PathBuf};
use std::time::Instant;

use serde_json::{Value, json};

use crate::exec::{Run, json_lines};
use crate::support::{MockLlm, Reply, Split, openai_text_sse, openai_tool_sse};

mod commands;
mod typescript;

/// Where `.ci/run` installs pyright.
fn pyright_bin() -> Option<PathBuf> {
    let bin = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".ci/cache/lsp/node_modules/.bin");
    bin.join("pyright-langserver").exists().then_some(bin)
}

/// PATH with `bin` first.
fn path_with(bin: &Path) -> String {
    format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

/// Runs `exec --json --mode yolo` in `run` (with `--trust` when `trusted`) with the model
/// answering `replies` in turn, then "Done."; its events.
fn exec_events(run: &Run, path: &str, trusted: bool, replies: Vec<Vec<u8>>) -> Vec<Value> {
    let mock = MockLlm::start_in_background();
    for body in replies {
        mock.push(Reply::Sse {
            body,
            split: Split::Whole,
        });
    }
    mock.set_fallback(Reply::Sse {
        body: openai_text_sse("Done."),
        split: Split::Whole,
    });
    let mut args = vec!["exec", "--json", "--mode", "yolo"];
    if trusted {
        args.push("--trust");
    }
    args.push("go");
    let out = run
        .command(&mock, &args)
        .env("PATH", path)
        // A secret of the user's that harness9 itself keeps: no server may inherit it.
        .env("GITHUB_TOKEN", "ghp_secret_of_the_user")
        .output()
        .expect("harness9 runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    json_lines(&out.stdout)
}

/// Runs `exec --json` in `run` with the model making `calls` (tool, arguments) one per turn;
/// the tool results' outputs, in order (each call's duration is printed).
fn exec_calls(run: &Run, path: &str, trusted: bool, calls: &[(&str, Value)]) -> Vec<String> {
    let replies = calls
        .iter()
        .enumerate()
        .map(|(index, (tool, arguments))| {
            openai_tool_sse(&format!("call_{index}"), tool, &arguments.to_string())
        })
        .collect();
    let events = exec_events(run, path, trusted, replies);
    let results: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "tool_result")
        .collect();
    for result in &results {
        println!(
            "{} took {} ms",
            result["data"]["name"], result["data"]["duration_ms"]
        );
    }
    results
        .iter()
        .map(|e| e["data"]["output"].as_str().unwrap_or("").to_owned())
        .collect()
}

fn python_project(run: &Run) {
    std::fs::write(
        run.workdir.join("pyproject.toml"),
        "[project]\nname = \"p\"\n",
    )
    .unwrap();
    std::fs::write(
        run.workdir.join("lib.py"),
        "def greet(name: str) -> str:\n    return \"hello \" + name\n",
    )
    .unwrap();
    std::fs::write(
        run.workdir.join("main.py"),
        "from lib import greet\n\nprint(greet(\"a\"))\n",
    )
    .unwrap();
}

#[test]
fn an_edit_that_introduces_a_type_error_gets_it_and_the_edit_that_fixes_it_gets_none() {
    let Some(bin) = pyright_bin() else {
        println!(
            "lsp::an_edit_that_introduces_a_type_error_gets_it_and_the_edit_that_fixes_it_gets_none \
             DID NOT RUN: pyright is not in .ci/cache/lsp (.ci/run installs it with npm)"
        );
        return;
    };
    let run = Run::new();
    python_project(&run);
    let started = Instant::now();
    let outputs = exec_calls(
        &run,
        &path_with(&bin),
        true,
        &[
            (
                "write_file",
                json!({"path": "main.py", "content": "from lib import greet\n\ncount: int = greet(\"a\")\n"}),
            ),
            (
                "write_file",
                json!({"path": "main.py", "content": "from lib import greet\n\ncount: str = greet(\"a\")\n"}),
            ),
        ],
    );
    // The figure in docs/PERFORMANCE.md (`-- --nocapture` shows it).
    println!(
        "exec with two edits under pyright took {:?}",
        started.elapsed()
    );
    a_new_error_then_none(&outputs, "main.py:3:");
}

/// Two changes' results: the first ends with a new error at `at`, fenced as data from outside,
/// and the second (the fix) with nothing from the server.
fn a_new_error_then_none(outputs: &[String], at: &str) {
    assert_eq!(outputs.len(), 2, "{outputs:?}");
    println!("the first change's result:\n{}", outputs[0]);
    assert!(
        outputs[0].contains(at)
            && outputs[0].contains("error")
            && outputs[0].contains("[data from outside"),
        "{}",
        outputs[0]
    );
    assert!(!outputs[1].contains("[data from outside"), "{}", outputs[1]);
}

#[test]
fn the_lsp_tool_finds_a_definition_and_its_references() {
    let Some(bin) = pyright_bin() else {
        println!(
            "lsp::the_lsp_tool_finds_a_definition_and_its_references DID NOT RUN: pyright is not \
             in .ci/cache/lsp (.ci/run installs it with npm)"
        );
        return;
    };
    let run = Run::new();
    python_project(&run);
    let outputs = exec_calls(
        &run,
        &path_with(&bin),
        true,
        &[
            (
                "lsp",
                json!({"operation": "definition", "path": "main.py", "line": 3, "character": 7}),
            ),
            (
                "lsp",
                json!({"operation": "references", "path": "lib.py", "query": "greet"}),
            ),
            (
                "lsp",
                json!({"operation": "diagnostics", "path": "main.py"}),
            ),
        ],
    );
    assert_eq!(outputs.len(), 3, "{outputs:?}");
    assert!(outputs[2].contains("found nothing"), "{}", outputs[2]);
    assert!(
        outputs[0].contains("lib.py:1:") && outputs[0].contains("def greet"),
        "{}",
        outputs[0]
    );
    assert!(
        outputs[1].contains("lib.py:1:") && outputs[1].contains("main.py:3:"),
        "{}",
        outputs[1]
    );
}

/// A language server in a few lines of Python: it notes each start in `starts`, publishes one
/// error per text it is given ("bad <text>"), and crashes on its first change unless `crashed`
/// exists (which it then makes).
const FAKE_SERVER: &str = r#"
import json, os, sys
here = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(here, "starts"), "a") as f:
    f.write("started\n")
with open(os.path.join(here, "facts"), "w") as f:
    f.write("session leader: %s\n" % (os.getsid(0) == os.getpid()))
    f.write("variables: %s\n" % " ".join(sorted(os.environ)))
inp, out = sys.stdin.buffer, sys.stdout.buffer
def send(message):
    body = json.dumps(message).encode()
    out.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    out.flush()
def publish(uri, version, text):
    send({"jsonrpc": "2.0", "method": "textDocument/publishDiagnostics", "params": {
        "uri": uri, "version": version, "diagnostics": [{
            "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 1}},
            "severity": 1, "source": "fake", "message": "bad " + text.strip()}]}})
while True:
    length = None
    while True:
        line = inp.readline()
        if not line:
            sys.exit(0)
        if line in (b"\r\n", b"\n"):
            break
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
    message = json.loads(inp.read(length))
    method = message.get("method")
    if method == "initialize" and os.path.exists(os.path.join(here, "refuse")):
        send({"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32603, "message": "no installation found"}})
        sys.exit(1)
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": message["id"], "result": {"capabilities": {"textDocumentSync": 1}}})
    elif method == "shutdown":
        with open(os.path.join(here, "ends"), "a") as f:
            f.write("shutdown\n")
        send({"jsonrpc": "2.0", "id": message["id"], "result": None})
    elif method == "exit":
        with open(os.path.join(here, "ends"), "a") as f:
            f.write("exit\n")
        sys.exit(0)
    elif method == "textDocument/didOpen":
        doc = message["params"]["textDocument"]
        publish(doc["uri"], doc["version"], doc["text"])
    elif method == "textDocument/didChange":
        marker = os.path.join(here, "crashed")
        if not os.path.exists(marker):
            open(marker, "w").close()
            sys.exit(3)
        doc = message["params"]["textDocument"]
        publish(doc["uri"], doc["version"], message["params"]["contentChanges"][0]["text"])
"#;

/// The fake server written beside `run`'s home and named in the user's settings for `*.fake`.
fn fake_server(run: &Run) -> PathBuf {
    let dir = run.home.join("fake-lsp");
    std::fs::create_dir_all(&dir).unwrap();
    let script = dir.join("server.py");
    std::fs::write(&script, FAKE_SERVER).unwrap();
    // The interpreter itself, not a shim that looks for its own files under HOME.
    let python = std::process::Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .expect("python3 runs");
    let python = String::from_utf8_lossy(&python.stdout).trim().to_owned();
    std::fs::write(
        run.home.join("settings.json"),
        json!({"lsp": {"fake": {
            "command": python,
            "args": [script.display().to_string()],
            "files": ["*.fake"]
        }}})
        .to_string(),
    )
    .unwrap();
    dir
}

fn starts(dir: &Path) -> usize {
    std::fs::read_to_string(dir.join("starts"))
        .unwrap_or_default()
        .lines()
        .count()
}

#[test]
fn a_server_that_crashes_is_started_again_and_answers_the_next_edit() {
    let run = Run::new();
    let dir = fake_server(&run);
    let write = |text: &str| ("write_file", json!({"path": "a.fake", "content": text}));
    let path = std::env::var("PATH").unwrap_or_default();
    let outputs = exec_calls(
        &run,
        &path,
        true,
        &[write("one"), write("two"), write("three")],
    );
    assert_eq!(outputs.len(), 3, "{outputs:?}");
    assert!(outputs[0].contains("bad one"), "{}", outputs[0]);
    // The second edit crashed the server: no diagnostics for it.
    assert!(!outputs[1].contains("bad two"), "{}", outputs[1]);
    assert!(outputs[2].contains("bad three"), "{}", outputs[2]);
    assert_eq!(starts(&dir), 2, "one start, one restart");
    // The restarted server was ended as the protocol says when the session ended.
    let ends = std::fs::read_to_string(dir.join("ends")).unwrap_or_default();
    assert_eq!(ends, "shutdown\nexit\n");
    // Started in a session of its own, with none of the keys harness9 was given.
    let facts = std::fs::read_to_string(dir.join("facts")).unwrap();
    assert!(facts.contains("session leader: True"), "{facts}");
    assert!(
        facts.contains(" PATH")
            && !facts.contains("OPENAI_API_KEY")
            && !facts.contains("GITHUB_TOKEN"),
        "{facts}"
    );
}

#[test]
fn an_untrusted_folder_starts_no_language_server() {
    let run = Run::new();
    let dir = fake_server(&run);
    let path = std::env::var("PATH").unwrap_or_default();
    let outputs = exec_calls(
        &run,
        &path,
        false,
        &[("write_file", json!({"path": "a.fake", "content": "one"}))],
    );
    assert_eq!(outputs.len(), 1, "{outputs:?}");
    assert!(!outputs[0].contains("bad one"), "{}", outputs[0]);
    assert_eq!(starts(&dir), 0, "no server started in an untrusted folder");
}

#[test]
fn lsp_list_names_each_server_and_says_an_untrusted_folder_starts_none() {
    let run = Run::new();
    fake_server(&run);
    let list = |trusted: bool| {
        let mut command = std::process::Command::new(assert_cmd::cargo::cargo_bin!("harness9"));
        command
            .args(["lsp", "list"])
            .current_dir(&run.workdir)
            .env_clear()
            .env("PATH", "/nonexistent")
            .env("HOME", &run.home)
            .env("HARNESS9_HOME", &run.home);
        if trusted {
            command.arg("--trust");
        }
        let out = command.output().expect("harness9 runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let trusted = list(true);
    assert!(
        trusted.contains("fake") && trusted.contains("ready: "),
        "{trusted}"
    );
    assert!(
        trusted.contains("pyright") && trusted.contains("not on PATH (pyright-langserver"),
        "{trusted}"
    );
    assert!(!trusted.contains("not trusted"), "{trusted}");
    assert!(list(false).contains("this folder is not trusted"));
}

#[test]
fn a_sub_agents_edit_ends_with_its_new_diagnostics_too() {
    let run = Run::new();
    fake_server(&run);
    let replies = vec![
        openai_tool_sse(
            "call_task",
            "task",
            r#"{"agent":"general","description":"write","prompt":"Write a.fake"}"#,
        ),
        openai_tool_sse(
            "call_write",
            "write_file",
            r#"{"path":"a.fake","content":"one"}"#,
        ),
        openai_text_sse("Written."),
    ];
    let path = std::env::var("PATH").unwrap_or_default();
    let events = exec_events(&run, &path, true, replies);
    let child_result = events
        .iter()
        .filter(|e| e["type"] == "subagent")
        .map(|e| &e["data"]["event"])
        .find(|e| e["type"] == "tool_result")
        .expect("the child's write_file result");
    let output = child_result["data"]["output"].as_str().unwrap_or("");
    assert!(output.contains("bad one"), "{output}");
}

#[test]
fn the_lsp_tool_may_not_read_a_secret_file() {
    let run = Run::new();
    fake_server(&run);
    std::fs::write(run.workdir.join(".env"), "API_TOKEN=do-not-show\n").unwrap();
    let path = std::env::var("PATH").unwrap_or_default();
    let outputs = exec_calls(
        &run,
        &path,
        true,
        &[(
            "lsp",
            json!({"operation": "document_symbols", "path": ".env"}),
        )],
    );
    assert_eq!(outputs.len(), 1, "{outputs:?}");
    assert!(!outputs[0].contains("do-not-show"), "{}", outputs[0]);
    assert!(outputs[0].contains(".env"), "{}", outputs[0]);
}

/// A server that refuses `initialize` (typescript-language-server does without `typescript` in
/// the workspace) is given up on quietly: the edit lands without diagnostics, and nothing
/// panics. It did: async-lsp's loop panicked ("Sender is alive") when the failed client was
/// dropped while the loop still ran, once per start, and a debug build's backtrace took the
/// process to 200 MB.
#[test]
fn a_server_that_refuses_to_start_leaves_the_edit_alone_and_nothing_panics() {
    let run = Run::new();
    let dir = fake_server(&run);
    std::fs::write(dir.join("refuse"), "").unwrap();
    let mock = MockLlm::start_in_background();
    mock.push(Reply::Sse {
        body: openai_tool_sse(
            "call_1",
            "write_file",
            &json!({"path": "a.fake", "content": "one"}).to_string(),
        ),
        split: Split::Whole,
    });
    mock.set_fallback(Reply::Sse {
        body: openai_text_sse("Done."),
        split: Split::Whole,
    });
    let out = run
        .command(
            &mock,
            &["exec", "--json", "--mode", "yolo", "--trust", "go"],
        )
        .output()
        .expect("harness9 runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(starts(&dir) >= 1, "the server was started");
    let events = json_lines(&out.stdout);
    let result = events
        .iter()
        .find(|e| e["type"] == "tool_result")
        .expect("a tool result");
    assert_eq!(result["data"]["is_error"], false, "{result}");
    assert!(
        !result["data"]["output"]
            .as_str()
            .unwrap_or("")
            .contains("language server"),
        "{result}"
    );
    assert_eq!(
        std::fs::read_to_string(run.workdir.join("a.fake")).unwrap(),
        "one"
    );
}
