//! Work roles and the role tier (docs/memory.md, "Roles and role memory").
//!
//! A person holds any number of work roles (`analyst`, `sre`, …), apart from
//! their authority (admin/user); administrators set them and grant
//! `role_memory.manage` per role, each change audited. What everyone in a
//! role shares (`org/{org}/role/{role}`: rubric versions, terms, lessons) is
//! written only by two-party curation: a proposal is accepted by a manager of
//! the role and confirmed by a *different* person who holds the role at the
//! moment of confirming; both decisions are bound to the content hash (an
//! edit resets them), and a proposal not confirmed within 14 days expires.
//! A confirmed proposal becomes an active record of scope `role` (agent `*`,
//! owner the role's name); a new rubric supersedes the old one, and retiring
//! an entry is a revision that `Records::undo_revision` undoes.

use super::audit::Act;
use super::people::User;
use super::{Db, Result as StoreResult, StoreError};
use crate::admin_text::{AdminText, Identifier};
use crate::model::Status;
use crate::scrub::ScrubRefusal;
use crate::store::UserStatus;
use crate::Role;
use serde::Serialize;
use sha2::{Digest, Sha256};
use sqlx::{Any, Transaction};

mod curation;

pub use curation::{NewRoleProposal, ProposalDecision};

/// How long a proposal waits for its two decisions: 14 days, in ms.
pub const PROPOSAL_TTL_MS: i64 = 14 * 24 * 60 * 60 * 1000;

/// The longest role name.
pub const MAX_ROLE_CHARS: usize = 32;

named_enum! {
    /// What a role entry is.
    #[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
    pub enum RoleKind {
        /// The role's rubric: versioned, one active version per role.
        Rubric,
        /// Vocabulary of the role.
        Term,
        /// A curated lesson.
        Lesson,
    }
}

named_enum! {
    /// A permission held for one role.
    #[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
    pub enum Permission {
        /// Accept proposals to the role's memory (and draft, edit, retire them).
        #[serde(rename = "role_memory.manage")]
        #[strum(serialize = "role_memory.manage")]
        RoleMemoryManage,
    }
}

