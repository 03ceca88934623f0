//! Keeping freed memory from staying resident: glibc's thresholds fixed at the start, and the
//! heap's free pages handed back once a run has ended.
//!
//! A run's transient memory grows with the conversation: the history loaded from `sessions.db`
//! and the request body written from it are megabytes each by the end of a long session, made
//! for every model call and freed after it. glibc's allocator keeps what is freed in its arenas
//! for reuse, and since each call's copies are larger than the last, the kept pages add up:
//! in a 1,000-turn soak the resident memory grew about four times faster than what was still
//! allocated (docs/PERFORMANCE.md). `configure` keeps large buffers in mappings of their own
//! (returned when freed) and arenas' free tops small; `malloc_trim` then gives the free pages
//! inside the arenas back, so the resident memory between runs follows the live heap. It runs
//! once per run, off the async threads, so it costs nothing a prompt waits for.

/// Buffers at least this large get mappings of their own, returned to the system when freed.
const OWN_MAPPING_BYTES: i32 = 128 * 1024;
/// A heap's free top is handed back once it is this large.
const TRIM_TOP_BYTES: i32 = 128 * 1024;

/// Fixes glibc's thresholds at their starting values, before any thread exists (`main`).
///
/// By default each freed large buffer raises the size above which buffers get mappings of
/// their own to its size (and the heap's top is kept up to twice that): once a call's
/// request body of a few megabytes has been freed, the next ones come from the arenas, and up
/// to twice the largest body stays resident in each arena's top, where `malloc_trim` does not
/// reach (it trims the top of the main arena only). In the soak that was 11 MB in one arena.
pub fn configure() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: `mallopt` only sets two of the allocator's parameters; no pointer is passed.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, OWN_MAPPING_BYTES);
        libc::mallopt(libc::M_TRIM_THRESHOLD, TRIM_TOP_BYTES);
    }
}

/// Returns the allocator's free pages to the system (glibc only; elsewhere a no-op).
pub fn release_free_pages() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: `malloc_trim` takes no pointers; it locks each arena in turn and only hands back
    // pages no allocation uses.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// The same, on a blocking thread of the current runtime (when there is one).
pub fn release_free_pages_later() {
    if let Ok(runtime) = tokio::runtime::Handle::try_current() {
        drop(runtime.spawn_blocking(release_free_pages));
    } else {
        release_free_pages();
    }
}

#[cfg(all(test, target_os = "linux", target_env = "gnu"))]
mod tests {
    use super::*;

    /// The tests measure this process's resident memory: one at a time.
    static ALONE: std::sync::Mutex<()> = std::sync::Mutex::new(());

    /// This process's anonymous resident memory in KiB.
    fn rss_anon_kib() -> u64 {
        let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
        status
            .lines()
            .find_map(|l| l.strip_prefix("RssAnon:"))
            .and_then(|v| v.split_whitespace().next()?.parse().ok())
            .unwrap_or(0)
    }

    /// Freed memory that the allocator keeps (it sits below a live allocation, so trimming the
    /// top of the heap cannot return it) leaves the resident set once released.
    #[test]
    fn freed_pages_below_live_memory_leave_the_resident_set() {
        let _alone = ALONE.lock();
        // 48 MiB in 8 KiB blocks (below the mmap threshold, so they come from the heap), every
        // 64th one kept: the rest is freed but fenced in by the kept ones.
        let mut blocks: Vec<Vec<u8>> = (0..6144).map(|i| vec![(i as u8) | 1; 8192]).collect();
        let kept: Vec<Vec<u8>> = blocks.iter_mut().step_by(64).map(std::mem::take).collect();
        drop(blocks);
        let before = rss_anon_kib();
        release_free_pages();
        let after = rss_anon_kib();
        assert_eq!(kept.len(), 96);
        assert!(
            after + 24 * 1024 < before,
            "RssAnon {before} KiB before the release, {after} KiB after"
        );
    }
    /// Freeing a large buffer does not make the next ones come from the heap, where the freed
    /// memory would stay resident.
    #[test]
    fn large_buffers_leave_the_resident_set_when_freed() {
        let _alone = ALONE.lock();
        configure();
        // By default this raises the threshold to 28 MiB: the 20 MiB below would come from the
        // heap and stay resident after it is freed.
        drop(std::hint::black_box(vec![1u8; 28 << 20]));
        let buffer = std::hint::black_box(vec![1u8; 20 << 20]);
        let before = rss_anon_kib();
        drop(buffer);
        let after = rss_anon_kib();
        assert!(
            after + 16 * 1024 < before,
            "RssAnon {before} KiB with the buffer, {after} KiB once freed"
        );
    }
}
