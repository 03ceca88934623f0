//! Checkpoint cost per prompt (issue 21): a prompt that changes ten files of a 10,000-file
//! repository. `cargo bench --bench checkpoint`. Before divan's timings, one pass of each case
//! prints the bytes it stored in `$HARNESS9_HOME/checkpoints/`.
//!
//! - `edits`: ten edit-tool writes (the stage keeps each file before it is written, then
//!   hashes what it holds after);
//! - `command_warm`: one command that changes ten files, with the walk of the previous command
//!   cached (every later command of a session);
//! - `command_cold`: the same, as the first command of a session in this checkout (every file
//!   is read, hashed and, when new to the store, copied).

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use divan::Bencher;
use harness9::checkpoint::Checkpoints;

const DIRS: usize = 100;
const FILES_PER_DIR: usize = 100;

fn main() {
    report_bytes();
    divan::main();
}

/// 10,000 files of ~2 KB in 100 directories, made once under target/.
fn repo() -> &'static Path {
    static REPO: OnceLock<PathBuf> = OnceLock::new();
    REPO.get_or_init(|| {
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/bench-checkpoint");
        let marker = root.join(".complete");
        if !marker.exists() {
            let _ = std::fs::remove_dir_all(&root);
            for d in 0..DIRS {
                let dir = root.join(format!("src/mod_{d:03}"));
                std::fs::create_dir_all(&dir).unwrap();
                for f in 0..FILES_PER_DIR {
                    let text: String = (0..50)
                        .map(|l| format!("fn f_{d}_{f}_{l}(x: usize) -> usize {{ x + {l} }}\n"))
                        .collect();
                    std::fs::write(dir.join(format!("file_{f:03}.rs")), text).unwrap();
                }
            }
            std::fs::write(&marker, "").unwrap();
        }
        root
    })
}

fn ten(root: &Path) -> Vec<PathBuf> {
    (0..10)
        .map(|i| root.join(format!("src/mod_{:03}/file_007.rs", i * 10)))
        .collect()
}

/// Changes the ten files (a new line each time, so each prompt stores new content).
fn change(paths: &[PathBuf], round: usize) {
    for path in paths {
        let mut text = std::fs::read_to_string(path).unwrap();
        text.push_str(&format!("// round {round}\n"));
        std::fs::write(path, text).unwrap();
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
}

fn fresh(home: &Path) -> Checkpoints {
    let checkpoints = Checkpoints::new(home, repo().to_path_buf(), None);
    runtime().block_on(checkpoints.begin("bench", "change ten files"));
    checkpoints
}

fn edits_prompt(checkpoints: &Checkpoints, paths: &[PathBuf], round: usize) {
    checkpoints.before_write(paths);
    change(paths, round);
    checkpoints.after_write(paths);
}

fn command_prompt(checkpoints: &Checkpoints, paths: &[PathBuf], round: usize) {
    checkpoints.before_command("call");
    change(paths, round);
    checkpoints.after_command("call", true);
}

fn stored_bytes(home: &Path) -> u64 {
    std::fs::read_dir(home.join("checkpoints"))
        .map(|dir| {
            dir.flatten()
                .filter_map(|e| e.metadata().ok())
                .map(|m| m.len())
                .sum()
        })
        .unwrap_or(0)
}

fn report_bytes() {
    let paths = ten(repo());
    let home = tempfile::tempdir().unwrap();
    let checkpoints = fresh(home.path());
    edits_prompt(&checkpoints, &paths, 0);
    let edits = stored_bytes(home.path());
    let recorded = checkpoints
        .open_changes()
        .map(|c| c.files.len())
        .unwrap_or(0);
    let home = tempfile::tempdir().unwrap();
    let checkpoints = fresh(home.path());
    command_prompt(&checkpoints, &paths, 1);
    let cold = stored_bytes(home.path());
    checkpoints.end();
    runtime().block_on(checkpoints.begin("bench", "again"));
    command_prompt(&checkpoints, &paths, 2);
    let warm = stored_bytes(home.path()) - cold;
    eprintln!(
        "checkpoint bytes stored per prompt: edits {edits} ({recorded} files recorded), \
         first command {cold}, later command {warm}"
    );
}

#[divan::bench(sample_count = 10)]
fn edits(bencher: Bencher) {
    let paths = ten(repo());
    let home = tempfile::tempdir().unwrap();
    let mut round = 100;
    bencher.bench_local(|| {
        round += 1;
        let checkpoints = fresh(home.path());
        edits_prompt(&checkpoints, &paths, round);
    });
}

#[divan::bench(sample_count = 10)]
fn command_warm(bencher: Bencher) {
    let paths = ten(repo());
    let home = tempfile::tempdir().unwrap();
    let checkpoints = fresh(home.path());
    command_prompt(&checkpoints, &paths, 200);
    let mut round = 200;
    bencher.bench_local(|| {
        round += 1;
        command_prompt(&checkpoints, &paths, round);
    });
}

#[divan::bench(sample_count = 5)]
fn command_cold(bencher: Bencher) {
    let paths = ten(repo());
    let mut round = 300;
    bencher
        .with_inputs(|| tempfile::tempdir().unwrap())
        .bench_local_values(|home| {
            round += 1;
            let checkpoints = fresh(home.path());
            command_prompt(&checkpoints, &paths, round);
            home
        });
}
