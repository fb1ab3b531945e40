//! The web dashboard's sign-in state: the generated admin token (hash only)
//! and signed-in sessions. Rows, not process memory, so replicas share them.

use super::{col, Db, Result};

/// A signed-in dashboard browser.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DashboardSession {
    pub org: String,
    /// SHA-256 (hex) of the session cookie's value.
    pub id_hash: String,
    /// The form token every state-changing request of this session must carry.
    pub csrf: String,
    /// SHA-256 (hex) of the admin token the session signed in with.
    pub token_hash: String,
    pub created_at: i64,
    pub expires_at: i64,
}

impl Db {
    /// Store `token_hash` as the organisation's dashboard admin token unless
    /// one is stored already. True when this call stored it (the caller then
    /// prints the token); false when another start or replica did.
    pub async fn init_dashboard_token(
        &self,
        org: &str,
        token_hash: &str,
        now: i64,
    ) -> Result<bool> {
        let done = sqlx::query(
            "INSERT INTO dashboard_tokens (org, token_hash, created_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING",
        )
        .bind(org)
        .bind(token_hash)
        .bind(now)
        .execute(self.pool())
        .await?;
        Ok(done.rows_affected() == 1)
    }

    /// The stored admin token's hash, if one was generated.
    pub async fn dashboard_token_hash(&self, org: &str) -> Result<Option<String>> {
        let row: Option<(String,)> =
            sqlx::query_as("SELECT token_hash FROM dashboard_tokens WHERE org = $1")
                .bind(org)
                .fetch_optional(self.pool())
                .await?;
        Ok(row.map(|(h,)| h))
    }

    /// Replace the stored admin token and end every session of the organisation.
    pub async fn reset_dashboard_token(&self, org: &str, token_hash: &str, now: i64) -> Result<()> {
        let mut tx = self.pool().begin().await?;
        sqlx::query(
            "INSERT INTO dashboard_tokens (org, token_hash, created_at) VALUES ($1, $2, $3) \
             ON CONFLICT (org) DO UPDATE SET token_hash = excluded.token_hash, created_at = excluded.created_at",
        )
        .bind(org)
        .bind(token_hash)
        .bind(now)
        .execute(&mut *tx)
        .await?;
        sqlx::query("DELETE FROM dashboard_sessions WHERE org = $1")
            .bind(org)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(())
    }

    /// Record a new session; expired sessions of the organisation are removed on the way.
    pub async fn create_dashboard_session(&self, s: &DashboardSession) -> Result<()> {
        let mut tx = self.pool().begin().await?;
        sqlx::query("DELETE FROM dashboard_sessions WHERE org = $1 AND expires_at <= $2")
            .bind(&s.org)
            .bind(s.created_at)
            .execute(&mut *tx)
            .await?;
        sqlx::query(
            "INSERT INTO dashboard_sessions (id_hash, org, csrf, token_hash, created_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6)",
        )
        .bind(&s.id_hash)
        .bind(&s.org)
        .bind(&s.csrf)
        .bind(&s.token_hash)
        .bind(s.created_at)
        .bind(s.expires_at)
        .execute(&mut *tx)
        .await?;
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
        let row = sqlx::query(
            "SELECT id_hash, org, csrf, token_hash, created_at, expires_at FROM dashboard_sessions \
             WHERE org = $1 AND id_hash = $2 AND expires_at > $3",
        )
        .bind(org)
        .bind(id_hash)
        .bind(now)
        .fetch_optional(self.pool())
        .await?;
        row.map(|r| {
            Ok(DashboardSession {
                org: col(&r, "org")?,
                id_hash: col(&r, "id_hash")?,
                csrf: col(&r, "csrf")?,
                token_hash: col(&r, "token_hash")?,
                created_at: col(&r, "created_at")?,
                expires_at: col(&r, "expires_at")?,
            })
        })
        .transpose()
    }

    /// Sign a session out. True when it existed.
    pub async fn delete_dashboard_session(&self, org: &str, id_hash: &str) -> Result<bool> {
        let done = sqlx::query("DELETE FROM dashboard_sessions WHERE org = $1 AND id_hash = $2")
            .bind(org)
            .bind(id_hash)
            .execute(self.pool())
            .await?;
        Ok(done.rows_affected() == 1)
    }
}
