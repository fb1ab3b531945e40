//! The web dashboard's sign-in state: the generated admin token (hash only)
//! and signed-in sessions. Rows, not process memory, so replicas share them.

use super::{Identity, Result};

/// A signed-in dashboard browser.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct DashboardSession {
    pub org: String,
    /// SHA-256 (hex) of the session cookie's value.
    pub id_hash: String,
    /// The form token every state-changing request of this session must carry.
    pub csrf: String,
    /// SHA-256 (hex) of the admin token the session signed in with; empty
    /// for a person signed in through the identity provider.
    pub token_hash: String,
    /// The paired user the session is: the built-in admin, or a person.
    pub user_id: String,
    pub created_at: i64,
    pub expires_at: i64,
}

impl Identity<'_> {
    /// Store `token_hash` as the organisation's dashboard admin token unless
    /// one is stored already. True when this call stored it (the caller then
    /// prints the token); false when another start or replica did.
    pub async fn init_dashboard_token(
        &self,
        org: &str,
        token_hash: &str,
        now: i64,
    ) -> Result<bool> {
        let text = "INSERT INTO dashboard_tokens (org, token_hash, created_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING";
        Ok(sql!(text, org, token_hash, now).exec(&self.db.pool).await? == 1)
    }

    /// The stored admin token's hash, if one was generated.
    pub async fn dashboard_token_hash(&self, org: &str) -> Result<Option<String>> {
        let text = "SELECT token_hash FROM dashboard_tokens WHERE org = $1";
        let row: Option<(String,)> = sql!(text, org).opt(&self.db.pool).await?;
        Ok(row.map(|(h,)| h))
    }

    /// Replace the stored admin token and end every session of the organisation.
    pub async fn reset_dashboard_token(&self, org: &str, token_hash: &str, now: i64) -> Result<()> {
        let mut tx = super::begin(&self.db.pool).await?;
        let text = "INSERT INTO dashboard_tokens (org, token_hash, created_at) VALUES ($1, $2, $3) \
                    ON CONFLICT (org) DO UPDATE SET token_hash = excluded.token_hash, created_at = excluded.created_at";
        sql!(text, org, token_hash, now).exec(&mut *tx).await?;
        sql!("DELETE FROM dashboard_sessions WHERE org = $1", org)
            .exec(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(())
    }

    /// Record a new session; expired sessions of the organisation are removed on the way.
    pub async fn create_dashboard_session(&self, s: &DashboardSession) -> Result<()> {
        let mut tx = super::begin(&self.db.pool).await?;
        let expired = "DELETE FROM dashboard_sessions WHERE org = $1 AND expires_at <= $2";
        sql!(expired, &s.org, s.created_at).exec(&mut *tx).await?;
        let text = "INSERT INTO dashboard_sessions (id_hash, org, csrf, token_hash, user_id, created_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7)";
        let q = sql!(
            text,
            &s.id_hash,
            &s.org,
            &s.csrf,
            &s.token_hash,
            &s.user_id,
            s.created_at,
            s.expires_at
        );
        q.exec(&mut *tx).await?;
        tx.commit().await?;
        Ok(())
    }

    /// The unexpired session with this cookie hash in `org`, if any.
    pub async fn dashboard_session(
        &self,
        org: &str,
        id_hash: &str,
        now: i64,
    ) -> Result<Option<DashboardSession>> {
        let text = "SELECT id_hash, org, csrf, token_hash, user_id, created_at, expires_at FROM dashboard_sessions \
                    WHERE org = $1 AND id_hash = $2 AND expires_at > $3";
        sql!(text, org, id_hash, now).opt(&self.db.pool).await
    }

    /// Sign a session out. True when it existed.
    pub async fn delete_dashboard_session(&self, org: &str, id_hash: &str) -> Result<bool> {
        let text = "DELETE FROM dashboard_sessions WHERE org = $1 AND id_hash = $2";
        Ok(sql!(text, org, id_hash).exec(&self.db.pool).await? == 1)
    }
}

/// What became of a one-time sign-in link presented at the dashboard.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SignInLink {
    /// Spent now: it signs in this paired user.
    Spent { user_id: String },
    /// It was spent before.
    AlreadyUsed,
    /// Its time ran out before it was used.
    Expired,
    /// No link has this token.
    Unknown,
}

impl Identity<'_> {
    /// Keep a new one-time sign-in link of `user_id` (its token's hash only);
    /// links expired a day ago or more are removed on the way.
    pub async fn create_sign_in_link(
        &self,
        org: &str,
        token_hash: &str,
        user_id: &str,
        now: i64,
        expires_at: i64,
    ) -> Result<()> {
        let mut tx = super::begin(&self.db.pool).await?;
        let old = "DELETE FROM sign_in_links WHERE org = $1 AND expires_at <= $2";
        sql!(old, org, now.saturating_sub(86_400_000))
            .exec(&mut *tx)
            .await?;
        let text = "INSERT INTO sign_in_links (token_hash, org, user_id, created_at, expires_at) VALUES ($1, $2, $3, $4, $5)";
        sql!(text, token_hash, org, user_id, now, expires_at)
            .exec(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(())
    }

    /// Spend the link whose token hashes to `token_hash` at `now`: one
    /// statement marks it used only while unused and unexpired, so two
    /// replicas never both spend it.
    pub async fn spend_sign_in_link(
        &self,
        org: &str,
        token_hash: &str,
        now: i64,
    ) -> Result<SignInLink> {
        let spend = "UPDATE sign_in_links SET used_at = $3 \
                     WHERE org = $1 AND token_hash = $2 AND used_at IS NULL AND expires_at > $3 \
                     RETURNING user_id";
        let spent: Option<(String,)> = sql!(spend, org, token_hash, now).opt(&self.db.pool).await?;
        if let Some((user_id,)) = spent {
            return Ok(SignInLink::Spent { user_id });
        }
        let why = "SELECT used_at FROM sign_in_links WHERE org = $1 AND token_hash = $2";
        let row: Option<(Option<i64>,)> = sql!(why, org, token_hash).opt(&self.db.pool).await?;
        Ok(match row {
            None => SignInLink::Unknown,
            Some((Some(_),)) => SignInLink::AlreadyUsed,
            Some((None,)) => SignInLink::Expired,
        })
    }
}
