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
use super::records::{activate_on, fetch, insert_on, SubjectRuleRun};
use super::revisions::{insert_revision, NewRevision, RevisionMeta};
use super::{Db, Result as StoreResult, StoreError};
use crate::admin_text::{AdminText, Identifier};
use crate::model::{NewRecord, Scope, Status, ANY_AGENT};
use crate::scrub::{scrub, ScrubRefusal};
use crate::store::UserStatus;
use crate::Role;
use serde::Serialize;
use sha2::{Digest, Sha256};
use sqlx::{Any, Transaction};

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

/// What a proposal is called in the audit log, in its record's source and
/// in the revisions it makes.
fn proposal_ref(id: i64) -> String {
    format!("role_proposal:{id}")
}

/// Append `action` on proposal `id` to the audit log, in its transaction.
async fn audit_proposal(
    tx: &mut Transaction<'_, Any>,
    by: Act<'_>,
    action: &str,
    id: i64,
    detail: &AdminText,
) -> StoreResult<()> {
    by.audit(&mut **tx, action, &proposal_ref(id), detail).await
}

#[derive(sqlx::FromRow)]
struct Row {
    id: i64,
    org: String,
    role: String,
    kind: String,
    content: String,
    content_hash: String,
    status: String,
    proposed_by: String,
    on_behalf_of: Option<String>,
    source_record: Option<i64>,
    proposed_at: i64,
    accepted_by: Option<String>,
    accepted_hash: Option<String>,
    accepted_at: Option<i64>,
    confirmed_by: Option<String>,
    confirmed_at: Option<i64>,
    record_id: Option<i64>,
    record_status: Option<String>,
}

const SELECT: &str = "SELECT p.id, p.org, p.role, p.kind, p.content, p.content_hash, p.status, \
     p.proposed_by, p.on_behalf_of, p.source_record, p.proposed_at, p.accepted_by, p.accepted_hash, \
     p.accepted_at, p.confirmed_by, p.confirmed_at, p.record_id, r.status AS record_status \
     FROM role_proposals p LEFT JOIN memory_records r ON r.org = p.org AND r.id = p.record_id";

impl Row {
    fn entry(self, now: i64) -> StoreResult<(RoleEntry, Option<String>)> {
        let corrupt =
            |what: &str, v: &str| StoreError::Corrupt(format!("role proposal {what} `{v}`"));
        let kind: RoleKind = self.kind.parse().map_err(|_| corrupt("kind", &self.kind))?;
        let mut status: ProposalStatus = self
            .status
            .parse()
            .map_err(|_| corrupt("status", &self.status))?;
        if matches!(status, ProposalStatus::Proposed | ProposalStatus::Accepted)
            && now - self.proposed_at >= PROPOSAL_TTL_MS
        {
            status = ProposalStatus::Expired;
        }
        let record_status = match self.record_status {
            Some(s) => Some(Status::parse(&s).ok_or_else(|| corrupt("record status", &s))?),
            None => None,
        };
        Ok((
            RoleEntry {
                id: self.id,
                org: self.org,
                role: self.role,
                kind,
                content: self.content,
                content_hash: self.content_hash,
                status,
                proposed_by: self.proposed_by,
                on_behalf_of: self.on_behalf_of,
                source_record: self.source_record,
                proposed_at: self.proposed_at,
                accepted_by: self.accepted_by,
                accepted_at: self.accepted_at,
                confirmed_by: self.confirmed_by,
                confirmed_at: self.confirmed_at,
                record_id: self.record_id,
                record_status,
            },
            self.accepted_hash,
        ))
    }
}

/// One of the two decisions on proposal `id` (accept, confirm), taken by
/// `by.actor` on the text whose content hash is `seen` (when given).
#[derive(Debug, Clone, Copy)]
pub struct ProposalDecision<'a> {
    pub id: i64,
    pub seen: Option<&'a str>,
    pub by: Act<'a>,
}

