//! Worktrees made, reused and recognised in real repositories (git runs in a temporary folder).

use super::*;

/// `git ARGS` in `dir` through the module's own runner, with an identity for commits.
fn git(dir: &Path, args: &[&str]) {
    let identity = ["-c", "user.name=t", "-c", "user.email=t@example.com"];
    let all: Vec<&str> = identity.iter().chain(args).copied().collect();
    if let Err(e) = git::run(dir, &all) {
        panic!("git {args:?}: {e}");
    }
}

/// `root/app`, a repository with one commit on `main`, and `root/home`.
fn repository() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let (main, home) = (root.join("app"), root.join("home"));
    std::fs::create_dir_all(&main).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    git(&main, &["init", "-q", "-b", "main"]);
    std::fs::write(main.join("a.txt"), "a\n").unwrap();
    std::fs::write(main.join(".gitignore"), ".env\n").unwrap();
    git(&main, &["add", "."]);
    git(&main, &["commit", "-q", "-m", "first"]);
    (dir, main, home)
}

#[test]
fn a_worktree_is_made_beside_the_repository_then_reused() {
    let (_dir, main, home) = repository();
    std::fs::write(main.join(".env"), "KEY=1\n").unwrap();
    let repository = Repository::discover(&main.join(".")).unwrap();
    assert_eq!(repository.main, main);
    let name = Name::parse("fix").unwrap();
    let options = Options {
        dir: None,
        copy: vec![".env".into()],
        trusted: true,
    };
    let made = open(&repository, &name, &options, &home).unwrap();
    let beside = main.parent().unwrap().join("app.worktrees/fix");
    assert_eq!(made.path, beside);
    assert!(made.created);
    assert_eq!(made.branch, "harness9/fix");
    assert_eq!(
        std::fs::read_to_string(beside.join("a.txt")).unwrap(),
        "a\n"
    );
    assert_eq!(
        std::fs::read_to_string(beside.join(".env")).unwrap(),
        "KEY=1\n"
    );
    assert_eq!(main_of_linked(&beside), Some(main.clone()));
    assert_eq!(main_of_linked(&main), None);

    let again = open(&repository, &name, &options, &home).unwrap();
    assert_eq!(again.path, beside);
    assert!(!again.created);
    // From inside the worktree, the repository is still the main one.
    let inside = Repository::discover(&beside).unwrap();
    assert_eq!(inside.main, main);

    let listed = list(&repository).unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].base.as_deref(), Some("main"));
    assert!(!listed[0].holds_work(), "{listed:?}");
}

#[test]
fn a_worktree_folder_under_home_is_refused_and_a_plain_folder_is_no_repository() {
    let (dir, main, home) = repository();
    let repository = Repository::discover(&main).unwrap();
    let options = Options {
        dir: Some(home.join("trees")),
        ..Options::default()
    };
    let name = Name::parse("x").unwrap();
    assert!(matches!(
        open(&repository, &name, &options, &home),
        Err(WorktreeError::Placement { .. })
    ));
    assert!(!home.join("trees").exists());
    let plain = dir.path().join("plain");
    std::fs::create_dir(&plain).unwrap();
    let error = Repository::discover(&plain).unwrap_err();
    assert!(matches!(error, WorktreeError::NotARepository(_)), "{error}");
    assert!(error.is_usage());
}

#[test]
fn a_git_file_that_claims_a_repository_without_its_word_is_no_worktree_of_it() {
    let (dir, main, home) = repository();
    let repository = Repository::discover(&main).unwrap();
    let made = open(
        &repository,
        &Name::parse("real").unwrap(),
        &Options::default(),
        &home,
    )
    .unwrap();
    // A folder that copies the worktree's `.git` file claims the same administrative folder,
    // which names the real worktree, not it.
    let impostor = dir.path().canonicalize().unwrap().join("impostor");
    std::fs::create_dir(&impostor).unwrap();
    std::fs::copy(made.path.join(".git"), impostor.join(".git")).unwrap();
    assert_eq!(main_of_linked(&impostor), None);
    assert_eq!(main_of_linked(&made.path), Some(main));
}

#[test]
fn an_untrusted_repositorys_checkout_hook_does_not_run_and_a_trusted_ones_does() {
    let (_dir, main, home) = repository();
    let hook = main.join(".git/hooks/post-checkout");
    std::fs::write(
        &hook,
        "#!/bin/sh\ntouch \"$(git rev-parse --show-toplevel)/hook-ran\"\n",
    )
    .unwrap();
    std::fs::set_permissions(&hook, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let repository = Repository::discover(&main).unwrap();
    let untrusted = open(
        &repository,
        &Name::parse("u").unwrap(),
        &Options::default(),
        &home,
    )
    .unwrap();
    assert!(!untrusted.path.join("hook-ran").exists());
    let options = Options {
        trusted: true,
        ..Options::default()
    };
    let trusted = open(&repository, &Name::parse("t").unwrap(), &options, &home).unwrap();
    assert!(trusted.path.join("hook-ran").exists());
}
