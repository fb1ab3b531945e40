//! What consolidation has already shown a model: a record seen without a
//! repeat is not shown again until a new record joins its batch.

use super::RECORD as SELECT;
use super::{Records, Result};
use crate::model::{MemoryRecord, Scope, Status};
use crate::policy::consolidates;
use strum::VariantArray;

impl Records<'_> {
    /// Active agent notes and personal records that no consolidation run has
    /// seen yet, oldest first. Org policy is admin-authored and never merged.
    pub async fn unseen_active(&self, org: &str, limit: i64) -> Result<Vec<MemoryRecord>> {
        let text = format!("{SELECT} WHERE org = $1 AND status = $2 AND scope IN (");
        let merged = Scope::VARIANTS.iter().copied().filter(|s| consolidates(*s));
        sql!(text, org, Status::Active)
            .bind_list(merged)
            .push(") AND NOT EXISTS (SELECT 1 FROM consolidation_seen s WHERE s.org = memory_records.org AND s.record_id = memory_records.id) \
                   ORDER BY id LIMIT ")
            .bind(limit)
            .all(&self.db.pool)
            .await
    }

    /// Remember that a consolidation run showed these records (or found them alone).
    pub async fn mark_consolidation_seen(
        &self,
        org: &str,
        ids: &[i64],
        run_id: &str,
        now: i64,
    ) -> Result<()> {
        let mut tx = super::begin(&self.db.pool).await?;
        let text = "INSERT INTO consolidation_seen (org, record_id, seen_at, run_id) VALUES ($1, $2, $3, $4) \
                    ON CONFLICT (org, record_id) DO UPDATE SET seen_at = excluded.seen_at, run_id = excluded.run_id";
        for id in ids {
            sql!(text, org, id, now, run_id).exec(&mut *tx).await?;
        }
        tx.commit().await?;
        Ok(())
    }

    /// Whether a consolidation run has seen record `id`.
    pub async fn consolidation_seen(&self, org: &str, id: i64) -> Result<bool> {
        let text = "SELECT COUNT(*) FROM consolidation_seen WHERE org = $1 AND record_id = $2";
        let (n,): (i64,) = sql!(text, org, id).one(&self.db.pool).await?;
        Ok(n > 0)
    }
}
