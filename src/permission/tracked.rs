//! The files git tracks in a directory's repository, for the git commands that print tracked
//! contents (`git grep`, `git show`, `git log -p`...): a repository that tracks `.env` prints
//! it through them. Listed by `git ls-files` once per change of the index (the cache is keyed by
//! the index file's modification time and size), run without a shell, with git's configuration
//! kept from running programs (`core.fsmonitor` off, no system configuration) and under a time
//! limit. A list that cannot be had is an error, never "nothing tracked": the caller asks.

use std::collections::HashMap;
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use crate::files::protected;

/// How long `git ls-files` may take.
const LIST_TIMEOUT: Duration = Duration::from_secs(5);
/// Repositories remembered at once (a session works in one or two).
const REMEMBERED: usize = 16;
/// Variables that point git at another repository or index than the one found on disk.
const REDIRECTING: &[&str] = &[
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_COMMON_DIR",
    "GIT_OBJECT_DIRECTORY",
];

/// What a repository's index tracks.
#[derive(Debug)]
pub(super) struct Tracked {
    /// The top of its working tree.
    pub toplevel: PathBuf,
    /// Every tracked file, absolute.
    pub files: Vec<PathBuf>,
    /// The tracked files that usually hold secrets (`protected::is_secret_file`), environment
    /// templates aside: judged once per listing.
    pub secrets: Vec<PathBuf>,
}

impl Tracked {
    fn new(toplevel: PathBuf, files: Vec<PathBuf>) -> Tracked {
        let secrets = files
            .iter()
            .filter(|f| protected::is_secret_file(f) && !protected::is_env_template(f))
            .cloned()
            .collect();
        Tracked {
            toplevel,
            files,
            secrets,
        }
    }
}

