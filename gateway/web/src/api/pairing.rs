//! Pairing for admins: pending requests (approve with a role, deny), paired
//! users (add directly with a role, set a role, revoke, link another channel
//! identity). The rules and audits are `pairing::Pairing`'s; the built-in
//! dashboard admin keeps its role, as on the dashboard.

use super::auth::Admin;
use super::wire::{at, page_by_key, page_query, Body, Page, Path, Query, Reply};
use crate::dashboard::BUILT_IN_ADMIN;
use crate::error::{ApiError, ErrorBody};
use axum::http::StatusCode;
use axum::Json;
use chrono::{DateTime, Utc};
use memory::Role;
use pairing::{PairingError, PairingRequest, RequestStatus, User, UserStatus};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// A paired person.
#[derive(Debug, Serialize, ToSchema)]
pub struct UserOut {
    pub user_id: String,
    pub name: String,
    pub role: Role,
    /// `active`, or `revoked`.
    #[schema(value_type = String)]
    pub status: UserStatus,
    /// The last change: pairing, role change, revocation.
    pub updated_at: DateTime<Utc>,
}

impl From<User> for UserOut {
    fn from(u: User) -> Self {
        UserOut {
            user_id: u.user_id,
            name: u.name,
            role: u.role,
            status: u.status,
            updated_at: at(u.updated_at),
        }
    }
}

/// A pairing request.
#[derive(Debug, Serialize, ToSchema)]
pub struct RequestOut {
    pub code: String,
    pub channel: String,
    /// The channel identity that asked, e.g. `discord:123`.
    pub stored_id: String,
    /// The name the platform gave.
    pub name: String,
    #[schema(value_type = String)]
    pub status: RequestStatus,
    pub expires_at: DateTime<Utc>,
}

impl From<PairingRequest> for RequestOut {
    fn from(r: PairingRequest) -> Self {
        RequestOut {
            code: r.code,
            channel: r.channel,
            stored_id: r.stored_id,
            name: r.name,
            status: r.status,
            expires_at: at(r.expires_at),
        }
    }
}

page_query! {
    /// A page of a short list.
    pub struct PageQuery by key {}
}

/// Pending, unexpired pairing requests, by code.
#[utoipa::path(get, operation_id = "pairing_requests", path = "/api/v1/pairing/requests", tag = "pairing", params(PageQuery),
    responses((status = 200, body = Page<RequestOut>)))]
pub async fn requests(admin: Admin, Query(q): Query<PageQuery>) -> Reply<Page<RequestOut>> {
    let rows = admin.pairing.pending(admin.org(), admin.now).await?;
    let page = page_by_key(rows, &q, |r| r.code.clone(), RequestOut::from);
    Ok(Json(page?))
}

/// The role to approve with.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PairingApproval {
    pub role: Role,
}

/// Approve a pairing code with a role. Audited.
#[utoipa::path(post, operation_id = "pairing_approve", path = "/api/v1/pairing/requests/{code}/approve", tag = "pairing",
    params(("code" = String, Path, description = "The pairing code (any case)")),
    request_body = PairingApproval,
    responses((status = 200, body = UserOut), (status = 409, body = ErrorBody, description = "Expired or already decided")))]
pub async fn approve(
    admin: Admin,
    Path(code): Path<String>,
    Body(body): Body<PairingApproval>,
) -> Reply<UserOut> {
    let u = admin
        .pairing
        .approve(admin.org(), &code, body.role, admin.id(), admin.now)
        .await?;
    Ok(Json(u.into()))
}

/// Deny a pairing code. Audited.
#[utoipa::path(post, operation_id = "pairing_deny", path = "/api/v1/pairing/requests/{code}/deny", tag = "pairing",
    params(("code" = String, Path, description = "The pairing code (any case)")),
    responses((status = 200, body = RequestOut), (status = 409, body = ErrorBody)))]
pub async fn deny(admin: Admin, Path(code): Path<String>) -> Reply<RequestOut> {
    let r = admin
        .pairing
        .deny(admin.org(), &code, admin.id(), admin.now)
        .await?;
    // The request as it was read; it is now denied.
    let mut out = RequestOut::from(r);
    out.status = RequestStatus::Denied;
    Ok(Json(out))
}

/// Paired users (active and revoked), by user id.
#[utoipa::path(get, operation_id = "pairing_users", path = "/api/v1/users", tag = "pairing", params(PageQuery),
    responses((status = 200, body = Page<UserOut>)))]
pub async fn users(admin: Admin, Query(q): Query<PageQuery>) -> Reply<Page<UserOut>> {
    let rows = admin.pairing.users(admin.org()).await?;
    let page = page_by_key(rows, &q, |u| u.user_id.clone(), UserOut::from);
    Ok(Json(page?))
}

/// Someone to pair directly.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewUser {
    /// Their stored user id, e.g. `discord:123` or `teams:<aad id>`; the
    /// channel identity of that name is linked to them.
    #[schema(pattern = "^\\S{1,256}$")]
    pub user_id: String,
    /// A display name (default: the user id), one line of at most 100 characters.
    #[schema(max_length = 100)]
    pub name: Option<String>,
    pub role: Role,
}

