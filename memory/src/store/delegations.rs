//! Delegation's rows: who may act for whom (`delegations`), and whose behalf
//! an API key acts on (`api_keys.on_behalf_of`). The rules (both people
//! paired, not oneself) live in the `pairing` crate; this is their storage.

use super::audit::Act;
use super::people::{Identity, User, USER};
use super::Result;
use crate::admin_text::{AdminText, Identifier, Identifiers};
use crate::store::UserStatus;
use serde::Serialize;
use sqlx::{Any, Transaction};

/// One grant: `delegate` may act for `principal`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, sqlx::FromRow)]
pub struct Delegation {
    pub org: String,
    pub principal: String,
    pub delegate: String,
    pub granted_by: String,
    pub granted_at: i64,
}

/// A grant made or ended: `delegate` acting for `principal`, and who made
/// or ended it, where and when.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DelegationChange<'a> {
    pub principal: &'a str,
    pub delegate: &'a str,
    pub by: Act<'a>,
}

/// Who an API key speaks as: its user, and whose behalf when it was made
/// `--on-behalf-of` someone (only while that grant holds).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyHolder {
    pub user: User,
    pub on_behalf_of: Option<String>,
}

const DELEGATION: &str = "SELECT org, principal, delegate, granted_by, granted_at FROM delegations";

impl Identity<'_> {
    /// Grant `delegate` the right to act for `principal`, with its
    /// `delegate.grant` audit entry, in one transaction. False, with nothing
    /// written, when the grant exists already.
    pub async fn grant_delegate(&self, grant: &DelegationChange<'_>) -> Result<bool> {
        let (by, principal, delegate) = (grant.by, grant.principal, grant.delegate);
        let text = "INSERT INTO delegations (org, principal, delegate, granted_by, granted_at) \
                    VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING";
        let q = sql!(text, by.org, principal, delegate, by.actor, by.at);
        let Some(mut tx) = q.exec_first(&self.db.pool).await? else {
            return Ok(false);
        };
        let detail = admin_text!("delegate {}", Identifier::new(delegate));
        by.audit(&mut *tx, "delegate.grant", principal, &detail)
            .await?;
        tx.commit().await?;
        Ok(true)
    }

    /// End a grant, with its `delegate.revoke` audit entry; the keys made
    /// on its behalf are revoked with it, so granting it again brings none
    /// back. False when there was no such grant.
    pub async fn revoke_delegate(&self, grant: &DelegationChange<'_>) -> Result<bool> {
        let (by, principal, delegate) = (grant.by, grant.principal, grant.delegate);
        let text = "DELETE FROM delegations WHERE org = $1 AND principal = $2 AND delegate = $3";
        let q = sql!(text, by.org, principal, delegate);
        let Some(mut tx) = q.exec_first(&self.db.pool).await? else {
            return Ok(false);
        };
        let keys = revoke_keys_acting_for(&mut tx, principal, Some(delegate), by).await?;
        let detail = with_keys(admin_text!("delegate {}", Identifier::new(delegate)), &keys);
        by.audit(&mut *tx, "delegate.revoke", principal, &detail)
            .await?;
        tx.commit().await?;
        Ok(true)
    }

    /// The grants of an organisation naming `who`, as principal or as
    /// delegate (all of them when `who` is `None`), oldest first.
    pub async fn delegations(&self, org: &str, who: Option<&str>) -> Result<Vec<Delegation>> {
        match who {
            Some(who) => {
                let text = format!(
                    "{DELEGATION} WHERE org = $1 AND (principal = $2 OR delegate = $2) \
                     ORDER BY granted_at, principal, delegate"
                );
                sql!(text, org, who).all(&self.db.pool).await
            }
            None => {
                let text =
                    format!("{DELEGATION} WHERE org = $1 ORDER BY granted_at, principal, delegate");
                sql!(text, org).all(&self.db.pool).await
            }
        }
    }

    /// Whether `delegate` may act for `principal` now: the grant exists and
    /// both are active.
    pub async fn acts_for(&self, org: &str, delegate: &str, principal: &str) -> Result<bool> {
        let text = "SELECT COUNT(*) FROM delegations d \
                    JOIN users p ON p.org = d.org AND p.user_id = d.principal AND p.status = $4 \
                    JOIN users g ON g.org = d.org AND g.user_id = d.delegate AND g.status = $4 \
                    WHERE d.org = $1 AND d.delegate = $2 AND d.principal = $3";
        let (n,): (i64,) = sql!(text, org, delegate, principal, UserStatus::Active)
            .one(&self.db.pool)
            .await?;
        Ok(n > 0)
    }

    /// Who an API key (by hash) speaks as: none when the key is unknown or
    /// revoked, its user is not active, or it was made on someone's behalf
    /// and that grant no longer holds (revoked, or either person revoked).
    pub async fn api_key_holder(&self, key_hash: &str) -> Result<Option<KeyHolder>> {
        let text = "SELECT org, user_id, on_behalf_of FROM api_keys \
                    WHERE key_hash = $1 AND revoked_at IS NULL";
        let Some((org, user_id, on_behalf_of)): Option<(String, String, Option<String>)> =
            sql!(text, key_hash).opt(&self.db.pool).await?
        else {
            return Ok(None);
        };
        let text = format!("{USER} WHERE u.org = $1 AND u.user_id = $2 AND u.status = $3");
        let Some(user): Option<User> = sql!(text, &org, &user_id, UserStatus::Active)
            .opt(&self.db.pool)
            .await?
        else {
            return Ok(None);
        };
        if let Some(principal) = &on_behalf_of {
            if !self.acts_for(&org, &user_id, principal).await? {
                return Ok(None);
            }
        }
        Ok(Some(KeyHolder { user, on_behalf_of }))
    }
}

