//! `/worktree` through the session core (issue 35): the repository's worktrees listed with
//! their branch, made known to a front end without a git call of its own; merged back and
//! removed on request; outside a repository, the reason.

use super::*;
use crate::session::worktrees::{WorktreeAction, WorktreeReport};

async fn ask(opened: &mut Opened, action: WorktreeAction) -> WorktreeReport {
    assert!(opened.handle.send(Request::Worktrees(action)));
    match until(&mut opened.updates, "the worktrees' answer", |u| {
        matches!(u, Update::Worktrees(_))
    })
    .await
    {
        (Update::Worktrees(report), _) => report,
        _ => unreachable!(),
    }
}

fn git(dir: &Path, args: &[&str]) {
    let out = std::process::Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[tokio::test]
async fn worktree_lists_merges_and_removes_the_repositorys_worktrees() {
    let fixture = Fixture::new();
    let main = fixture.workdir().to_path_buf();
    git(&main, &["init", "-q", "-b", "main"]);
    std::fs::write(main.join("a.txt"), "a\n").unwrap();
    git(&main, &["add", "."]);
    git(&main, &["commit", "-q", "-m", "first"]);
    let repository = crate::worktree::Repository::discover(&main).unwrap();
    let name = crate::worktree::Name::parse("fix").unwrap();
    let options = crate::worktree::Options::default();
    let place = crate::worktree::open(&repository, &name, &options, &fixture.settings.home)
        .unwrap()
        .path;
    std::fs::write(place.join("b.txt"), "b\n").unwrap();
    git(&place, &["add", "."]);
    git(&place, &["commit", "-q", "-m", "fix"]);

    let provider = scripted([]);
    let mut opened = fixture
        .open(&provider, SessionChoice::New, CoreOptions::default())
        .await;
    let listed = ask(&mut opened, WorktreeAction::List).await;
    assert!(!listed.failed, "{listed:?}");
    assert_eq!(listed.lines.len(), 1, "{listed:?}");
    assert!(
        listed.lines[0].starts_with("fix  harness9/fix  ") && listed.lines[0].contains("unmerged"),
        "{listed:?}"
    );

    // Removing unmerged work is refused; merging it back, then removing, is not.
    let refused = ask(
        &mut opened,
        WorktreeAction::Remove {
            name: "fix".into(),
            force: false,
        },
    )
    .await;
    assert!(refused.failed, "{refused:?}");
    assert!(place.exists());
    let merged = ask(&mut opened, WorktreeAction::Merge { name: "fix".into() }).await;
    assert!(!merged.failed, "{merged:?}");
    assert_eq!(std::fs::read_to_string(main.join("b.txt")).unwrap(), "b\n");
    let removed = ask(
        &mut opened,
        WorktreeAction::Remove {
            name: "fix".into(),
            force: false,
        },
    )
    .await;
    assert!(!removed.failed, "{removed:?}");
    assert!(
        removed.lines[0].starts_with("removed worktree fix"),
        "{removed:?}"
    );
    assert!(!place.exists());
    let none = ask(&mut opened, WorktreeAction::List).await;
    assert_eq!(
        none.lines,
        ["no worktrees (harness9 --worktree NAME makes one)"]
    );
    close(&mut opened).await;
}

#[tokio::test]
async fn worktree_outside_a_repository_says_why() {
    let fixture = Fixture::new();
    let provider = scripted([]);
    let mut opened = fixture
        .open(&provider, SessionChoice::New, CoreOptions::default())
        .await;
    let report = ask(&mut opened, WorktreeAction::List).await;
    assert!(report.failed);
    assert!(
        report.lines[0].contains("is not inside a git repository"),
        "{report:?}"
    );
    close(&mut opened).await;
}
