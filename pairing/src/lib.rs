//! Pairing: who a channel identity is, and what role they have.
//!
//! Architecture Invariant: this crate is the only answer to "what role does
//! this principal have". Roles are set by an admin's approval or `set-role`,
//! never read from message text or a model's answer.

// The 100-line limit is for production code; a test reads top to bottom.
#![cfg_attr(test, allow(clippy::too_many_lines))]
use memory::admin_text;
use memory::admin_text::Identifier;
use memory::store::{NewPairingCode, PairingDecision};
use memory::{Db, Role, StoreError};
use rand::Rng;
use sha2::{Digest, Sha256};

pub use memory::store::{
    Act, ApiKey, Delegation, DelegationChange, KeyHolder, PairingRequest, RequestStatus, User,
    UserStatus,
};

mod delegation;
mod sign_in_link;

pub use sign_in_link::{LinkRefusal, SIGN_IN_LINK_PATH};

/// Pairing codes use an alphabet without look-alikes (no 0/O/1/I/L).
pub const CODE_ALPHABET: &[u8] = b"ABCDEFGHJKMNPQRSTUVWXYZ23456789";
pub const CODE_LEN: usize = 8;

#[derive(Debug, thiserror::Error)]
pub enum PairingError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("no pairing request with code {0}")]
    UnknownCode(String),
    #[error("pairing code {0} has expired; ask for a new one with /pair")]
    CodeExpired(String),
    #[error("pairing code {code} was already {status}")]
    CodeNotPending { code: String, status: String },
    #[error("no paired user {0}")]
    UnknownUser(String),
    #[error("{0} is not active (revoked); pair them again before giving them a key")]
    UserNotActive(String),
    #[error("no API key {0} (`steward api-key list` shows the ids)")]
    UnknownApiKey(String),
    #[error("API key {0} was already revoked")]
    ApiKeyRevoked(String),
    #[error("`{0}` is not a stored identity (such as discord:123456789012345678 or teams:<aad id>): it is empty or has spaces")]
    BadIdentity(String),
    #[error(
        "{identity} is already paired as {role} (user {user_id}); change the role with set-role"
    )]
    AlreadyPaired {
        identity: String,
        user_id: String,
        role: Role,
    },
    #[error("{0} cannot act for themselves: a delegate is another paired person")]
    SelfDelegation(String),
    #[error("{delegate} does not act for {principal}: grant it first (`steward delegate add {principal} {delegate}`)")]
    NotDelegated { principal: String, delegate: String },
    #[error("`{BUILT_IN_ADMIN}` is the built-in dashboard admin: it is neither paired again nor linked to another user")]
    BuiltInAdmin,
}

/// The longest display name kept, in characters.
pub const MAX_NAME_CHARS: usize = 100;

/// A display name as it is kept: control characters (NUL, escapes, line
/// breaks) become spaces, runs of white space one, and it is cut at
/// [`MAX_NAME_CHARS`]. A name is shown, never trusted; this keeps it one
/// line of bounded length on every page, log and prompt.
pub fn display_name(given: &str) -> String {
    let spaced: String = given
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    spaced
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .chars()
        .take(MAX_NAME_CHARS)
        .collect()
}

/// The identity (and user id) the dashboard and `steward chat --as admin`
/// act as: created by steward itself, never re-paired nor linked to anyone.
pub const BUILT_IN_ADMIN: &str = "admin";

pub type Result<T, E = PairingError> = std::result::Result<T, E>;

/// Limits of the pairing flow: how long a code is valid, how many codes one
/// channel account may have pending, how often an unknown sender is told how to pair.
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

/// A key just minted: its public id and the secret, shown once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewApiKey {
    /// The stable non-secret id (`key-…`) to list and revoke it by.
    pub id: String,
    /// The secret for `Authorization: Bearer …`; only its hash is stored.
    pub key: String,
}

/// Prefix of an API key's public id.
pub const KEY_ID_PREFIX: &str = "key-";

#[derive(Clone, Debug)]
pub struct Pairing {
    db: Db,
    settings: PairingSettings,
}

/// `len` characters of the code alphabet, at random.
fn random_code(len: usize) -> String {
    let mut rng = rand::thread_rng();
    (0..len)
        .map(|_| CODE_ALPHABET[rng.gen_range(0..CODE_ALPHABET.len())] as char)
        .collect()
}

