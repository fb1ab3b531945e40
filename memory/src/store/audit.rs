use super::{col, Db, Result};
use crate::model::AuditEntry;

fn entry(r: &sqlx::any::AnyRow) -> Result<AuditEntry> {
    Ok(AuditEntry {
        id: col(r, "id")?,
        org: col(r, "org")?,
        actor: col(r, "actor")?,
        action: col(r, "action")?,
        target: col(r, "target")?,
        detail: col(r, "detail")?,
        at: col(r, "at")?,
    })
}

impl Db {
    /// Append one entry to the audit log.
    pub async fn audit(
        &self,
        org: &str,
        actor: &str,
        action: &str,
        target: &str,
        detail: &str,
        at: i64,
    ) -> Result<()> {
        sqlx::query("INSERT INTO audit_log (org, actor, action, target, detail, at) VALUES ($1, $2, $3, $4, $5, $6)")
            .bind(org)
            .bind(actor)
            .bind(action)
            .bind(target)
            .bind(detail)
            .bind(at)
            .execute(self.pool())
            .await?;
        Ok(())
    }

    /// Audit entries of one action about one target, oldest first.
    pub async fn audit_about(
        &self,
        org: &str,
        action: &str,
        target: &str,
    ) -> Result<Vec<AuditEntry>> {
        let rows = sqlx::query(
            "SELECT id, org, actor, action, target, detail, at FROM audit_log WHERE org = $1 AND action = $2 AND target = $3 ORDER BY id",
        )
        .bind(org)
        .bind(action)
        .bind(target)
        .fetch_all(self.pool())
        .await?;
        rows.iter().map(entry).collect()
    }

    /// The newest `limit` audit entries of an organisation, newest first.
    pub async fn audit_log(&self, org: &str, limit: i64) -> Result<Vec<AuditEntry>> {
        let rows = sqlx::query("SELECT id, org, actor, action, target, detail, at FROM audit_log WHERE org = $1 ORDER BY id DESC LIMIT $2")
            .bind(org)
            .bind(limit)
            .fetch_all(self.pool())
            .await?;
        rows.iter().map(entry).collect()
    }
}
