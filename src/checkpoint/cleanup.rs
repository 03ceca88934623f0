//! The cleanup of kept contents: checkpoints are forgotten `KEEP_DAYS` after their prompt (as
//! Claude Code forgets its sessions' checkpoints after 30 days), and a kept content goes when
//! no checkpoint that can still be restored refers to it and nobody kept or relied on it for
//! `GRACE` (the copies a walk makes before a command are referred to by nothing until the
//! command changes a file, and a session still open relies on them meanwhile). It runs at most
//! once a day, in the background, when a session core starts.

use std::collections::HashSet;
use std::path::Path;
use std::time::{Duration, SystemTime};

use super::objects::Objects;
use super::{Before, Changes};
use crate::memory::SessionStore;

/// Days a checkpoint is kept after its prompt.
pub const KEEP_DAYS: u64 = 30;
/// How long an object nobody refers to stays after it was last kept or relied on.
pub const GRACE: Duration = Duration::from_secs(7 * 24 * 3600);
/// How often the cleanup runs at most (a stamp file in the objects' directory says when last).
const EVERY: Duration = Duration::from_secs(24 * 3600);
const STAMP: &str = ".last-cleanup";

/// What one cleanup did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Cleaned {
    pub checkpoints: usize,
    pub objects: usize,
    pub bytes: u64,
}

#[derive(Debug, thiserror::Error)]
pub enum CleanupError {
    #[error("the checkpoints could not be read: {0}")]
    Store(#[from] crate::memory::MemoryError),
    /// A checkpoint that cannot be read might refer to anything: nothing is removed.
    #[error("a stored checkpoint cannot be read, so no kept content was removed: {0}")]
    Unreadable(serde_json::Error),
    #[error("the kept contents could not be cleaned: {0}")]
    Io(#[from] std::io::Error),
}

/// Forgets the checkpoints older than `KEEP_DAYS` at `now`, then removes the kept contents
/// that no restorable checkpoint refers to and that were not used within `GRACE` of `now`.
pub async fn clean(
    home: &Path,
    store: &SessionStore,
    now: SystemTime,
) -> Result<Cleaned, CleanupError> {
    let keep = Duration::from_secs(KEEP_DAYS * 24 * 3600);
    let cutoff_ms = now
        .checked_sub(keep)
        .and_then(|t| t.duration_since(SystemTime::UNIX_EPOCH).ok())
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0);
    let checkpoints = store.forget_checkpoints_before(cutoff_ms).await?;
    let mut referenced = HashSet::new();
    for files in store.restorable_checkpoints().await? {
        let changes: Changes = serde_json::from_str(&files).map_err(CleanupError::Unreadable)?;
        for change in changes.files.into_values() {
            if let Before::Kept { hash, .. } = change.before {
                referenced.insert(hash);
            }
        }
    }
    let objects = Objects::new(home);
    let unused_since = now.checked_sub(GRACE).unwrap_or(SystemTime::UNIX_EPOCH);
    let (removed, bytes) =
        tokio::task::spawn_blocking(move || objects.sweep(&referenced, unused_since))
            .await
            .map_err(|e| std::io::Error::other(e.to_string()))??;
    Ok(Cleaned {
        checkpoints,
        objects: removed,
        bytes,
    })
}

/// Starts `clean` in the background unless it ran within the last day. Its outcome is logged,
/// never shown: nothing the user waits for depends on it. The task is returned when one was
/// started.
pub fn clean_in_background(
    home: &Path,
    store: &SessionStore,
) -> Option<tokio::task::JoinHandle<()>> {
    let dir = Objects::new(home).dir().to_path_buf();
    let stamp = dir.join(STAMP);
    let recent = std::fs::metadata(&stamp)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.elapsed().ok())
        .is_some_and(|age| age < EVERY);
    // Nothing kept yet: nothing to clean (and no directory to make).
    if recent || !dir.is_dir() || std::fs::write(&stamp, b"").is_err() {
        return None;
    }
    let (home, store) = (home.to_path_buf(), store.clone());
    Some(tokio::spawn(async move {
        match clean(&home, &store, SystemTime::now()).await {
            Ok(cleaned) => tracing::debug!(?cleaned, "checkpoint cleanup"),
            Err(error) => tracing::warn!(%error, "checkpoint cleanup"),
        }
    }))
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::path::PathBuf;

    use super::*;
    use crate::checkpoint::FileChange;

    fn changes(hash: &str) -> String {
        let mut files = BTreeMap::new();
        files.insert(
            PathBuf::from("/w/a.txt"),
            FileChange {
                before: Before::Kept {
                    hash: hash.to_owned(),
                    mode: 0o644,
                },
                after: None,
            },
        );
        serde_json::to_string(&Changes {
            files,
            notes: Default::default(),
        })
        .unwrap()
    }

