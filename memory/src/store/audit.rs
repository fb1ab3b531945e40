use super::{Db, Result};
use crate::model::AuditEntry;
use sqlx::{Any, Executor};

const SELECT: &str = "SELECT id, org, actor, action, target, detail, at FROM audit_log";

/// Append one entry to the audit log, on a pool or inside a transaction.
pub(super) async fn insert_audit<'c, E>(
    exec: E,
    org: &str,
    actor: &str,
    action: &str,
    target: &str,
    detail: &str,
    at: i64,
) -> Result<()>
where
    E: Executor<'c, Database = Any>,
{
    let text = "INSERT INTO audit_log (org, actor, action, target, detail, at) VALUES ($1, $2, $3, $4, $5, $6)";
    let q = sql!(text, org, actor, action, target, detail, at);
    q.exec(exec).await.map(|_| ())
}

/// The audit log: append-only entries of who did what to which target.
#[derive(Clone, Copy)]
pub struct AuditTrail<'a> {
    pub(super) db: &'a Db,
}

impl AuditTrail<'_> {
    /// Append one entry to the audit log.
    pub async fn append(
        &self,
        org: &str,
        actor: &str,
        action: &str,
        target: &str,
        detail: &str,
        at: i64,
    ) -> Result<()> {
        insert_audit(&self.db.pool, org, actor, action, target, detail, at).await
    }

    /// Audit entries of one action about one target, oldest first.
    pub async fn about(&self, org: &str, action: &str, target: &str) -> Result<Vec<AuditEntry>> {
        let text = format!("{SELECT} WHERE org = $1 AND action = $2 AND target = $3 ORDER BY id");
        sql!(text, org, action, target).all(&self.db.pool).await
    }

    /// The newest `limit` audit entries of an organisation, newest first.
    pub async fn log(&self, org: &str, limit: i64) -> Result<Vec<AuditEntry>> {
        self.log_before(org, None, limit).await
    }

    /// The newest `limit` audit entries with an id below `before` (all when
    /// `None`), newest first: one page of the log.
    pub async fn log_before(
        &self,
        org: &str,
        before: Option<i64>,
        limit: i64,
    ) -> Result<Vec<AuditEntry>> {
        let text = format!("{SELECT} WHERE org = $1 AND id < $2 ORDER BY id DESC LIMIT $3");
        sql!(text, org, before.unwrap_or(i64::MAX), limit)
            .all(&self.db.pool)
            .await
    }
}
