//! Who a paired person is, as every identity store reads it: the user row,
//! its status, and the `Identity` store handle. A leaf: pairing, delegation
//! and role memory each add their own operations to `Identity` (or read
//! `User`) from here, so none of them depends on another.

use super::Db;
use crate::model::Role;
use serde::Serialize;

named_enum! {
    /// Whether a paired user may speak as themselves (`users.status`).
    pub enum UserStatus {
        Active,
        /// Revoked by an admin (with every API key of theirs); pairing them again makes them active.
        Revoked,
    }
}

/// A paired person.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, sqlx::FromRow)]
pub struct User {
    pub org: String,
    pub user_id: String,
    pub name: String,
    #[sqlx(try_from = "String")]
    pub role: Role,
    #[sqlx(try_from = "String")]
    pub status: UserStatus,
    /// Last change (pairing, role change, revocation), ms since the epoch.
    pub updated_at: i64,
}

pub(super) const USER: &str =
    "SELECT u.org, u.user_id, u.name, u.role, u.status, u.updated_at FROM users u";

/// Who is who: paired users and their identities, pairing requests, API
/// keys and the dashboard's sign-in state.
#[derive(Clone, Copy)]
pub struct Identity<'a> {
    pub(super) db: &'a Db,
}