    async fn session(store: &SessionStore) -> String {
        let new = crate::memory::NewSession {
            workdir: "/w".into(),
            provider: "openai".into(),
            model: "m".into(),
            mode: "default".into(),
        };
        store.create(new).await.unwrap().id
    }

    fn age(path: &Path, days: u64) {
        let when = SystemTime::now() - Duration::from_secs(days * 24 * 3600);
        std::fs::OpenOptions::new()
            .append(true)
            .open(path)
            .unwrap()
            .set_modified(when)
            .unwrap();
    }

    #[tokio::test]
    async fn old_checkpoints_go_and_only_unreferenced_unused_contents_are_removed() {
        let home = tempfile::tempdir().unwrap();
        let store = SessionStore::open(&home.path().join("sessions.db")).unwrap();
        let id = session(&store).await;
        let objects = Objects::new(home.path());
        let [live, old, undone, loose, fresh] = ["live", "old", "undone", "loose", "fresh"]
            .map(|text| objects.put(text.as_bytes()).unwrap());
        store.save_checkpoint(&id, 1, "p1", changes(&live));
        store.save_checkpoint(&id, 2, "p2", changes(&old));
        store.save_checkpoint(&id, 3, "p3", changes(&undone));
        let month_and_more = (KEEP_DAYS as i64 + 1) * 24 * 3600 * 1000;
        store
            .call(move |conn| {
                conn.execute(
                    "UPDATE checkpoints SET created_at = created_at - ?1 WHERE after_seq = 2",
                    [month_and_more],
                )?;
                conn.execute("UPDATE checkpoints SET undone = 1 WHERE after_seq = 3", [])
            })
            .await
            .unwrap();
        for hash in [&live, &old, &undone, &loose] {
            age(&objects.dir().join(hash), 10);
        }
        // Something else in the directory is not the cleanup's.
        std::fs::write(objects.dir().join("README"), "mine").unwrap();
        age(&objects.dir().join("README"), 10);

        let cleaned = clean(home.path(), &store, SystemTime::now()).await.unwrap();

        assert_eq!((cleaned.checkpoints, cleaned.objects), (1, 3));
        let left = |hash: &str| objects.dir().join(hash).exists();
        assert!(left(&live), "a restorable checkpoint's content stays");
        assert!(left(&fresh), "a content used within the grace stays");
        assert!(!left(&old) && !left(&undone) && !left(&loose));
        assert!(objects.dir().join("README").exists());
        assert_eq!(objects.get(&live).unwrap(), b"live");
        assert!(store.checkpoint_at(&id, 2).await.unwrap().is_none());
    }

    #[tokio::test]
    async fn an_unreadable_checkpoint_stops_the_cleanup_before_anything_is_removed() {
        let home = tempfile::tempdir().unwrap();
        let store = SessionStore::open(&home.path().join("sessions.db")).unwrap();
        let id = session(&store).await;
        let objects = Objects::new(home.path());
        let loose = objects.put(b"loose").unwrap();
        age(&objects.dir().join(&loose), 10);
        store.save_checkpoint(&id, 1, "p1", "{not json".into());

        let error = clean(home.path(), &store, SystemTime::now())
            .await
            .unwrap_err();

        assert!(matches!(error, CleanupError::Unreadable(_)), "{error}");
        assert!(objects.dir().join(&loose).exists());
    }

    #[tokio::test]
    async fn the_background_cleanup_runs_once_a_day() {
        let home = tempfile::tempdir().unwrap();
        let store = SessionStore::open(&home.path().join("sessions.db")).unwrap();
        assert!(
            clean_in_background(home.path(), &store).is_none(),
            "nothing kept yet"
        );
        let objects = Objects::new(home.path());
        let loose = objects.put(b"loose").unwrap();
        age(&objects.dir().join(&loose), 10);

        clean_in_background(home.path(), &store)
            .expect("started")
            .await
            .unwrap();
        assert!(!objects.dir().join(&loose).exists());
        assert!(
            clean_in_background(home.path(), &store).is_none(),
            "not again the same day"
        );
        age(&objects.dir().join(STAMP), 2);
        assert!(clean_in_background(home.path(), &store).is_some());
    }

    #[test]
    fn keeping_a_content_again_or_relying_on_it_marks_it_used() {
        let home = tempfile::tempdir().unwrap();
        let objects = Objects::new(home.path());
        let hash = objects.put(b"kept").unwrap();
        let path = objects.dir().join(&hash);
        let week_and_more = SystemTime::now() - GRACE - Duration::from_secs(60);
        age(&path, 10);
        objects.put(b"kept").unwrap();
        assert!(std::fs::metadata(&path).unwrap().modified().unwrap() > week_and_more);
        age(&path, 10);
        assert!(objects.retain(&hash));
        assert!(std::fs::metadata(&path).unwrap().modified().unwrap() > week_and_more);
        assert!(!objects.retain(&"0".repeat(64)), "not kept");
        assert!(!objects.retain("../../etc/passwd"), "not an object's name");
    }
}
