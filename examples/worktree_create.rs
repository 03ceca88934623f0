//! How long `harness9 --worktree NAME` takes to make a worktree of a repository with 10,000
//! files (docs/PERFORMANCE.md, issue 35), beside plain `git worktree add` on the same
//! repository: `cargo run --release --example worktree_create [FILES] [RUNS]`.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use harness9::worktree::{self, Name, Options, Repository};

fn git(dir: &Path, args: &[&str]) {
    let status = Command::new("git")
        .args(["-c", "user.name=b", "-c", "user.email=b@example.com"])
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .status()
        .expect("git runs");
    assert!(status.success(), "git {args:?}");
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn main() {
    let mut args = std::env::args().skip(1);
    let files: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(10_000);
    let runs: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(5);
    let dir = tempfile::tempdir().expect("a temporary folder");
    let root = dir.path().canonicalize().expect("canonical");
    let (main, home) = (root.join("app"), root.join("home"));
    std::fs::create_dir_all(&home).expect("home");
    // 100 folders of 100 files of a few hundred bytes, like a source tree.
    for i in 0..files {
        let folder = main.join(format!("src/m{:03}", i / 100));
        std::fs::create_dir_all(&folder).expect("folder");
        let text = format!("// file {i}\n{}\n", "fn f() -> u32 { 42 }\n".repeat(10));
        std::fs::write(folder.join(format!("f{i:05}.rs")), text).expect("file");
    }
    git(&main, &["init", "-q", "-b", "main"]);
    git(&main, &["add", "."]);
    git(&main, &["commit", "-q", "-m", "tree"]);
    let repository = Repository::discover(&main).expect("a repository");

    let mut ours = Vec::new();
    let mut plain = Vec::new();
    for run in 0..runs {
        let name = Name::parse(&format!("h{run}")).expect("name");
        let started = Instant::now();
        let opened =
            worktree::open(&repository, &name, &Options::default(), &home).expect("worktree made");
        ours.push(started.elapsed());
        assert!(opened.created);
        let started = Instant::now();
        let again = worktree::open(&repository, &name, &Options::default(), &home).expect("reused");
        let reuse = started.elapsed();
        assert!(!again.created);

        let folder = root.join(format!("plain{run}"));
        let started = Instant::now();
        git(
            &main,
            &[
                "worktree",
                "add",
                "-q",
                "-b",
                &format!("p{run}"),
                &folder.to_string_lossy(),
            ],
        );
        plain.push(started.elapsed());
        println!(
            "run {run}: harness9 {:?} (reuse {:?}), git worktree add {:?}",
            ours[run], reuse, plain[run]
        );
    }
    println!(
        "{files} files, {runs} runs: harness9 median {:?}, git worktree add median {:?}",
        median(ours),
        median(plain)
    );
}
