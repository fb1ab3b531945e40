//! Scheduled jobs' claims: one run per (job, slot) across replicas.

use super::{Db, Result};

/// The job runner's claims and what a run iterates over.
#[derive(Clone, Copy)]
pub struct Jobs<'a> {
    pub(super) db: &'a Db,
}

impl Jobs<'_> {
    /// Claim one run of a scheduled job; true for exactly one caller per (job, slot),
    /// however many replicas ask.
    pub async fn claim(&self, job: &str, slot: i64, now: i64) -> Result<bool> {
        let text = "INSERT INTO job_runs (job, slot, claimed_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING";
        Ok(sql!(text, job, slot, now).exec(&self.db.pool).await? == 1)
    }

    /// The latest slot of `job` claimed so far, by any replica.
    pub async fn last_slot(&self, job: &str) -> Result<Option<i64>> {
        let text = "SELECT MAX(slot) FROM job_runs WHERE job = $1";
        let (slot,): (Option<i64>,) = sql!(text, job).one(&self.db.pool).await?;
        Ok(slot)
    }

    /// Every organisation that has users or memory.
    pub async fn orgs(&self) -> Result<Vec<String>> {
        let text = "SELECT org FROM users UNION SELECT org FROM memory_records ORDER BY 1";
        let rows: Vec<(String,)> = sql!(text).all(&self.db.pool).await?;
        Ok(rows.into_iter().map(|(o,)| o).collect())
    }
}
