//! Pairing: who a channel identity is, and what role they have.
//!
//! Architecture Invariant: this crate is the only answer to "what role does
//! this principal have". Roles are set by an admin's approval or `set-role`,
//! never read from message text or a model's answer.

use memory::{Db, Role, StoreError};
use rand::Rng;
use sha2::{Digest, Sha256};
use sqlx::Row;

/// Pairing codes use an alphabet without look-alikes (no 0/O/1/I/L).
pub const CODE_ALPHABET: &[u8] = b"ABCDEFGHJKMNPQRSTUVWXYZ23456789";
pub const CODE_LEN: usize = 8;

#[derive(Debug, thiserror::Error)]
pub enum PairingError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("database error: {0}")]
    Database(#[from] sqlx::Error),
    #[error("no pairing request with code {0}")]
    UnknownCode(String),
    #[error("pairing code {0} has expired; ask for a new one with /pair")]
    CodeExpired(String),
    #[error("pairing code {code} was already {status}")]
    CodeNotPending { code: String, status: String },
    #[error("no paired user {0}")]
    UnknownUser(String),
}

pub type Result<T, E = PairingError> = std::result::Result<T, E>;

/// Limits of the pairing flow (SPEC §3).
#[derive(Debug, Clone)]
pub struct PairingSettings {
    pub code_ttl_ms: i64,
    pub max_pending_per_channel: i64,
    pub hint_interval_ms: i64,
}

impl Default for PairingSettings {
    fn default() -> Self {
        PairingSettings {
            code_ttl_ms: 60 * 60 * 1000,
            max_pending_per_channel: 3,
            hint_interval_ms: 60 * 1000,
        }
    }
}

/// A paired person.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct User {
    pub org: String,
    pub user_id: String,
    pub name: String,
    pub role: Role,
    pub status: String,
    /// Last change (pairing, role change, revocation), ms since the epoch.
    pub updated_at: i64,
}

/// A pending or decided pairing request.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct PairingRequest {
    pub org: String,
    pub code: String,
    pub channel: String,
    pub stored_id: String,
    pub name: String,
    pub status: String,
    pub created_at: i64,
    pub expires_at: i64,
}

/// The answer to `/pair` from an unknown sender.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PairOutcome {
    /// A code to give an admin; `reused` when the sender already had one pending.
    Code {
        code: String,
        reused: bool,
        expires_at: i64,
    },
    /// The channel already has the maximum of pending requests.
    TooManyPending,
}

#[derive(Clone, Debug)]
pub struct Pairing {
    db: Db,
    settings: PairingSettings,
}

fn new_code() -> String {
    let mut rng = rand::thread_rng();
    (0..CODE_LEN)
        .map(|_| CODE_ALPHABET[rng.gen_range(0..CODE_ALPHABET.len())] as char)
        .collect()
}

fn hash_key(key: &str) -> String {
    hex::encode(Sha256::digest(key.as_bytes()))
}

fn user_from(row: &sqlx::any::AnyRow) -> Result<User> {
    let role: String = row.try_get("role")?;
    Ok(User {
        org: row.try_get("org")?,
        user_id: row.try_get("user_id")?,
        name: row.try_get("name")?,
        role: role
            .parse()
            .map_err(|e: memory::UnknownRole| StoreError::Corrupt(e.to_string()))?,
        status: row.try_get("status")?,
        updated_at: row.try_get("updated_at")?,
    })
}

fn request_from(row: &sqlx::any::AnyRow) -> Result<PairingRequest> {
    Ok(PairingRequest {
        org: row.try_get("org")?,
        code: row.try_get("code")?,
        channel: row.try_get("channel")?,
        stored_id: row.try_get("stored_id")?,
        name: row.try_get("name")?,
        status: row.try_get("status")?,
        created_at: row.try_get("created_at")?,
        expires_at: row.try_get("expires_at")?,
    })
}

impl Pairing {
    pub fn new(db: Db, settings: PairingSettings) -> Self {
        Pairing { db, settings }
    }

    pub fn db(&self) -> &Db {
        &self.db
    }