/// A change to whom a role, or a permission for one, is given: adding a
/// role (`role.add`), removing it (`role.remove`: their next turn no longer
/// reads its memory), granting a permission (`role.grant`), withdrawing it
/// (`role.ungrant`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RoleChange<'a> {
    Add(&'a str),
    Remove(&'a str),
    Grant(Permission, &'a str),
    Ungrant(Permission, &'a str),
}

impl RoleChange<'_> {
    /// The role it concerns.
    pub fn role(&self) -> &str {
        match self {
            RoleChange::Add(r) | RoleChange::Remove(r) => r,
            RoleChange::Grant(_, r) | RoleChange::Ungrant(_, r) => r,
        }
    }

    /// Its audit action and detail.
    fn audit(&self) -> (&'static str, AdminText) {
        match self {
            RoleChange::Add(r) => ("role.add", admin_text!("role {}", Identifier::new(r))),
            RoleChange::Remove(r) => ("role.remove", admin_text!("role {}", Identifier::new(r))),
            RoleChange::Grant(p, r) => (
                "role.grant",
                admin_text!("{} for role {}", p.as_str(), Identifier::new(r)),
            ),
            RoleChange::Ungrant(p, r) => (
                "role.ungrant",
                admin_text!("{} for role {}", p.as_str(), Identifier::new(r)),
            ),
        }
    }
}

named_enum! {
    /// Where a proposal is in its curation.
    #[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
    pub enum ProposalStatus {
        /// Waiting for a manager of the role.
        Proposed,
        /// Accepted; waiting for another holder of the role.
        Accepted,
        /// Confirmed: an entry of the role's memory (active, or retired since).
        Confirmed,
        /// Not confirmed within 14 days.
        Expired,
    }
}

named_enum! {
    /// The two decisions of two-party curation, in their order: a manager
    /// accepts, then another holder confirms.
    pub enum CurationStep {
        Accept,
        Confirm,
    }
}

/// Why a role operation was refused. Each maps to an HTTP status and a code.
#[derive(Debug, thiserror::Error)]
pub enum RoleError {
    #[error(
        "invalid role name `{0}`: lower-case letters, digits and hyphens, at most 32 characters"
    )]
    InvalidRole(String),
    #[error("no active paired person `{0}`")]
    NoSuchPerson(String),
    #[error("no role memory proposal {0}")]
    NotFound(i64),
    #[error("{0} does not hold role_memory.manage for role `{1}`")]
    NotManager(String, String),
    #[error("{0} does not hold the role `{1}`")]
    NotHolder(String, String),
    #[error("{0} may not propose to role `{1}`: hold the role, manage it, or be an administrator")]
    MayNotPropose(String, String),
    #[error("record {0} is not an active record of yours")]
    NotYourRecord(i64),
    #[error("the confirmer must be a different person from the one who accepted it ({0})")]
    SamePerson(String),
    #[error("the text changed since it was shown: its hash is now {current}")]
    StaleHash { current: String },
    #[error("proposal {id} is {status}, not {expected}")]
    WrongState {
        id: i64,
        status: &'static str,
        expected: &'static str,
    },
    #[error("proposal {0} expired: proposals wait at most 14 days")]
    Expired(i64),
    #[error("{0}")]
    Scrubbed(#[from] ScrubRefusal),
    #[error("{0}")]
    Screened(#[from] crate::screen::WriteRefusal),
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl From<sqlx::Error> for RoleError {
    fn from(e: sqlx::Error) -> Self {
        RoleError::Store(e.into())
    }
}

impl RoleError {
    /// The JSON error code of the refusal.
    pub fn code(&self) -> &'static str {
        match self {
            RoleError::InvalidRole(_) => "invalid_role",
            RoleError::NoSuchPerson(_) => "no_such_person",
            RoleError::NotFound(_) => "not_found",
            RoleError::NotManager(..) => "not_a_manager",
            RoleError::NotHolder(..) => "not_a_holder",
            RoleError::MayNotPropose(..) => "may_not_propose",
            RoleError::NotYourRecord(_) => "not_your_record",
            RoleError::SamePerson(_) => "same_person",
            RoleError::StaleHash { .. } => "stale_hash",
            RoleError::WrongState { .. } => "wrong_state",
            RoleError::Expired(_) => "expired",
            RoleError::Scrubbed(r) => r.code(),
            RoleError::Screened(_) => "refused_text",
            RoleError::Store(StoreError::NotFound(_)) => "not_found",
            RoleError::Store(_) => "internal",
        }
    }

    /// The HTTP status of the refusal.
    pub fn http_status(&self) -> u16 {
        match self {
            RoleError::InvalidRole(_) | RoleError::Screened(_) | RoleError::Scrubbed(_) => 422,
            RoleError::NoSuchPerson(_) | RoleError::NotFound(_) => 404,
            RoleError::Store(StoreError::NotFound(_)) => 404,
            RoleError::NotManager(..)
            | RoleError::NotHolder(..)
            | RoleError::MayNotPropose(..)
            | RoleError::NotYourRecord(_) => 403,
            RoleError::SamePerson(_)
            | RoleError::StaleHash { .. }
            | RoleError::WrongState { .. } => 409,
            RoleError::Expired(_) => 410,
            RoleError::Store(_) => 500,
        }
    }
}

pub type Result<T, E = RoleError> = std::result::Result<T, E>;

/// Check a role name: lower-case letters, digits and hyphens, 1 to 32 characters.
pub fn valid_role(name: &str) -> Result<()> {
    let ok = !name.is_empty()
        && name.chars().count() <= MAX_ROLE_CHARS
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
    if ok {
        Ok(())
    } else {
        Err(RoleError::InvalidRole(name.to_string()))
    }
}

/// The address of a role's memory.
pub fn role_address(org: &str, role: &str) -> String {
    format!("org/{org}/role/{role}")
}

/// sha256 of a proposal's text, hex: what both decisions are bound to.
pub fn content_hash(content: &str) -> String {
    hex::encode(Sha256::digest(content.as_bytes()))
}

/// How much of a content hash chat and the CLI show, and the least a
/// decision may name: 32 hex characters (128 bits). The proposer writes both
/// texts, so a shorter prefix could be matched by a pair of texts found by
/// trying (12 characters take some 16 million tries), and an edit swapped in
/// under the prefix the decider was shown.
pub const SHOWN_HASH_CHARS: usize = 32;

/// The part of `hash` chat and the CLI show ([`SHOWN_HASH_CHARS`]).
pub fn shown_hash(hash: &str) -> &str {
    hash.get(..SHOWN_HASH_CHARS).unwrap_or(hash)
}

/// One grant of a permission for a role.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, sqlx::FromRow)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RoleGrant {
    pub user_id: String,
    pub role: String,
    pub permission: String,
    pub granted_by: String,
    pub granted_at: i64,
}

/// A proposal to a role's memory, and what became of it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RoleEntry {
    pub id: i64,
    pub org: String,
    pub role: String,
    pub kind: RoleKind,
    pub content: String,
    pub content_hash: String,
    /// As stored, except a pending proposal past its 14 days reads `expired`.
    pub status: ProposalStatus,
    pub proposed_by: String,
    /// Whose behalf a delegated proposal was made on.
    pub on_behalf_of: Option<String>,
    pub source_record: Option<i64>,
    pub proposed_at: i64,
    pub accepted_by: Option<String>,
    pub accepted_at: Option<i64>,
    pub confirmed_by: Option<String>,
    pub confirmed_at: Option<i64>,
    /// The role record a confirmed proposal became.
    pub record_id: Option<i64>,
    /// That record's status: `active`, or `superseded` once retired or replaced.
    pub record_status: Option<Status>,
}

