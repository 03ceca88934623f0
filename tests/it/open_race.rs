//! Issue 29 point 2: a folder swapped with a link (`renameat2(RENAME_EXCHANGE)`, as a
//! background job would) while the real tools write and read through it. Nothing may land
//! outside the working directory or in `.git/hooks`, and no read may return what lies outside.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use harness9::planning::Mode;
use harness9::schema::ToolCall;
use harness9::tools::{Registry, ToolContext, builtin_registry};
use serde_json::json;
use tokio_util::sync::CancellationToken;

/// A thread exchanging `work/sub` and the link `work/swap` (`renameat2(RENAME_EXCHANGE)`)
/// until stopped, at most `SWAP_LIMIT` times.
struct Swapper {
    stop: Arc<AtomicBool>,
    thread: std::thread::JoinHandle<usize>,
}

const SWAP_LIMIT: usize = 2_000_000;

impl Swapper {
    fn start(work: &Path) -> Self {
        let (a, b) = (work.join("sub"), work.join("swap"));
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = Arc::clone(&stop);
        let thread = std::thread::spawn(move || {
            let mut swaps = 0;
            while !stopped.load(Ordering::Relaxed) && swaps < SWAP_LIMIT {
                rustix::fs::renameat_with(
                    rustix::fs::CWD,
                    &a,
                    rustix::fs::CWD,
                    &b,
                    rustix::fs::RenameFlags::EXCHANGE,
                )
                .expect("renameat2(RENAME_EXCHANGE)");
                swaps += 1;
            }
            swaps
        });
        Swapper { stop, thread }
    }

    /// Stops the thread; how many swaps it made.
    fn finish(self) -> usize {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.join().expect("the swapper ends")
    }
}

async fn call(
    registry: &Registry,
    workdir: &Path,
    name: &str,
    arguments: serde_json::Value,
) -> String {
    let ctx = ToolContext {
        workdir: workdir.to_owned(),
        cancel: CancellationToken::new(),
        mode: Mode::Yolo,
        todos: Arc::default(),
        read_guard: Default::default(),
        outputs: None,
        editor_files: None,
        editor_terminal: None,
    };
    let call = ToolCall {
        id: "t".into(),
        name: name.into(),
        arguments: arguments.to_string(),
    };
    registry.execute(&call, &ctx).await.output
}

/// The work tree: `sub` a real folder holding `data`, `swap` a link to `target`.
fn tree(target: &Path) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().canonicalize().unwrap().join("work");
    std::fs::create_dir_all(work.join("sub")).unwrap();
    std::fs::create_dir_all(work.join(".git/hooks")).unwrap();
    std::fs::write(work.join("sub/data"), "inside\n").unwrap();
    let target = if target.is_absolute() {
        target.to_owned()
    } else {
        work.join(target)
    };
    std::os::unix::fs::symlink(&target, work.join("swap")).unwrap();
    (dir, work)
}

