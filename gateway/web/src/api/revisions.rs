//! Revisions for admins: every retirement of a record, undo of one (the
//! retired record comes back; the pair is never applied again), and undo of
//! every revision of a run (a consolidation, a relearn).

use super::auth::Admin;
use super::memory::Record;
use super::wire::{self, at, page_query, Page, Path, Query, Reply};
use axum::Json;
use chrono::{DateTime, Utc};
use memory::{Revision, RevisionChange};
use serde::Serialize;
use steward_core::lifecycle::Undo;
use utoipa::ToSchema;

/// One retirement of a record by another.
#[derive(Debug, Serialize, ToSchema)]
pub struct RevisionOut {
    pub id: i64,
    pub agent: String,
    #[serde(flatten)]
    pub change: RevisionChange,
    pub created_at: DateTime<Utc>,
    pub undone_at: Option<DateTime<Utc>>,
    pub undone_by: Option<String>,
}

impl From<Revision> for RevisionOut {
    fn from(r: Revision) -> Self {
        RevisionOut {
            id: r.id,
            agent: r.agent,
            change: r.change,
            created_at: at(r.created_at),
            undone_at: r.undone_at.map(at),
            undone_by: r.undone_by,
        }
    }
}

page_query! {
    /// A page of an id-ordered list, newest first.
    pub struct NewestQuery by id {}
}

/// Revisions, newest first.
#[utoipa::path(get, operation_id = "revisions_list", path = "/api/v1/revisions", tag = "revisions", params(NewestQuery),
    responses((status = 200, body = Page<RevisionOut>)))]
pub async fn list(admin: Admin, Query(q): Query<NewestQuery>) -> Reply<Page<RevisionOut>> {
    let db = &admin.db;
    let org = admin.org();
    let read = |before, n| async move { db.records().revisions_before(org, before, n).await };
    let page = wire::newest_by_id(&q, read, |r| r.id, RevisionOut::from);
    Ok(Json(page.await?))
}

/// What an undo did.
#[derive(Debug, Serialize, ToSchema)]
pub struct Undone {
    /// False when the revision had been undone already.
    pub undone: bool,
    pub message: String,
    /// The retired record, as it is now (not a person's own record: that is
    /// read with a reason, `GET /api/v1/memory/{id}?reason=`).
    pub restored: Option<Record>,
    /// The replacing record when both are now active on one subject and
    /// disagree: `DELETE /api/v1/memory/{id}` retires the wrong one.
    pub rival: Option<i64>,
}

/// Undo one revision: the retired record comes back, and the same pair is
/// never applied again. Audited.
#[utoipa::path(post, operation_id = "revisions_undo", path = "/api/v1/revisions/{id}/undo", tag = "revisions",
    params(("id" = i64, Path, description = "Revision id")),
    responses((status = 200, body = Undone)))]
pub async fn undo(admin: Admin, Path(id): Path<i64>) -> Reply<Undone> {
    let undo = admin
        .lifecycle
        .undo(admin.org(), id, admin.id(), admin.now)
        .await?;
    let message = undo
        .message(id, |r| {
            memory::admin_text!("DELETE /api/v1/memory/{} retires it", r)
        })
        .to_string();
    let rival = undo.rival().map(|r| r.id);
    Ok(Json(match undo {
        Undo::AlreadyUndone => Undone {
            undone: false,
            message,
            restored: None,
            rival,
        },
        // An undo shows back what oversight may show without a reason: a
        // person's own records are read on their page, with one.
        Undo::Undone { back, .. } => Undone {
            undone: true,
            message,
            restored: memory::policy::oversight_shows(
                back.scope,
                memory::policy::Oversight::Unreasoned,
            )
            .then(|| (*back).into()),
            rival,
        },
    }))
}

/// What undoing a run did.
#[derive(Debug, Serialize, ToSchema)]
pub struct RunUndone {
    pub run_id: String,
    /// The revisions undone now (those undone before are not listed).
    pub undone: Vec<i64>,
}

/// Undo every revision of a run (a consolidation, a relearn, a turn).
#[utoipa::path(post, operation_id = "revisions_undo_run", path = "/api/v1/runs/{run}/undo", tag = "revisions",
    params(("run" = String, Path, description = "Run id, as revisions list it")),
    responses((status = 200, body = RunUndone)))]
pub async fn undo_run(admin: Admin, Path(run): Path<String>) -> Reply<RunUndone> {
    let undone = admin
        .db
        .records()
        .undo_run(admin.org(), &run, admin.id(), admin.now)
        .await?;
    Ok(Json(RunUndone {
        run_id: run,
        undone,
    }))
}
