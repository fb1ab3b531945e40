use super::{col, Db, Result};
use crate::model::StoredMessage;

/// A conversation line about to be stored.
#[derive(Debug, Clone)]
pub struct NewMessage<'a> {
    pub org: &'a str,
    pub agent: &'a str,
    pub channel: &'a str,
    pub conversation: &'a str,
    pub conversation_kind: &'a str,
    pub author: &'a str,
    pub sender: Option<&'a str>,
    pub sender_role: Option<&'a str>,
    pub text: &'a str,
    pub said_at: i64,
}

const COLUMNS: &str =
    "id, org, agent, channel, conversation, conversation_kind, author, sender, sender_role, text, said_at";

fn message(r: &sqlx::any::AnyRow) -> Result<StoredMessage> {
    Ok(StoredMessage {
        id: col(r, "id")?,
        org: col(r, "org")?,
        agent: col(r, "agent")?,
        channel: col(r, "channel")?,
        conversation: col(r, "conversation")?,
        conversation_kind: col(r, "conversation_kind")?,
        author: col(r, "author")?,
        sender: col(r, "sender")?,
        sender_role: col(r, "sender_role")?,
        text: col(r, "text")?,
        said_at: col(r, "said_at")?,
    })
}

impl Db {
    /// Record a platform message id; false when it was seen before (a redelivery).
    pub async fn mark_seen(
        &self,
        org: &str,
        channel: &str,
        platform_id: &str,
        now: i64,
    ) -> Result<bool> {
        let done = sqlx::query(
            "INSERT INTO seen_messages (org, channel, platform_id, seen_at) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING",
        )
        .bind(org)
        .bind(channel)
        .bind(platform_id)
        .bind(now)
        .execute(self.pool())
        .await?;
        Ok(done.rows_affected() == 1)
    }

    pub async fn insert_message(&self, m: &NewMessage<'_>) -> Result<i64> {
        let (id,): (i64,) = sqlx::query_as(
            "INSERT INTO messages (org, agent, channel, conversation, conversation_kind, author, sender, sender_role, text, said_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING id",
        )
        .bind(m.org)
        .bind(m.agent)
        .bind(m.channel)
        .bind(m.conversation)
        .bind(m.conversation_kind)
        .bind(m.author)
        .bind(m.sender)
        .bind(m.sender_role)
        .bind(m.text)
        .bind(m.said_at)
        .fetch_one(self.pool())
        .await?;
        Ok(id)
    }

    /// The live (untrimmed) history of a conversation, oldest first.
    pub async fn history(
        &self,
        org: &str,
        agent: &str,
        conversation: &str,
    ) -> Result<Vec<StoredMessage>> {
        let rows = sqlx::query(&format!(
            "SELECT {COLUMNS} FROM messages WHERE org = $1 AND agent = $2 AND conversation = $3 AND trimmed = 0 ORDER BY id"
        ))
        .bind(org)
        .bind(agent)
        .bind(conversation)
        .fetch_all(self.pool())
        .await?;
        rows.iter().map(message).collect()
    }

    /// Size of a conversation's live history: (messages, characters).
    pub async fn live_size(
        &self,
        org: &str,
        agent: &str,
        conversation: &str,
    ) -> Result<(i64, i64)> {
        let (n, chars): (i64, i64) = sqlx::query_as(
            "SELECT COUNT(*), COALESCE(SUM(LENGTH(text)), 0) FROM messages WHERE org = $1 AND agent = $2 AND conversation = $3 AND trimmed = 0",
        )
        .bind(org)
        .bind(agent)
        .bind(conversation)
        .fetch_one(self.pool())
        .await?;
        Ok((n, chars))
    }

    /// Messages of an org matching `condition` on `$2`, oldest first.
    pub(crate) async fn messages_where<T>(
        &self,
        org: &str,
        condition: &str,
        value: T,
    ) -> Result<Vec<StoredMessage>>
    where
        T: for<'q> sqlx::Encode<'q, sqlx::Any> + sqlx::Type<sqlx::Any> + Send,
    {
        let rows = sqlx::query(&format!(
            "SELECT {COLUMNS} FROM messages WHERE org = $1 AND {condition} ORDER BY id"
        ))
        .bind(org)
        .bind(value)
        .fetch_all(self.pool())
        .await?;
        rows.iter().map(message).collect()
    }
}