    /// The active paired user behind a stored channel identity, if any.
    pub async fn resolve(&self, org: &str, stored_id: &str) -> Result<Option<User>> {
        let row = sqlx::query(
            "SELECT u.org, u.user_id, u.name, u.role, u.status, u.updated_at FROM identities i JOIN users u ON u.org = i.org AND u.user_id = i.user_id \
             WHERE i.org = $1 AND i.stored_id = $2 AND u.status = 'active'",
        )
        .bind(org)
        .bind(stored_id)
        .fetch_optional(self.db.pool())
        .await?;
        row.as_ref().map(user_from).transpose()
    }

    pub async fn user(&self, org: &str, user_id: &str) -> Result<User> {
        let row = sqlx::query(
            "SELECT org, user_id, name, role, status, updated_at FROM users WHERE org = $1 AND user_id = $2",
        )
        .bind(org)
        .bind(user_id)
        .fetch_optional(self.db.pool())
        .await?;
        row.as_ref()
            .map(user_from)
            .transpose()?
            .ok_or_else(|| PairingError::UnknownUser(user_id.to_string()))
    }

    pub async fn users(&self, org: &str) -> Result<Vec<User>> {
        let rows = sqlx::query(
            "SELECT org, user_id, name, role, status, updated_at FROM users WHERE org = $1 ORDER BY user_id",
        )
        .bind(org)
        .fetch_all(self.db.pool())
        .await?;
        rows.iter().map(user_from).collect()
    }

    /// Pair `user_id` directly (operator set-up, replay's `pair`, the dashboard's
    /// built-in admin), linking the identity of the same name. Audited.
    pub async fn add_user(
        &self,
        org: &str,
        user_id: &str,
        name: &str,
        role: Role,
        actor: &str,
        now: i64,
    ) -> Result<User> {
        self.upsert_user(org, user_id, name, role, now).await?;
        self.link(org, user_id, user_id, now).await?;
        self.db
            .audit(
                org,
                actor,
                "pairing.add",
                user_id,
                &format!("role {role}"),
                now,
            )
            .await?;
        self.user(org, user_id).await
    }

    async fn upsert_user(
        &self,
        org: &str,
        user_id: &str,
        name: &str,
        role: Role,
        now: i64,
    ) -> Result<()> {
        sqlx::query(
            "INSERT INTO users (org, user_id, name, role, status, created_at, updated_at) VALUES ($1, $2, $3, $4, 'active', $5, $5) \
             ON CONFLICT (org, user_id) DO UPDATE SET name = excluded.name, role = excluded.role, status = 'active', updated_at = excluded.updated_at",
        )
        .bind(org)
        .bind(user_id)
        .bind(name)
        .bind(role.as_str())
        .bind(now)
        .execute(self.db.pool())
        .await?;
        Ok(())
    }

    /// Link another channel identity to an existing paired user. Audited.
    /// The identity then resolves to that user, with their role.
    pub async fn link_identity(
        &self,
        org: &str,
        stored_id: &str,
        user_id: &str,
        actor: &str,
        now: i64,
    ) -> Result<User> {
        let user = self.user(org, user_id).await?;
        self.link(org, stored_id, user_id, now).await?;
        self.db
            .audit(
                org,
                actor,
                "pairing.link",
                user_id,
                &format!("identity {stored_id}"),
                now,
            )
            .await?;
        Ok(user)
    }

    /// Link another channel identity to a paired user.
    pub async fn link(&self, org: &str, stored_id: &str, user_id: &str, now: i64) -> Result<()> {
        sqlx::query(
            "INSERT INTO identities (org, stored_id, user_id, created_at) VALUES ($1, $2, $3, $4) \
             ON CONFLICT (org, stored_id) DO UPDATE SET user_id = excluded.user_id",
        )
        .bind(org)
        .bind(stored_id)
        .bind(user_id)
        .bind(now)
        .execute(self.db.pool())
        .await?;
        Ok(())
    }

