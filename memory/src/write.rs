//! The one write entry point: every record a turn, the lifecycle, a tool or a
//! directive keeps goes through [`Db::write`] (insert, activate under the
//! subject rule, then belief revision), and every later activation of a kept
//! record (a "yes", a review) through [`Db::activate_kept`].
//!
//! Where a record goes and with what status is `policy`'s decision, made
//! before this is called; this module only carries it out in one order.

use crate::model::{Cause, NewRecord, Status};
use crate::policy;
use crate::store::{Db, Result, Supersession};

/// A record that just became active, as belief revision is told of it.
#[derive(Debug, Clone, Copy)]
pub struct Activated<'a> {
    pub org: &'a str,
    pub id: i64,
    /// The subject rule's outcome.
    pub activation: &'a Supersession,
    pub cause: Cause,
    pub run_id: &'a str,
    pub now: i64,
}

/// What runs after a record became active: belief revision. The judge lives
/// outside this crate (it is a model), so the caller hands it in.
#[async_trait::async_trait]
pub trait Revise: Send + Sync {
    /// Best effort: returns the ids it retired.
    async fn revise(&self, record: &Activated<'_>) -> Vec<i64>;
}

/// No belief revision (operator tools, tests).
pub struct NoRevision;

#[async_trait::async_trait]
impl Revise for NoRevision {
    async fn revise(&self, _: &Activated<'_>) -> Vec<i64> {
        Vec::new()
    }
}

/// What to do when the same item is already stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dedupe<'a> {
    /// Always insert.
    Never,
    /// Saying a live note again re-affirms the active record (its vetoes still
    /// hold) instead of writing a duplicate.
    ReuseActive,
    /// Write nothing when the same item exists in one of these statuses
    /// (known, forgotten as a tombstone, declined, ...).
    SkipIfAny(&'a [Status]),
}

/// Whether an active record runs the subject rule (and belief revision).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Activation<'a> {
    /// Inserted as it is (a proposal, a quarantined item, a slice summary).
    None,
    Run {
        cause: Cause,
        run_id: &'a str,
    },
}

/// What [`Db::write`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Written {
    /// The same item was already there (see [`Dedupe`]).
    Skipped,
    Stored {
        id: i64,
        /// The subject rule's outcome, when the record was activated.
        activation: Option<Supersession>,
    },
}

impl Written {
    pub fn id(&self) -> Option<i64> {
        match self {
            Written::Skipped => None,
            Written::Stored { id, .. } => Some(*id),
        }
    }
}

impl Db {
    /// Keep `rec`: dedupe, insert, and — when it is active and `activation`
    /// says so — activate it at `rec.recorded_at` and revise beliefs.
    pub async fn write(
        &self,
        rec: &NewRecord,
        dedupe: Dedupe<'_>,
        activation: Activation<'_>,
        revise: &dyn Revise,
    ) -> Result<Written> {
        let id = match dedupe {
            Dedupe::Never => None,
            Dedupe::ReuseActive if rec.status == Status::Active => {
                self.find_same(rec, &[Status::Active]).await?
            }
            Dedupe::ReuseActive => None,
            Dedupe::SkipIfAny(statuses) => {
                if self.has_same(rec, statuses).await? {
                    return Ok(Written::Skipped);
                }
                None
            }
        };
        let (cause, run_id) = match activation {
            Activation::Run { cause, run_id } if rec.status == Status::Active => (cause, run_id),
            _ => {
                let id = match id {
                    Some(existing) => existing,
                    None => self.insert_record(rec).await?,
                };
                return Ok(Written::Stored {
                    id,
                    activation: None,
                });
            }
        };
        let now = rec.recorded_at;
        let (id, s) = match id {
            Some(existing) => {
                let s = self
                    .activate(&rec.org, existing, cause.as_str(), run_id, now)
                    .await?;
                (existing, s)
            }
            // One transaction, so one commit, for a new active record.
            None => {
                self.insert_activated(rec, cause.as_str(), run_id, now)
                    .await?
            }
        };
        let record = Activated {
            org: &rec.org,
            id,
            activation: &s,
            cause,
            run_id,
            now,
        };
        revise_beliefs(&record, revise).await;
        Ok(Written::Stored {
            id,
            activation: Some(s),
        })
    }

    /// Activate a kept record (a consented proposal, a confirmed review item)
    /// under the subject rule, then revise beliefs when `cause` calls for it.
    pub async fn activate_kept(
        &self,
        org: &str,
        id: i64,
        cause: Cause,
        run_id: &str,
        now: i64,
        revise: &dyn Revise,
    ) -> Result<Supersession> {
        let s = self.activate(org, id, cause.as_str(), run_id, now).await?;
        let record = Activated {
            org,
            id,
            activation: &s,
            cause,
            run_id,
            now,
        };
        revise_beliefs(&record, revise).await;
        Ok(s)
    }
}

/// Belief revision after an activation, when its cause calls for it.
async fn revise_beliefs(record: &Activated<'_>, revise: &dyn Revise) {
    if policy::revises_beliefs(record.cause) {
        revise.revise(record).await;
    }
}
