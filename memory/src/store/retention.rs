use super::{Db, Result};

impl Db {
    /// Claim one run of a scheduled job; true for exactly one caller per (job, slot),
    /// however many replicas ask.
    pub async fn claim_job(&self, job: &str, slot: i64, now: i64) -> Result<bool> {
        let text = "INSERT INTO job_runs (job, slot, claimed_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING";
        Ok(sql!(text, job, slot, now).exec(&self.pool).await? == 1)
    }

    /// Every organisation that has users or memory.
    pub async fn orgs(&self) -> Result<Vec<String>> {
        let text = "SELECT org FROM users UNION SELECT org FROM memory_records ORDER BY 1";
        let rows: Vec<(String,)> = sql!(text).all(&self.pool).await?;
        Ok(rows.into_iter().map(|(o,)| o).collect())
    }

    /// Soft-forget a person's individual-tier records (status `deleted`, rows kept
    /// as tombstones). Returns how many.
    pub async fn soft_forget_individual(&self, org: &str, owner: &str) -> Result<u64> {
        let text = "SELECT id FROM memory_records WHERE org = $1 AND owner = $2 AND scope = 'personal' AND status <> 'deleted'";
        let ids: Vec<(i64,)> = sql!(text, org, owner).all(&self.pool).await?;
        for (id,) in &ids {
            self.set_status(org, *id, crate::Status::Deleted).await?;
        }
        Ok(ids.len() as u64)
    }

    /// Delete a person's person-tier records outright. Returns how many.
    pub async fn delete_person_tier(&self, org: &str, owner: &str) -> Result<u64> {
        let mut tx = self.pool.begin().await?;
        let terms = "DELETE FROM memory_terms WHERE org = $1 AND record_id IN (SELECT id FROM memory_records WHERE org = $1 AND owner = $2 AND scope = 'person')";
        sql!(terms, org, owner).exec(&mut *tx).await?;
        let records =
            "DELETE FROM memory_records WHERE org = $1 AND owner = $2 AND scope = 'person'";
        let n = sql!(records, org, owner).exec(&mut *tx).await?;
        tx.commit().await?;
        Ok(n)
    }

    /// Messages a person sent, oldest first (their data export).
    pub async fn messages_by_sender(
        &self,
        org: &str,
        sender: &str,
    ) -> Result<Vec<crate::StoredMessage>> {
        self.messages_where(org, "sender = $2", sender.to_string())
            .await
    }
}
