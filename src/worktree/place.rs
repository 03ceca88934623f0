//! Where a worktree's folder goes: `<parent>/<repo>.worktrees/NAME` beside the repository, or
//! `<worktree.dir>/NAME`, and never where it must not be: inside the repository's working tree
//! (the sessions would see each other's files), under `$HARNESS9_HOME` (secret to every tool,
//! hidden from the sandbox) or under a protected path (`files::protected`, the one decision).

use std::path::{Path, PathBuf};

use super::WorktreeError;
use super::name::Name;
use crate::files::{paths, protected};

/// The folder of worktree `name` of the repository whose main working tree is `main`;
/// `configured` is `worktree.dir` (relative to `main` unless absolute).
pub fn folder(main: &Path, configured: Option<&Path>, name: &Name) -> PathBuf {
    let parent = match configured {
        Some(dir) => paths::resolve(main, &dir.to_string_lossy()),
        None => {
            let repo = main
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| "repository".to_owned());
            let beside = main.parent().unwrap_or(main);
            beside.join(format!("{repo}.worktrees"))
        }
    };
    parent.join(name.as_str())
}

/// Refuses a folder inside `main`'s working tree, under `home` or under a protected path,
/// judged with links resolved (a folder named elsewhere that leads into `home` is in `home`).
pub fn check(folder: &Path, main: &Path, home: &Path) -> Result<PathBuf, WorktreeError> {
    let resolved = paths::resolve(main, &folder.to_string_lossy());
    let refuse = |reason: String| WorktreeError::Placement {
        path: resolved.display().to_string(),
        reason,
    };
    let home = paths::resolve(main, &home.to_string_lossy());
    if paths::is_inside(&home, &resolved) || paths::is_inside(&resolved, &home) {
        return Err(refuse(format!(
            "it is or holds $HARNESS9_HOME ({}), which no tool may see",
            home.display()
        )));
    }
    if protected::is_protected_write(&resolved) {
        return Err(refuse(
            "it is under a protected path (.git, .harness9, .env*, .mcp.json)".into(),
        ));
    }
    if paths::is_inside(main, &resolved) || paths::is_inside(&resolved, main) {
        return Err(refuse(format!(
            "it is inside the repository's working tree {} or holds it; set worktree.dir \
             to a folder outside it",
            main.display()
        )));
    }
    Ok(resolved)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(raw: &str) -> Name {
        Name::parse(raw).unwrap()
    }

    #[test]
    fn by_default_the_folder_is_beside_the_repository() {
        let main = Path::new("/src/app");
        assert_eq!(
            folder(main, None, &name("fix")),
            Path::new("/src/app.worktrees/fix")
        );
        assert_eq!(
            folder(main, Some(Path::new("/wt")), &name("fix")),
            Path::new("/wt/fix")
        );
    }

    #[test]
    fn a_configured_folder_is_relative_to_the_repository() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let main = root.join("app");
        std::fs::create_dir(&main).unwrap();
        assert_eq!(
            folder(&main, Some(Path::new("../trees")), &name("x")),
            root.join("trees/x")
        );
    }

    #[test]
    fn the_folder_is_never_under_home_nor_protected_nor_inside_the_repository() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let (main, home) = (root.join("app"), root.join("home"));
        std::fs::create_dir_all(&main).unwrap();
        std::fs::create_dir_all(&home).unwrap();
        let placed = |configured: &Path| {
            let folder = folder(&main, Some(configured), &name("x"));
            check(&folder, &main, &home)
        };
        assert_eq!(
            placed(&root.join("trees")).unwrap(),
            root.join("trees/x"),
            "an ordinary folder"
        );
        assert_eq!(
            check(&folder(&main, None, &name("x")), &main, &home).unwrap(),
            root.join("app.worktrees/x")
        );
        for bad in [
            home.clone(),
            home.join("worktrees"),
            root.join(".git/trees"),
            root.join("cfg/.harness9"),
            main.clone(),
            main.join("sub"),
        ] {
            assert!(
                matches!(placed(&bad), Err(WorktreeError::Placement { .. })),
                "{} was accepted",
                bad.display()
            );
        }
        // A link elsewhere that leads into the home is the home.
        std::os::unix::fs::symlink(&home, root.join("innocent")).unwrap();
        assert!(matches!(
            placed(&root.join("innocent")),
            Err(WorktreeError::Placement { .. })
        ));
        // A folder that holds the home, or the repository, is refused too.
        assert!(matches!(
            check(&root, &main, &home),
            Err(WorktreeError::Placement { .. })
        ));
    }
}
