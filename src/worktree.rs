//! Sessions in git worktrees (issue 35): a worktree of the current repository on branch
//! `harness9/NAME`, made or reused, in a folder outside the working tree and `$HARNESS9_HOME`;
//! listed with what it holds, merged back into the branch it started from, removed. Git is run
//! as a program (`git worktree`), never through a shell. The branch a worktree started from is
//! kept in its own administrative folder (`.git/worktrees/ID/harness9-base`), which git removes
//! with it: the repository's configuration is never written.

mod copy;
pub mod git;
mod manage;
pub mod name;
pub mod place;

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

pub use manage::{Listed, Removed, list, merge, remove, work_described};
pub use name::Name;

/// Why a worktree could not be made, listed, merged or removed.
#[derive(Debug, thiserror::Error)]
pub enum WorktreeError {
    #[error(
        "{0} is not inside a git repository: a worktree needs one (run harness9 in a \
         repository, or -C one)"
    )]
    NotARepository(String),
    #[error("{0} is a bare repository: a worktree needs one with a working tree")]
    Bare(String),
    #[error("invalid worktree name {name:?}: {reason}")]
    InvalidName { name: String, reason: &'static str },
    #[error("the worktree folder {path} cannot be used: {reason}")]
    Placement { path: String, reason: String },
    #[error("no worktree named {0} (`harness9 worktree list` shows them)")]
    NotFound(String),
    #[error("{0}")]
    Refused(String),
    #[error(
        "merging {branch} into {base} conflicts in {}: the merge was aborted, nothing changed",
        .files.join(", ")
    )]
    Conflict {
        branch: String,
        base: String,
        files: Vec<String>,
    },
    #[error("git {args}: {message}")]
    Git { args: String, message: String },
    #[error("cannot run git: {0}")]
    Spawn(#[source] std::io::Error),
}

impl WorktreeError {
    /// A usage or configuration error (exit status 2), rather than a failure of the work.
    pub fn is_usage(&self) -> bool {
        matches!(
            self,
            WorktreeError::NotARepository(_)
                | WorktreeError::Bare(_)
                | WorktreeError::InvalidName { .. }
                | WorktreeError::Placement { .. }
                | WorktreeError::NotFound(_)
        )
    }
}

/// The repository a command runs in.
#[derive(Debug, Clone)]
pub struct Repository {
    /// The main working tree (the first `git worktree list` names).
    pub main: PathBuf,
    /// The working tree the command runs in (the main one, or a linked one).
    pub current: PathBuf,
}

impl Repository {
    /// The repository `dir` belongs to.
    pub fn discover(dir: &Path) -> Result<Repository, WorktreeError> {
        let current = match git::run(dir, &["rev-parse", "--show-toplevel"]) {
            Ok(out) => PathBuf::from(out.trim_end_matches('\n')),
            Err(WorktreeError::Git { .. }) => {
                return Err(WorktreeError::NotARepository(dir.display().to_string()));
            }
            Err(other) => return Err(other),
        };
        let entries = git::worktrees(&current)?;
        let main = match entries.first() {
            Some(entry) if entry.bare => {
                return Err(WorktreeError::Bare(entry.path.display().to_string()));
            }
            Some(entry) => entry.path.clone(),
            None => current.clone(),
        };
        Ok(Repository { main, current })
    }
}

/// What `open` needs besides the repository.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// `worktree.dir`: the folder that holds the worktrees.
    pub dir: Option<PathBuf>,
    /// `worktree.copy`: untracked files copied into a new worktree.
    pub copy: Vec<String>,
    /// Whether the repository is trusted: an untrusted one's hooks do not run when the
    /// worktree is checked out (as harness9 runs no hook of an untrusted folder).
    pub trusted: bool,
}

/// A worktree ready for a session.
#[derive(Debug, Clone)]
pub struct Opened {
    pub name: Name,
    pub path: PathBuf,
    pub branch: String,
    /// Whether it was made now (else reused).
    pub created: bool,
    /// What was not done and is worth saying (a listed file not copied).
    pub notices: Vec<String>,
}

/// The file in a worktree's administrative folder naming the branch it started from.
const BASE_FILE: &str = "harness9-base";