/// A stored id as given: trimmed, not empty, no white space or control characters, at most 256 characters.
fn identity(field: &str, given: &str) -> Result<String, ApiError> {
    let id = given.trim();
    if id.is_empty()
        || id.chars().count() > 256
        || id.chars().any(|c| c.is_whitespace() || c.is_control())
    {
        return Err(ApiError::bad_request(format!(
            "{field} must be 1 to 256 characters without spaces, e.g. discord:123"
        )));
    }
    Ok(id.to_string())
}

/// Pair someone directly with a role (no code). 409 when they are already
/// paired and active: change their role instead. Audited (`pairing.add`).
#[utoipa::path(post, operation_id = "pairing_add", path = "/api/v1/users", tag = "pairing", request_body = NewUser,
    responses((status = 201, body = UserOut), (status = 409, body = ErrorBody)))]
pub async fn add(
    admin: Admin,
    Body(body): Body<NewUser>,
) -> Result<(StatusCode, Json<UserOut>), ApiError> {
    let user_id = identity("user_id", &body.user_id)?;
    if let Some(n) = &body.name {
        if n.chars().count() > pairing::MAX_NAME_CHARS || n.chars().any(char::is_control) {
            return Err(ApiError::bad_request(format!(
                "name: at most {} characters, on one line without control characters",
                pairing::MAX_NAME_CHARS
            )));
        }
    }
    let name = body
        .name
        .map(|n| n.trim().to_string())
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| user_id.clone());
    let p = &admin.pairing;
    match p.user(admin.org(), &user_id).await {
        Ok(u) if u.status == UserStatus::Active => {
            return Err(ApiError::conflict(format!(
                "{user_id} is already paired as {}; PUT /api/v1/users/{{user}}/role changes it",
                u.role
            )))
        }
        Ok(_) | Err(PairingError::UnknownUser(_)) => {}
        Err(e) => return Err(e.into()),
    }
    // The CLI's and the dashboard's rule: an identity that already speaks as
    // someone (a linked `teams:x`) is not made a second user.
    let u = p
        .pair_directly(
            admin.org(),
            &user_id,
            Some(&name),
            body.role,
            admin.id(),
            admin.now,
        )
        .await?;
    Ok((StatusCode::CREATED, Json(u.into())))
}

/// The built-in dashboard admin is not changed through the API.
fn not_built_in(user: &str) -> Result<(), ApiError> {
    if user == BUILT_IN_ADMIN {
        return Err(ApiError::conflict(
            "the built-in dashboard admin keeps its admin role; it is the identity the dashboard acts as",
        ));
    }
    Ok(())
}

/// A new role.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PairingRoleChange {
    pub role: Role,
}

/// Change a paired user's role. Audited (`pairing.set_role`).
#[utoipa::path(put, operation_id = "pairing_set_role", path = "/api/v1/users/{user}/role", tag = "pairing",
    params(("user" = String, Path, description = "Stored user id")),
    request_body = PairingRoleChange,
    responses((status = 200, body = UserOut), (status = 409, body = ErrorBody)))]
pub async fn set_role(
    admin: Admin,
    Path(user): Path<String>,
    Body(body): Body<PairingRoleChange>,
) -> Reply<UserOut> {
    not_built_in(&user)?;
    let p = &admin.pairing;
    p.set_role(admin.org(), &user, body.role, admin.id(), admin.now)
        .await?;
    Ok(Json(p.user(admin.org(), &user).await?.into()))
}

/// What revoking did.
#[derive(Debug, Serialize, ToSchema)]
pub struct Revoked {
    pub user_id: String,
    /// Their API keys, revoked with them for good.
    pub revoked_keys: Vec<String>,
}

/// Revoke a paired user: their identities resolve to nobody and their API
/// keys are revoked for good. Audited.
#[utoipa::path(delete, operation_id = "pairing_revoke", path = "/api/v1/users/{user}", tag = "pairing",
    params(("user" = String, Path, description = "Stored user id")),
    responses((status = 200, body = Revoked), (status = 409, body = ErrorBody)))]
pub async fn revoke(admin: Admin, Path(user): Path<String>) -> Reply<Revoked> {
    not_built_in(&user)?;
    let revoked_keys = admin
        .pairing
        .revoke(admin.org(), &user, admin.id(), admin.now)
        .await?;
    Ok(Json(Revoked {
        user_id: user,
        revoked_keys,
    }))
}

/// Another channel identity of a paired user.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Link {
    /// E.g. `teams:<aad id>`.
    #[schema(pattern = "^\\S{1,256}$")]
    pub identity: String,
}

/// Link another channel identity to a paired user: both are then one person,
/// with one role and one personal memory. Audited (`pairing.link`).
#[utoipa::path(post, operation_id = "pairing_link", path = "/api/v1/users/{user}/identities", tag = "pairing",
    params(("user" = String, Path, description = "Stored user id")),
    request_body = Link,
    responses((status = 200, body = UserOut)))]
pub async fn link(
    admin: Admin,
    Path(user): Path<String>,
    Body(body): Body<Link>,
) -> Reply<UserOut> {
    let identity = identity("identity", &body.identity)?;
    let u = admin
        .pairing
        .link_identity(admin.org(), &identity, &user, admin.id(), admin.now)
        .await?;
    Ok(Json(u.into()))
}
