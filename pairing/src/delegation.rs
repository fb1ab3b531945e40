//! Delegation: a paired person lets another act for them. A delegated turn
//! runs as the delegate — the delegate's role and the delegate's own memory —
//! and only names whose behalf it is on; the grant gives the delegate nothing
//! of the principal's.

use super::{NewApiKey, Pairing, PairingError, Result, UserStatus};
use memory::store::{Delegation, DelegationChange};

impl Pairing {
    /// Let `delegate` act for `principal`: both active paired people, not the
    /// same one. Audited (`delegate.grant`). False when the grant existed.
    pub async fn grant_delegate(&self, grant: &DelegationChange<'_>) -> Result<bool> {
        let grant = &trimmed(grant);
        if grant.principal == grant.delegate {
            return Err(PairingError::SelfDelegation(grant.principal.to_string()));
        }
        for who in [grant.principal, grant.delegate] {
            if self.user(grant.by.org, who).await?.status != UserStatus::Active {
                return Err(PairingError::UserNotActive(who.to_string()));
            }
        }
        Ok(self.db.identity().grant_delegate(grant).await?)
    }

    /// End a grant; keys made on its behalf stop working at once. Audited
    /// (`delegate.revoke`).
    pub async fn revoke_delegate(&self, grant: &DelegationChange<'_>) -> Result<()> {
        let grant = &trimmed(grant);
        if self.db.identity().revoke_delegate(grant).await? {
            return Ok(());
        }
        Err(PairingError::NotDelegated {
            principal: grant.principal.to_string(),
            delegate: grant.delegate.to_string(),
        })
    }

    /// The grants naming `who` (as principal or delegate), or all of them.
    pub async fn delegations(&self, org: &str, who: Option<&str>) -> Result<Vec<Delegation>> {
        Ok(self.db.identity().delegations(org, who).await?)
    }

    /// Mint a key of `delegate` that acts for `principal`: refused unless the
    /// grant holds now. Audited (`api_key.create`, naming the principal).
    pub async fn create_delegated_api_key(
        &self,
        org: &str,
        delegate: &str,
        principal: &str,
        actor: &str,
        now: i64,
    ) -> Result<NewApiKey> {
        let (principal, delegate) = (principal.trim(), delegate.trim());
        if !self
            .db
            .identity()
            .acts_for(org, delegate, principal)
            .await?
        {
            return Err(PairingError::NotDelegated {
                principal: principal.to_string(),
                delegate: delegate.to_string(),
            });
        }
        self.mint_api_key(org, delegate, Some(principal), actor, now)
            .await
    }
}

/// `grant` with the two people's ids as typed, surrounding spaces forgiven.
fn trimmed<'a>(grant: &DelegationChange<'a>) -> DelegationChange<'a> {
    DelegationChange {
        principal: grant.principal.trim(),
        delegate: grant.delegate.trim(),
        ..*grant
    }
}
