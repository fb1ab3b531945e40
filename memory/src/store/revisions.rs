use super::{Records, Result};
use crate::admin_text::AdminText;
use crate::model::Revision;
use sqlx::{Any, Executor};

/// Provenance of a retirement: which rule, why, under which run, by which model and prompt.
#[derive(Debug, Clone, Copy)]
pub struct RevisionMeta<'a> {
    /// `belief_revision` | `consolidation`
    pub via: &'a str,
    /// `live` | `confirm` | `consolidate` …
    pub cause: &'a str,
    pub run_id: &'a str,
    /// Every administrator reads revisions: the reason holds no person's words.
    pub reason: &'a AdminText,
    pub model: Option<&'a str>,
    pub prompt_version: Option<&'a str>,
}

/// A retirement about to be recorded.
#[derive(Debug, Clone)]
pub struct NewRevision<'a> {
    pub org: &'a str,
    pub agent: &'a str,
    pub retired_id: i64,
    pub replacing_id: i64,
    pub meta: RevisionMeta<'a>,
    pub created_at: i64,
}

const SELECT: &str = "SELECT id, org, agent, retired_id, replacing_id, reason, via, cause, run_id, model, prompt_version, created_at, undone_at, undone_by FROM memory_revisions";

impl Records<'_> {
    pub async fn revisions(&self, org: &str) -> Result<Vec<Revision>> {
        let text = format!("{SELECT} WHERE org = $1 ORDER BY id");
        sql!(text, org).all(&self.db.pool).await
    }

    pub async fn revision(&self, org: &str, id: i64) -> Result<Revision> {
        self.db.by_id(SELECT, "revision", org, id).await
    }

    /// Revisions made under one run (a turn, a relearn, a consolidation).
    pub async fn revisions_of_run(&self, org: &str, run_id: &str) -> Result<Vec<Revision>> {
        let text = format!("{SELECT} WHERE org = $1 AND run_id = $2 ORDER BY id");
        sql!(text, org, run_id).all(&self.db.pool).await
    }

    /// True when an undone revision forbids `replacing` from retiring `retired` again.
    pub async fn is_vetoed(&self, org: &str, retired: i64, replacing: i64) -> Result<bool> {
        vetoed(&self.db.pool, org, retired, replacing).await
    }

    /// The newest `limit` revisions of an organisation, newest first.
    pub async fn recent_revisions(&self, org: &str, limit: i64) -> Result<Vec<Revision>> {
        self.revisions_before(org, None, limit).await
    }

    /// The newest `limit` revisions with an id below `before` (all when
    /// `None`), newest first: one page of the list.
    pub async fn revisions_before(
        &self,
        org: &str,
        before: Option<i64>,
        limit: i64,
    ) -> Result<Vec<Revision>> {
        self.db.newest_before(SELECT, org, before, limit).await
    }
}

/// True when an undone revision forbids `replacing` from retiring `retired` again.
pub(super) async fn vetoed<'c, E>(exec: E, org: &str, retired: i64, replacing: i64) -> Result<bool>
where
    E: Executor<'c, Database = Any>,
{
    let text = "SELECT COUNT(*) FROM memory_revisions WHERE org = $1 AND retired_id = $2 AND replacing_id = $3 AND undone_at IS NOT NULL";
    let (n,): (i64,) = sql!(text, org, retired, replacing).one(exec).await?;
    Ok(n > 0)
}

pub(super) async fn insert_revision<'c, E>(exec: E, r: &NewRevision<'_>) -> Result<i64>
where
    E: Executor<'c, Database = Any>,
{
    let text = "INSERT INTO memory_revisions (org, agent, retired_id, replacing_id, reason, via, cause, run_id, model, prompt_version, created_at) \
                VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING id";
    let m = &r.meta;
    let q = sql!(
        text,
        r.org,
        r.agent,
        r.retired_id,
        r.replacing_id,
        m.reason.as_str(),
        m.via
    )
    .arg(m.cause)
    .arg(m.run_id)
    .arg(m.model)
    .arg(m.prompt_version)
    .arg(r.created_at);
    let (id,) = q.one(exec).await?;
    Ok(id)
}
