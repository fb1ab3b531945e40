//! API keys. A key acts as the person who made it: each person makes,
//! lists and revokes their own under `/api/v1/me/keys` (or `/apikey` in a
//! direct message); an administrator lists and revokes anyone's, and mints
//! none for someone else (403). The secret is shown once. Audited by
//! `pairing::Pairing`.

use super::auth::{Admin, Caller};
use super::wire::{at, page_by_key, page_query, Body, Page, Path, Query, Reply};
use crate::error::{ApiError, ErrorBody};
use axum::http::StatusCode;
use axum::Json;
use chrono::{DateTime, Utc};
use memory::authz::Action;
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
    /// The administrator's own user id: a key acts as the person who made
    /// it, so a key for anyone else is refused (403); they make their own
    /// (`POST /api/v1/me/keys`, `/apikey`).
    pub user_id: String,
    /// The person `user_id` acts for (a delegate's key): refused (404)
    /// unless that delegation holds; the key stops working when it ends.
    #[serde(default)]
    pub on_behalf_of: Option<String>,
}

/// A key of one's own.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewOwnKey {
    /// The person this key acts for, when they let you act for them
    /// (a delegate's key): refused (404) unless that delegation holds; the
    /// key stops working when it ends.
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

/// What an administrator is told who asks for a key of someone else.
pub const NOT_YOUR_KEY: &str = "a key acts as the person who made it: nobody mints one for someone else; they make their own with /apikey in a direct message or POST /api/v1/me/keys";

/// Mint a key of `user` (acting for `on_behalf_of` when given), as `caller`.
async fn mint(
    caller: &Caller,
    user: &str,
    on_behalf_of: Option<&str>,
) -> Result<(StatusCode, Json<CreatedKey>), ApiError> {
    let (org, actor, now) = (caller.org(), caller.id(), caller.now);
    let new = match on_behalf_of {
        Some(principal) => {
            caller
                .pairing
                .create_delegated_api_key(org, user, principal, actor, now)
                .await?
        }
        None => caller.pairing.create_api_key(org, user, actor, now).await?,
    };
    Ok((
        StatusCode::CREATED,
        Json(CreatedKey {
            id: new.id,
            user_id: user.to_string(),
            key: new.key,
        }),
    ))
}

/// Mint a key of your own as an administrator (use `POST /api/v1/me/keys`
/// alike). A key for anyone else is refused (403). Audited (`api_key.create`).
#[utoipa::path(post, operation_id = "keys_create", path = "/api/v1/keys", tag = "keys", request_body = NewKey,
    responses((status = 201, body = CreatedKey), (status = 403, body = ErrorBody, description = "The key would act as someone else"), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody, description = "The user is revoked")))]
pub async fn create(
    admin: Admin,
    Body(body): Body<NewKey>,
) -> Result<(StatusCode, Json<CreatedKey>), ApiError> {
    let user_id = body.user_id.trim();
    if user_id != admin.id() {
        return Err(ApiError::forbidden(NOT_YOUR_KEY));
    }
    mint(&admin, user_id, body.on_behalf_of.as_deref()).await
}

/// Your own API keys (active and revoked), by id: never a secret.
#[utoipa::path(get, operation_id = "me_keys_list", path = "/api/v1/me/keys", tag = "me",
    responses((status = 200, body = Vec<KeyOut>)))]
pub async fn own_list(caller: Caller) -> Reply<Vec<KeyOut>> {
    caller.may(Action::OwnKeys)?;
    let keys = caller
        .pairing
        .api_keys(caller.org(), Some(caller.id()))
        .await?;
    Ok(Json(keys.into_iter().map(KeyOut::from).collect()))
}

/// Make a key of your own (a delegate: one that acts for a person who let
/// you act for them). The secret is shown once. A key acting on someone's
/// behalf makes none (403). Audited (`api_key.create`).
#[utoipa::path(post, operation_id = "me_keys_create", path = "/api/v1/me/keys", tag = "me", request_body = NewOwnKey,
    responses((status = 201, body = CreatedKey), (status = 403, body = ErrorBody, description = "A delegated key makes no keys"), (status = 404, body = ErrorBody, description = "No such delegation")))]
pub async fn own_create(
    caller: Caller,
    Body(body): Body<NewOwnKey>,
) -> Result<(StatusCode, Json<CreatedKey>), ApiError> {
    caller.may(Action::OwnKeys)?;
    let user = caller.id().to_string();
    mint(&caller, &user, body.on_behalf_of.as_deref()).await
}

/// Revoke one of your own keys (including one the operator made for you);
/// another's key is answered as one that does not exist. Audited (`api_key.revoke`).
#[utoipa::path(delete, operation_id = "me_keys_revoke", path = "/api/v1/me/keys/{id}", tag = "me",
    params(("id" = String, Path, description = "The key's id, `key-…`")),
    responses((status = 200, body = KeyOut), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody, description = "Already revoked")))]
pub async fn own_revoke(caller: Caller, Path(id): Path<String>) -> Reply<KeyOut> {
    caller.may(Action::OwnKeys)?;
    let mine = caller
        .pairing
        .api_keys(caller.org(), Some(caller.id()))
        .await?;
    let wanted = pairing::normalise_key_id(&id);
    if !mine.iter().any(|k| k.key_id == wanted) {
        return Err(ApiError::not_found(format!(
            "you have no API key {}",
            id.trim()
        )));
    }
    let k = caller
        .pairing
        .revoke_api_key(caller.org(), &wanted, caller.id(), caller.now)
        .await?;
    Ok(Json(k.into()))
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
