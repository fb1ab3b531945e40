//! Retirements a model proposes — the belief-revision judge, consolidation —
//! applied under rules written here: a record only retires records in its own
//! place (agent, scope, owner), an older record never retires a newer one, and
//! an undone pair (a veto) is never applied again. Each check and its write
//! happen in one transaction.

use super::fulltext::{self, vis_key};
use super::records::{fetch, hit_records, insert_on};
use super::revisions::{insert_revision, vetoed, NewRevision, RevisionMeta};
use super::{Records, Result, StoreError};
use crate::fulltext::query_tokens;
use crate::model::{MemoryRecord, NewRecord, Status};
use sqlx::AnyConnection;

/// Why a proposed retirement was not applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RetireRefusal {
    /// A record cannot retire itself.
    SameRecord,
    /// One of the two records does not exist in the organisation.
    Missing,
    /// One of the two records is not active (already retired, pending, unverified, deleted).
    NotActive,
    /// Different agent, scope or owner: a record only retires records in its own place.
    OtherPlace,
    /// The record to retire was said after the replacing one: time is when it was said.
    Newer,
    /// An undone revision forbids this pair.
    Vetoed,
}

impl RetireRefusal {
    pub fn as_str(self) -> &'static str {
        match self {
            RetireRefusal::SameRecord => "same record",
            RetireRefusal::Missing => "missing record",
            RetireRefusal::NotActive => "not active",
            RetireRefusal::OtherPlace => "different agent, scope or owner",
            RetireRefusal::Newer => "the retired record is newer",
            RetireRefusal::Vetoed => "vetoed by an undo",
        }
    }
}

/// What [`Db::retire`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Retirement {
    /// Retired, with this revision row.
    Retired {
        revision: i64,
    },
    Refused(RetireRefusal),
}

/// The record a merge keeps.
#[derive(Debug, Clone)]
pub enum MergeInto {
    /// A new record with the merged text (inserted active).
    New(Box<NewRecord>),
    /// An existing member already says the merged text.
    Existing(i64),
}

/// What [`Db::merge`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MergeOutcome {
    /// The surviving record; `None` when nothing was merged (and no record was written).
    pub into: Option<i64>,
    pub retired: Vec<i64>,
    pub refused: Vec<(i64, RetireRefusal)>,
}

/// Take SQLite's write lock before the first read of a transaction (a no-op write).
async fn lock(conn: &mut AnyConnection, org: &str, id: i64) -> Result<()> {
    let text = "UPDATE memory_records SET status = status WHERE org = $1 AND id = $2";
    sql!(text, org, id).exec(conn).await.map(|_| ())
}

/// One retirement to try: `retired` in favour of `replacing`, in `org`, with
/// `meta`'s provenance, at `now`.
struct Replacement<'a> {
    org: &'a str,
    retired: i64,
    replacing: i64,
    meta: &'a RevisionMeta<'a>,
    now: i64,
}

async fn retire_on(conn: &mut AnyConnection, r: &Replacement<'_>) -> Result<Retirement> {
    let (org, retired, replacing) = (r.org, r.retired, r.replacing);
    use Retirement::Refused;
    if retired == replacing {
        return Ok(Refused(RetireRefusal::SameRecord));
    }
    let (Some(old), Some(new)) = (
        fetch(conn, org, retired).await?,
        fetch(conn, org, replacing).await?,
    ) else {
        return Ok(Refused(RetireRefusal::Missing));
    };
    if old.status != Status::Active || new.status != Status::Active {
        return Ok(Refused(RetireRefusal::NotActive));
    }
    if old.agent != new.agent || old.scope != new.scope || old.owner != new.owner {
        return Ok(Refused(RetireRefusal::OtherPlace));
    }
    if old.said_at > new.said_at {
        return Ok(Refused(RetireRefusal::Newer));
    }
    if vetoed(&mut *conn, org, retired, replacing).await? {
        return Ok(Refused(RetireRefusal::Vetoed));
    }
    // Conditional, so two replicas racing on PostgreSQL retire it once.
    let text = "UPDATE memory_records SET status = $1 WHERE org = $2 AND id = $3 AND status = $4";
    let retire = sql!(text, Status::Superseded, org, retired, Status::Active);
    if retire.exec(&mut *conn).await? == 0 {
        return Ok(Refused(RetireRefusal::NotActive));
    }
    fulltext::unindex(conn, retired).await?;
    super::vectors::drop_vector(conn, retired).await?;
    let revision = NewRevision {
        org,
        agent: &new.agent,
        retired_id: retired,
        replacing_id: replacing,
        meta: *r.meta,
        created_at: r.now,
    };
    let revision = insert_revision(&mut *conn, &revision).await?;
    Ok(Retirement::Retired { revision })
}