impl RoleEntry {
    /// Whether this entry is read by the role's holders now.
    pub fn is_active(&self) -> bool {
        self.record_status == Some(Status::Active)
    }

    /// `wrong_state`: a decision that needs this proposal `expected`.
    fn wrong_state(&self, expected: &'static str) -> RoleError {
        RoleError::WrongState {
            id: self.id,
            status: self.status.as_str(),
            expected,
        }
    }
}

/// Work roles, their grants, and the role tier's curation (`Db::role_memory`).
#[derive(Clone, Copy)]
pub struct RoleMemory<'a> {
    pub(super) db: &'a Db,
}

impl RoleMemory<'_> {
    async fn active_user(&self, org: &str, user: &str) -> Result<User> {
        match self.db.identity().paired_user(org, user).await? {
            Some(u) if u.status == UserStatus::Active => Ok(u),
            _ => Err(RoleError::NoSuchPerson(user.to_string())),
        }
    }

    /// The roles `user` holds now, by name.
    pub async fn roles_of(&self, org: &str, user: &str) -> StoreResult<Vec<String>> {
        let text = "SELECT ur.role FROM user_roles ur JOIN users u ON u.org = ur.org \
                    AND u.user_id = ur.user_id AND u.status = $3 \
                    WHERE ur.org = $1 AND ur.user_id = $2 ORDER BY ur.role";
        self.held_by_active(text, org, user).await
    }

    /// The people who hold `role` now.
    pub async fn holders(&self, org: &str, role: &str) -> StoreResult<Vec<String>> {
        let text = "SELECT ur.user_id FROM user_roles ur JOIN users u ON u.org = ur.org \
                    AND u.user_id = ur.user_id AND u.status = $3 \
                    WHERE ur.org = $1 AND ur.role = $2 ORDER BY ur.user_id";
        self.held_by_active(text, org, role).await
    }

    /// The one column `text` selects of the roles held by active people
    /// (`$1` the organisation, `$2` the user or the role, `$3` active).
    async fn held_by_active(&self, text: &str, org: &str, key: &str) -> StoreResult<Vec<String>> {
        let rows: Vec<(String,)> = sql!(text, org, key, UserStatus::Active)
            .all(&self.db.pool)
            .await?;
        Ok(rows.into_iter().map(|(r,)| r).collect())
    }

    /// Whether `user` holds `role` now.
    pub async fn holds(&self, org: &str, user: &str, role: &str) -> StoreResult<bool> {
        Ok(self.roles_of(org, user).await?.iter().any(|r| r == role))
    }

    /// Make `change` to `user`'s roles or grants, audited under its action
    /// in the same transaction. False, with nothing audited, when it changed
    /// nothing (the role or grant was held already, or was not held).
    pub async fn change(
        &self,
        org: &str,
        user: &str,
        change: RoleChange<'_>,
        actor: &str,
        now: i64,
    ) -> Result<bool> {
        valid_role(change.role())?;
        if matches!(change, RoleChange::Add(_) | RoleChange::Grant(..)) {
            self.active_user(org, user).await?;
        }
        let q = match change {
            RoleChange::Add(role) => sql!(
                "INSERT INTO user_roles (org, user_id, role, granted_by, granted_at) \
                 VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING",
                org,
                user,
                role,
                actor,
                now
            ),
            RoleChange::Remove(role) => sql!(
                "DELETE FROM user_roles WHERE org = $1 AND user_id = $2 AND role = $3",
                org,
                user,
                role
            ),
            RoleChange::Grant(permission, role) => sql!(
                "INSERT INTO role_grants (org, user_id, role, permission, granted_by, granted_at) \
                 VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING",
                org,
                user,
                role,
                permission.as_str(),
                actor,
                now
            ),
            RoleChange::Ungrant(permission, role) => sql!(
                "DELETE FROM role_grants WHERE org = $1 AND user_id = $2 AND role = $3 \
                 AND permission = $4",
                org,
                user,
                role,
                permission.as_str()
            ),
        };
        let Some(mut tx) = q.exec_first(&self.db.pool).await? else {
            return Ok(false);
        };
        let (action, detail) = change.audit();
        let by = Act {
            org,
            actor,
            at: now,
        };
        by.audit(&mut *tx, action, user, &detail).await?;
        tx.commit().await?;
        Ok(true)
    }

    /// The grants `user` holds (every grant of the organisation when `None`).
    pub async fn grants(&self, org: &str, user: Option<&str>) -> StoreResult<Vec<RoleGrant>> {
        let text = "SELECT user_id, role, permission, granted_by, granted_at FROM role_grants \
                    WHERE org = $1 AND (CAST($2 AS TEXT) IS NULL OR user_id = $2) \
                    ORDER BY user_id, role, permission";
        sql!(text, org, user).all(&self.db.pool).await
    }

    /// Whether `user`, active, holds `role_memory.manage` for `role`.
    pub async fn manages(&self, org: &str, user: &str, role: &str) -> StoreResult<bool> {
        let text = "SELECT COUNT(*) FROM role_grants g JOIN users u ON u.org = g.org \
                    AND u.user_id = g.user_id AND u.status = $5 \
                    WHERE g.org = $1 AND g.user_id = $2 AND g.role = $3 AND g.permission = $4";
        let q = sql!(
            text,
            org,
            user,
            role,
            Permission::RoleMemoryManage.as_str(),
            UserStatus::Active
        );
        let (n,): (i64,) = q.one(&self.db.pool).await?;
        Ok(n > 0)
    }

    /// Whether `user` may draft, edit or retire entries of `role`: an
    /// administrator or a manager of the role.
    pub async fn curates(&self, org: &str, user: &str, role: &str) -> StoreResult<bool> {
        let admin = matches!(
            self.db.identity().paired_user(org, user).await?,
            Some(u) if u.status == UserStatus::Active && u.role == Role::Admin
        );
        Ok(admin || self.manages(org, user, role).await?)
    }
}