/// Why the files git tracks could not be listed (the decision then asks). Kept with the index
/// it was found for, so io errors are shared.
#[derive(Debug, Clone, thiserror::Error)]
pub(super) enum TrackedError {
    #[error("${variable} points git at another repository")]
    Redirected { variable: &'static str },
    #[error("{} cannot be read: {source}", path.display())]
    Unreadable {
        path: PathBuf,
        source: Arc<std::io::Error>,
    },
    #[error("{} does not name a repository", path.display())]
    NoGitDir { path: PathBuf },
    #[error("{} is a bare repository, whose files git lists only with a work tree", path.display())]
    Bare { path: PathBuf },
    #[error("git could not be started: {0}")]
    Start(Arc<std::io::Error>),
    #[error("git's output could not be read")]
    NoOutput,
    #[error("git's output could not be read: {0}")]
    Output(Arc<std::io::Error>),
    #[error("`git {what}` did not finish within {}s", limit.as_secs())]
    Timeout {
        what: String,
        limit: std::time::Duration,
    },
    #[error("git could not be waited for: {0}")]
    Wait(Arc<std::io::Error>),
    #[error("`git {what}` failed ({status})")]
    Failed {
        what: String,
        status: std::process::ExitStatus,
    },
}

/// The index file's modification time and size; `None` when there is none yet.
type Stamp = Option<(SystemTime, u64)>;

struct Remembered {
    stamp: Stamp,
    tracked: Result<Arc<Tracked>, TrackedError>,
}

/// By index file.
static REMEMBERED_LISTS: Mutex<Option<HashMap<PathBuf, Remembered>>> = Mutex::new(None);

/// Where a repository keeps its index and where its files are.
pub(super) struct Layout {
    pub git_dir: PathBuf,
    pub toplevel: PathBuf,
}

/// The files git tracks in the repository `dir` lies in, `Ok(None)` outside any.
pub(super) fn tracked(dir: &Path) -> Result<Option<Arc<Tracked>>, TrackedError> {
    redirected()?;
    let Some(layout) = discover(dir)? else {
        return Ok(None);
    };
    let index = layout.git_dir.join("index");
    let stamp: Stamp = std::fs::metadata(&index)
        .ok()
        .map(|m| (m.modified().unwrap_or(SystemTime::UNIX_EPOCH), m.len()));
    if let Ok(mut remembered) = REMEMBERED_LISTS.lock()
        && let Some(known) = remembered.get_or_insert_with(HashMap::new).get(&index)
        && known.stamp == stamp
    {
        return known.tracked.clone().map(Some);
    }
    // Stamped before listing: an index that changes meanwhile is listed again next time.
    let tracked = match stamp {
        None => Ok(Arc::new(Tracked::new(layout.toplevel.clone(), Vec::new()))),
        Some(_) => list(&layout).map(Arc::new),
    };
    if let Ok(mut remembered) = REMEMBERED_LISTS.lock() {
        let remembered = remembered.get_or_insert_with(HashMap::new);
        if remembered.len() >= REMEMBERED {
            remembered.clear();
        }
        remembered.insert(
            index,
            Remembered {
                stamp,
                tracked: tracked.clone(),
            },
        );
    }
    tracked.map(Some)
}

/// An error when a variable of the environment points git at another repository or index
/// than the one found on disk.
pub(super) fn redirected() -> Result<(), TrackedError> {
    match REDIRECTING.iter().find(|n| std::env::var_os(n).is_some()) {
        Some(name) => Err(TrackedError::Redirected { variable: name }),
        None => Ok(()),
    }
}

/// Whether git finds a repository (or something it would take for one) from `dir`.
pub(super) fn in_repository(dir: &Path) -> bool {
    !matches!(discover(dir), Ok(None))
}

/// The repository git would find from `dir`: a `.git` directory or file (`gitdir: …`, as in
/// worktrees and submodules) in it or above it. A bare repository on the way is an error: it
/// has no index to list, and its history is what git would print.
pub(super) fn discover(dir: &Path) -> Result<Option<Layout>, TrackedError> {
    for at in dir.ancestors() {
        let dot_git = at.join(".git");
        if dot_git.is_dir() && is_repository(&dot_git) {
            return Ok(Some(Layout {
                git_dir: dot_git,
                toplevel: at.to_owned(),
            }));
        }
        if dot_git.is_file() {
            let text = std::fs::read_to_string(&dot_git).map_err(|e| TrackedError::Unreadable {
                path: dot_git.clone(),
                source: Arc::new(e),
            })?;
            let target = text
                .lines()
                .next()
                .and_then(|line| line.strip_prefix("gitdir:"))
                .map(str::trim)
                .ok_or_else(|| TrackedError::NoGitDir {
                    path: dot_git.clone(),
                })?;
            return Ok(Some(Layout {
                git_dir: at.join(target),
                toplevel: at.to_owned(),
            }));
        }
        if is_repository(at) {
            return Err(TrackedError::Bare {
                path: at.to_owned(),
            });
        }
    }
    Ok(None)
}

/// What git checks before taking a directory for a repository.
fn is_repository(dir: &Path) -> bool {
    dir.join("HEAD").is_file() && dir.join("objects").is_dir() && dir.join("refs").is_dir()
}

/// `git ls-files`, safely.
fn list(layout: &Layout) -> Result<Tracked, TrackedError> {
    let output = git_output(layout, &["ls-files", "-z", "--full-name"], LIST_TIMEOUT)?;
    let files = output
        .split(|b| *b == 0)
        .filter(|name| !name.is_empty())
        .map(|name| layout.toplevel.join(std::ffi::OsStr::from_bytes(name)))
        .collect();
    Ok(Tracked::new(layout.toplevel.clone(), files))
}

/// What `git ARGS` prints in the repository of `layout`, run without a shell, with git's
/// configuration kept from running programs (`core.fsmonitor` off, no system configuration,
/// no prompt) and stopped after `timeout`.
pub(super) fn git_output(
    layout: &Layout,
    args: &[&str],
    timeout: Duration,
) -> Result<Vec<u8>, TrackedError> {
    let mut child = Command::new("git")
        .arg("--git-dir")
        .arg(&layout.git_dir)
        .arg("--work-tree")
        .arg(&layout.toplevel)
        .args([
            "-c",
            "core.fsmonitor=false",
            "-c",
            "core.untrackedCache=false",
            "--no-optional-locks",
        ])
        .args(args)
        .current_dir(&layout.toplevel)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_TERMINAL_PROMPT", "0")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| TrackedError::Start(Arc::new(e)))?;
    let Some(mut stdout) = child.stdout.take() else {
        return Err(TrackedError::NoOutput);
    };
    let (sender, receiver) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut out = Vec::new();
        let read = stdout.read_to_end(&mut out).map(|_| out);
        let _ = sender.send(read);
    });
    let what = args.first().copied().unwrap_or("").to_owned();
    let output = match receiver.recv_timeout(timeout) {
        Ok(read) => read.map_err(|e| TrackedError::Output(Arc::new(e))),
        Err(_) => {
            // The child is still ours to stop: no other process can have its id.
            let _ = child.kill();
            let _ = child.wait();
            return Err(TrackedError::Timeout {
                what,
                limit: timeout,
            });
        }
    };
    let status = child.wait().map_err(|e| TrackedError::Wait(Arc::new(e)))?;
    let output = output?;
    if !status.success() {
        return Err(TrackedError::Failed { what, status });
    }
    Ok(output)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::permission::bypass_tests::git;

    #[test]
    fn tracked_files_are_listed_again_when_the_index_changes() {
        let dir = tempfile::tempdir().unwrap();
        let top = dir.path().canonicalize().unwrap();
        assert!(tracked(&top).unwrap().is_none(), "no repository");
        git(&top, &["init", "-q"]);
        std::fs::create_dir_all(top.join("src")).unwrap();
        std::fs::write(top.join("src/a.rs"), "").unwrap();
        std::fs::write(top.join(".env"), "").unwrap();
        assert!(
            tracked(&top).unwrap().unwrap().files.is_empty(),
            "no index yet"
        );
        git(&top, &["add", "src/a.rs"]);
        let from_below = tracked(&top.join("src")).unwrap().unwrap();
        assert_eq!(from_below.files, [top.join("src/a.rs")]);
        git(&top, &["add", ".env"]);
        let listed = tracked(&top).unwrap().unwrap();
        let mut files = listed.files.clone();
        files.sort();
        assert_eq!(files, [top.join(".env"), top.join("src/a.rs")]);
        assert_eq!(listed.secrets, [top.join(".env")]);
    }

    #[test]
    fn a_bare_repository_or_a_broken_one_is_an_error_not_an_empty_list() {
        let dir = tempfile::tempdir().unwrap();
        let top = dir.path().canonicalize().unwrap();
        let bare = top.join("evil");
        for sub in ["objects", "refs"] {
            std::fs::create_dir_all(bare.join(sub)).unwrap();
        }
        std::fs::write(bare.join("HEAD"), "ref: refs/heads/main\n").unwrap();
        assert!(tracked(&bare).is_err());
        // An index git cannot read.
        let work = top.join("work");
        std::fs::create_dir_all(&work).unwrap();
        git(&work, &["init", "-q"]);
        std::fs::write(work.join(".git/index"), "not an index").unwrap();
        assert!(tracked(&work).is_err());
    }
}
