//! `--worktree NAME` resolved into the folder a session runs in: the `"worktree"` section of
//! the settings (`dir`: the folder that holds the worktrees; `copy`: untracked files copied into
//! a new one) read from the user's `$HARNESS9_HOME/settings.json`, then the repository's
//! `.harness9/settings.json` and `settings.local.json` when the repository is trusted (an
//! untrusted one could otherwise choose where harness9 writes), and the worktree made or reused.

use std::path::{Path, PathBuf};

use crate::worktree::{self, Name, Repository, WorktreeError};

#[derive(Debug, Default, serde::Deserialize)]
struct File {
    #[serde(default)]
    worktree: Option<Section>,
}

#[derive(Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Section {
    dir: Option<PathBuf>,
    copy: Option<Vec<String>>,
}

/// A worktree a session is about to run in.
#[derive(Debug, Clone)]
pub struct Entered {
    pub name: String,
    pub path: PathBuf,
    /// Worth saying (made or reused, a listed file not copied, a settings file ignored).
    pub notices: Vec<String>,
}

/// The `"worktree"` settings for the repository whose working tree is `toplevel`; a later
/// file's keys win.
pub fn options(
    home: &Path,
    toplevel: &Path,
    trusted: bool,
    notices: &mut Vec<String>,
) -> worktree::Options {
    let mut files = vec![home.join("settings.json")];
    if trusted {
        files.push(toplevel.join(".harness9/settings.json"));
        files.push(toplevel.join(".harness9/settings.local.json"));
    }
    let mut options = worktree::Options {
        trusted,
        ..worktree::Options::default()
    };
    for path in files {
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        match serde_json::from_str::<File>(&text) {
            Ok(File {
                worktree: Some(section),
            }) => {
                if let Some(dir) = section.dir {
                    // Relative to the repository, whichever file says it.
                    options.dir = Some(dir);
                }
                if let Some(copy) = section.copy {
                    options.copy = copy;
                }
            }
            Ok(File { worktree: None }) => {}
            Err(error) => notices.push(format!(
                "{}: its \"worktree\" settings were ignored: {error}",
                path.display()
            )),
        }
    }
    options
}

/// Makes or reuses worktree `name` of the repository `workdir` is in. `trust_flag` is
/// `--trust` for `workdir`.
pub fn enter(
    workdir: &Path,
    home: &Path,
    name: &str,
    trust_flag: bool,
) -> Result<Entered, WorktreeError> {
    let name = Name::parse(name)?;
    let repository = Repository::discover(workdir)?;
    let trusted = trust_flag || super::trust::is_trusted(home, &repository.current);
    let mut notices = Vec::new();
    let options = options(home, &repository.current, trusted, &mut notices);
    let opened = worktree::open(&repository, &name, &options, home)?;
    notices.push(format!(
        "worktree {name}: {} {} on branch {}",
        if opened.created { "made" } else { "reused" },
        opened.path.display(),
        opened.branch
    ));
    notices.extend(opened.notices);
    Ok(Entered {
        name: name.to_string(),
        path: opened.path,
        notices,
    })
}

/// The worktree a stored session ran in, when its folder `session_workdir` is (or was) one of
/// harness9's worktrees of the repository `workdir` is in: resuming the session opens it there.
pub fn of_session(workdir: &Path, session_workdir: &Path) -> Option<String> {
    let entries = worktree::git::worktrees(workdir).ok()?;
    entries
        .iter()
        .find(|entry| entry.path == session_workdir)?
        .branch
        .as_deref()?
        .strip_prefix(worktree::name::BRANCH_PREFIX)
        .map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_untrusted_repository_chooses_no_worktree_folder() {
        let dir = tempfile::tempdir().unwrap();
        let (home, repo) = (dir.path().join("home"), dir.path().join("repo"));
        std::fs::create_dir_all(repo.join(".harness9")).unwrap();
        std::fs::create_dir_all(&home).unwrap();
        std::fs::write(
            home.join("settings.json"),
            r#"{"worktree": {"dir": "/wt", "copy": [".env"]}}"#,
        )
        .unwrap();
        std::fs::write(
            repo.join(".harness9/settings.json"),
            r#"{"worktree": {"dir": "/elsewhere"}}"#,
        )
        .unwrap();
        let mut notices = Vec::new();
        let untrusted = options(&home, &repo, false, &mut notices);
        assert_eq!(untrusted.dir.as_deref(), Some(Path::new("/wt")));
        assert_eq!(untrusted.copy, vec![".env".to_owned()]);
        let trusted = options(&home, &repo, true, &mut notices);
        assert_eq!(trusted.dir.as_deref(), Some(Path::new("/elsewhere")));
        assert_eq!(trusted.copy, vec![".env".to_owned()]);
        std::fs::write(repo.join(".harness9/settings.local.json"), "{nope").unwrap();
        options(&home, &repo, true, &mut notices);
        assert_eq!(notices.len(), 1, "{notices:?}");
    }
}