    /// `/pair` from an unknown sender: reuse their pending code, or mint one
    /// unless the channel already has the maximum pending.
    pub async fn request(
        &self,
        org: &str,
        channel: &str,
        stored_id: &str,
        name: &str,
        now: i64,
    ) -> Result<PairOutcome> {
        let existing = sqlx::query(
            "SELECT code, expires_at FROM pairing_codes WHERE org = $1 AND stored_id = $2 AND status = 'pending' AND expires_at > $3 ORDER BY created_at DESC",
        )
        .bind(org)
        .bind(stored_id)
        .bind(now)
        .fetch_optional(self.db.pool())
        .await?;
        if let Some(row) = existing {
            return Ok(PairOutcome::Code {
                code: row.try_get("code")?,
                reused: true,
                expires_at: row.try_get("expires_at")?,
            });
        }
        let (pending,): (i64,) = sqlx::query_as(
            "SELECT COUNT(*) FROM pairing_codes WHERE org = $1 AND channel = $2 AND status = 'pending' AND expires_at > $3",
        )
        .bind(org)
        .bind(channel)
        .bind(now)
        .fetch_one(self.db.pool())
        .await?;
        if pending >= self.settings.max_pending_per_channel {
            return Ok(PairOutcome::TooManyPending);
        }
        let expires_at = now + self.settings.code_ttl_ms;
        loop {
            let code = new_code();
            let inserted = sqlx::query(
                "INSERT INTO pairing_codes (org, code, channel, stored_id, name, status, created_at, expires_at) \
                 VALUES ($1, $2, $3, $4, $5, 'pending', $6, $7) ON CONFLICT DO NOTHING",
            )
            .bind(org)
            .bind(&code)
            .bind(channel)
            .bind(stored_id)
            .bind(name)
            .bind(now)
            .bind(expires_at)
            .execute(self.db.pool())
            .await?
            .rows_affected();
            if inserted == 1 {
                return Ok(PairOutcome::Code {
                    code,
                    reused: false,
                    expires_at,
                });
            }
        }
    }

    /// Unexpired pending requests of an organisation.
    pub async fn pending(&self, org: &str, now: i64) -> Result<Vec<PairingRequest>> {
        let rows = sqlx::query(
            "SELECT org, code, channel, stored_id, name, status, created_at, expires_at FROM pairing_codes \
             WHERE org = $1 AND status = 'pending' AND expires_at > $2 ORDER BY created_at",
        )
        .bind(org)
        .bind(now)
        .fetch_all(self.db.pool())
        .await?;
        rows.iter().map(request_from).collect()
    }

    async fn pending_code(&self, org: &str, code: &str, now: i64) -> Result<PairingRequest> {
        let code = code.trim().to_uppercase();
        let row = sqlx::query(
            "SELECT org, code, channel, stored_id, name, status, created_at, expires_at FROM pairing_codes WHERE org = $1 AND code = $2",
        )
        .bind(org)
        .bind(&code)
        .fetch_optional(self.db.pool())
        .await?;
        let req = row
            .as_ref()
            .map(request_from)
            .transpose()?
            .ok_or_else(|| PairingError::UnknownCode(code.clone()))?;
        if req.status != "pending" {
            return Err(PairingError::CodeNotPending {
                code,
                status: req.status,
            });
        }
        if req.expires_at <= now {
            return Err(PairingError::CodeExpired(code));
        }
        Ok(req)
    }

    async fn decide(
        &self,
        org: &str,
        code: &str,
        status: &str,
        role: Option<Role>,
        actor: &str,
        now: i64,
    ) -> Result<()> {
        sqlx::query(
            "UPDATE pairing_codes SET status = $1, decided_by = $2, decided_at = $3, role = $4 WHERE org = $5 AND code = $6 AND status = 'pending'",
        )
        .bind(status)
        .bind(actor)
        .bind(now)
        .bind(role.map(Role::as_str))
        .bind(org)
        .bind(code)
        .execute(self.db.pool())
        .await?;
        Ok(())
    }

    /// Approve a pairing code with a role. Audited.
    pub async fn approve(
        &self,
        org: &str,
        code: &str,
        role: Role,
        actor: &str,
        now: i64,
    ) -> Result<User> {
        let req = self.pending_code(org, code, now).await?;
        self.upsert_user(org, &req.stored_id, &req.name, role, now)
            .await?;
        self.link(org, &req.stored_id, &req.stored_id, now).await?;
        self.decide(org, &req.code, "approved", Some(role), actor, now)
            .await?;
        self.db
            .audit(
                org,
                actor,
                "pairing.approve",
                &req.stored_id,
                &format!("code {} role {role}", req.code),
                now,
            )
            .await?;
        self.user(org, &req.stored_id).await
    }

