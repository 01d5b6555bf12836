//! Replacing an object the API server refuses to patch: delete, wait until gone, create.
//!
//! The plan names the objects to replace before anything is written
//! ([`crate::cluster::immutable::plan_replacements`]); the engine replaces each in its own wave, just
//! before applying it, so the objects of earlier waves are in place and nothing is missing longer
//! than one delete takes. A StatefulSet is deleted with `propagationPolicy: Orphan`: its pods
//! (and the PVCs they mount) stay, and the new StatefulSet, with the same selector, takes them
//! over. Every other kind is deleted in the background. The wait is bounded by the run's
//! deadline; the create is the ordinary apply that follows (a 201, so the record counts the
//! object created by this run).

use crate::cluster::engine::{Engine, Note, ObjectError, scoped};
use crate::cluster::immutable::Remedy;
use crate::cluster::mark::carries_mark;
use crate::cluster::plan::PlannedObject;
use crate::cluster::retry::{ApiFailure, FailureClass, Reason, TransportKind};
use std::time::Instant;
use tokio::sync::mpsc;

impl Engine {
    /// Delete `object` (orphaning its dependents for [`Remedy::ReplaceOrphan`]) and wait until it
    /// is gone; `why` is said in the progress.
    pub(crate) async fn replace(
        &self,
        object: &PlannedObject,
        remedy: Remedy,
        why: &str,
        notes: &mpsc::UnboundedSender<Note>,
    ) -> Result<(), ObjectError> {
        let r = &object.reference;
        self.refuse_unmarked(object, why, notes).await?;
        let _ = notes.send(Note::Notice(format!("replacing {r}: {why}")));
        let orphan = remedy == Remedy::ReplaceOrphan;
        let path = self
            .retrying(r, notes, || async {
                let path = self.resolver.resolve(&r.api_version, &r.kind).await?;
                self.api.without_retries().delete_with(&path, scoped(&path, r), &r.name, None, orphan).await?;
                Ok(path)
            })
            .await?;
        loop {
            let gone = self.retrying(r, notes, || async {
                Ok(self.api.without_retries().get(&path, scoped(&path, r), &r.name).await?.is_none())
            });
            if gone.await? {
                return Ok(());
            }
            if Instant::now() >= self.settings.deadline {
                return Err(ObjectError::Deadline(ApiFailure {
                    reason: Reason::Transport(TransportKind::TimedOut),
                    message: "deleted to be replaced, still not gone".into(),
                    ..Default::default()
                }));
            }
            self.pause(self.settings.poll_interval).await;
        }
    }

    /// A replace deletes first: an object without kfctl-rs's mark existed before the install and
    /// is never kfctl-rs's to delete, so its replace stops the run instead ([`crate::cluster::mark`]).
    async fn refuse_unmarked(
        &self,
        object: &PlannedObject,
        why: &str,
        notes: &mpsc::UnboundedSender<Note>,
    ) -> Result<(), ObjectError> {
        let r = &object.reference;
        let live = self
            .retrying(r, notes, || async {
                let path = self.resolver.resolve(&r.api_version, &r.kind).await?;
                self.api.without_retries().get(&path, scoped(&path, r), &r.name).await
            })
            .await?;
        match live {
            Some(live) if !carries_mark(&live) => Err(ObjectError::Failed(
                FailureClass::Invalid,
                ApiFailure {
                    message: format!(
                        "{why}, and replacing it means deleting it, but it existed before the install (no kfctl-rs \
                         mark): kfctl-rs never deletes what it did not create; delete it yourself if it may go, then \
                         re-run"
                    ),
                    ..Default::default()
                },
            )),
            _ => Ok(()),
        }
    }
}
