use super::{col, Db, Result, StoreError};
use crate::model::Revision;
use sqlx::any::AnyRow;

/// A retirement about to be recorded.
#[derive(Debug, Clone)]
pub struct NewRevision<'a> {
    pub org: &'a str,
    pub agent: &'a str,
    pub retired_id: i64,
    pub replacing_id: i64,
    pub reason: &'a str,
    pub via: &'a str,
    pub cause: &'a str,
    pub run_id: &'a str,
    pub model: Option<&'a str>,
    pub prompt_version: Option<&'a str>,
    pub created_at: i64,
}

const COLUMNS: &str = "id, org, agent, retired_id, replacing_id, reason, via, cause, run_id, model, prompt_version, created_at, undone_at, undone_by";

fn revision(r: &AnyRow) -> Result<Revision> {
    Ok(Revision {
        id: col(r, "id")?,
        org: col(r, "org")?,
        agent: col(r, "agent")?,
        retired_id: col(r, "retired_id")?,
        replacing_id: col(r, "replacing_id")?,
        reason: col(r, "reason")?,
        via: col(r, "via")?,
        cause: col(r, "cause")?,
        run_id: col(r, "run_id")?,
        model: col(r, "model")?,
        prompt_version: col(r, "prompt_version")?,
        created_at: col(r, "created_at")?,
        undone_at: col(r, "undone_at")?,
        undone_by: col(r, "undone_by")?,
    })
}

impl Db {
    pub async fn revisions(&self, org: &str) -> Result<Vec<Revision>> {
        let rows = sqlx::query(&format!(
            "SELECT {COLUMNS} FROM memory_revisions WHERE org = $1 ORDER BY id"
        ))
        .bind(org)
        .fetch_all(self.pool())
        .await?;
        rows.iter().map(revision).collect()
    }

    pub async fn revision(&self, org: &str, id: i64) -> Result<Revision> {
        let row = sqlx::query(&format!(
            "SELECT {COLUMNS} FROM memory_revisions WHERE org = $1 AND id = $2"
        ))
        .bind(org)
        .bind(id)
        .fetch_optional(self.pool())
        .await?;
        row.as_ref()
            .map(revision)
            .transpose()?
            .ok_or_else(|| StoreError::NotFound(format!("revision {id}")))
    }

    /// Revisions made under one run (a turn, a relearn, a consolidation).
    pub async fn revisions_of_run(&self, org: &str, run_id: &str) -> Result<Vec<Revision>> {
        let rows = sqlx::query(&format!(
            "SELECT {COLUMNS} FROM memory_revisions WHERE org = $1 AND run_id = $2 ORDER BY id"
        ))
        .bind(org)
        .bind(run_id)
        .fetch_all(self.pool())
        .await?;
        rows.iter().map(revision).collect()
    }

    /// True when an undone revision forbids `replacing` from retiring `retired` again.
    pub async fn is_vetoed(&self, org: &str, retired: i64, replacing: i64) -> Result<bool> {
        let (n,): (i64,) = sqlx::query_as(
            "SELECT COUNT(*) FROM memory_revisions WHERE org = $1 AND retired_id = $2 AND replacing_id = $3 AND undone_at IS NOT NULL",
        )
        .bind(org)
        .bind(retired)
        .bind(replacing)
        .fetch_one(self.pool())
        .await?;
        Ok(n > 0)
    }
}

pub(crate) async fn insert_revision<'c, E>(exec: E, r: &NewRevision<'_>) -> Result<i64>
where
    E: sqlx::Executor<'c, Database = sqlx::Any>,
{
    let (id,): (i64,) = sqlx::query_as(
        "INSERT INTO memory_revisions (org, agent, retired_id, replacing_id, reason, via, cause, run_id, model, prompt_version, created_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING id",
    )
    .bind(r.org)
    .bind(r.agent)
    .bind(r.retired_id)
    .bind(r.replacing_id)
    .bind(r.reason)
    .bind(r.via)
    .bind(r.cause)
    .bind(r.run_id)
    .bind(r.model)
    .bind(r.prompt_version)
    .bind(r.created_at)
    .fetch_one(exec)
    .await?;
    Ok(id)
}

impl Db {
    /// The newest `limit` revisions of an organisation, newest first.
    pub async fn recent_revisions(&self, org: &str, limit: i64) -> Result<Vec<Revision>> {
        let rows = sqlx::query(&format!(
            "SELECT {COLUMNS} FROM memory_revisions WHERE org = $1 ORDER BY id DESC LIMIT $2"
        ))
        .bind(org)
        .bind(limit)
        .fetch_all(self.pool())
        .await?;
        rows.iter().map(revision).collect()
    }
}
