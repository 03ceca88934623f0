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

/// Resuming, inside a running session, one that ran in another folder (here a worktree of the
/// repository) does not carry it on in this folder, whose files, rules and checkpoints are not
/// its own: a notice says where it ran and the command that opens it there.
#[tokio::test]
async fn a_session_of_another_folder_is_not_carried_on_here_and_the_notice_says_how() {
    let mut fixture = Fixture::new();
    let main = fixture.workdir().to_path_buf();
    git(&main, &["init", "-q", "-b", "main"]);
    std::fs::write(main.join("a.txt"), "a\n").unwrap();
    git(&main, &["add", "."]);
    git(&main, &["commit", "-q", "-m", "first"]);
    let repository = crate::worktree::Repository::discover(&main).unwrap();
    let name = crate::worktree::Name::parse("fix").unwrap();
    let place = crate::worktree::open(
        &repository,
        &name,
        &crate::worktree::Options::default(),
        &fixture.settings.home,
    )
    .unwrap()
    .path;

    let provider = scripted([text("Worked in the worktree."), text("Here.")]);
    fixture.settings.workdir = place.clone();
    let mut there = fixture
        .open(&provider, SessionChoice::New, CoreOptions::default())
        .await;
    let elsewhere = there.loaded.session_id.clone();
    there.handle.send(Request::Submit("one".into()));
    until(&mut there.updates, "run end", run_ended).await;
    close(&mut there).await;

    fixture.settings.workdir = main.clone();
    let mut here = fixture
        .open(&provider, SessionChoice::New, CoreOptions::default())
        .await;
    let current = here.loaded.session_id.clone();
    here.handle.send(Request::Resume(elsewhere.clone()));
    let (notice, seen) = until(
        &mut here.updates,
        "the notice",
        |u| matches!(u, Update::Engine(e) if matches!(e.kind, EventKind::Notice(_))),
    )
    .await;
    let Update::Engine(event) = notice else {
        unreachable!()
    };
    let EventKind::Notice(text) = event.kind else {
        unreachable!()
    };
    assert!(
        text.contains(&place.display().to_string())
            && text.contains(&format!("harness9 --resume {elsewhere}"))
            && text.contains("opens that worktree"),
        "{text}"
    );
    assert!(!seen.iter().any(|u| matches!(u, Update::Loaded(_))));
    // The session shown is still this folder's: a prompt goes into it.
    here.handle.send(Request::Submit("two".into()));
    until(&mut here.updates, "run end", run_ended).await;
    let closing = close(&mut here).await;
    assert_eq!(closing.session_id, current);
}

#[tokio::test]
async fn a_session_in_a_worktree_names_it_on_the_status_line_and_one_elsewhere_does_not() {
    let mut fixture = Fixture::new();
    let provider = scripted([]);
    let mut plain = fixture
        .open(&provider, SessionChoice::New, CoreOptions::default())
        .await;
    assert_eq!(plain.facts.worktree, None);
    assert_eq!(plain.facts.status_label(), plain.facts.sandbox);
    close(&mut plain).await;
    fixture.settings.worktree = Some("fix-login".into());
    let mut opened = fixture
        .open(&provider, SessionChoice::New, CoreOptions::default())
        .await;
    assert_eq!(opened.facts.worktree.as_deref(), Some("fix-login"));
    assert_eq!(
        opened.facts.status_label(),
        format!("worktree: fix-login · {}", opened.facts.sandbox)
    );
    close(&mut opened).await;
}