fn names_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writes_and_reads_raced_through_a_swapped_link_stay_inside() {
    let outside_dir = tempfile::tempdir().unwrap();
    let outside = outside_dir.path().canonicalize().unwrap();
    std::fs::write(outside.join("data"), "OUTSIDE SECRET\n").unwrap();
    let (_dir, work) = tree(&outside);
    let registry = builtin_registry();

    let swapper = Swapper::start(&work);
    let mut leaked_reads = 0;
    for i in 0..60 {
        call(
            &registry,
            &work,
            "write_file",
            json!({"path": format!("sub/w{i}.txt"), "content": "x"}),
        )
        .await;
        call(
            &registry,
            &work,
            "edit_file",
            json!({"path": "sub/data", "old_string": "SECRET", "new_string": "EDITED"}),
        )
        .await;
        if i < 40 {
            let out = call(&registry, &work, "read_file", json!({"path": "sub/data"})).await;
            leaked_reads += usize::from(out.contains("OUTSIDE"));
        }
    }
    assert!(swapper.finish() > 0);
    assert_eq!(
        names_in(&outside),
        vec!["data".to_owned()],
        "writes landed outside"
    );
    assert_eq!(
        std::fs::read_to_string(outside.join("data")).unwrap(),
        "OUTSIDE SECRET\n",
        "an edit landed outside"
    );
    assert_eq!(leaked_reads, 0, "reads returned the file outside");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writes_raced_through_a_link_into_git_hooks_never_land_there() {
    let (_dir, work) = tree(Path::new(".git/hooks"));
    let registry = builtin_registry();
    let swapper = Swapper::start(&work);
    for i in 0..60 {
        call(
            &registry,
            &work,
            "write_file",
            json!({"path": format!("sub/pre-commit{i}"), "content": "#!/bin/sh\n"}),
        )
        .await;
    }
    assert!(swapper.finish() > 0);
    // After an odd number of swaps the hooks folder is reached as `swap`'s target either way.
    let hooks = work.join(".git/hooks");
    let planted: Vec<String> = names_in(&hooks);
    assert!(planted.is_empty(), "planted in .git/hooks: {planted:?}");
}

/// Issue 29 point 2's rest: `grep` walks the working directory and opens each file it found; a
/// folder swapped for a link out between the walk and the open must not lead the read outside.
/// `list_dir` and `glob` name what the walk found and read no file.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grep_raced_through_a_swapped_link_never_reads_outside() {
    let outside_dir = tempfile::tempdir().unwrap();
    let outside = outside_dir.path().canonicalize().unwrap();
    std::fs::write(outside.join("data"), "OUTSIDE SECRET\n").unwrap();
    let (_dir, work) = tree(&outside);
    // More files in `sub`, so the walk spends longer between reading the folder and its files.
    for i in 0..50 {
        std::fs::write(work.join(format!("sub/f{i}")), "inside\n").unwrap();
    }
    let registry = builtin_registry();
    let swapper = Swapper::start(&work);
    let mut leaked = 0;
    for _ in 0..200 {
        let out = call(
            &registry,
            &work,
            "grep",
            json!({"pattern": "SECRET|inside"}),
        )
        .await;
        leaked += usize::from(out.contains("OUTSIDE"));
    }
    assert!(swapper.finish() > 0);
    assert_eq!(leaked, 0, "grep returned the file outside");
}

/// Issue 29 point 2's last gap: `list_dir` and `glob` read folders by name, so a folder swapped
/// for a link out between the check and the listing (or mid-walk) listed the names of what
/// lies outside. They walk through directory handles now: nothing outside is ever named.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_dir_and_glob_raced_through_a_swapped_link_never_name_what_lies_outside() {
    let outside_dir = tempfile::tempdir().unwrap();
    let outside = outside_dir.path().canonicalize().unwrap();
    std::fs::write(outside.join("outside-only-name"), "x\n").unwrap();
    std::fs::create_dir(outside.join("outside-folder")).unwrap();
    std::fs::write(outside.join("outside-folder/deeper-outside"), "x\n").unwrap();
    let (_dir, work) = tree(&outside);
    for i in 0..20 {
        std::fs::write(work.join(format!("sub/f{i}")), "inside\n").unwrap();
    }
    let registry = builtin_registry();
    let swapper = Swapper::start(&work);
    let mut leaked = Vec::new();
    let mut listed_inside = 0;
    for _ in 0..150 {
        for (tool, arguments) in [
            ("list_dir", json!({"path": "sub"})),
            ("glob", json!({"pattern": "**/*"})),
            ("glob", json!({"pattern": "*", "path": "sub"})),
        ] {
            let out = call(&registry, &work, tool, arguments).await;
            listed_inside += usize::from(out.contains("f1"));
            if out.contains("outside-") {
                leaked.push(format!("{tool}: {out}"));
            }
        }
    }
    assert!(swapper.finish() > 0);
    assert!(leaked.is_empty(), "named what lies outside: {leaked:?}");
    assert!(listed_inside > 0, "nothing inside was ever listed");
}