    /// Deny a pairing code. Audited.
    pub async fn deny(
        &self,
        org: &str,
        code: &str,
        actor: &str,
        now: i64,
    ) -> Result<PairingRequest> {
        let req = self.pending_code(org, code, now).await?;
        self.decide(org, &req.code, "denied", None, actor, now)
            .await?;
        self.db
            .audit(
                org,
                actor,
                "pairing.deny",
                &req.stored_id,
                &format!("code {}", req.code),
                now,
            )
            .await?;
        Ok(req)
    }

    /// Revoke a paired user: their identities resolve to nobody from now on. Audited.
    pub async fn revoke(&self, org: &str, user_id: &str, actor: &str, now: i64) -> Result<()> {
        let changed = sqlx::query(
            "UPDATE users SET status = 'revoked', updated_at = $1 WHERE org = $2 AND user_id = $3",
        )
        .bind(now)
        .bind(org)
        .bind(user_id)
        .execute(self.db.pool())
        .await?
        .rows_affected();
        if changed == 0 {
            return Err(PairingError::UnknownUser(user_id.to_string()));
        }
        self.db
            .audit(org, actor, "pairing.revoke", user_id, "", now)
            .await?;
        Ok(())
    }

    /// Change a paired user's role. Audited.
    pub async fn set_role(
        &self,
        org: &str,
        user_id: &str,
        role: Role,
        actor: &str,
        now: i64,
    ) -> Result<()> {
        let before = self.user(org, user_id).await?;
        sqlx::query("UPDATE users SET role = $1, updated_at = $2 WHERE org = $3 AND user_id = $4")
            .bind(role.as_str())
            .bind(now)
            .bind(org)
            .bind(user_id)
            .execute(self.db.pool())
            .await?;
        self.db
            .audit(
                org,
                actor,
                "pairing.set_role",
                user_id,
                &format!("{} -> {role}", before.role),
                now,
            )
            .await?;
        Ok(())
    }

    /// Whether an unknown sender should get the pairing hint now (at most once
    /// per interval); records the hint when it says yes.
    pub async fn should_hint(&self, org: &str, stored_id: &str, now: i64) -> Result<bool> {
        let changed = sqlx::query(
            "INSERT INTO pairing_hints (org, stored_id, last_hint_at) VALUES ($1, $2, $3) \
             ON CONFLICT (org, stored_id) DO UPDATE SET last_hint_at = excluded.last_hint_at \
             WHERE pairing_hints.last_hint_at <= $4",
        )
        .bind(org)
        .bind(stored_id)
        .bind(now)
        .bind(now - self.settings.hint_interval_ms)
        .execute(self.db.pool())
        .await?
        .rows_affected();
        Ok(changed == 1)
    }

    /// Mint an API key bound to a paired user. Only its hash is stored. Audited.
    pub async fn create_api_key(
        &self,
        org: &str,
        user_id: &str,
        actor: &str,
        now: i64,
    ) -> Result<String> {
        self.user(org, user_id).await?;
        let secret: String = {
            let mut rng = rand::thread_rng();
            (0..40)
                .map(|_| CODE_ALPHABET[rng.gen_range(0..CODE_ALPHABET.len())] as char)
                .collect()
        };
        let key = format!("stw_{secret}");
        sqlx::query(
            "INSERT INTO api_keys (key_hash, org, user_id, created_at) VALUES ($1, $2, $3, $4)",
        )
        .bind(hash_key(&key))
        .bind(org)
        .bind(user_id)
        .bind(now)
        .execute(self.db.pool())
        .await?;
        self.db
            .audit(org, actor, "api_key.create", user_id, "", now)
            .await?;
        Ok(key)
    }

    /// The organisation and active user an API key is bound to.
    pub async fn api_key_user(&self, key: &str) -> Result<Option<User>> {
        let row = sqlx::query(
            "SELECT u.org, u.user_id, u.name, u.role, u.status, u.updated_at FROM api_keys k JOIN users u ON u.org = k.org AND u.user_id = k.user_id \
             WHERE k.key_hash = $1 AND u.status = 'active'",
        )
        .bind(hash_key(key))
        .fetch_optional(self.db.pool())
        .await?;
        row.as_ref().map(user_from).transpose()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_avoid_look_alikes() {
        for _ in 0..200 {
            let c = new_code();
            assert_eq!(c.len(), CODE_LEN);
            assert!(!c.contains(['0', 'O', '1', 'I', 'L']), "{c}");
        }
    }
}
