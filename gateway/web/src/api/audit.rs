//! The audit log for admins: who did what to whom, newest first.

use super::auth::Admin;
use super::revisions::NewestQuery;
use super::wire::{self, at, Page, Query, Reply};
use axum::Json;
use chrono::{DateTime, Utc};
use memory::AuditEntry;
use serde::Serialize;
use utoipa::ToSchema;

/// One audited action.
#[derive(Debug, Serialize, ToSchema)]
pub struct AuditOut {
    pub id: i64,
    pub at: DateTime<Utc>,
    /// Who: a stored user id, `cli`, `admin` (the dashboard) or a system principal.
    pub actor: String,
    /// E.g. `pairing.approve`, `memory.forget`, `memory.view`.
    pub action: String,
    pub target: String,
    pub detail: String,
}

impl From<AuditEntry> for AuditOut {
    fn from(e: AuditEntry) -> Self {
        AuditOut {
            id: e.id,
            at: at(e.at),
            actor: e.actor,
            action: e.action,
            target: e.target,
            detail: e.detail,
        }
    }
}

/// Audit entries, newest first.
#[utoipa::path(get, operation_id = "audit_list", path = "/api/v1/audit", tag = "audit", params(NewestQuery),
    responses((status = 200, body = Page<AuditOut>)))]
pub async fn list(admin: Admin, Query(q): Query<NewestQuery>) -> Reply<Page<AuditOut>> {
    let db = &admin.db;
    let org = admin.org();
    let read = |before, n| async move { db.audit().log_before(org, before, n).await };
    let page = wire::newest_by_id(&q, read, |e| e.id, AuditOut::from);
    Ok(Json(page.await?))
}
