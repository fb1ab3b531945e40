//! The review queue for admins: quarantined (unverified) records, confirmed
//! (the subject rule runs, honouring time and vetoes) or rejected through
//! the lifecycle's review, as on the dashboard. Audited.

use super::auth::Admin;
use super::memory::{records_page, Record};
use super::revisions::NewestQuery;
use super::wire::{Page, Path, Query, Reply};
use crate::error::{ApiError, ErrorBody};
use axum::Json;
use memory::store::RecordFilter;
use memory::Status;
use serde::Serialize;
use utoipa::ToSchema;

/// Records waiting for review, newest first.
#[utoipa::path(get, operation_id = "review_list", path = "/api/v1/review", tag = "review", params(NewestQuery),
    responses((status = 200, body = Page<Record>)))]
pub async fn list(admin: Admin, Query(q): Query<NewestQuery>) -> Reply<Page<Record>> {
    let filter = RecordFilter {
        status: Some(Status::Unverified),
        ..Default::default()
    };
    let mut page = records_page(&admin, filter, &q).await?;
    // Oversight without a reason shows no one's personal records or person tier.
    page.items.retain(|r| {
        memory::policy::oversight_shows(r.scope, memory::policy::Oversight::Unreasoned)
    });
    Ok(Json(page))
}

/// What a review did.
#[derive(Debug, Serialize, ToSchema)]
pub struct Reviewed {
    pub message: String,
}

/// Confirm or reject record `id`: 404 when there is none, 409 when it is not
/// waiting for review.
async fn decide(admin: &Admin, id: i64, confirm: bool) -> Result<Reviewed, ApiError> {
    admin.db.records().get(admin.org(), id).await?;
    match admin
        .lifecycle
        .review(admin.org(), id, confirm, admin.id(), admin.now)
        .await?
    {
        Ok(message) => Ok(Reviewed { message }),
        Err(refused) => Err(ApiError::conflict(refused)),
    }
}

/// Confirm a quarantined record: it becomes active under the subject rule.
#[utoipa::path(post, operation_id = "review_confirm", path = "/api/v1/review/{id}/confirm", tag = "review",
    params(("id" = i64, Path, description = "Record id")),
    responses((status = 200, body = Reviewed), (status = 409, body = ErrorBody, description = "Not waiting for review")))]
pub async fn confirm(admin: Admin, Path(id): Path<i64>) -> Reply<Reviewed> {
    decide(&admin, id, true).await.map(Json)
}

/// Reject a quarantined record: it is kept out for good.
#[utoipa::path(post, operation_id = "review_reject", path = "/api/v1/review/{id}/reject", tag = "review",
    params(("id" = i64, Path, description = "Record id")),
    responses((status = 200, body = Reviewed), (status = 409, body = ErrorBody, description = "Not waiting for review")))]
pub async fn reject(admin: Admin, Path(id): Path<i64>) -> Reply<Reviewed> {
    decide(&admin, id, false).await.map(Json)
}
