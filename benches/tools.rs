//! Tool benchmarks on a generated tree of 20,000 files: `grep` and `glob` through the registry,
//! `read_file` of a 5 MB file, and `read_file`/`write_file` of a small file two folders down,
//! where opening the path (issue 29 point 2: `openat2` beneath the workdir's handle and the
//! check of what was opened) is most of the work. Run with `cargo bench --bench tools`; docs/PERFORMANCE.md
//! has the ripgrep command that times the same tree for comparison.

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use divan::Bencher;
use harness9::planning::Mode;
use harness9::schema::ToolCall;
use harness9::tools::{Registry, ToolContext, builtin_registry};
use serde_json::json;
use tokio_util::sync::CancellationToken;

fn main() {
    divan::main();
}

const DIRS: usize = 200;
const FILES_PER_DIR: usize = 100;

/// The tree, made once per benchmark process (kept under target/ so it can be reused by rg).
fn tree() -> &'static Path {
    static TREE: OnceLock<PathBuf> = OnceLock::new();
    TREE.get_or_init(|| {
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/bench-tree");
        let marker = root.join(".complete");
        if !marker.exists() {
            let _ = std::fs::remove_dir_all(&root);
            for d in 0..DIRS {
                let dir = root.join(format!("src/module_{d:03}"));
                std::fs::create_dir_all(&dir).unwrap();
                for f in 0..FILES_PER_DIR {
                    let mut text = String::new();
                    for line in 0..40 {
                        text.push_str(&format!("fn function_{d}_{f}_{line}(value: usize) -> usize {{ value * {line} }}\n"));
                    }
                    if f % 97 == 0 {
                        text.push_str("// NEEDLE: the rare line the benchmark searches for\n");
                    }
                    let ext = if f % 2 == 0 { "rs" } else { "txt" };
                    std::fs::write(dir.join(format!("file_{f:03}.{ext}")), text).unwrap();
                }
            }
            let big: String = (0..80_000).map(|i| format!("line {i:06} of a five megabyte file, padded to width...........\n")).collect();
            std::fs::write(root.join("big.txt"), big).unwrap();
            std::fs::write(&marker, "").unwrap();
        }
        root
    })
}

struct Setup {
    runtime: tokio::runtime::Runtime,
    registry: Registry,
    ctx: ToolContext,
}

fn setup() -> Setup {
    setup_in(tree())
}

fn setup_in(workdir: &Path) -> Setup {
    Setup {
        runtime: tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .unwrap(),
        registry: builtin_registry(),
        ctx: ToolContext {
            workdir: workdir.to_path_buf(),
            cancel: CancellationToken::new(),
            mode: Mode::Default,
            todos: Arc::default(),
            read_guard: Default::default(),
            outputs: None,
            editor_files: None,
            editor_terminal: None,
        },
    }
}

fn call(setup: &Setup, name: &str, arguments: serde_json::Value) -> String {
    let call = ToolCall {
        id: "b".into(),
        name: name.into(),
        arguments: arguments.to_string(),
    };
    let result = setup
        .runtime
        .block_on(setup.registry.execute(&call, &setup.ctx));
    assert!(!result.is_error, "{}", result.output);
    result.output
}

#[divan::bench(sample_count = 10)]
fn grep_20k_files(bencher: Bencher) {
    let setup = setup();
    bencher.bench(|| call(&setup, "grep", json!({"pattern": "NEEDLE"})));
}

#[divan::bench(sample_count = 10)]
fn glob_20k_files(bencher: Bencher) {
    let setup = setup();
    bencher.bench(|| call(&setup, "glob", json!({"pattern": "**/*.rs"})));
}

#[divan::bench(sample_count = 10)]
fn read_file_5mb(bencher: Bencher) {
    let setup = setup();
    assert!(std::fs::metadata(tree().join("big.txt")).unwrap().len() > 5_000_000);
    bencher.bench(|| {
        call(
            &setup,
            "read_file",
            json!({"path": "big.txt", "offset": 30000, "limit": 2000}),
        )
    });
}

#[divan::bench(sample_count = 200)]
fn read_file_small(bencher: Bencher) {
    let setup = setup();
    let path = "src/module_007/file_042.rs";
    bencher.bench(|| call(&setup, "read_file", json!({"path": path})));
}

#[divan::bench(sample_count = 200)]
fn write_file_small(bencher: Bencher) {
    let scratch = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR").to_owned() + "/target").unwrap();
    let workdir = scratch.path().canonicalize().unwrap();
    let setup = setup_in(&workdir);
    let content: String = (0..40).map(|i| format!("fn line_{i}() {{}}\n")).collect();
    let mut turn = 0u64;
    bencher.bench_local(|| {
        // A different content each time, so every call replaces the file and shows a diff.
        turn += 1;
        let content = format!("{content}// {turn}\n");
        call(
            &setup,
            "write_file",
            json!({"path": "src/module/file.rs", "content": content}),
        )
    });
}
