//! Pairing's rows: paired users, the channel identities linked to them,
//! pairing codes, the hint throttle and API keys. The rules (codes, TTLs,
//! limits, who may approve) live in the `pairing` crate; this is their storage.

use super::audit::Act;
use super::people::USER;
pub use super::people::{Identity, User, UserStatus};
use super::Result;
use crate::admin_text::{AdminText, Identifier, Identifiers};
use crate::model::Role;
use serde::Serialize;

named_enum! {
    /// Where a pairing request is (`pairing_codes.status`).
    pub enum RequestStatus {
        /// Waiting for an admin (until it expires).
        Pending,
        Approved,
        Denied,
    }
}

/// An API key as it may be shown: its public id, never the secret or its hash.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, sqlx::FromRow)]
pub struct ApiKey {
    pub org: String,
    /// The stable non-secret id (`key-…`) shown at creation, listed and revoked by.
    pub key_id: String,
    pub user_id: String,
    pub created_at: i64,
    /// When it was revoked (by id, or with its user), ms since the epoch.
    pub revoked_at: Option<i64>,
    /// Who revoked it.
    pub revoked_by: Option<String>,
    /// The person it acts for, when it was made `--on-behalf-of` them: it
    /// works only while that delegation holds.
    pub on_behalf_of: Option<String>,
}

/// A pending or decided pairing request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, sqlx::FromRow)]
pub struct PairingRequest {
    pub org: String,
    pub code: String,
    pub channel: String,
    pub stored_id: String,
    pub name: String,
    #[sqlx(try_from = "String")]
    pub status: RequestStatus,
    pub created_at: i64,
    pub expires_at: i64,
}

/// A pairing code about to be stored (pending).
#[derive(Debug, Clone)]
pub struct NewPairingCode<'a> {
    pub org: &'a str,
    pub code: &'a str,
    pub channel: &'a str,
    pub stored_id: &'a str,
    pub name: &'a str,
    pub created_at: i64,
    pub expires_at: i64,
}

/// An admin's answer to a pending request: approve with a role, or deny.
#[derive(Debug, Clone, Copy)]
pub struct PairingDecision<'a> {
    pub request: &'a PairingRequest,
    /// `Some(role)` approves, `None` denies.
    pub role: Option<Role>,
    pub actor: &'a str,
    pub now: i64,
}

const REQUEST: &str =
    "SELECT org, code, channel, stored_id, name, status, created_at, expires_at FROM pairing_codes";

const API_KEY: &str =
    "SELECT org, key_id, user_id, created_at, revoked_at, revoked_by, on_behalf_of FROM api_keys";

/// Bound: org, user id, name, role, now, [`UserStatus::Active`].
const UPSERT_USER: &str = "INSERT INTO users (org, user_id, name, role, status, created_at, updated_at) VALUES ($1, $2, $3, $4, $6, $5, $5) \
     ON CONFLICT (org, user_id) DO UPDATE SET name = excluded.name, role = excluded.role, status = excluded.status, updated_at = excluded.updated_at";
const LINK: &str =
    "INSERT INTO identities (org, stored_id, user_id, created_at) VALUES ($1, $2, $3, $4) \
     ON CONFLICT (org, stored_id) DO UPDATE SET user_id = excluded.user_id";

