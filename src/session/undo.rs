//! `/undo` and `/rewind` in the core: the checkpoints are read from the store, the files put
//! back off the async threads (`checkpoint::restore`), and for a rewind of the conversation the
//! later messages are moved to a branch and the session loaded again. Front ends only send the
//! request and show the answer; none of them touches a file.

use std::collections::BTreeSet;
use std::sync::Arc;

use super::actor::Core;
use super::protocol::{Restore, Restored, Update};
use super::views::{Conflicts, PromptPoint};
use crate::checkpoint::{self, Changes, RestoreReport};
use crate::engine::{Failure, FailureKind};
use crate::memory::CheckpointRow;

/// The first characters of a prompt, to name it.
fn quoted(prompt: &str) -> String {
    let line = crate::memory::title_from(prompt);
    format!("“{line}”")
}

fn parse(rows: &[CheckpointRow]) -> Result<Vec<Changes>, Failure> {
    rows.iter()
        .map(|row| {
            serde_json::from_str(&row.files).map_err(|e| {
                Failure::new(
                    FailureKind::Storage,
                    format!(
                        "the checkpoint of {} cannot be read: {e}",
                        quoted(&row.prompt)
                    ),
                )
            })
        })
        .collect()
}

impl Core {
    /// `/rewind`'s list: the conversation's prompts, each with the files a rewind to before it
    /// would restore.
    pub(super) fn list_prompts(&self) {
        let store = self.assembly.store.clone();
        let hub = Arc::clone(&self.hub);
        let id = self.session_id.clone();
        tokio::spawn(async move {
            let listed = async {
                let prompts = store.prompts(&id).await?;
                let rows = store.checkpoints_since(&id, 0).await?;
                Ok::<_, crate::memory::MemoryError>((prompts, rows))
            };
            match listed.await {
                Ok((prompts, rows)) => {
                    let changes: Vec<(i64, Changes)> = rows
                        .iter()
                        .filter_map(|r| Some((r.after_seq, serde_json::from_str(&r.files).ok()?)))
                        .collect();
                    let points = prompts
                        .into_iter()
                        .map(|(seq, text)| {
                            let files: BTreeSet<_> = changes
                                .iter()
                                .filter(|(after, _)| *after >= seq - 1)
                                .flat_map(|(_, c)| c.files.keys())
                                .collect();
                            PromptPoint {
                                seq,
                                text: super::text::as_typed(&text).to_owned(),
                                files: files.len(),
                            }
                        })
                        .collect();
                    hub.publish(Update::Prompts(points));
                }
                Err(error) => hub.publish(Update::Failed(
                    Failure::from(&error).context("cannot list the prompts"),
                )),
            }
        });
    }

    /// Restores what `what` names; files changed since are handled as `conflicts` says.
    pub(super) async fn restore(&mut self, what: Restore, conflicts: Conflicts) {
        if self.running() {
            self.hub.publish(Update::Failed(Failure::new(
                FailureKind::Config,
                "wait for the run to end (or interrupt it) before restoring",
            )));
            return;
        }
        match self.try_restore(what, conflicts).await {
            Ok(restored) => self.hub.publish(Update::Restored(Arc::new(restored))),
            Err(failure) => self.hub.publish(Update::Failed(failure)),
        }
    }

    async fn try_restore(
        &mut self,
        what: Restore,
        conflicts: Conflicts,
    ) -> Result<Restored, Failure> {
        let store = self.assembly.store.clone();
        let id = self.session_id.clone();
        let storage = |e: crate::memory::MemoryError| Failure::from(&e);
        let (rows, prompt) = match &what {
            Restore::Undo => {
                let rows = store.checkpoints_since(&id, 0).await.map_err(storage)?;
                // The newest prompt that changed a file (newer ones that changed none go too).
                let parsed = parse(&rows)?;
                match parsed.iter().position(|c| !c.files.is_empty()) {
                    Some(last) => {
                        let prompt = Some(rows[last].prompt.clone());
                        (rows[..=last].to_vec(), prompt)
                    }
                    None => (Vec::new(), None),
                }
            }
            Restore::Rewind { seq, files, .. } => {
                let prompt = store
                    .prompts(&id)
                    .await
                    .map_err(storage)?
                    .into_iter()
                    .find(|(s, _)| s == seq)
                    .map(|(_, text)| super::text::as_typed(&text).to_owned())
                    .ok_or_else(|| {
                        Failure::new(
                            FailureKind::NotFound,
                            "that prompt is no longer in the conversation",
                        )
                    })?;
                let rows = if *files {
                    store
                        .checkpoints_since(&id, seq - 1)
                        .await
                        .map_err(storage)?
                } else {
                    Vec::new()
                };
                (rows, Some(prompt))
            }
        };
        let changes = parse(&rows)?;
        let checkpoints = Arc::clone(&self.assembly.checkpoints);
        let workdir = self.workdir.clone();
        let report = tokio::task::spawn_blocking(move || {
            let refs: Vec<&Changes> = changes.iter().collect();
            let objects = checkpoints.objects();
            checkpoint::restore::restore(objects, &refs, conflicts.into(), &workdir)
        })
        .await
        .unwrap_or_else(|_| RestoreReport {
            failed: vec![(self.workdir.clone(), checkpoint::RestoreFailure::Crashed)],
            ..RestoreReport::default()
        });
        let report_text = report.describe(&self.workdir);
        let mut restored = Restored {
            what: what.clone(),
            prompt: prompt.clone(),
            text: String::new(),
            branched: None,
            report: report.into(),
        };
        if restored.report.asking {
            restored.text = report_text;
            return Ok(restored);
        }
        store
            .mark_undone(rows.iter().map(|r| r.id).collect())
            .await
            .map_err(storage)?;
        if let Restore::Rewind {
            seq,
            conversation: true,
            ..
        } = what
        {
            let moved = store.branch_from(&id, seq).await.map_err(storage)?;
            restored.branched = Some(moved);
            // The session as it now goes on, for every front end (`Update::Loaded`).
            self.switch_to(id.clone()).await;
        }
        restored.text = self.describe(&restored, rows.is_empty(), report_text);
        Ok(restored)
    }

    /// The restore in plain words; `report_text` is what the checkpoints' report says.
    fn describe(&self, restored: &Restored, no_checkpoint: bool, report_text: String) -> String {
        let name = restored.prompt.as_deref().map(quoted).unwrap_or_default();
        let mut parts = Vec::new();
        match &restored.what {
            Restore::Undo if no_checkpoint => {
                return "nothing to undo: no prompt of this session changed a file".into();
            }
            Restore::Undo => parts.push(format!("undid the file changes of {name}")),
            Restore::Rewind { files, .. } => {
                parts.push(format!("rewound to before {name}"));
                if *files && no_checkpoint {
                    parts.push("no file was changed since".into());
                }
            }
        }
        if let Some(moved) = restored.branched {
            parts.push(format!(
                "the conversation goes on from there ({moved} later messages are kept in the \
                 session's history as a branch)"
            ));
        }
        if !no_checkpoint {
            parts.push(report_text);
        }
        parts.join("; ")
    }
}