/// A proposal about to be made.
#[derive(Debug, Clone)]
pub struct NewRoleProposal<'a> {
    pub org: &'a str,
    pub role: &'a str,
    pub kind: RoleKind,
    pub content: &'a str,
    /// Who proposes it (a paired person).
    pub proposed_by: &'a str,
    /// Set when a delegated turn or key proposes it.
    pub on_behalf_of: Option<&'a str>,
    /// The record of the proposer's it was shared from.
    pub source_record: Option<i64>,
    pub now: i64,
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

    /// The names that may not appear in role memory: every paired person's display name.
    async fn paired_names(&self, org: &str) -> StoreResult<Vec<String>> {
        Ok(self
            .db
            .identity()
            .paired_users(org)
            .await?
            .into_iter()
            .map(|u| u.name)
            .filter(|n| n != "admin")
            .collect())
    }

    /// Screen and scrub a proposal's text: the text to keep.
    async fn clean(&self, org: &str, content: &str) -> Result<String> {
        let names = self.paired_names(org).await?;
        scrub(content, &names)?;
        let kept = crate::screen::screen_text("", content)?;
        // What sanitising left must pass too.
        scrub(&kept, &names)?;
        Ok(kept)
    }

    /// Propose an entry to a role's memory: by a holder of the role, a
    /// manager of it or an administrator. Refused, with nothing stored, when
    /// the text holds personal data or ids. Audited `role_memory.propose`.
    pub async fn propose(&self, p: &NewRoleProposal<'_>) -> Result<RoleEntry> {
        valid_role(p.role)?;
        self.active_user(p.org, p.proposed_by).await?;
        if !self.holds(p.org, p.proposed_by, p.role).await?
            && !self.curates(p.org, p.proposed_by, p.role).await?
        {
            return Err(RoleError::MayNotPropose(
                p.proposed_by.to_string(),
                p.role.to_string(),
            ));
        }
        let content = self.clean(p.org, p.content).await?;
        let hash = content_hash(&content);
        let mut tx = super::begin(&self.db.pool).await?;
        let text = "INSERT INTO role_proposals (org, role, kind, content, content_hash, status, \
                    proposed_by, on_behalf_of, source_record, proposed_at) \
                    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING id";
        let q = sql!(text, p.org, p.role, p.kind.as_str(), &content, &hash)
            .arg(ProposalStatus::Proposed.as_str())
            .arg(p.proposed_by)
            .arg(p.on_behalf_of)
            .arg(p.source_record)
            .arg(p.now);
        let (id,): (i64,) = q.one(&mut *tx).await?;
        let proposed = admin_text!("{} for role {}", p.kind.as_str(), Identifier::new(p.role));
        let detail = match p.on_behalf_of {
            Some(principal) => {
                admin_text!("{}; on behalf of {}", proposed, Identifier::new(principal))
            }
            None => proposed,
        };
        let by = Act {
            org: p.org,
            actor: p.proposed_by,
            at: p.now,
        };
        audit_proposal(&mut tx, by, "role_memory.propose", id, &detail).await?;
        tx.commit().await?;
        self.get(p.org, id, p.now).await
    }

    /// Share one of `sharer`'s own active records with a role they hold: a
    /// proposal of it (a vocabulary record becomes a term, anything else a lesson).
    pub async fn share(
        &self,
        org: &str,
        record: i64,
        role: &str,
        sharer: &str,
        on_behalf_of: Option<&str>,
        now: i64,
    ) -> Result<RoleEntry> {
        valid_role(role)?;
        let mut conn = self.db.pool.acquire().await?;
        let rec = fetch(&mut conn, org, record).await?;
        drop(conn);
        let Some(rec) = rec.filter(|r| {
            r.status == Status::Active
                && r.scope.is_personal()
                && r.owner.as_deref() == Some(sharer)
        }) else {
            return Err(RoleError::NotYourRecord(record));
        };
        if !self.holds(org, sharer, role).await? {
            return Err(RoleError::NotHolder(sharer.to_string(), role.to_string()));
        }
        let kind = if rec.is_kind(crate::Kind::Vocabulary) {
            RoleKind::Term
        } else {
            RoleKind::Lesson
        };
        self.propose(&NewRoleProposal {
            org,
            role,
            kind,
            content: &rec.content,
            proposed_by: sharer,
            on_behalf_of,
            source_record: Some(record),
            now,
        })
        .await
    }

    async fn row(&self, org: &str, id: i64, now: i64) -> Result<(RoleEntry, Option<String>)> {
        let text = format!("{SELECT} WHERE p.org = $1 AND p.id = $2");
        let row: Option<Row> = sql!(text, org, id).opt(&self.db.pool).await?;
        Ok(row.ok_or(RoleError::NotFound(id))?.entry(now)?)
    }

    /// One proposal, as of `now` (a pending one past its 14 days reads `expired`).
    pub async fn get(&self, org: &str, id: i64, now: i64) -> Result<RoleEntry> {
        Ok(self.row(org, id, now).await?.0)
    }

    /// The proposals and entries of a role, oldest first, as of `now`.
    pub async fn list(&self, org: &str, role: &str, now: i64) -> Result<Vec<RoleEntry>> {
        valid_role(role)?;
        let text = format!("{SELECT} WHERE p.org = $1 AND p.role = $2 ORDER BY p.id");
        let rows: Vec<Row> = sql!(text, org, role).all(&self.db.pool).await?;
        Ok(rows
            .into_iter()
            .map(|r| r.entry(now).map(|(e, _)| e))
            .collect::<StoreResult<_>>()?)
    }

    /// The roles that have proposals or entries, by name.
    pub async fn roles_with_memory(&self, org: &str) -> StoreResult<Vec<String>> {
        let text = "SELECT DISTINCT role FROM role_proposals WHERE org = $1 ORDER BY role";
        let rows: Vec<(String,)> = sql!(text, org).all(&self.db.pool).await?;
        Ok(rows.into_iter().map(|(r,)| r).collect())
    }

    /// Mark a pending proposal past its 14 days expired (audited), and refuse.
    async fn refuse_if_expired(&self, e: &RoleEntry, now: i64) -> Result<()> {
        if e.status != ProposalStatus::Expired {
            return Ok(());
        }
        let mut tx = super::begin(&self.db.pool).await?;
        let text = "UPDATE role_proposals SET status = $1 WHERE org = $2 AND id = $3 AND status IN ($4, $5)";
        let q = sql!(
            text,
            ProposalStatus::Expired.as_str(),
            &e.org,
            e.id,
            ProposalStatus::Proposed.as_str(),
            ProposalStatus::Accepted.as_str()
        );
        if q.exec(&mut *tx).await? > 0 {
            let (action, detail) = (
                "role_memory.expire",
                AdminText::fixed("not confirmed within 14 days"),
            );
            let by = Act {
                org: &e.org,
                actor: "system",
                at: now,
            };
            audit_proposal(&mut tx, by, action, e.id, &detail).await?;
        }
        tx.commit().await?;
        Err(RoleError::Expired(e.id))
    }

    /// Whether `seen` (the full hash, or its first [`SHOWN_HASH_CHARS`]
    /// characters at least) is the hash of the text as it is now.
    fn bound(e: &RoleEntry, seen: Option<&str>) -> Result<()> {
        match seen.map(|h| h.trim().to_ascii_lowercase()) {
            Some(h) if h.len() < SHOWN_HASH_CHARS || !e.content_hash.starts_with(&h) => {
                Err(RoleError::StaleHash {
                    current: e.content_hash.clone(),
                })
            }
            _ => Ok(()),
        }
    }

    /// Accept a proposal: `actor` holds `role_memory.manage` for its role.
    /// `seen` is the content hash the actor decided on (refused when the
    /// text changed since). Audited `role_memory.accept`.
    pub async fn accept(&self, decision: &ProposalDecision<'_>) -> Result<RoleEntry> {
        let ProposalDecision { id, seen, by } = *decision;
        let (org, actor, now) = (by.org, by.actor, by.at);
        let e = self.get(org, id, now).await?;
        self.refuse_if_expired(&e, now).await?;
        if e.status != ProposalStatus::Proposed {
            return Err(e.wrong_state(ProposalStatus::Proposed.as_str()));
        }
        if !self.manages(org, actor, &e.role).await? {
            return Err(RoleError::NotManager(actor.to_string(), e.role));
        }
        Self::bound(&e, seen)?;
        let mut tx = super::begin(&self.db.pool).await?;
        let text = "UPDATE role_proposals SET status = $1, accepted_by = $2, accepted_hash = $3, \
                    accepted_at = $4 WHERE org = $5 AND id = $6 AND status = $7 AND content_hash = $3";
        let q = sql!(
            text,
            ProposalStatus::Accepted.as_str(),
            actor,
            &e.content_hash,
            now,
            org,
            id,
            ProposalStatus::Proposed.as_str()
        );
        if q.exec(&mut *tx).await? == 0 {
            return Err(RoleError::StaleHash {
                current: e.content_hash,
            });
        }
        let detail = admin_text!(
            "role {}; accepted by {}; hash {}",
            Identifier::new(&e.role),
            Identifier::new(actor),
            Identifier::new(&e.content_hash)
        );
        audit_proposal(&mut tx, by, "role_memory.accept", id, &detail).await?;
        tx.commit().await?;
        self.get(org, id, now).await
    }

    /// Confirm an accepted proposal: `actor` is not the one who accepted it
    /// and holds its role at this moment; the text is the one accepted. It
    /// becomes an active record of the role (a rubric supersedes the
    /// previous version). Audited `role_memory.confirm`, naming both people.
    pub async fn confirm(&self, decision: &ProposalDecision<'_>) -> Result<RoleEntry> {
        let ProposalDecision { id, seen, by } = *decision;
        let (org, actor, now) = (by.org, by.actor, by.at);
        let (e, accepted_hash) = self.row(org, id, now).await?;
        self.refuse_if_expired(&e, now).await?;
        if e.status != ProposalStatus::Accepted {
            return Err(e.wrong_state(ProposalStatus::Accepted.as_str()));
        }
        let accepted_by = e.accepted_by.clone().unwrap_or_default();
        if accepted_by == actor {
            return Err(RoleError::SamePerson(accepted_by));
        }
        if !self.holds(org, actor, &e.role).await? {
            return Err(RoleError::NotHolder(actor.to_string(), e.role));
        }
        Self::bound(&e, seen)?;
        if accepted_hash.as_deref() != Some(e.content_hash.as_str()) {
            return Err(RoleError::StaleHash {
                current: e.content_hash,
            });
        }
        let mut tx = super::begin(&self.db.pool).await?;
        let text = "UPDATE role_proposals SET status = $1, confirmed_by = $2, confirmed_at = $3 \
                    WHERE org = $4 AND id = $5 AND status = $6 AND content_hash = $7";
        let q = sql!(
            text,
            ProposalStatus::Confirmed.as_str(),
            actor,
            now,
            org,
            id,
            ProposalStatus::Accepted.as_str(),
            &e.content_hash
        );
        if q.exec(&mut *tx).await? == 0 {
            return Err(RoleError::StaleHash {
                current: e.content_hash,
            });
        }
        let subject = match e.kind {
            RoleKind::Rubric => "rubric".to_string(),
            kind => format!("{}:{}", kind.as_str(), content_hash(&e.content)),
        };
        let rec = NewRecord::said(
            org,
            ANY_AGENT,
            Scope::Role,
            e.kind.as_str(),
            subject,
            &e.content,
            now,
        )
        .owner(Some(e.role.clone()))
        .status(Status::Pending)
        .source(proposal_ref(id))
        .author(Some(e.proposed_by.clone()))
        .on_behalf_of(e.on_behalf_of.clone());
        let record = insert_on(&mut tx, &rec).await?;
        let run_id = proposal_ref(id);
        let run = SubjectRuleRun {
            org,
            id: record,
            cause: "role_curation",
            run_id: &run_id,
            now,
        };
        activate_on(&mut tx, &run).await?;
        let text = "UPDATE role_proposals SET record_id = $1 WHERE org = $2 AND id = $3";
        sql!(text, record, org, id).exec(&mut *tx).await?;
        let detail = admin_text!(
            "role {}; accepted by {}; confirmed by {}; hash {}; record {}",
            Identifier::new(&e.role),
            Identifier::new(&accepted_by),
            Identifier::new(actor),
            Identifier::new(&e.content_hash),
            record
        );
        audit_proposal(&mut tx, by, "role_memory.confirm", id, &detail).await?;
        tx.commit().await?;
        self.db.written();
        self.get(org, id, now).await
    }

    /// Take one of the two decisions on proposal `id`: `accept` or `confirm`.
    pub async fn decide(
        &self,
        step: CurationStep,
        org: &str,
        id: i64,
        actor: &str,
        seen: Option<&str>,
        now: i64,
    ) -> Result<RoleEntry> {
        let by = Act {
            org,
            actor,
            at: now,
        };
        let decision = ProposalDecision { id, seen, by };
        match step {
            CurationStep::Accept => self.accept(&decision).await,
            CurationStep::Confirm => self.confirm(&decision).await,
        }
    }

    /// Change a pending proposal's text: both decisions are reset (it is
    /// `proposed` again). By its proposer, a manager of the role or an
    /// administrator. Audited `role_memory.edit`.
    pub async fn edit(
        &self,
        org: &str,
        id: i64,
        actor: &str,
        content: &str,
        now: i64,
    ) -> Result<RoleEntry> {
        let e = self.get(org, id, now).await?;
        self.refuse_if_expired(&e, now).await?;
        if !matches!(
            e.status,
            ProposalStatus::Proposed | ProposalStatus::Accepted
        ) {
            return Err(e.wrong_state(ProposalStatus::Proposed.as_str()));
        }
        if e.proposed_by != actor && !self.curates(org, actor, &e.role).await? {
            return Err(RoleError::NotManager(actor.to_string(), e.role));
        }
        let content = self.clean(org, content).await?;
        let by = Act {
            org,
            actor,
            at: now,
        };
        let hash = content_hash(&content);
        let mut tx = super::begin(&self.db.pool).await?;
        let text = "UPDATE role_proposals SET content = $1, content_hash = $2, status = $3, \
                    accepted_by = NULL, accepted_hash = NULL, accepted_at = NULL \
                    WHERE org = $4 AND id = $5";
        let q = sql!(
            text,
            &content,
            &hash,
            ProposalStatus::Proposed.as_str(),
            org,
            id
        );
        q.exec(&mut *tx).await?;
        let detail = admin_text!(
            "role {}; hash {} -> {}; decisions reset",
            Identifier::new(&e.role),
            Identifier::new(&e.content_hash),
            Identifier::new(&hash)
        );
        audit_proposal(&mut tx, by, "role_memory.edit", id, &detail).await?;
        tx.commit().await?;
        self.get(org, id, now).await
    }

    /// Retire an active entry: its record is superseded with a revision row
    /// (undone by `Records::undo_revision`, which makes it active again).
    /// Audited `role_memory.retire`. The revision's id.
    pub async fn retire(&self, org: &str, id: i64, actor: &str, now: i64) -> Result<i64> {
        let e = self.get(org, id, now).await?;
        let (Some(record), true) = (e.record_id, e.is_active()) else {
            return Err(RoleError::WrongState {
                id,
                status: if e.status == ProposalStatus::Confirmed {
                    "retired"
                } else {
                    e.status.as_str()
                },
                expected: "an active entry",
            });
        };
        let mut tx: Transaction<'_, Any> = super::begin(&self.db.pool).await?;
        let text =
            "UPDATE memory_records SET status = $1 WHERE org = $2 AND id = $3 AND status = $4";
        let q = sql!(text, Status::Superseded, org, record, Status::Active);
        if q.exec(&mut *tx).await? == 0 {
            return Err(RoleError::WrongState {
                id,
                status: "retired",
                expected: "an active entry",
            });
        }
        super::fulltext::unindex(&mut tx, record).await?;
        super::vectors::drop_vector(&mut tx, record).await?;
        let run = proposal_ref(id);
        let reason = admin_text!(
            "retired from role {} by {}",
            Identifier::new(&e.role),
            Identifier::new(actor)
        );
        let revision = NewRevision {
            org,
            agent: ANY_AGENT,
            retired_id: record,
            replacing_id: record,
            meta: RevisionMeta {
                via: "role_memory",
                cause: "retire",
                run_id: &run,
                reason: &reason,
                model: None,
                prompt_version: None,
            },
            created_at: now,
        };
        let revision = insert_revision(&mut *tx, &revision).await?;
        let detail = admin_text!(
            "role {}; record {}; revision {}",
            Identifier::new(&e.role),
            record,
            revision
        );
        let by = Act {
            org,
            actor,
            at: now,
        };
        audit_proposal(&mut tx, by, "role_memory.retire", id, &detail).await?;
        tx.commit().await?;
        self.db.written();
        Ok(revision)
    }

    /// The active entries of the organisation's roles (for the team export).
    pub async fn active_entries(&self, org: &str, now: i64) -> Result<Vec<RoleEntry>> {
        let text = format!("{SELECT} WHERE p.org = $1 AND r.status = $2 ORDER BY p.role, p.id");
        let rows: Vec<Row> = sql!(text, org, Status::Active).all(&self.db.pool).await?;
        Ok(rows
            .into_iter()
            .map(|r| r.entry(now).map(|(e, _)| e))
            .collect::<StoreResult<_>>()?)
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
