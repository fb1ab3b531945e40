//! The one write entry point: every record a turn, the lifecycle, a tool or a
//! directive keeps goes through [`Db::write`] (insert, activate under the
//! subject rule, then belief revision), and every later activation of a kept
//! record (a "yes", a review) through [`Db::activate_kept`].
//!
//! Where a record goes and with what status is `policy`'s decision, made
//! before this is called; this module only carries it out in one order.
//!
//! What no record may hold is checked here, whoever writes: [`screen`]
//! refuses a credential, an instruction aimed at the model and a text over
//! the cap with a typed [`WriteRefusal`] (`StoreError::Write`), and keeps the
//! sanitised text. Every surface maps that refusal to its own answer.

use crate::model::{Cause, NewRecord, Status};
use crate::policy;
pub use crate::screen::{screen, screen_text, WriteRefusal};
use crate::store::{Records, Result, StoreError, SubjectRuleRun, Supersession};

/// `r` with the write path's refusal split out: `Ok(Err(refusal))` for a
/// refused record, so a surface answers it and fails on anything else.
pub fn split_refusal<T>(r: Result<T>) -> Result<std::result::Result<T, WriteRefusal>> {
    match r {
        Ok(v) => Ok(Ok(v)),
        Err(StoreError::Write { refusal, .. }) => Ok(Err(refusal)),
        Err(e) => Err(e),
    }
}

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

impl Records<'_> {
    /// Keep `rec`: dedupe, insert, and — when it is active and `activation`
    /// says so — activate it at `rec.recorded_at` and revise beliefs.
    pub async fn write(
        &self,
        rec: &NewRecord,
        dedupe: Dedupe<'_>,
        activation: Activation<'_>,
        revise: &dyn Revise,
    ) -> Result<Written> {
        let rec = &screen(rec).map_err(|r| r.at(0))?;
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
                    None => self.insert_new(rec).await?,
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
                    .activate_kept(&rec.org, existing, cause, run_id, now, revise)
                    .await?;
                return Ok(Written::Stored {
                    id: existing,
                    activation: Some(s),
                });
            }
            // One transaction, so one commit, for a new active record.
            None => {
                self.insert_new_active(rec, cause.as_str(), run_id, now)
                    .await?
            }
        };
        let mut s = s;
        let judged = revise_beliefs(&rec.org, id, &s, cause, run_id, now, revise).await;
        s.retired.extend(judged);
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
        let run = SubjectRuleRun {
            org,
            id,
            cause: cause.as_str(),
            run_id,
            now,
        };
        let mut s = self.activate_under_subject_rule(&run).await?;
        let judged = revise_beliefs(org, id, &s, cause, run_id, now, revise).await;
        s.retired.extend(judged);
        Ok(s)
    }
}

impl Records<'_> {
    /// Keep `rec` active in a run named after it, `{prefix}:{id}` (so known
    /// only once inserted): an administrator's `@policy:` or a granted
    /// `memory_write`. Returns its id.
    pub async fn write_in_own_run(
        &self,
        rec: &NewRecord,
        prefix: &str,
        revise: &dyn Revise,
    ) -> Result<i64> {
        let rec = &screen(rec).map_err(|r| r.at(0))?;
        let id = self.insert_new(rec).await?;
        let run_id = format!("{prefix}:{id}");
        self.activate_kept(&rec.org, id, Cause::Live, &run_id, rec.recorded_at, revise)
            .await?;
        Ok(id)
    }

    /// A proposal or a learned record turned down: a "no", a consent the
    /// speaker's role no longer allows, a review's rejection. Kept as
    /// rejected, so the same text is not proposed again.
    pub async fn reject(&self, org: &str, id: i64) -> Result<()> {
        self.change_status(org, id, Status::Rejected).await
    }

    /// A proposal whose question lapsed (the person said something else
    /// before answering): deleted, never activated.
    pub async fn lapse(&self, org: &str, id: i64) -> Result<()> {
        self.change_status(org, id, Status::Deleted).await
    }
}

/// Raw writes for tests and benchmarks that must build a state the write
/// path would not (a record active without the subject rule, a status set
/// directly). Compiled only with the `fixtures` feature, which only the
/// tests crate, the benchmarks and dev-dependencies enable: the gateway
/// cannot reach them.
#[cfg(feature = "fixtures")]
#[async_trait::async_trait]
pub trait RawWrites {
    async fn insert_record(&self, r: &NewRecord) -> Result<i64>;
    async fn insert_records(&self, records: &[NewRecord]) -> Result<Vec<i64>>;
    async fn set_status(&self, org: &str, id: i64, status: Status) -> Result<()>;
}

#[cfg(feature = "fixtures")]
#[async_trait::async_trait]
impl RawWrites for Records<'_> {
    async fn insert_record(&self, r: &NewRecord) -> Result<i64> {
        Records::insert_new(self, r).await
    }
    async fn insert_records(&self, records: &[NewRecord]) -> Result<Vec<i64>> {
        Records::insert_new_many(self, records).await
    }
    async fn set_status(&self, org: &str, id: i64, status: Status) -> Result<()> {
        Records::change_status(self, org, id, status).await
    }
}

/// Belief revision after record `id` became active, when `cause` calls for
/// it: the records it retired, which the writer's receipt names.
async fn revise_beliefs(
    org: &str,
    id: i64,
    activation: &Supersession,
    cause: Cause,
    run_id: &str,
    now: i64,
    revise: &dyn Revise,
) -> Vec<i64> {
    if !policy::revises_beliefs(cause) {
        return Vec::new();
    }
    let record = Activated {
        org,
        id,
        activation,
        cause,
        run_id,
        now,
    };
    revise.revise(&record).await
}