impl Records<'_> {
    /// Retire `retired` in favour of `replacing` (status `superseded`, a
    /// revision row with `meta`), unless a rule refuses it: the same place,
    /// time (an older record never retires a newer one), vetoes, both active.
    pub async fn retire(
        &self,
        org: &str,
        retired: i64,
        replacing: i64,
        meta: &RevisionMeta<'_>,
        now: i64,
    ) -> Result<Retirement> {
        let mut tx = super::begin(&self.db.pool).await?;
        lock(&mut tx, org, retired).await?;
        let replacement = Replacement {
            org,
            retired,
            replacing,
            meta,
            now,
        };
        let out = retire_on(&mut tx, &replacement).await?;
        tx.commit().await?;
        Ok(out)
    }

    /// Merge `sources` into one record in one transaction: each source is
    /// retired by the survivor under the rules of [`Db::retire`]. A group in
    /// which any pair was undone before (a veto) is left alone, and when
    /// nothing is retired no new record is written.
    pub async fn merge(
        &self,
        org: &str,
        into: &MergeInto,
        sources: &[i64],
        meta: &RevisionMeta<'_>,
        now: i64,
    ) -> Result<MergeOutcome> {
        let mut tx = super::begin(&self.db.pool).await?;
        let survivor = match into {
            MergeInto::New(rec) => {
                if rec.org != org || rec.status != Status::Active {
                    return Err(StoreError::Refused(
                        "a merged record is active and in the run's organisation",
                    ));
                }
                // A merged text is written like any other: screened first.
                let rec = crate::screen::screen(rec).map_err(|r| r.at(0))?;
                insert_on(&mut tx, &rec).await?
            }
            MergeInto::Existing(id) => {
                lock(&mut tx, org, *id).await?;
                *id
            }
        };
        let mut members: Vec<i64> = sources.iter().copied().filter(|s| *s != survivor).collect();
        members.sort_unstable();
        members.dedup();
        let mut all = members.clone();
        all.push(survivor);
        let text = "SELECT COUNT(*) FROM memory_revisions WHERE org = $1 AND undone_at IS NOT NULL AND retired_id IN (";
        let (vetoes,): (i64,) = sql!(text, org)
            .bind_list(all.iter().copied())
            .push(") AND replacing_id IN (")
            .bind_list(all.iter().copied())
            .push(")")
            .one(&mut *tx)
            .await?;
        let mut out = MergeOutcome::default();
        if vetoes > 0 {
            tx.rollback().await?;
            out.refused = members
                .iter()
                .map(|m| (*m, RetireRefusal::Vetoed))
                .collect();
            return Ok(out);
        }
        for m in members {
            let replacement = Replacement {
                org,
                retired: m,
                replacing: survivor,
                meta,
                now,
            };
            match retire_on(&mut tx, &replacement).await? {
                Retirement::Retired { .. } => out.retired.push(m),
                Retirement::Refused(r) => out.refused.push((m, r)),
            }
        }
        if out.retired.is_empty() {
            tx.rollback().await?;
            return Ok(out);
        }
        tx.commit().await?;
        out.into = Some(survivor);
        Ok(out)
    }

    /// Active records in `rec`'s place (org, agent, scope, owner) that share
    /// words with it, best match first, without `rec`, with their scores.
    /// The same ranked full-text search as retrieval.
    pub async fn related_active(
        &self,
        rec: &MemoryRecord,
        limit: usize,
    ) -> Result<Vec<(MemoryRecord, f64)>> {
        let vis = vis_key(rec.scope, &rec.agent, rec.owner.as_deref());
        let tokens = query_tokens(&format!("{} {}", rec.content, rec.subject));
        let search = fulltext::Search {
            org: &rec.org,
            keys: &[vis],
            tokens: &tokens,
            except: Some(rec.id),
            limit,
        };
        let found = fulltext::search(self.db, &search).await?;
        let ranked: Vec<(i64, f64)> = found.iter().map(|h| (h.id, h.score)).collect();
        // The visibility key names the place; each row is checked again, failing closed.
        hit_records(&self.db.pool, &ranked, limit, |r| {
            r.org == rec.org
                && r.agent == rec.agent
                && r.scope == rec.scope
                && r.owner == rec.owner
                && r.status == Status::Active
        })
        .await
    }
}
