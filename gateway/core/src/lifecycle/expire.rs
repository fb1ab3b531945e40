//! The `memory_expire` job: unanswered proposals expire; a revoked person's
//! memory is retired on a schedule. Agent notes are never edited here.

use super::Lifecycle;
use crate::error::Result;
use crate::jobs::{self, Job, Schedule};
use pairing::UserStatus;
use std::time::Duration;

/// Days after a pairing is revoked before that person's individual records are soft-forgotten.
pub const RETENTION_DAYS: i64 = 90;
/// One `memory_expire` slot an hour.
pub const EXPIRE_SLOT_MS: i64 = 3_600_000;

/// What one `memory_expire` run did in one organisation.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct ExpireReport {
    pub proposals_expired: u64,
    pub individual_soft_forgotten: u64,
    pub person_deleted: u64,
    /// Redelivery ids older than [`SEEN_RETENTION_MS`], forgotten.
    pub seen_pruned: u64,
}

/// How long a platform message id is remembered against redelivery: a week.
pub const SEEN_RETENTION_MS: i64 = 7 * 86_400_000;

impl Lifecycle {
    /// `memory_expire` for one organisation: unanswered proposals expire; a
    /// revoked person's person-tier records are deleted, and their individual
    /// records soft-forgotten 90 days after the revocation. Audited.
    pub async fn expire(&self, org: &str, now: i64) -> Result<ExpireReport> {
        let mut report = ExpireReport {
            proposals_expired: self.db.records().expire_proposals(org, now).await?,
            seen_pruned: self
                .db
                .conversations()
                .prune_seen(org, now - SEEN_RETENTION_MS)
                .await?,
            ..Default::default()
        };
        for user in self.pairing.users(org).await? {
            if user.status != UserStatus::Revoked {
                continue;
            }
            report.person_deleted += self
                .db
                .records()
                .delete_person_tier(org, &user.user_id)
                .await?;
            if user.updated_at + RETENTION_DAYS * 86_400_000 <= now {
                report.individual_soft_forgotten += self
                    .db
                    .records()
                    .soft_forget_individual(org, &user.user_id)
                    .await?;
            }
        }
        jobs::audit_run::<Self>(&self.db, org, org, &report, now).await?;
        // Statistics follow the store's growth, so plans stay index lookups.
        if let Err(e) = self.db.optimize().await {
            tracing::warn!(error = %e, "planner statistics not refreshed");
        }
        Ok(report)
    }
}

/// `memory_expire` as a job of the runner: looked at every five minutes, run once an hour.
#[async_trait::async_trait]
impl Job for Lifecycle {
    type Report = ExpireReport;
    const NAME: &'static str = "memory_expire";
    const AUDIT_ACTION: &'static str = "memory.expire";
    const SLOT_MS: i64 = EXPIRE_SLOT_MS;
    const SCHEDULE: Schedule = Schedule::Every(Duration::from_secs(300));
    async fn run_org(&self, org: &str, now: i64) -> Result<ExpireReport> {
        self.expire(org, now).await
    }
}
