//! The sandbox's cost per `bash` call: `true` through the `bash` tool with and without the
//! sandbox (workspace-write, the real helper: namespaces, mounts, Landlock, capabilities,
//! seccomp), 100 runs each; and the reaper's own cost (`harness9 __reap command -- sh -c true`
//! started with its control pipe and waited for, as a background job starts it); the sandboxed
//! call again in working directories of 2,000, 15,000 and 50,000 folders (the walk for
//! protected names at any depth runs before and after each command). Run with
//! `cargo bench --bench sandbox`; the numbers are in docs/PERFORMANCE.md.

use std::path::PathBuf;
use std::sync::Arc;

use divan::Bencher;
use harness9::planning::Mode;
use harness9::sandbox::{Sandbox, SandboxInputs};
use harness9::schema::ToolCall;
use harness9::tools::{Bash, Registry, ToolContext, builtin_registry_with};
use serde_json::json;

fn main() {
    divan::main();
}

struct Setup {
    runtime: tokio::runtime::Runtime,
    registry: Registry,
    ctx: ToolContext,
    _dir: tempfile::TempDir,
}

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Plain,
    Sandboxed,
}

fn setup(kind: Kind, folders: usize) -> Setup {
    let sandboxed = kind == Kind::Sandboxed;
    let dir = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).unwrap();
    let workdir = dir.path().canonicalize().unwrap();
    // `folders` folders, 100 to a parent: what the sandbox's walk for protected names at any
    // depth (src/sandbox/nested.rs) meets before and after each command.
    for n in 0..folders {
        std::fs::create_dir_all(workdir.join(format!("d{}/e{n}", n / 100))).unwrap();
    }
    let sandbox = if sandboxed {
        let sandbox = Sandbox::resolve(&SandboxInputs {
            flag: None,
            workdir: workdir.clone(),
            home: workdir.join("home"),
            helper: PathBuf::from(env!("CARGO_BIN_EXE_harness9")),
        });
        assert!(sandbox.is_active(), "{:?}", sandbox.notices());
        sandbox
    } else {
        Sandbox::disabled(&workdir)
    };
    Setup {
        runtime: tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .unwrap(),
        registry: builtin_registry_with(Bash::new(Arc::new(sandbox), None)),
        ctx: ToolContext {
            workdir,
            cancel: Default::default(),
            mode: Mode::AutoEdit,
            todos: Arc::default(),
            read_guard: Default::default(),
            outputs: None,
            editor_files: None,
            editor_terminal: None,
        },
        _dir: dir,
    }
}

fn run_true(bencher: Bencher, kind: Kind, folders: usize) {
    let s = setup(kind, folders);
    let call = ToolCall {
        id: "b".into(),
        name: "bash".into(),
        arguments: json!({"command": "true"}).to_string(),
    };
    bencher.bench_local(|| {
        let result = s.runtime.block_on(s.registry.execute(&call, &s.ctx));
        assert!(!result.is_error, "{}", result.output);
    });
}

#[divan::bench(sample_count = 100, sample_size = 1)]
fn bash_true_unsandboxed(bencher: Bencher) {
    run_true(bencher, Kind::Plain, 0);
}

/// `true` under the reaper, started the way `shell_process` starts a background job's (the
/// control pipe on its stdin), waited for to its end.
#[divan::bench(sample_count = 100, sample_size = 1)]
fn bash_true_reaped(bencher: Bencher) {
    bencher.bench_local(|| {
        let (read, write) = std::io::pipe().unwrap();
        let status = std::process::Command::new(env!("CARGO_BIN_EXE_harness9"))
            .args(["__reap", "command", "--", "/bin/sh", "-c", "true"])
            .stdin(read)
            .status()
            .unwrap();
        drop(write);
        assert!(status.success());
    });
}

#[divan::bench(sample_count = 100, sample_size = 1)]
fn bash_true_sandboxed(bencher: Bencher) {
    run_true(bencher, Kind::Sandboxed, 0);
}

/// The same in a working directory of 2,000 folders (and their 20 parents).
#[divan::bench(sample_count = 100, sample_size = 1)]
fn bash_true_sandboxed_2000_folders(bencher: Bencher) {
    run_true(bencher, Kind::Sandboxed, 2_000);
}

/// The same in a working directory of 15,000 folders (and their 150 parents).
#[divan::bench(sample_count = 20, sample_size = 1)]
fn bash_true_sandboxed_15000_folders(bencher: Bencher) {
    run_true(bencher, Kind::Sandboxed, 15_000);
}

/// The same in a working directory of 50,000 folders (and their 500 parents): past the walk's
/// old bound of 20,000 folders, where every sandboxed call failed.
#[divan::bench(sample_count = 20, sample_size = 1)]
fn bash_true_sandboxed_50000_folders(bencher: Bencher) {
    run_true(bencher, Kind::Sandboxed, 50_000);
}