/// `detail`, naming the keys revoked with it.
fn with_keys(detail: AdminText, keys: &[String]) -> AdminText {
    if keys.is_empty() {
        detail
    } else {
        admin_text!(
            "{}; API keys revoked with it: {}",
            detail,
            Identifiers::new(keys)
        )
    }
}

/// Revoke the live keys that act for `principal` (only `delegate`'s, when
/// given); their ids.
async fn revoke_keys_acting_for(
    tx: &mut Transaction<'_, Any>,
    principal: &str,
    delegate: Option<&str>,
    by: Act<'_>,
) -> Result<Vec<String>> {
    let text = "SELECT key_id FROM api_keys WHERE org = $1 AND on_behalf_of = $2 \
                AND (CAST($3 AS TEXT) IS NULL OR user_id = $3) AND revoked_at IS NULL ORDER BY key_id";
    let keys: Vec<(String,)> = sql!(text, by.org, principal, delegate)
        .all(&mut **tx)
        .await?;
    let text = "UPDATE api_keys SET revoked_at = $1, revoked_by = $2 WHERE org = $3 \
                AND on_behalf_of = $4 AND (CAST($5 AS TEXT) IS NULL OR user_id = $5) AND revoked_at IS NULL";
    sql!(text, by.at, by.actor, by.org, principal, delegate)
        .exec(&mut **tx)
        .await?;
    Ok(keys.into_iter().map(|(k,)| k).collect())
}

/// A revoked person's delegations end with them, both ways: the grants
/// naming them go (each audited `delegate.revoke`), and so do the keys that
/// act for them. Part of `Identity::revoke_user`'s transaction.
pub(super) async fn end_delegations_of(
    tx: &mut Transaction<'_, Any>,
    user: &str,
    by: Act<'_>,
) -> Result<()> {
    let text = format!("{DELEGATION} WHERE org = $1 AND (principal = $2 OR delegate = $2)");
    let grants: Vec<Delegation> = sql!(text, by.org, user).all(&mut **tx).await?;
    let text = "DELETE FROM delegations WHERE org = $1 AND (principal = $2 OR delegate = $2)";
    sql!(text, by.org, user).exec(&mut **tx).await?;
    let keys = revoke_keys_acting_for(tx, user, None, by).await?;
    for g in grants {
        let detail = admin_text!(
            "delegate {} (ended with the revocation of {})",
            Identifier::new(&g.delegate),
            Identifier::new(user)
        );
        by.audit(&mut **tx, "delegate.revoke", &g.principal, &detail)
            .await?;
    }
    if !keys.is_empty() {
        let detail = with_keys(admin_text!("acting for {}", Identifier::new(user)), &keys);
        by.audit(&mut **tx, "api_key.revoke", user, &detail).await?;
    }
    Ok(())
}
