use super::{Db, Result};
use crate::model::StoredMessage;
use sqlx::{Any, Executor};

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

const SEEN: &str = "INSERT INTO seen_messages (org, channel, platform_id, seen_at) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING";

/// Insert one conversation line, on a pool or inside a transaction.
async fn insert_message_on<'c, E>(exec: E, m: &NewMessage<'_>) -> Result<i64>
where
    E: Executor<'c, Database = Any>,
{
    let text = "INSERT INTO messages (org, agent, channel, conversation, conversation_kind, author, sender, sender_role, text, said_at) \
                VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING id";
    let q = sql!(
        text,
        m.org,
        m.agent,
        m.channel,
        m.conversation,
        m.conversation_kind
    )
    .arg(m.author)
    .arg(m.sender)
    .arg(m.sender_role)
    .arg(m.text)
    .arg(m.said_at);
    let (id,) = q.one(exec).await?;
    Ok(id)
}

const SELECT: &str = "SELECT id, org, agent, channel, conversation, conversation_kind, author, sender, sender_role, text, said_at FROM messages";

impl Db {
    /// Record a platform message id; false when it was seen before (a redelivery).
    pub async fn mark_seen(
        &self,
        org: &str,
        channel: &str,
        platform_id: &str,
        now: i64,
    ) -> Result<bool> {
        let q = sql!(SEEN, org, channel, platform_id, now);
        Ok(q.exec(&self.pool).await? == 1)
    }

    /// Whether a platform message id was seen before (a redelivery).
    pub async fn is_seen(&self, org: &str, channel: &str, platform_id: &str) -> Result<bool> {
        let text = "SELECT seen_at FROM seen_messages WHERE org = $1 AND channel = $2 AND platform_id = $3";
        let row: Option<(i64,)> = sql!(text, org, channel, platform_id)
            .opt(&self.pool)
            .await?;
        Ok(row.is_some())
    }

    pub async fn insert_message(&self, m: &NewMessage<'_>) -> Result<i64> {
        insert_message_on(&self.pool, m).await
    }

    /// Store `m` and, in the same transaction, mark `platform_id` seen: a
    /// crash or a failed insert leaves neither, so the platform's retry runs.
    /// `None` (nothing stored) when the id was seen before: a redelivery.
    pub async fn insert_message_once(
        &self,
        m: &NewMessage<'_>,
        platform_id: Option<&str>,
    ) -> Result<Option<i64>> {
        let Some(platform_id) = platform_id else {
            return self.insert_message(m).await.map(Some);
        };
        let mut tx = self.pool.begin().await?;
        let q = sql!(SEEN, m.org, m.channel, platform_id, m.said_at);
        if q.exec(&mut *tx).await? == 0 {
            return Ok(None);
        }
        let id = insert_message_on(&mut *tx, m).await?;
        tx.commit().await?;
        Ok(Some(id))
    }

    /// Forget the seen ids of `org` marked before `before` (a redelivery
    /// comes within minutes; the ids need not be kept for ever).
    pub async fn prune_seen(&self, org: &str, before: i64) -> Result<u64> {
        let text = "DELETE FROM seen_messages WHERE org = $1 AND seen_at < $2";
        sql!(text, org, before).exec(&self.pool).await
    }

    /// The live (untrimmed) history of a conversation, oldest first.
    pub async fn history(
        &self,
        org: &str,
        agent: &str,
        conversation: &str,
    ) -> Result<Vec<StoredMessage>> {
        let text = format!(
            "{SELECT} WHERE org = $1 AND agent = $2 AND conversation = $3 AND trimmed = 0 ORDER BY id"
        );
        sql!(text, org, agent, conversation).all(&self.pool).await
    }

    /// The newest `limit` live lines of a conversation said before message
    /// `before` (a reply's history window), newest first.
    pub async fn live_before(
        &self,
        org: &str,
        agent: &str,
        conversation: &str,
        before: i64,
        limit: i64,
    ) -> Result<Vec<StoredMessage>> {
        let text = format!(
            "{SELECT} WHERE org = $1 AND agent = $2 AND conversation = $3 AND trimmed = 0 AND id < $4 ORDER BY id DESC LIMIT $5"
        );
        sql!(text, org, agent, conversation, before, limit)
            .all(&self.pool)
            .await
    }

    /// Size of a conversation's live history: (messages, characters).
    pub async fn live_size(
        &self,
        org: &str,
        agent: &str,
        conversation: &str,
    ) -> Result<(i64, i64)> {
        let text = "SELECT COUNT(*), COALESCE(SUM(LENGTH(text)), 0) FROM messages WHERE org = $1 AND agent = $2 AND conversation = $3 AND trimmed = 0";
        sql!(text, org, agent, conversation).one(&self.pool).await
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
        let text = format!("{SELECT} WHERE org = $1 AND {condition} ORDER BY id");
        sql!(text, org, value).all(&self.pool).await
    }
}
