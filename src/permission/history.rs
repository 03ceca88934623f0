//! Secrets that only git's history holds (issue 29 point 12): a `.env` committed and removed
//! later is still printed by `git log -p`, `git show HEAD~1`, `git grep KEY REV` or
//! `git cat-file -p BLOB`. Decided from the object database: every object reachable from a ref,
//! the stash or a reflog entry is listed with its path by `git rev-list --objects`, under a time
//! limit; a path that usually holds secrets (`protected::is_secret_file`, templates aside) among
//! them makes those commands ask. A listing that cannot be had in time is an error: the caller
//! asks. The answer is kept per repository until its refs or its reflog change. An object no
//! ref reaches has no path to judge: a command naming one by its id asks.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

use super::tracked::{self, Layout, TrackedError};
use crate::files::protected;

/// How long listing a repository's history may take; past it the command asks.
const HISTORY_TIMEOUT: Duration = Duration::from_secs(5);
/// Repositories remembered at once.
const REMEMBERED: usize = 16;

/// What the history was found to hold, and the state of the refs it was found for.
struct Remembered {
    key: Vec<u8>,
    secret: Option<PathBuf>,
}

/// By git directory.
static REMEMBERED_HISTORY: Mutex<Option<HashMap<PathBuf, Remembered>>> = Mutex::new(None);

/// The first path that usually holds secrets among the objects the history of `dir`'s
/// repository reaches (relative to its top), `Ok(None)` when there is none or no repository.
pub(super) fn secret_in_history(dir: &Path) -> Result<Option<PathBuf>, TrackedError> {
    tracked::redirected()?;
    let Some(layout) = tracked::discover(dir)? else {
        return Ok(None);
    };
    let key = refs_state(&layout)?;
    if let Ok(mut remembered) = REMEMBERED_HISTORY.lock()
        && let Some(known) = remembered
            .get_or_insert_with(HashMap::new)
            .get(&layout.git_dir)
        && known.key == key
    {
        return Ok(known.secret.clone());
    }
    let secret = find_secret(&layout)?;
    if let Ok(mut remembered) = REMEMBERED_HISTORY.lock() {
        let remembered = remembered.get_or_insert_with(HashMap::new);
        if remembered.len() >= REMEMBERED {
            remembered.clear();
        }
        remembered.insert(
            layout.git_dir.clone(),
            Remembered {
                key,
                secret: secret.clone(),
            },
        );
    }
    Ok(secret)
}

/// What the reachable history depends on: every ref and what it points at (the stash
/// included), `HEAD`, and the reflogs' sizes and times (a commit reset away stays reachable
/// from the reflog, which grows).
fn refs_state(layout: &Layout) -> Result<Vec<u8>, TrackedError> {
    let mut key = tracked::git_output(
        layout,
        &["for-each-ref", "--format=%(objectname) %(refname)"],
        HISTORY_TIMEOUT,
    )?;
    key.extend(std::fs::read(layout.git_dir.join("HEAD")).unwrap_or_default());
    let logs = layout.git_dir.join("logs");
    let walk = ignore::WalkBuilder::new(&logs)
        .standard_filters(false)
        .follow_links(false)
        .build();
    for entry in walk.flatten() {
        if let Ok(meta) = entry.metadata() {
            let modified = meta.modified().unwrap_or(SystemTime::UNIX_EPOCH);
            key.extend(format!("\n{} {} {modified:?}", entry.path().display(), meta.len()).bytes());
        }
    }
    Ok(key)
}

/// `git rev-list --objects --all --reflog`: every reachable object with the path it was
/// reached by; the first secret-looking path.
fn find_secret(layout: &Layout) -> Result<Option<PathBuf>, TrackedError> {
    let listing = tracked::git_output(
        layout,
        &["rev-list", "--objects", "--all", "--reflog"],
        HISTORY_TIMEOUT,
    )?;
    let secret = listing
        .split(|b| *b == b'\n')
        .filter_map(|line| {
            let at = line.iter().position(|b| *b == b' ')?;
            Some(PathBuf::from(
                String::from_utf8_lossy(&line[at + 1..]).into_owned(),
            ))
        })
        .find(|path| protected::is_secret_file(path) && !protected::is_env_template(path));
    Ok(secret)
}

/// The first of `ids` (raw object ids, whole or abbreviated) that no ref, stash, reflog entry
/// or the index reaches in `dir`'s repository (issue 29 point 12): a dangling blob of a
/// deleted `.env` has no path to judge it by, so naming one asks. `Ok(None)` when every one is
/// reached or there is no repository; a listing that cannot be had in time is an error.
pub(super) fn unreachable_object(
    dir: &Path,
    ids: &[String],
) -> Result<Option<String>, TrackedError> {
    tracked::redirected()?;
    let Some(layout) = tracked::discover(dir)? else {
        return Ok(None);
    };
    let listing = tracked::git_output(
        &layout,
        &[
            "rev-list",
            "--objects",
            "--all",
            "--reflog",
            "--indexed-objects",
        ],
        HISTORY_TIMEOUT,
    )?;
    let reached: Vec<&[u8]> = listing
        .split(|b| *b == b'\n')
        .filter_map(|line| line.split(|b| *b == b' ').next())
        .filter(|id| !id.is_empty())
        .collect();
    Ok(ids
        .iter()
        .find(|id| {
            let id = id.to_ascii_lowercase();
            !reached.iter().any(|known| known.starts_with(id.as_bytes()))
        })
        .cloned())
}
