use super::{Db, Result};
use crate::model::StoredMessage;
use serde::Serialize;

/// One trimmed slice of a conversation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, sqlx::FromRow)]
pub struct Archive {
    pub id: i64,
    pub org: String,
    pub agent: String,
    pub channel: String,
    pub conversation: String,
    pub conversation_kind: String,
    pub started_at: i64,
    pub ended_at: i64,
    /// `admin` only when everyone in the slice may author operational knowledge.
    pub trust: String,
    pub summary: String,
    pub markdown: String,
    pub created_at: i64,
    pub created_by: String,
}

/// A slice about to be archived: the messages `first_id..=last_id` of a conversation.
#[derive(Debug, Clone)]
pub struct NewArchive<'a> {
    pub org: &'a str,
    pub agent: &'a str,
    pub channel: &'a str,
    pub conversation: &'a str,
    pub conversation_kind: &'a str,
    pub message_ids: &'a [i64],
    pub started_at: i64,
    pub ended_at: i64,
    pub trust: &'a str,
    pub summary: &'a str,
    pub markdown: &'a str,
    pub created_at: i64,
    pub created_by: &'a str,
}

const SELECT: &str = "SELECT id, org, agent, channel, conversation, conversation_kind, started_at, ended_at, trust, summary, markdown, created_at, created_by FROM archives";

impl Db {
    /// Archive a slice and take its messages out of the live history, atomically.
    pub async fn archive_slice(&self, a: &NewArchive<'_>) -> Result<i64> {
        let mut tx = self.pool.begin().await?;
        let text = "INSERT INTO archives (org, agent, channel, conversation, conversation_kind, started_at, ended_at, trust, summary, markdown, created_at, created_by) \
                    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) RETURNING id";
        let q = sql!(
            text,
            a.org,
            a.agent,
            a.channel,
            a.conversation,
            a.conversation_kind
        )
        .arg(a.started_at)
        .arg(a.ended_at)
        .arg(a.trust)
        .arg(a.summary)
        .arg(a.markdown)
        .arg(a.created_at)
        .arg(a.created_by);
        let (id,): (i64,) = q.one(&mut *tx).await?;
        for chunk in a.message_ids.chunks(500) {
            let text = "UPDATE messages SET trimmed = $1 WHERE org = $2 AND agent = $3 AND conversation = $4 AND trimmed = 0 AND id IN (";
            sql!(text, id, a.org, a.agent, a.conversation)
                .bind_list(chunk.iter().copied())
                .push(")")
                .exec(&mut *tx)
                .await?;
        }
        tx.commit().await?;
        Ok(id)
    }

    pub async fn archive(&self, org: &str, id: i64) -> Result<Archive> {
        self.by_id(SELECT, "archive", org, id).await
    }

    /// Archives of an organisation, oldest first; of one conversation when given.
    pub async fn archives(&self, org: &str, conversation: Option<&str>) -> Result<Vec<Archive>> {
        let mut q = sql!(format!("{SELECT} WHERE org = $1"), org);
        if let Some(c) = conversation {
            q = q.push(" AND conversation = ").bind(c);
        }
        q.push(" ORDER BY id").all(&self.pool).await
    }

    /// The newest `limit` archives with an id below `before` (all when
    /// `None`), newest first, of one conversation when given: one page of the list.
    pub async fn archives_before(
        &self,
        org: &str,
        conversation: Option<&str>,
        before: Option<i64>,
        limit: i64,
    ) -> Result<Vec<Archive>> {
        let mut q = sql!(
            format!("{SELECT} WHERE org = $1 AND id < $2"),
            org,
            before.unwrap_or(i64::MAX)
        );
        if let Some(c) = conversation {
            q = q.push(" AND conversation = ").bind(c);
        }
        q.push(" ORDER BY id DESC LIMIT ")
            .bind(limit)
            .all(&self.pool)
            .await
    }

    /// The lines of an archive, oldest first, with their stored senders and roles.
    pub async fn archive_lines(&self, org: &str, archive_id: i64) -> Result<Vec<StoredMessage>> {
        self.messages_where(org, "trimmed = $2", archive_id).await
    }
}
