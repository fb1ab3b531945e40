//! A person's own settings (`person_settings`): for now `auto_keep`, their
//! opt-in to having implicit items kept without being asked. The operator's
//! per-agent setting is the ceiling (`policy::auto_keeps`).

use super::audit::Act;
use super::pairing::Identity;
use super::Result;
use crate::admin_text::AdminText;

impl Identity<'_> {
    /// Whether `user` has opted in to auto-keep (off unless they said so).
    pub async fn person_auto_keep(&self, org: &str, user: &str) -> Result<bool> {
        let text = "SELECT auto_keep FROM person_settings WHERE org = $1 AND user_id = $2";
        let row: Option<(i64,)> = sql!(text, org, user).opt(&self.db.pool).await?;
        Ok(row.is_some_and(|(on,)| on != 0))
    }

    /// Set `user`'s auto-keep, with its `settings.auto_keep` audit entry, in one transaction.
    pub async fn set_person_auto_keep(
        &self,
        org: &str,
        user: &str,
        on: bool,
        actor: &str,
        now: i64,
    ) -> Result<()> {
        let mut tx = super::begin(&self.db.pool).await?;
        let text = "INSERT INTO person_settings (org, user_id, auto_keep, updated_at) \
                    VALUES ($1, $2, $3, $4) \
                    ON CONFLICT (org, user_id) DO UPDATE SET auto_keep = $3, updated_at = $4";
        sql!(text, org, user, i64::from(on), now)
            .exec(&mut *tx)
            .await?;
        let detail = AdminText::fixed(if on { "auto_keep on" } else { "auto_keep off" });
        let by = Act {
            org,
            actor,
            at: now,
        };
        by.audit(&mut *tx, "settings.auto_keep", user, &detail)
            .await?;
        tx.commit().await?;
        Ok(())
    }
}
