//! Where a channel posts into one of its conversations outside a turn
//! (`channel_addresses`): the platform's reference to the conversation, as the
//! channel wrote it at first contact, read back when a late answer or an
//! automated run is delivered there. The text is the channel's own (the Teams
//! bot's conversation reference as JSON); memory neither reads nor shows it.

use super::{Conversations, Result};

impl Conversations<'_> {
    /// Keep `address` as where `channel` reaches `conversation` of `org`,
    /// replacing the one kept before.
    pub async fn save_address(
        &self,
        org: &str,
        channel: &str,
        conversation: &str,
        address: &str,
        now: i64,
    ) -> Result<()> {
        let text = "INSERT INTO channel_addresses (org, channel, conversation, address, updated_at) \
                    VALUES ($1, $2, $3, $4, $5) \
                    ON CONFLICT (org, channel, conversation) DO UPDATE SET address = $4, updated_at = $5";
        sql!(text, org, channel, conversation, address, now)
            .exec(&self.db.pool)
            .await?;
        Ok(())
    }

    /// Where `channel` reaches `conversation` of `org`, if it was ever kept.
    pub async fn address(
        &self,
        org: &str,
        channel: &str,
        conversation: &str,
    ) -> Result<Option<String>> {
        let text = "SELECT address FROM channel_addresses \
                    WHERE org = $1 AND channel = $2 AND conversation = $3";
        let row: Option<(String,)> = sql!(text, org, channel, conversation)
            .opt(&self.db.pool)
            .await?;
        Ok(row.map(|(a,)| a))
    }
}
