//! Undo of one revision: the retired record comes back and the pair is
//! vetoed. The replacing record stays, so the answer says when two active
//! records now share a subject and how to retire the wrong one.

use super::Lifecycle;
use crate::error::Result;
use memory::admin_text;
use memory::admin_text::{AdminText, OrgWords};
use memory::{MemoryRecord, Status};

/// What an undo did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Undo {
    AlreadyUndone,
    Undone {
        /// The retired record, as it is now (active again, or changed since).
        back: Box<MemoryRecord>,
        /// The record that had replaced it, when it still exists.
        replacing: Option<Box<MemoryRecord>>,
    },
}

impl Undo {
    /// The replacing record when it and the restored one are both active on
    /// one subject: the record an admin is offered to retire.
    pub fn rival(&self) -> Option<&MemoryRecord> {
        match self {
            Undo::Undone {
                back,
                replacing: Some(r),
            } if back.disagrees_with(r) => Some(r),
            _ => None,
        }
    }

    /// What the admin is told (an [`AdminText`]: an administrator reads it
    /// without a reason); `forget` is how their surface names forgetting a
    /// record (`steward memory forget 12`, "the Forget button").
    pub fn message(&self, revision: i64, forget: impl Fn(i64) -> AdminText) -> AdminText {
        let Undo::Undone { back, replacing } = self else {
            return admin_text!("Revision {} was already undone.", revision);
        };
        let veto = match replacing {
            Some(r) => admin_text!("; #{} may not replace it again", r.id),
            None => AdminText::empty(),
        };
        let undone = if back.status == Status::Active {
            admin_text!("Undone: record #{} is active again{}.", back.id, veto)
        } else {
            admin_text!(
                "Undone: record #{} stays {} (it changed since){}.",
                back.id,
                back.status.as_str(),
                veto
            )
        };
        let Some(r) = self.rival() else {
            return undone;
        };
        // A person's own subject is their words: named only for the organisation's records.
        let on = match OrgWords::of_records(&back.subject, &[&back.written]) {
            Some(subject) => admin_text!(" on “{}”", subject),
            None => AdminText::empty(),
        };
        admin_text!(
            "{} Records #{} and #{} are now both active{} and say different things; if #{} is wrong, {}.",
            undone,
            back.id,
            r.id,
            on,
            r.id,
            forget(r.id)
        )
    }
}

impl Lifecycle {
    /// Undo revision `id` as `actor`.
    pub async fn undo(&self, org: &str, id: i64, actor: &str, now: i64) -> Result<Undo> {
        let rev = self.db.records().revision(org, id).await?;
        if !self.db.records().undo_revision(org, id, actor, now).await? {
            return Ok(Undo::AlreadyUndone);
        }
        let back = self.db.records().get(org, rev.retired_id).await?;
        let replacing = match self.db.records().get(org, rev.replacing_id).await {
            Ok(r) => Some(Box::new(r)),
            Err(memory::StoreError::NotFound(_)) => None,
            Err(e) => return Err(e.into()),
        };
        Ok(Undo::Undone {
            back: Box::new(back),
            replacing,
        })
    }
}
