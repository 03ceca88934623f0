//! `Checkpoints`: the open checkpoint of the prompt that runs now, filled by the
//! `CheckpointStage` as tool calls pass, and written to the session store as it grows (so a
//! crash mid-run keeps what was already changed). The first state of a file in a prompt wins:
//! later changes in the same prompt only move what it was left with.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use super::objects::{self, Objects};
use super::scan::{self, Seen};
use super::{Before, Changes, FileChange};
use crate::memory::SessionStore;

/// The checkpoints of one session core (whatever session it works in).
pub struct Checkpoints {
    objects: Objects,
    workdir: PathBuf,
    store: Option<SessionStore>,
    state: Mutex<State>,
    /// Held by a walk of the working directory: a command's walk waits for the warm-up's.
    walking: Mutex<()>,
}

/// What one walk of the working directory copies at most.
pub const WALK_BUDGET: u64 = 256 * 1024 * 1024;

#[derive(Default)]
struct State {
    open: Option<Open>,
    /// The last walk of the working directory, reused by the next (unchanged files are not
    /// read again).
    /// Shared with the walks of commands still running, so a command's walk is not copied.
    cache: Arc<HashMap<PathBuf, Seen>>,
    /// The walk before each command still running, by call id.
    walks: HashMap<String, Arc<HashMap<PathBuf, Seen>>>,
    /// Files harness9 itself wrote (a rule's `settings.local.json` and the `.gitignore` beside
    /// it): never the user's change, so a command's walk does not record them and `/undo` does
    /// not remove them (issue 32 point 5).
    own: HashSet<PathBuf>,
    /// Files a tool of this session created (they did not exist before its prompt), and the
    /// session they are of: deleting or overwriting them is no loss of the user's (issue 32
    /// point 1, `permission::destructive`).
    created: HashSet<PathBuf>,
    created_in: String,
    /// The files each command of the open prompt changed, by call id, until the engine takes
    /// them (for the language servers' diagnostics).
    changed_by: HashMap<String, Vec<PathBuf>>,
}

struct Open {
    session_id: String,
    after_seq: i64,
    prompt: String,
    changes: Changes,
}

impl Checkpoints {
    /// Contents kept under `home`; `store` keeps the checkpoints (none: in memory only).
    pub fn new(home: &Path, workdir: PathBuf, store: Option<SessionStore>) -> Self {
        Checkpoints {
            objects: Objects::new(home),
            workdir,
            store,
            state: Mutex::new(State::default()),
            walking: Mutex::new(()),
        }
    }

    /// Starts the first walk of the working directory in the background when none was made
    /// yet, so a prompt's first command does not wait for every file to be copied: the model
    /// is still thinking meanwhile. A command's own walk waits for it, then reads only what
    /// changed since.
    pub fn warm(self: &Arc<Self>) {
        if !self.state().cache.is_empty() {
            return;
        }
        let this = Arc::clone(self);
        tokio::task::spawn_blocking(move || {
            let _walking = this.walking.lock().unwrap_or_else(|e| e.into_inner());
            let mut cache = std::mem::take(&mut this.state().cache);
            if cache.is_empty() {
                scan::keep_all(
                    &this.objects,
                    &this.workdir,
                    Arc::make_mut(&mut cache),
                    WALK_BUDGET,
                );
            }
            this.state().cache = cache;
        });
    }