/// Makes worktree `name` of `repository` (from the current working tree's HEAD), or reuses it
/// when it exists; a worktree whose folder was deleted is made again on its branch.
pub fn open(
    repository: &Repository,
    name: &Name,
    options: &Options,
    home: &Path,
) -> Result<Opened, WorktreeError> {
    let branch = name.branch();
    let entries = git::worktrees(&repository.main)?;
    let existing = entries
        .iter()
        .find(|entry| entry.branch.as_deref() == Some(branch.as_str()));
    if let Some(entry) = existing {
        if entry.path.is_dir() && !entry.prunable {
            // One made by hand on a harness9/ branch is held to the same places.
            let path = place::check(&entry.path, &repository.main, home)?;
            return Ok(Opened {
                name: name.clone(),
                path,
                branch,
                created: false,
                notices: Vec::new(),
            });
        }
        // Its folder was deleted by hand: git's record goes, the branch stays and is reused.
        git::run(&repository.main, &["worktree", "prune"])?;
    }
    let folder = place::folder(&repository.main, options.dir.as_deref(), name);
    let folder = place::check(&folder, &repository.main, home)?;
    if folder.exists() {
        return Err(WorktreeError::Placement {
            path: folder.display().to_string(),
            reason: "it exists already and is not this worktree".into(),
        });
    }
    if let Some(parent) = folder.parent() {
        std::fs::create_dir_all(parent).map_err(|e| WorktreeError::Placement {
            path: parent.display().to_string(),
            reason: e.to_string(),
        })?;
    }
    let base = current_branch(&repository.current)?;
    let branch_exists = git::run(
        &repository.main,
        &[
            "rev-parse",
            "--verify",
            "-q",
            &format!("refs/heads/{branch}"),
        ],
    )
    .is_ok();
    let mut args: Vec<&OsStr> = Vec::new();
    if !options.trusted {
        args.extend([OsStr::new("-c"), OsStr::new("core.hooksPath=/dev/null")]);
    }
    args.extend([OsStr::new("worktree"), OsStr::new("add")]);
    if branch_exists {
        args.extend([folder.as_os_str(), OsStr::new(&branch)]);
    } else {
        args.extend([
            OsStr::new("-b"),
            OsStr::new(&branch),
            folder.as_os_str(),
            OsStr::new("HEAD"),
        ]);
    }
    git::run(&repository.current, &args)?;
    let path = folder.canonicalize().unwrap_or(folder);
    let mut notices = Vec::new();
    let recorded = admin_dir(&path)
        .ok_or_else(|| std::io::Error::other("its administrative folder was not found"))
        .and_then(|admin| std::fs::write(admin.join(BASE_FILE), format!("{base}\n")));
    if let Err(e) = recorded {
        notices.push(format!("cannot record the branch {name} started from: {e}"));
    }
    notices.extend(copy::copy_listed(&repository.current, &path, &options.copy));
    Ok(Opened {
        name: name.clone(),
        path,
        branch,
        created: true,
        notices,
    })
}

/// The branch checked out in `dir`, else the commit (a detached HEAD).
fn current_branch(dir: &Path) -> Result<String, WorktreeError> {
    match git::run(dir, &["symbolic-ref", "--short", "-q", "HEAD"]) {
        Ok(branch) if !branch.trim().is_empty() => Ok(branch.trim().to_owned()),
        _ => Ok(git::run(dir, &["rev-parse", "HEAD"])?.trim().to_owned()),
    }
}

/// The administrative folder git keeps for the linked worktree at `path` (its `.git` file
/// names it), when that folder points back at `path`.
fn admin_dir(path: &Path) -> Option<PathBuf> {
    let dot_git = path.join(".git");
    let text = read_small(&dot_git)?;
    let admin = PathBuf::from(text.strip_prefix("gitdir:")?.trim());
    let admin = if admin.is_absolute() {
        admin
    } else {
        path.join(admin)
    };
    // The folder must name this worktree back: a `.git` file alone can claim any repository.
    let back = read_small(&admin.join("gitdir"))?;
    let back = PathBuf::from(back.trim()).canonicalize().ok()?;
    (back == dot_git.canonicalize().ok()?).then_some(admin)
}

/// A small regular file's text (git's pointer files): never a link, a FIFO a folder planted
/// (reading it would block every start), nor more than 4 KB.
fn read_small(path: &Path) -> Option<String> {
    use std::io::Read;
    if !std::fs::symlink_metadata(path).ok()?.is_file() {
        return None;
    }
    let mut text = String::new();
    std::fs::File::open(path)
        .ok()?
        .take(4096)
        .read_to_string(&mut text)
        .ok()?;
    Some(text)
}

/// The main working tree of the repository whose linked worktree is `path` (canonical), when
/// `path` is the top of one and the repository names it back: trusting a repository trusts
/// its worktrees.
pub fn main_of_linked(path: &Path) -> Option<PathBuf> {
    let admin = admin_dir(path)?;
    let common = read_small(&admin.join("commondir"))?;
    let common = admin.join(common.trim()).canonicalize().ok()?;
    if common.file_name()? != ".git" || !common.is_dir() {
        return None;
    }
    common.parent().map(Path::to_path_buf)
}

/// The administrative folder of the worktree at `path` found from the repository's side
/// (`<common>/worktrees/*/gitdir` names `path/.git`), so also when the folder is gone.
fn admin_dir_in(common: &Path, path: &Path) -> Option<PathBuf> {
    let dot_git = path.join(".git");
    std::fs::read_dir(common.join("worktrees"))
        .ok()?
        .flatten()
        .map(|entry| entry.path())
        .find(|admin| {
            read_small(&admin.join("gitdir"))
                .is_some_and(|named| Path::new(named.trim()) == dot_git)
        })
}

/// The branch the worktree at `path` started from, as recorded when it was made.
fn recorded_base(common: &Path, path: &Path) -> Option<String> {
    let admin = admin_dir_in(common, path)?;
    let text = read_small(&admin.join(BASE_FILE))?;
    Some(text.trim().to_owned()).filter(|base| !base.is_empty())
}

#[cfg(test)]
mod tests;
