//! What consolidation has already shown a model: a record seen without a
//! repeat is not shown again until a new record joins its batch.

use super::records::{record, COLUMNS};
use super::{Db, Result};
use crate::model::MemoryRecord;

impl Db {
    /// Active agent notes and personal records that no consolidation run has
    /// seen yet, oldest first. Org policy is admin-authored and never merged.
    pub async fn unseen_active(&self, org: &str, limit: i64) -> Result<Vec<MemoryRecord>> {
        let cols = COLUMNS
            .split(", ")
            .map(|c| format!("r.{c}"))
            .collect::<Vec<_>>()
            .join(", ");
        let rows = sqlx::query(&format!(
            "SELECT {cols} FROM memory_records r WHERE r.org = $1 AND r.status = 'active' \
             AND r.scope IN ('agent_notes', 'personal', 'person') \
             AND NOT EXISTS (SELECT 1 FROM consolidation_seen s WHERE s.org = r.org AND s.record_id = r.id) \
             ORDER BY r.id LIMIT $2"
        ))
        .bind(org)
        .bind(limit)
        .fetch_all(self.pool())
        .await?;
        rows.iter().map(record).collect()
    }

    /// Remember that a consolidation run showed these records (or found them alone).
    pub async fn mark_consolidation_seen(
        &self,
        org: &str,
        ids: &[i64],
        run_id: &str,
        now: i64,
    ) -> Result<()> {
        let mut tx = self.pool().begin().await?;
        for id in ids {
            sqlx::query(
                "INSERT INTO consolidation_seen (org, record_id, seen_at, run_id) VALUES ($1, $2, $3, $4) \
                 ON CONFLICT (org, record_id) DO UPDATE SET seen_at = excluded.seen_at, run_id = excluded.run_id",
            )
            .bind(org)
            .bind(id)
            .bind(now)
            .bind(run_id)
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(())
    }

    /// Whether a consolidation run has seen record `id`.
    pub async fn consolidation_seen(&self, org: &str, id: i64) -> Result<bool> {
        let (n,): (i64,) = sqlx::query_as(
            "SELECT COUNT(*) FROM consolidation_seen WHERE org = $1 AND record_id = $2",
        )
        .bind(org)
        .bind(id)
        .fetch_one(self.pool())
        .await?;
        Ok(n > 0)
    }
}
