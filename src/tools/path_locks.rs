//! Per-path locks: one process-wide map from a resolved path to an async read-write lock, so two
//! writes to one file never interleave their read-modify-write, and a read waits for a write in
//! progress. An entry lives only while a guard or a waiter holds it.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, LazyLock, Mutex, PoisonError, Weak};

use tokio::sync::{OwnedRwLockReadGuard, OwnedRwLockWriteGuard, RwLock};

type Locks = HashMap<PathBuf, Weak<RwLock<()>>>;

static LOCKS: LazyLock<Mutex<Locks>> = LazyLock::new(Mutex::default);

/// The lock of `path`, created on first use; entries nobody holds any more are dropped here.
fn lock_of(path: &Path) -> Arc<RwLock<()>> {
    let mut locks = LOCKS.lock().unwrap_or_else(PoisonError::into_inner);
    locks.retain(|_, lock| lock.strong_count() > 0);
    if let Some(lock) = locks.get(path).and_then(Weak::upgrade) {
        return lock;
    }
    let lock = Arc::new(RwLock::new(()));
    locks.insert(path.to_owned(), Arc::downgrade(&lock));
    lock
}

/// Exclusive access to `path` (already resolved) for a write.
pub(crate) async fn write(path: &Path) -> OwnedRwLockWriteGuard<()> {
    lock_of(path).write_owned().await
}

/// Shared access to `path` (already resolved) for a read: waits while a write is in progress.
pub(crate) async fn read(path: &Path) -> OwnedRwLockReadGuard<()> {
    lock_of(path).read_owned().await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tracked(path: &Path) -> bool {
        let locks = LOCKS.lock().unwrap_or_else(PoisonError::into_inner);
        locks.get(path).is_some_and(|lock| lock.strong_count() > 0)
    }

    #[tokio::test]
    async fn a_read_waits_for_a_write_and_entries_go_when_unused() {
        let path = PathBuf::from("/nonexistent/path-locks-test/file.txt");
        let writing = write(&path).await;
        assert!(tracked(&path));
        let reader = tokio::spawn({
            let path = path.clone();
            async move { drop(read(&path).await) }
        });
        tokio::task::yield_now().await;
        assert!(!reader.is_finished(), "the read waits for the write");
        drop(writing);
        reader.await.unwrap();
        assert!(!tracked(&path), "nobody holds it: the entry is gone");
    }
}
