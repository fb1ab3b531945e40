//! Review quarantined records, and forget one (an operator's or its owner's).

use super::Lifecycle;
use crate::error::Result;
use memory::admin_text::{AdminText, Identifier, OrgWords};
use memory::{Cause, Status, StoreError};

impl Lifecycle {
    /// `review_learned`: confirm (the subject rule runs, honouring time and
    /// vetoes) or reject an unverified record. Audited.
    pub async fn review(
        &self,
        org: &str,
        id: i64,
        confirm: bool,
        actor: &str,
        now: i64,
    ) -> Result<std::result::Result<String, String>> {
        let rec = match self.db.records().get(org, id).await {
            Ok(r) => r,
            Err(StoreError::NotFound(_)) => return Ok(Err(format!("no record {id}"))),
            Err(e) => return Err(e.into()),
        };
        if rec.status != Status::Unverified {
            return Ok(Err(format!(
                "record {id} is {}, not unverified",
                rec.status.as_str()
            )));
        }
        let outcome = if confirm {
            let run = format!("review:{id}:{now}");
            let s = self
                .db
                .records()
                .activate_kept(org, id, Cause::Confirm, &run, now, self.learning.beliefs())
                .await?;
            match s.superseded_by {
                Some(newer) => format!("confirmed record {id}; it is older than record {newer}, so it is kept as history"),
                None if s.retired.is_empty() => format!("confirmed record {id}"),
                None => format!("confirmed record {id}; it retired {:?}", s.retired),
            }
        } else {
            self.db.records().reject(org, id).await?;
            format!("rejected record {id}")
        };
        self.db
            .audit()
            .append(
                org,
                actor,
                if confirm {
                    "review.confirm"
                } else {
                    "review.reject"
                },
                &format!("record:{id}"),
                // A person's record in review is named by its id alone.
                &match OrgWords::of_records(&rec.content, &[&rec]) {
                    Some(words) => memory::admin_text!("{}", words),
                    None => AdminText::empty(),
                },
                now,
            )
            .await?;
        Ok(Ok(outcome))
    }

    /// `user` forgets one of their own records (`/forget`, the `memory_forget`
    /// tool): refused, without saying whether it exists, unless it is theirs,
    /// personal and not already deleted.
    pub async fn forget_own(
        &self,
        org: &str,
        id: i64,
        user: &str,
        now: i64,
    ) -> Result<std::result::Result<(), String>> {
        let not_theirs = || Ok(Err(format!("You have no record {id}.")));
        let rec = match self.db.records().get(org, id).await {
            Ok(r) => r,
            Err(memory::StoreError::NotFound(_)) => return not_theirs(),
            Err(e) => return Err(e.into()),
        };
        if rec.owner.as_deref() != Some(user)
            || !rec.scope.is_personal()
            || rec.status == memory::Status::Deleted
        {
            return not_theirs();
        }
        self.forget(org, id, user, now).await?;
        Ok(Ok(()))
    }

    /// Promote `user`'s own individual record `id` to the person tier, as
    /// `policy::decide_promotion` allows (chat `/promote`,
    /// `POST /api/v1/me/memory/{id}/promote`). Audited (`memory.promote`).
    pub async fn promote_own(
        &self,
        org: &str,
        user: &str,
        id: i64,
        at: i64,
    ) -> Result<std::result::Result<(), String>> {
        let rec = match self.db.records().get(org, id).await {
            Ok(r) => r,
            Err(memory::StoreError::NotFound(_)) => {
                return Ok(Err(format!("You have no record {id}.")))
            }
            Err(e) => return Err(e.into()),
        };
        if let Err(refusal) = memory::policy::decide_promotion(user, &rec) {
            return Ok(Err(refusal.to_string()));
        }
        // Promotion crosses agents: the text passes the write path's screen again.
        let moved = self
            .db
            .records()
            .move_to_person_tier(org, id, &rec.content)
            .await;
        if let Err(refusal) = memory::write::split_refusal(moved)? {
            return Ok(Err(refusal.to_string()));
        }
        self.db
            .audit()
            .append(
                org,
                user,
                "memory.promote",
                &format!("record:{id}"),
                &memory::admin_text!("{}", Identifier::new(&rec.kind)),
                at,
            )
            .await?;
        Ok(Ok(()))
    }

    /// Retire org policy `id` (forget it), or say why not: it is not active
    /// org policy. The CLI's `memory policy retire` and the API's. Audited.
    pub async fn retire_policy(
        &self,
        org: &str,
        id: i64,
        actor: &str,
        now: i64,
    ) -> Result<std::result::Result<(), String>> {
        let rec = match self.db.records().get(org, id).await {
            Ok(r) => r,
            Err(StoreError::NotFound(_)) => return Ok(Err(format!("no record {id}"))),
            Err(e) => return Err(e.into()),
        };
        if rec.scope != memory::Scope::OrgPolicy || rec.status != Status::Active {
            return Ok(Err(format!("record {id} is not active org policy")));
        }
        self.forget(org, id, actor, now).await?;
        Ok(Ok(()))
    }

    /// Delete a record; its tombstone keeps relearn from bringing it back.
    /// Callers check who may (an operator, or the record's owner). Audited.
    pub async fn forget(&self, org: &str, id: i64, actor: &str, now: i64) -> Result<()> {
        let rec = self.db.records().get(org, id).await?;
        // The text goes; its tombstone keeps it from being relearned.
        self.db.records().forget_record(org, id).await?;
        self.db
            .audit()
            .append(
                org,
                actor,
                "memory.forget",
                &format!("record:{id}"),
                &memory::admin_text!("{}", Identifier::new(&rec.source)),
                now,
            )
            .await?;
        Ok(())
    }
}