/// A revoked person's roles and grants end with them, each audited. Part
/// of `Identity::revoke_user`'s transaction.
pub(super) async fn end_roles_of(
    tx: &mut Transaction<'_, Any>,
    user: &str,
    by: Act<'_>,
) -> StoreResult<()> {
    let org = by.org;
    let text = "SELECT role FROM user_roles WHERE org = $1 AND user_id = $2 ORDER BY role";
    let roles: Vec<(String,)> = sql!(text, org, user).all(&mut **tx).await?;
    let text =
        "SELECT role, permission FROM role_grants WHERE org = $1 AND user_id = $2 ORDER BY role";
    let grants: Vec<(String, String)> = sql!(text, org, user).all(&mut **tx).await?;
    sql!(
        "DELETE FROM user_roles WHERE org = $1 AND user_id = $2",
        org,
        user
    )
    .exec(&mut **tx)
    .await?;
    sql!(
        "DELETE FROM role_grants WHERE org = $1 AND user_id = $2",
        org,
        user
    )
    .exec(&mut **tx)
    .await?;
    for (role,) in roles {
        let detail = admin_text!(
            "role {} (ended with the revocation)",
            Identifier::new(&role)
        );
        by.audit(&mut **tx, "role.remove", user, &detail).await?;
    }
    for (role, permission) in grants {
        let detail = admin_text!(
            "{} for role {} (ended with the revocation)",
            Identifier::new(&permission),
            Identifier::new(&role)
        );
        by.audit(&mut **tx, "role.ungrant", user, &detail).await?;
    }
    Ok(())
}
