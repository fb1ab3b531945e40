//! One-time dashboard sign-in links: what `/web` sends a paired person in a
//! direct message, for deployments with no identity provider. The token is
//! shown once and only its hash is kept; a link is spent by its first use
//! and lapses after its time. Issuing and spending are audited, under the person.

use super::{hash_key, random_code, Pairing, Result, UserStatus};
use memory::admin_text::AdminText;
use memory::store::SignInLink;

/// Where the dashboard takes a link: `<public url>` + this + the token.
pub const SIGN_IN_LINK_PATH: &str = "/web/sign-in/";

/// How a link presented at the dashboard was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum LinkRefusal {
    #[error("this sign-in link was already used: send /web to steward in a direct message for a new one")]
    AlreadyUsed,
    #[error(
        "this sign-in link has expired: send /web to steward in a direct message for a new one"
    )]
    Expired,
    #[error(
        "this is not a sign-in link steward gave: send /web to steward in a direct message for one"
    )]
    Unknown,
    #[error("the person this link was made for is no longer paired")]
    NotPaired,
}

impl Pairing {
    /// A new single-use sign-in link token of `user_id` (active), valid
    /// `ttl_ms`: the token to show once (its hash alone is stored).
    pub async fn create_sign_in_link(
        &self,
        org: &str,
        user_id: &str,
        now: i64,
        ttl_ms: i64,
    ) -> Result<String> {
        let user = self.user(org, user_id).await?;
        if user.status != UserStatus::Active {
            return Err(super::PairingError::UserNotActive(user_id.to_string()));
        }
        let token = random_code(43);
        let identity = self.db.identity();
        let expires = now.saturating_add(ttl_ms);
        identity
            .create_sign_in_link(org, &hash_key(&token), user_id, now, expires)
            .await?;
        self.db
            .audit()
            .append(
                org,
                user_id,
                "dashboard.link_issued",
                user_id,
                &AdminText::empty(),
                now,
            )
            .await?;
        Ok(token)
    }

    /// Spend the link `token` at `now`: the active paired person it signs
    /// in (read now, so a revoked person's unspent link signs in nobody),
    /// or why it does not. A spent link is audited under its person.
    pub async fn redeem_sign_in_link(
        &self,
        org: &str,
        token: &str,
        now: i64,
    ) -> Result<std::result::Result<super::User, LinkRefusal>> {
        let spent = self
            .db
            .identity()
            .spend_sign_in_link(org, &hash_key(token.trim()), now)
            .await?;
        let user_id = match spent {
            SignInLink::Spent { user_id } => user_id,
            SignInLink::AlreadyUsed => return Ok(Err(LinkRefusal::AlreadyUsed)),
            SignInLink::Expired => return Ok(Err(LinkRefusal::Expired)),
            SignInLink::Unknown => return Ok(Err(LinkRefusal::Unknown)),
        };
        let user = match self.user(org, &user_id).await {
            Ok(u) if u.status == UserStatus::Active => u,
            Ok(_) | Err(super::PairingError::UnknownUser(_)) => {
                return Ok(Err(LinkRefusal::NotPaired))
            }
            Err(e) => return Err(e),
        };
        self.db
            .audit()
            .append(
                org,
                &user_id,
                "dashboard.link_sign_in",
                &user_id,
                &AdminText::empty(),
                now,
            )
            .await?;
        Ok(Ok(user))
    }
}
