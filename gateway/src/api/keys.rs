//! API keys for admins: create (the secret is shown once), list (never the
//! secret), revoke. Audited by `pairing::Pairing`.

use super::auth::Admin;
use super::error::{ApiError, ErrorBody};
use super::wire::{at, page_by_key, page_query, Body, Page, Path, Query, Reply};
use axum::http::StatusCode;
use axum::Json;
use chrono::{DateTime, Utc};
use pairing::ApiKey;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// An API key as it may be shown: its id, never the secret.
#[derive(Debug, Serialize, ToSchema)]
pub struct KeyOut {
    /// The key's public id (`key-…`).
    pub id: String,
    pub user_id: String,
    pub created_at: DateTime<Utc>,
    pub revoked_at: Option<DateTime<Utc>>,
    pub revoked_by: Option<String>,
    /// The person the key acts for (a delegate's key), if any.
    pub on_behalf_of: Option<String>,
}

impl From<ApiKey> for KeyOut {
    fn from(k: ApiKey) -> Self {
        KeyOut {
            id: k.key_id,
            user_id: k.user_id,
            created_at: at(k.created_at),
            revoked_at: k.revoked_at.map(at),
            revoked_by: k.revoked_by,
            on_behalf_of: k.on_behalf_of,
        }
    }
}

page_query! {
    /// Filters of the key list.
    pub struct KeyQuery by key {
        /// Only this user's keys.
        user: Option<String>,
    }
}

/// API keys by id (active and revoked).
#[utoipa::path(get, operation_id = "keys_list", path = "/api/v1/keys", tag = "keys", params(KeyQuery),
    responses((status = 200, body = Page<KeyOut>)))]
pub async fn list(admin: Admin, Query(q): Query<KeyQuery>) -> Reply<Page<KeyOut>> {
    let rows = admin
        .pairing
        .api_keys(admin.org(), q.user.as_deref())
        .await?;
    let page = page_by_key(rows, &q, |k| k.key_id.clone(), KeyOut::from);
    Ok(Json(page?))
}

/// Whom a new key is for.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewKey {
    /// An active paired user; the key carries their role.
    pub user_id: String,
    /// The person `user_id` acts for (a delegate's key): refused (404)
    /// unless that delegation holds; the key stops working when it ends.
    #[serde(default)]
    pub on_behalf_of: Option<String>,
}

/// A key just minted.
#[derive(Debug, Serialize, ToSchema)]
pub struct CreatedKey {
    /// The public id to list and revoke it by.
    pub id: String,
    pub user_id: String,
    /// The secret for `Authorization: Bearer …`, shown this once.
    pub key: String,
}

/// Mint a key for an active paired user. Audited (`api_key.create`).
#[utoipa::path(post, operation_id = "keys_create", path = "/api/v1/keys", tag = "keys", request_body = NewKey,
    responses((status = 201, body = CreatedKey), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody, description = "The user is revoked")))]
pub async fn create(
    admin: Admin,
    Body(body): Body<NewKey>,
) -> Result<(StatusCode, Json<CreatedKey>), ApiError> {
    let user_id = body.user_id.trim().to_string();
    let (org, actor, now) = (admin.org(), admin.id(), admin.now);
    let new = match body.on_behalf_of.as_deref() {
        Some(principal) => {
            admin
                .pairing
                .create_delegated_api_key(org, &user_id, principal, actor, now)
                .await?
        }
        None => {
            admin
                .pairing
                .create_api_key(org, &user_id, actor, now)
                .await?
        }
    };
    Ok((
        StatusCode::CREATED,
        Json(CreatedKey {
            id: new.id,
            user_id,
            key: new.key,
        }),
    ))
}

/// Revoke a key by its id; it never works again. Audited (`api_key.revoke`).
#[utoipa::path(delete, operation_id = "keys_revoke", path = "/api/v1/keys/{id}", tag = "keys",
    params(("id" = String, Path, description = "The key's id, `key-…`")),
    responses((status = 200, body = KeyOut), (status = 409, body = ErrorBody, description = "Already revoked")))]
pub async fn revoke(admin: Admin, Path(id): Path<String>) -> Reply<KeyOut> {
    let k = admin
        .pairing
        .revoke_api_key(admin.org(), &id, admin.id(), admin.now)
        .await?;
    Ok(Json(k.into()))
}