fn new_code() -> String {
    random_code(CODE_LEN)
}

fn hash_key(key: &str) -> String {
    hex::encode(Sha256::digest(key.as_bytes()))
}

/// Where a reply shows a new key's secret: the turn puts the secret in as it
/// sends the reply, and stores this.
pub const KEY_SHOWN_ONCE: &str = "[your new key, shown once]";

/// What a key's secret starts with.
pub const KEY_SECRET_PREFIX: &str = "stw_";

/// An API key id as typed: trimmed, the `key-` prefix optional and in any
/// case, the rest upper-case (ids are `key-` and upper-case letters and digits).
pub fn normalise_key_id(id: &str) -> String {
    let id = id.trim();
    let body = match id.get(..KEY_ID_PREFIX.len()) {
        Some(p) if p.eq_ignore_ascii_case(KEY_ID_PREFIX) => &id[KEY_ID_PREFIX.len()..],
        _ => id,
    };
    format!("{KEY_ID_PREFIX}{}", body.to_uppercase())
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
        Ok(self.db.identity().user_by_identity(org, stored_id).await?)
    }

    /// A turn's first read, in one statement: [`Pairing::resolve`] for the
    /// sender's stored id (when there is one), whether the message's platform
    /// id was seen before in its channel, and the conversation's view when
    /// asked ([`memory::Db::opening`]).
    pub async fn open_turn(&self, o: &memory::store::Opening<'_>) -> Result<memory::store::Opened> {
        Ok(self.db.conversations().opening(o).await?)
    }

    /// The paired user `who` names: a linked channel identity (`discord:123`)
    /// or a user id. [`PairingError::UnknownUser`] when it names nobody.
    pub async fn person(&self, org: &str, who: &str) -> Result<User> {
        match self.resolve(org, who).await? {
            Some(u) => Ok(u),
            None => self.user(org, who).await,
        }
    }

    pub async fn user(&self, org: &str, user_id: &str) -> Result<User> {
        self.db
            .identity()
            .paired_user(org, user_id)
            .await?
            .ok_or_else(|| PairingError::UnknownUser(user_id.to_string()))
    }

    pub async fn users(&self, org: &str) -> Result<Vec<User>> {
        Ok(self.db.identity().paired_users(org).await?)
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
        let name = display_name(name);
        let name = if name.is_empty() { user_id } else { &name };
        self.db
            .identity()
            .upsert_user(org, user_id, name, role, now)
            .await?;
        self.link(org, user_id, user_id, now).await?;
        let detail = admin_text!("role {}", role.as_str());
        self.db
            .audit()
            .append(org, actor, "pairing.add", user_id, &detail, now)
            .await?;
        self.user(org, user_id).await
    }

    /// An administrator pairs `identity` directly, without a `/pair` code
    /// (CLI `pairing add`, the dashboard's form): a new user of that id, or a
    /// revoked one made active again, linked to the identity. Refused when
    /// the identity already speaks as an active user. Audited (`pairing.add`).
    pub async fn pair_directly(
        &self,
        org: &str,
        identity: &str,
        name: Option<&str>,
        role: Role,
        actor: &str,
        now: i64,
    ) -> Result<User> {
        let identity = identity.trim();
        if identity.is_empty() || identity.contains(char::is_whitespace) {
            return Err(PairingError::BadIdentity(identity.to_string()));
        }
        if identity == BUILT_IN_ADMIN {
            return Err(PairingError::BuiltInAdmin);
        }
        self.not_speaking_as_another(org, identity, None).await?;
        let name = name
            .map(str::trim)
            .filter(|n| !n.is_empty())
            .unwrap_or(identity);
        self.add_user(org, identity, name, role, actor, now).await
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
        let stored_id = stored_id.trim();
        if stored_id.is_empty() || stored_id.contains(char::is_whitespace) {
            return Err(PairingError::BadIdentity(stored_id.to_string()));
        }
        // The built-in admin's identity is its own, and no one else's user
        // takes it over.
        if (stored_id == BUILT_IN_ADMIN) != (user_id == BUILT_IN_ADMIN) {
            return Err(PairingError::BuiltInAdmin);
        }
        let user = self.user(org, user_id).await?;
        self.not_speaking_as_another(org, stored_id, Some(user_id))
            .await?;
        self.link(org, stored_id, user_id, now).await?;
        let detail = admin_text!("identity {}", Identifier::new(stored_id));
        self.db
            .audit()
            .append(org, actor, "pairing.link", user_id, &detail, now)
            .await?;
        Ok(user)
    }

    /// The one rule of "already paired": an identity that speaks as an
    /// active user (other than `except`) is not paired or linked again.
    async fn not_speaking_as_another(
        &self,
        org: &str,
        identity: &str,
        except: Option<&str>,
    ) -> Result<()> {
        match self.resolve(org, identity).await? {
            Some(u) if Some(u.user_id.as_str()) != except => Err(PairingError::AlreadyPaired {
                identity: identity.to_string(),
                user_id: u.user_id,
                role: u.role,
            }),
            _ => Ok(()),
        }
    }

    /// Link another channel identity to a paired user.
    pub async fn link(&self, org: &str, stored_id: &str, user_id: &str, now: i64) -> Result<()> {
        Ok(self
            .db
            .identity()
            .link_identity(org, stored_id, user_id, now)
            .await?)
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
        if let Some(req) = self
            .db
            .identity()
            .pending_request_of(org, stored_id, now)
            .await?
        {
            return Ok(PairOutcome::Code {
                code: req.code,
                reused: true,
                expires_at: req.expires_at,
            });
        }
        let pending = self
            .db
            .identity()
            .pending_on_channel(org, channel, now)
            .await?;
        if pending >= self.settings.max_pending_per_channel {
            return Ok(PairOutcome::TooManyPending);
        }
        let expires_at = now + self.settings.code_ttl_ms;
        let name = display_name(name);
        let name = name.as_str();
        loop {
            let code = new_code();
            let new = NewPairingCode {
                org,
                code: &code,
                channel,
                stored_id,
                name,
                created_at: now,
                expires_at,
            };
            if self.db.identity().insert_pairing_code(&new).await? {
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
        Ok(self.db.identity().pending_requests(org, now).await?)
    }

    /// The request with `code` (as typed: trimmed, any case), if it is pending and unexpired.
    async fn pending_code(&self, org: &str, code: &str, now: i64) -> Result<PairingRequest> {
        let code = code.trim().to_uppercase();
        let req = self
            .db
            .identity()
            .pairing_request(org, &code)
            .await?
            .ok_or_else(|| PairingError::UnknownCode(code.clone()))?;
        if req.status != RequestStatus::Pending {
            return Err(PairingError::CodeNotPending {
                code,
                status: req.status.to_string(),
            });
        }
        if req.expires_at <= now {
            return Err(PairingError::CodeExpired(code));
        }
        Ok(req)
    }

    /// Approve (with a role) or deny a pending code, atomically with its audit entry.
    async fn decide(
        &self,
        org: &str,
        code: &str,
        role: Option<Role>,
        actor: &str,
        now: i64,
    ) -> Result<PairingRequest> {
        let req = self.pending_code(org, code, now).await?;
        let decision = PairingDecision {
            request: &req,
            role,
            actor,
            now,
        };
        if !self.db.identity().decide_pairing(&decision).await? {
            // Decided by someone else since it was read: report what they decided.
            let status = match self.db.identity().pairing_request(org, &req.code).await? {
                Some(now_stored) => now_stored.status.to_string(),
                None => "removed".to_string(),
            };
            return Err(PairingError::CodeNotPending {
                code: req.code,
                status,
            });
        }
        Ok(req)
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
        let req = self.decide(org, code, Some(role), actor, now).await?;
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
        self.decide(org, code, None, actor, now).await
    }

    /// Revoke a paired user: their identities resolve to nobody and their API
    /// keys are revoked for good, so pairing them again needs a new key.
    /// Audited (`pairing.revoke`, and `api_key.revoke` per key). Returns the
    /// ids of the keys revoked with them.
    pub async fn revoke(
        &self,
        org: &str,
        user_id: &str,
        actor: &str,
        now: i64,
    ) -> Result<Vec<String>> {
        self.db
            .identity()
            .revoke_user(org, user_id, actor, now)
            .await?
            .ok_or_else(|| PairingError::UnknownUser(user_id.to_string()))
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
        self.db
            .identity()
            .set_user_role(org, user_id, role, now)
            .await?;
        let detail = admin_text!("{} -> {}", before.role.as_str(), role.as_str());
        self.db
            .audit()
            .append(org, actor, "pairing.set_role", user_id, &detail, now)
            .await?;
        Ok(())
    }

    /// Whether an unknown sender should get the pairing hint now (at most once
    /// per interval); records the hint when it says yes.
    pub async fn should_hint(&self, org: &str, stored_id: &str, now: i64) -> Result<bool> {
        let since = now - self.settings.hint_interval_ms;
        Ok(self
            .db
            .identity()
            .record_hint(org, stored_id, now, since)
            .await?)
    }

    /// Mint an API key bound to an active paired user: a new public id and a
    /// secret shown once (only its hash is stored). Audited (`api_key.create`).
    pub async fn create_api_key(
        &self,
        org: &str,
        user_id: &str,
        actor: &str,
        now: i64,
    ) -> Result<NewApiKey> {
        self.mint_api_key(org, user_id, None, actor, now).await
    }

    /// A key of `user_id` (active), acting for `on_behalf_of` when given.
    async fn mint_api_key(
        &self,
        org: &str,
        user_id: &str,
        on_behalf_of: Option<&str>,
        actor: &str,
        now: i64,
    ) -> Result<NewApiKey> {
        let user = self.user(org, user_id).await?;
        if user.status != UserStatus::Active {
            return Err(PairingError::UserNotActive(user_id.to_string()));
        }
        loop {
            let id = format!("{KEY_ID_PREFIX}{}", random_code(CODE_LEN));
            let key = format!("{KEY_SECRET_PREFIX}{}", random_code(40));
            if self
                .db
                .identity()
                .insert_api_key(&hash_key(&key), &id, org, user_id, on_behalf_of, now)
                .await?
            {
                let detail = match on_behalf_of {
                    Some(principal) => admin_text!(
                        "key {} on behalf of {}",
                        Identifier::new(&id),
                        Identifier::new(principal)
                    ),
                    None => admin_text!("key {}", Identifier::new(&id)),
                };
                self.db
                    .audit()
                    .append(org, actor, "api_key.create", user_id, &detail, now)
                    .await?;
                return Ok(NewApiKey { id, key });
            }
        }
    }

    /// The API keys of an organisation, or of one user: ids, never secrets.
    pub async fn api_keys(&self, org: &str, user_id: Option<&str>) -> Result<Vec<ApiKey>> {
        Ok(self.db.identity().api_keys(org, user_id).await?)
    }

    /// Revoke one API key by its id (`key-…`; the prefix and case as typed
    /// are forgiven). It never works again. Audited (`api_key.revoke`).
    pub async fn revoke_api_key(
        &self,
        org: &str,
        key_id: &str,
        actor: &str,
        now: i64,
    ) -> Result<ApiKey> {
        let id = normalise_key_id(key_id);
        let Some(key) = self.db.identity().api_key(org, &id).await? else {
            return Err(PairingError::UnknownApiKey(key_id.trim().to_string()));
        };
        let by = Act {
            org,
            actor,
            at: now,
        };
        if key.revoked_at.is_some() || !self.db.identity().revoke_api_key(&id, by).await? {
            return Err(PairingError::ApiKeyRevoked(id));
        }
        self.db
            .identity()
            .api_key(org, &id)
            .await?
            .ok_or(PairingError::UnknownApiKey(id))
    }

    /// Whose key is this: the active user an API key is bound to, or none
    /// when the key is unknown or revoked (by id or with its user) or its
    /// user is not active.
    pub async fn api_key_user(&self, key: &str) -> Result<Option<User>> {
        Ok(self.db.identity().user_by_api_key(&hash_key(key)).await?)
    }

    /// Whose key is this, and on whose behalf it acts: as
    /// [`Pairing::api_key_user`], and none either when it was made on
    /// someone's behalf and that delegation ended.
    pub async fn api_key_holder(&self, key: &str) -> Result<Option<KeyHolder>> {
        Ok(self.db.identity().api_key_holder(&hash_key(key)).await?)
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

    #[test]
    fn key_ids_are_forgiven_their_case_and_prefix() {
        for typed in ["key-7KQ2M9XP", " KEY-7kq2m9xp ", "7KQ2M9XP", "Key-7Kq2M9xP"] {
            assert_eq!(normalise_key_id(typed), "key-7KQ2M9XP", "{typed:?}");
        }
    }
}
