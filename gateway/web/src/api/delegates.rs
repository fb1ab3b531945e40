//! A person's delegations, with their own key: whom they let act for them
//! (grant, end) and for whom they act. A key that itself acts for someone
//! grants nothing: delegation is never passed on.

use super::auth::Caller;
use super::wire::{at, Body, Path, Reply};
use crate::error::{ApiError, ErrorBody};
use axum::http::StatusCode;
use axum::Json;
use chrono::{DateTime, Utc};
use pairing::{Act, Delegation, DelegationChange};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// One grant: `delegate` may act for `principal`.
#[derive(Debug, Serialize, ToSchema)]
pub struct Grant {
    pub principal: String,
    pub delegate: String,
    pub granted_by: String,
    pub granted_at: DateTime<Utc>,
}

impl From<Delegation> for Grant {
    fn from(d: Delegation) -> Self {
        Grant {
            principal: d.principal,
            delegate: d.delegate,
            granted_by: d.granted_by,
            granted_at: at(d.granted_at),
        }
    }
}

/// The grants naming the caller: who acts for them, and for whom they act.
#[derive(Debug, Serialize, ToSchema)]
pub struct Grants {
    pub grants: Vec<Grant>,
}

/// Whom to let act for the caller.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewGrant {
    /// Another active paired person.
    pub delegate: String,
}

/// What a delegated key is told when it tries to grant or end a delegation.
const NOT_PASSED_ON: &str =
    "this key acts on someone's behalf; delegations are managed with the person's own key";

fn own_key(caller: &Caller) -> Result<(), ApiError> {
    match caller.on_behalf_of {
        Some(_) => Err(ApiError::forbidden(NOT_PASSED_ON)),
        None => Ok(()),
    }
}

/// Who acts for the caller, and for whom the caller acts.
#[utoipa::path(get, operation_id = "me_delegates", path = "/api/v1/me/delegates", tag = "me",
    responses((status = 200, body = Grants)))]
pub async fn list(caller: Caller) -> Reply<Grants> {
    let grants = caller
        .pairing
        .delegations(caller.org(), Some(caller.id()))
        .await?;
    Ok(Json(Grants {
        grants: grants.into_iter().map(Grant::from).collect(),
    }))
}

/// Let another paired person act for the caller (through a key an admin
/// makes `--on-behalf-of` the caller). The delegate acts with their own role
/// and memory, never the caller's. Audited (`delegate.grant`).
#[utoipa::path(post, operation_id = "me_delegates_add", path = "/api/v1/me/delegates", tag = "me",
    request_body = NewGrant,
    responses((status = 201, body = Grant), (status = 400, body = ErrorBody, description = "Oneself"),
        (status = 403, body = ErrorBody, description = "A delegated key"),
        (status = 404, body = ErrorBody), (status = 409, body = ErrorBody, description = "The delegate is revoked")))]
pub async fn add(
    caller: Caller,
    Body(body): Body<NewGrant>,
) -> Result<(StatusCode, Json<Grant>), ApiError> {
    own_key(&caller)?;
    let now = caller.now;
    let delegate = body.delegate.trim().to_string();
    let new = caller
        .pairing
        .grant_delegate(&own_grant(&caller, &delegate, now))
        .await?;
    let grant = caller
        .pairing
        .delegations(caller.org(), Some(caller.id()))
        .await?
        .into_iter()
        .find(|g| g.principal == caller.id() && g.delegate == delegate)
        .ok_or_else(|| ApiError::not_found("the delegation ended meanwhile"))?;
    let status = if new {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok((status, Json(grant.into())))
}

/// End a delegation of the caller's: the delegate's keys acting for the
/// caller stop working at once. Audited (`delegate.revoke`).
#[utoipa::path(delete, operation_id = "me_delegates_remove", path = "/api/v1/me/delegates/{delegate}", tag = "me",
    params(("delegate" = String, Path, description = "The delegate's user id")),
    responses((status = 204), (status = 403, body = ErrorBody, description = "A delegated key"),
        (status = 404, body = ErrorBody, description = "No such delegation")))]
pub async fn remove(caller: Caller, Path(delegate): Path<String>) -> Result<StatusCode, ApiError> {
    own_key(&caller)?;
    caller
        .pairing
        .revoke_delegate(&own_grant(&caller, &delegate, caller.now))
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

/// The caller's own grant to `delegate`, made or ended by the caller at `now`.
fn own_grant<'a>(caller: &'a Caller, delegate: &'a str, now: i64) -> DelegationChange<'a> {
    let by = Act {
        org: caller.org(),
        actor: caller.id(),
        at: now,
    };
    DelegationChange {
        principal: caller.id(),
        delegate,
        by,
    }
}