impl Identity<'_> {
    /// The active paired user a stored channel identity is linked to, if any.
    pub async fn user_by_identity(&self, org: &str, stored_id: &str) -> Result<Option<User>> {
        let text = format!(
            "{USER} JOIN identities i ON u.org = i.org AND u.user_id = i.user_id \
             WHERE i.org = $1 AND i.stored_id = $2 AND u.status = $3"
        );
        sql!(text, org, stored_id, UserStatus::Active)
            .opt(&self.db.pool)
            .await
    }

    /// A paired user (of any status).
    pub async fn paired_user(&self, org: &str, user_id: &str) -> Result<Option<User>> {
        let text = format!("{USER} WHERE u.org = $1 AND u.user_id = $2");
        sql!(text, org, user_id).opt(&self.db.pool).await
    }

    /// Paired users of an organisation, by id.
    pub async fn paired_users(&self, org: &str) -> Result<Vec<User>> {
        let text = format!("{USER} WHERE u.org = $1 ORDER BY u.user_id");
        sql!(text, org).all(&self.db.pool).await
    }

    /// Insert or update a user: active, with this name and role.
    pub async fn upsert_user(
        &self,
        org: &str,
        user_id: &str,
        name: &str,
        role: Role,
        now: i64,
    ) -> Result<()> {
        let q = sql!(
            UPSERT_USER,
            org,
            user_id,
            name,
            role,
            now,
            UserStatus::Active
        );
        q.exec(&self.db.pool).await.map(|_| ())
    }

    /// Link a channel identity to a user (re-pointing it when it was linked before).
    pub async fn link_identity(
        &self,
        org: &str,
        stored_id: &str,
        user_id: &str,
        now: i64,
    ) -> Result<()> {
        let q = sql!(LINK, org, stored_id, user_id, now);
        q.exec(&self.db.pool).await.map(|_| ())
    }

    /// Revoke a user in one transaction: their status becomes `revoked`, and
    /// every API key of theirs not yet revoked is revoked at this moment (so
    /// pairing them again brings no key back); audited as `pairing.revoke`
    /// and one `api_key.revoke` per key. The revoked keys' ids, or `None`
    /// (nothing written) when there is no such user.
    pub async fn revoke_user(
        &self,
        org: &str,
        user_id: &str,
        actor: &str,
        now: i64,
    ) -> Result<Option<Vec<String>>> {
        let mut tx = super::begin(&self.db.pool).await?;
        let text = "UPDATE users SET status = $1, updated_at = $2 WHERE org = $3 AND user_id = $4";
        let revoke = sql!(text, UserStatus::Revoked, now, org, user_id);
        if revoke.exec(&mut *tx).await? == 0 {
            return Ok(None);
        }
        let text = "SELECT key_id FROM api_keys WHERE org = $1 AND user_id = $2 AND revoked_at IS NULL ORDER BY key_id";
        let keys: Vec<(String,)> = sql!(text, org, user_id).all(&mut *tx).await?;
        let keys: Vec<String> = keys.into_iter().map(|(k,)| k).collect();
        let text = "UPDATE api_keys SET revoked_at = $1, revoked_by = $2 \
                    WHERE org = $3 AND user_id = $4 AND revoked_at IS NULL";
        sql!(text, now, actor, org, user_id).exec(&mut *tx).await?;
        let detail = if keys.is_empty() {
            AdminText::empty()
        } else {
            admin_text!(
                "API keys revoked with the user: {}",
                Identifiers::new(&keys)
            )
        };
        let by = Act {
            org,
            actor,
            at: now,
        };
        by.audit(&mut *tx, "pairing.revoke", user_id, &detail)
            .await?;
        for k in &keys {
            let detail = admin_text!("key {} (revoked with the user)", Identifier::new(k));
            by.audit(&mut *tx, "api_key.revoke", user_id, &detail)
                .await?;
        }
        super::delegations::end_delegations_of(&mut tx, user_id, by).await?;
        super::role_memory::end_roles_of(&mut tx, user_id, by).await?;
        tx.commit().await?;
        Ok(Some(keys))
    }

    /// Change a user's role. False when there is no such user.
    pub async fn set_user_role(
        &self,
        org: &str,
        user_id: &str,
        role: Role,
        now: i64,
    ) -> Result<bool> {
        let text = "UPDATE users SET role = $1, updated_at = $2 WHERE org = $3 AND user_id = $4";
        let q = sql!(text, role.as_str(), now, org, user_id);
        Ok(q.exec(&self.db.pool).await? > 0)
    }

    /// The newest unexpired pending request of a stored identity, if any.
    pub async fn pending_request_of(
        &self,
        org: &str,
        stored_id: &str,
        now: i64,
    ) -> Result<Option<PairingRequest>> {
        let text = format!(
            "{REQUEST} WHERE org = $1 AND stored_id = $2 AND status = $3 AND expires_at > $4 ORDER BY created_at DESC"
        );
        sql!(text, org, stored_id, RequestStatus::Pending, now)
            .opt(&self.db.pool)
            .await
    }

    /// How many unexpired pending requests a channel has.
    pub async fn pending_on_channel(&self, org: &str, channel: &str, now: i64) -> Result<i64> {
        let text = "SELECT COUNT(*) FROM pairing_codes WHERE org = $1 AND channel = $2 AND status = $3 AND expires_at > $4";
        let q = sql!(text, org, channel, RequestStatus::Pending, now);
        let (n,) = q.one(&self.db.pool).await?;
        Ok(n)
    }

    /// Store a pending code. False when the code is taken already.
    pub async fn insert_pairing_code(&self, c: &NewPairingCode<'_>) -> Result<bool> {
        let text = "INSERT INTO pairing_codes (org, code, channel, stored_id, name, status, created_at, expires_at) \
                    VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT DO NOTHING";
        let q = sql!(text, c.org, c.code, c.channel, c.stored_id, c.name)
            .arg(RequestStatus::Pending)
            .arg(c.created_at)
            .arg(c.expires_at);
        Ok(q.exec(&self.db.pool).await? == 1)
    }

    /// Unexpired pending requests of an organisation, oldest first.
    pub async fn pending_requests(&self, org: &str, now: i64) -> Result<Vec<PairingRequest>> {
        let text = format!(
            "{REQUEST} WHERE org = $1 AND status = $2 AND expires_at > $3 ORDER BY created_at"
        );
        sql!(text, org, RequestStatus::Pending, now)
            .all(&self.db.pool)
            .await
    }

    /// The request with this code, whatever its status.
    pub async fn pairing_request(&self, org: &str, code: &str) -> Result<Option<PairingRequest>> {
        let text = format!("{REQUEST} WHERE org = $1 AND code = $2");
        sql!(text, org, code).opt(&self.db.pool).await
    }

    /// Decide a pending request in one transaction: mark it approved (pairing
    /// the requester with the role and linking their identity) or denied, and
    /// audit it. False, with nothing written, when it was no longer pending.
    pub async fn decide_pairing(&self, d: &PairingDecision<'_>) -> Result<bool> {
        let req = d.request;
        let (status, action, detail) = match d.role {
            Some(role) => (
                RequestStatus::Approved,
                "pairing.approve",
                admin_text!("code {} role {}", Identifier::new(&req.code), role.as_str()),
            ),
            None => (
                RequestStatus::Denied,
                "pairing.deny",
                admin_text!("code {}", Identifier::new(&req.code)),
            ),
        };
        let text =
            "UPDATE pairing_codes SET status = $1, decided_by = $2, decided_at = $3, role = $4 \
                    WHERE org = $5 AND code = $6 AND status = $7";
        let q = sql!(
            text,
            status,
            d.actor,
            d.now,
            d.role,
            &req.org,
            &req.code,
            RequestStatus::Pending
        );
        let Some(mut tx) = q.exec_first(&self.db.pool).await? else {
            return Ok(false);
        };
        if let Some(role) = d.role {
            let (org, id) = (&req.org, &req.stored_id);
            sql!(
                UPSERT_USER,
                org,
                id,
                &req.name,
                role,
                d.now,
                UserStatus::Active
            )
            .exec(&mut *tx)
            .await?;
            sql!(LINK, org, id, id, d.now).exec(&mut *tx).await?;
        }
        let by = Act {
            org: &req.org,
            actor: d.actor,
            at: d.now,
        };
        by.audit(&mut *tx, action, &req.stored_id, &detail).await?;
        tx.commit().await?;
        Ok(true)
    }

    /// Record a pairing hint to a stored identity unless one was given after
    /// `since`. True when this call recorded it (the caller sends the hint).
    pub async fn record_hint(
        &self,
        org: &str,
        stored_id: &str,
        now: i64,
        since: i64,
    ) -> Result<bool> {
        let text = "INSERT INTO pairing_hints (org, stored_id, last_hint_at) VALUES ($1, $2, $3) \
                    ON CONFLICT (org, stored_id) DO UPDATE SET last_hint_at = excluded.last_hint_at \
                    WHERE pairing_hints.last_hint_at <= $4";
        Ok(sql!(text, org, stored_id, now, since)
            .exec(&self.db.pool)
            .await?
            == 1)
    }

    /// Store an API key's hash and public id, bound to a user (acting for
    /// `on_behalf_of`, when given). False, with nothing written, when the id
    /// (or the hash) is taken already.
    pub async fn insert_api_key(
        &self,
        key_hash: &str,
        key_id: &str,
        org: &str,
        user_id: &str,
        on_behalf_of: Option<&str>,
        now: i64,
    ) -> Result<bool> {
        let text =
            "INSERT INTO api_keys (key_hash, key_id, org, user_id, created_at, on_behalf_of) \
                    VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING";
        let q = sql!(text, key_hash, key_id, org, user_id, now, on_behalf_of);
        Ok(q.exec(&self.db.pool).await? == 1)
    }

    /// The active user an API key (by hash) is bound to: none when the key is
    /// unknown or revoked, its user is not active, or its delegation ended
    /// (`Identity::api_key_holder`).
    pub async fn user_by_api_key(&self, key_hash: &str) -> Result<Option<User>> {
        Ok(self.api_key_holder(key_hash).await?.map(|h| h.user))
    }

    /// The API keys of an organisation (of one user, when given), oldest first.
    pub async fn api_keys(&self, org: &str, user_id: Option<&str>) -> Result<Vec<ApiKey>> {
        match user_id {
            Some(user) => {
                let text = format!(
                    "{API_KEY} WHERE org = $1 AND user_id = $2 ORDER BY created_at, key_id"
                );
                sql!(text, org, user).all(&self.db.pool).await
            }
            None => {
                let text = format!("{API_KEY} WHERE org = $1 ORDER BY created_at, key_id");
                sql!(text, org).all(&self.db.pool).await
            }
        }
    }

    /// One API key by its public id.
    pub async fn api_key(&self, org: &str, key_id: &str) -> Result<Option<ApiKey>> {
        let text = format!("{API_KEY} WHERE org = $1 AND key_id = $2");
        sql!(text, org, key_id).opt(&self.db.pool).await
    }

    /// Revoke one API key by its public id, with its `api_key.revoke` audit
    /// entry, in one transaction. False, with nothing written, when there is
    /// no such key or it was revoked already.
    pub async fn revoke_api_key(&self, key_id: &str, by: Act<'_>) -> Result<bool> {
        let org = by.org;
        let text = "UPDATE api_keys SET revoked_at = $1, revoked_by = $2 \
                    WHERE org = $3 AND key_id = $4 AND revoked_at IS NULL";
        let q = sql!(text, by.at, by.actor, org, key_id);
        let Some(mut tx) = q.exec_first(&self.db.pool).await? else {
            return Ok(false);
        };
        let text = "SELECT user_id FROM api_keys WHERE org = $1 AND key_id = $2";
        let (user_id,): (String,) = sql!(text, org, key_id).one(&mut *tx).await?;
        let detail = admin_text!("key {}", Identifier::new(key_id));
        by.audit(&mut *tx, "api_key.revoke", &user_id, &detail)
            .await?;
        tx.commit().await?;
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Db, StoreError};

    /// A status no enum names is a corrupt row, not a panic.
    #[tokio::test]
    async fn an_unknown_status_is_a_corrupt_row() {
        let db = Db::in_memory().await.expect("db");
        let ids = db.identity();
        ids.upsert_user("o", "u1", "U", Role::User, 1)
            .await
            .expect("user");
        let code = NewPairingCode {
            org: "o",
            code: "C1",
            channel: "discord",
            stored_id: "discord:2",
            name: "N",
            created_at: 1,
            expires_at: 10,
        };
        assert!(ids.insert_pairing_code(&code).await.expect("code"));
        sql!("UPDATE users SET status = 'gone'")
            .exec(&db.pool)
            .await
            .expect("update");
        sql!("UPDATE pairing_codes SET status = 'lost'")
            .exec(&db.pool)
            .await
            .expect("update");
        let user = ids.paired_user("o", "u1").await;
        assert!(matches!(user, Err(StoreError::Corrupt(_))), "{user:?}");
        let request = ids.pairing_request("o", "C1").await;
        assert!(
            matches!(request, Err(StoreError::Corrupt(_))),
            "{request:?}"
        );
    }
}