    pub fn objects(&self) -> &Objects {
        &self.objects
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        // A panic while holding the lock leaves plain data behind: keep using it.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A prompt of `session_id` starts: what its tools change from now on is recorded. A
    /// checkpoint already stored for the same place (a run that stored no message) goes on.
    pub async fn begin(&self, session_id: &str, prompt: &str) {
        let (after_seq, changes) = match &self.store {
            Some(store) => {
                let after_seq = store.last_seq(session_id).await.unwrap_or(0);
                let changes = store
                    .checkpoint_at(session_id, after_seq)
                    .await
                    .ok()
                    .flatten()
                    .and_then(|json| serde_json::from_str(&json).ok())
                    .unwrap_or_default();
                (after_seq, changes)
            }
            None => (0, Changes::default()),
        };
        let mut state = self.state();
        if state.created_in != session_id {
            state.created.clear();
            state.created_in = session_id.to_owned();
        }
        state.open = Some(Open {
            session_id: session_id.to_owned(),
            after_seq,
            prompt: prompt.to_owned(),
            changes,
        });
    }

    /// The prompt's run ended: nothing more is recorded until the next `begin`.
    pub fn end(&self) {
        let mut state = self.state();
        state.open = None;
        state.walks.clear();
        state.changed_by.clear();
    }

    /// The files the command `call_id` changed, as its walk found them (taken: asked once).
    pub fn take_changed_by(&self, call_id: &str) -> Vec<PathBuf> {
        self.state().changed_by.remove(call_id).unwrap_or_default()
    }

    /// What the open checkpoint holds (tests, the bench).
    pub fn open_changes(&self) -> Option<Changes> {
        self.state().open.as_ref().map(|o| o.changes.clone())
    }

    /// Before an edit tool writes `paths` (absolute): each one's state, when the prompt has not
    /// changed it yet. Blocking (reads and copies files).
    pub fn before_write(&self, paths: &[PathBuf]) {
        let new: Vec<PathBuf> = {
            let state = self.state();
            let Some(open) = &state.open else { return };
            paths
                .iter()
                .filter(|p| !open.changes.files.contains_key(*p))
                .cloned()
                .collect()
        };
        let kept: Vec<(PathBuf, Before)> = new
            .into_iter()
            .map(|path| {
                let before = self
                    .objects
                    .keep(&path)
                    .unwrap_or_else(|e| Before::NotKept {
                        reason: format!("it could not be read: {e}"),
                    });
                (path, before)
            })
            .collect();
        let mut state = self.state();
        let Some(open) = state.open.as_mut() else {
            return;
        };
        for (path, before) in kept {
            // `after` is filled once the tool has run; until then it is what was there.
            let after = match &before {
                Before::Kept { hash, .. } => Some(hash.clone()),
                _ => None,
            };
            open.changes
                .files
                .entry(path)
                .or_insert(FileChange { before, after });
        }
    }

    /// After a tool wrote `paths`: what they hold now. A file left as it was before the prompt
    /// is no change at all.
    pub fn after_write(&self, paths: &[PathBuf]) {
        let now: Vec<(PathBuf, Option<String>)> = paths
            .iter()
            .filter_map(|p| objects::current(p).ok().map(|hash| (p.clone(), hash)))
            .collect();
        let mut guard = self.state();
        let state = &mut *guard;
        let Some(open) = state.open.as_mut() else {
            return;
        };
        for (path, hash) in now {
            if hash.is_some()
                && matches!(
                    open.changes.files.get(&path).map(|c| &c.before),
                    Some(Before::Absent)
                )
            {
                state.created.insert(path.clone());
            }
            let unchanged = match open.changes.files.get(&path).map(|c| &c.before) {
                Some(Before::Kept { hash: before, .. }) => hash.as_deref() == Some(before),
                Some(Before::Absent) => hash.is_none(),
                Some(Before::NotKept { .. }) => false,
                None => continue,
            };
            if unchanged {
                open.changes.files.remove(&path);
            } else if let Some(change) = open.changes.files.get_mut(&path) {
                change.after = hash;
            }
        }
        self.persist(open);
    }

    /// Before a command runs (`call_id`): the working directory walked and every file kept.
    /// Blocking; without an open checkpoint it does nothing.
    pub fn before_command(&self, call_id: &str) {
        let _walking = self.walking.lock().unwrap_or_else(|e| e.into_inner());
        let mut cache = {
            let mut state = self.state();
            if state.open.is_none() {
                return;
            }
            std::mem::take(&mut state.cache)
        };
        // Copied only while another command's walk still holds the last one.
        scan::keep_all(
            &self.objects,
            &self.workdir,
            Arc::make_mut(&mut cache),
            WALK_BUDGET,
        );
        let mut state = self.state();
        state.walks.insert(call_id.to_owned(), Arc::clone(&cache));
        state.cache = cache;
    }

    /// Whether a tool of this session created `path` (absolute, under the working directory as
    /// resolved): the permission decision lets a command delete or overwrite it unasked.
    pub fn created_in_session(&self, path: &Path) -> bool {
        self.state().created.contains(path)
    }

    /// harness9 wrote `paths` itself, for the user (an "always allow" rule): a command's walk
    /// that finds them changed does not take them for the command's change.
    pub fn harness9_wrote(&self, paths: &[PathBuf]) {
        let mut state = self.state();
        for path in paths {
            // As the walk names them: under the working directory as it was resolved.
            let resolved = match (path.parent(), path.file_name()) {
                (Some(parent), Some(name)) => parent
                    .canonicalize()
                    .map(|p| p.join(name))
                    .unwrap_or_else(|_| path.clone()),
                _ => path.clone(),
            };
            state.own.insert(resolved);
            state.own.insert(path.clone());
        }
    }

    /// After the command `call_id` ran (or did not): what it changed in the working directory,
    /// recorded from the walk before it.
    pub fn after_command(&self, call_id: &str, executed: bool) {
        let Some(walk) = self.state().walks.remove(call_id) else {
            return;
        };
        if !executed {
            return;
        }
        let mut changed = scan::changed_since(&self.workdir, &walk);
        {
            let state = self.state();
            changed.retain(|path| !state.own.contains(path));
        }
        if changed.is_empty() {
            return;
        }
        {
            let mut state = self.state();
            state.changed_by.insert(call_id.to_owned(), changed.clone());
            let Some(open) = state.open.as_mut() else {
                return;
            };
            for path in &changed {
                let before = walk
                    .get(path)
                    .map(|seen| self.relied_on(&seen.before))
                    .unwrap_or(Before::Absent);
                open.changes
                    .files
                    .entry(path.clone())
                    .or_insert(FileChange {
                        before,
                        after: None,
                    });
            }
        }
        self.after_write(&changed);
    }

    /// `before` from an earlier walk, now that a checkpoint relies on it: its kept content is
    /// marked as used, or, when a cleanup removed it while the session sat idle, it is said
    /// not to be restorable rather than found missing at `/undo`.
    fn relied_on(&self, before: &Before) -> Before {
        match before {
            Before::Kept { hash, .. } if !self.objects.retain(hash) => Before::NotKept {
                reason: "its copy was cleaned up while the session was idle".into(),
            },
            other => other.clone(),
        }
    }

    /// A plain note for the user on what this prompt's checkpoint cannot cover.
    pub fn note(&self, text: &str) {
        let mut state = self.state();
        if let Some(open) = state.open.as_mut()
            && open.changes.notes.insert(text.to_owned())
        {
            self.persist(open);
        }
    }

    /// Writes the open checkpoint to the store, in order with the session's other writes.
    fn persist(&self, open: &Open) {
        let Some(store) = &self.store else { return };
        let Ok(json) = serde_json::to_string(&open.changes) else {
            return;
        };
        store.save_checkpoint(&open.session_id, open.after_seq, &open.prompt, json);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_command_after_the_warm_up_records_what_it_changed_from_the_copies() {
        let home = tempfile::tempdir().unwrap();
        let work = tempfile::tempdir().unwrap();
        let file = work.path().join("notes.txt");
        std::fs::write(&file, "before\n").unwrap();
        let checkpoints = Arc::new(Checkpoints::new(
            home.path(),
            work.path().to_path_buf(),
            None,
        ));
        checkpoints.begin("s", "change the notes").await;
        checkpoints.warm();
        // The command's walk waits for the warm-up's, then finds nothing new to copy.
        let walker = Arc::clone(&checkpoints);
        tokio::task::spawn_blocking(move || walker.before_command("c"))
            .await
            .unwrap();
        std::fs::write(&file, "after\n").unwrap();
        let walker = Arc::clone(&checkpoints);
        tokio::task::spawn_blocking(move || walker.after_command("c", true))
            .await
            .unwrap();
        let changes = checkpoints.open_changes().unwrap();
        let Before::Kept { hash, .. } = &changes.files[&file].before else {
            panic!("kept: {changes:?}");
        };
        assert_eq!(checkpoints.objects().get(hash).unwrap(), b"before\n");
    }

    #[tokio::test]
    async fn a_copy_cleaned_up_while_the_session_was_idle_is_said_not_restorable() {
        let home = tempfile::tempdir().unwrap();
        let work = tempfile::tempdir().unwrap();
        let file = work.path().join("notes.txt");
        std::fs::write(&file, "before\n").unwrap();
        let checkpoints = Checkpoints::new(home.path(), work.path().to_path_buf(), None);
        checkpoints.begin("s", "change the notes").await;
        checkpoints.before_command("c");
        // Another harness9's cleanup removed the copy the walk made.
        std::fs::remove_file(
            checkpoints
                .objects()
                .dir()
                .join(crate::files::hash_of(b"before\n")),
        )
        .unwrap();
        std::fs::write(&file, "after\n").unwrap();
        checkpoints.after_command("c", true);
        let changes = checkpoints.open_changes().unwrap();
        let Before::NotKept { reason } = &changes.files[&file].before else {
            panic!("not kept: {changes:?}");
        };
        assert!(reason.contains("cleaned up"), "{reason}");
    }

    /// What a command or an edit of this session created is known as the session's; a file
    /// that was there before is not, and another session starts knowing nothing.
    #[tokio::test]
    async fn files_the_session_created_are_known_until_another_session() {
        let home = tempfile::tempdir().unwrap();
        let work = tempfile::tempdir().unwrap();
        let (kept, made, written) = (
            work.path().join("kept.txt"),
            work.path().join("made.txt"),
            work.path().join("written.txt"),
        );
        std::fs::write(&kept, "before\n").unwrap();
        let checkpoints = Checkpoints::new(home.path(), work.path().to_path_buf(), None);
        checkpoints.begin("s", "make files").await;
        checkpoints.before_command("c");
        std::fs::write(&kept, "after\n").unwrap();
        std::fs::write(&made, "new\n").unwrap();
        checkpoints.after_command("c", true);
        checkpoints.before_write(std::slice::from_ref(&written));
        std::fs::write(&written, "new\n").unwrap();
        checkpoints.after_write(std::slice::from_ref(&written));
        assert!(checkpoints.created_in_session(&made));
        assert!(checkpoints.created_in_session(&written));
        assert!(!checkpoints.created_in_session(&kept));
        checkpoints.end();
        checkpoints.begin("t", "elsewhere").await;
        assert!(!checkpoints.created_in_session(&made));
    }
}
