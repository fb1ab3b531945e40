//! Org-wide policy memory for admins: list, add (admin-authored, never
//! learned; the record cap applies), retire.

use super::auth::Admin;
use super::memory::{records_page, Record};
use super::revisions::NewestQuery;
use super::wire::{Body, Page, Path, Query, Reply};
use crate::error::{ApiError, ErrorBody};
use axum::http::StatusCode;
use axum::Json;
use memory::store::RecordFilter;
use memory::{Scope, Status};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// Active org policy, newest first.
#[utoipa::path(get, operation_id = "policy_list", path = "/api/v1/policy", tag = "policy", params(NewestQuery),
    responses((status = 200, body = Page<Record>)))]
pub async fn list(admin: Admin, Query(q): Query<NewestQuery>) -> Reply<Page<Record>> {
    let filter = RecordFilter {
        scopes: vec![Scope::OrgPolicy],
        status: Some(Status::Active),
        ..Default::default()
    };
    let page = records_page(&admin, filter, &q).await?;
    Ok(Json(page))
}

/// A policy to add.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewPolicy {
    /// At most 500 characters (white space collapsed), not only white space.
    #[schema(pattern = "\\S", max_length = 500)]
    pub text: String,
}

/// The policy record written.
#[derive(Debug, Serialize, ToSchema)]
pub struct PolicyAdded {
    pub id: i64,
}

/// Add org policy. Audited (`policy.add`). 422 when memory refuses the
/// text: it looks like a credential, carries an instruction for the model, or
/// is over the cap.
#[utoipa::path(post, operation_id = "policy_add", path = "/api/v1/policy", tag = "policy", request_body = NewPolicy,
    responses((status = 201, body = PolicyAdded), (status = 422, body = ErrorBody)))]
pub async fn add(
    admin: Admin,
    Body(body): Body<NewPolicy>,
) -> Result<(StatusCode, Json<PolicyAdded>), ApiError> {
    if body.text.trim().is_empty() {
        return Err(ApiError::bad_request("text must not be empty"));
    }
    let id = admin
        .learning
        .write_policy(admin.org(), &body.text, admin.id(), admin.now)
        .await?;
    Ok((StatusCode::CREATED, Json(PolicyAdded { id })))
}

/// What retiring did.
#[derive(Debug, Serialize, ToSchema)]
pub struct PolicyRetired {
    pub retired: i64,
}

/// Retire org policy `id`: it is forgotten. 404 when `id` is not active org policy.
#[utoipa::path(delete, operation_id = "policy_retire", path = "/api/v1/policy/{id}", tag = "policy",
    params(("id" = i64, Path, description = "Record id of the policy")),
    responses((status = 200, body = PolicyRetired)))]
pub async fn retire(admin: Admin, Path(id): Path<i64>) -> Reply<PolicyRetired> {
    match admin
        .lifecycle
        .retire_policy(admin.org(), id, admin.id(), admin.now)
        .await?
    {
        Ok(()) => Ok(Json(PolicyRetired { retired: id })),
        Err(refused) => Err(ApiError::not_found(refused)),
    }
}
