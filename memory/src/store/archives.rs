use super::{col, Db, Result, StoreError};
use crate::model::StoredMessage;
use serde::Serialize;
use sqlx::any::AnyRow;

/// One trimmed slice of a conversation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
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

const COLUMNS: &str = "id, org, agent, channel, conversation, conversation_kind, started_at, ended_at, trust, summary, markdown, created_at, created_by";

fn archive(r: &AnyRow) -> Result<Archive> {
    Ok(Archive {
        id: col(r, "id")?,
        org: col(r, "org")?,
        agent: col(r, "agent")?,
        channel: col(r, "channel")?,
        conversation: col(r, "conversation")?,
        conversation_kind: col(r, "conversation_kind")?,
        started_at: col(r, "started_at")?,
        ended_at: col(r, "ended_at")?,
        trust: col(r, "trust")?,
        summary: col(r, "summary")?,
        markdown: col(r, "markdown")?,
        created_at: col(r, "created_at")?,
        created_by: col(r, "created_by")?,
    })
}

impl Db {
    /// Archive a slice and take its messages out of the live history, atomically.
    pub async fn archive_slice(&self, a: &NewArchive<'_>) -> Result<i64> {
        let mut tx = self.pool().begin().await?;
        let (id,): (i64,) = sqlx::query_as(
            "INSERT INTO archives (org, agent, channel, conversation, conversation_kind, started_at, ended_at, trust, summary, markdown, created_at, created_by) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) RETURNING id",
        )
        .bind(a.org)
        .bind(a.agent)
        .bind(a.channel)
        .bind(a.conversation)
        .bind(a.conversation_kind)
        .bind(a.started_at)
        .bind(a.ended_at)
        .bind(a.trust)
        .bind(a.summary)
        .bind(a.markdown)
        .bind(a.created_at)
        .bind(a.created_by)
        .fetch_one(&mut *tx)
        .await?;
        for chunk in a.message_ids.chunks(500) {
            let ids = chunk
                .iter()
                .map(i64::to_string)
                .collect::<Vec<_>>()
                .join(", ");
            sqlx::query(&format!(
                "UPDATE messages SET trimmed = $1 WHERE org = $2 AND agent = $3 AND conversation = $4 AND trimmed = 0 AND id IN ({ids})"
            ))
            .bind(id)
            .bind(a.org)
            .bind(a.agent)
            .bind(a.conversation)
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(id)
    }

    pub async fn archive(&self, org: &str, id: i64) -> Result<Archive> {
        let row = sqlx::query(&format!(
            "SELECT {COLUMNS} FROM archives WHERE org = $1 AND id = $2"
        ))
        .bind(org)
        .bind(id)
        .fetch_optional(self.pool())
        .await?;
        row.as_ref()
            .map(archive)
            .transpose()?
            .ok_or_else(|| StoreError::NotFound(format!("archive {id}")))
    }

    /// Archives of an organisation, oldest first; of one conversation when given.
    pub async fn archives(&self, org: &str, conversation: Option<&str>) -> Result<Vec<Archive>> {
        let rows = match conversation {
            Some(c) => {
                sqlx::query(&format!(
                "SELECT {COLUMNS} FROM archives WHERE org = $1 AND conversation = $2 ORDER BY id"
            ))
                .bind(org)
                .bind(c)
                .fetch_all(self.pool())
                .await?
            }
            None => {
                sqlx::query(&format!(
                    "SELECT {COLUMNS} FROM archives WHERE org = $1 ORDER BY id"
                ))
                .bind(org)
                .fetch_all(self.pool())
                .await?
            }
        };
        rows.iter().map(archive).collect()
    }

    /// Summaries of a conversation's newest `limit` archives, newest first
    /// (PREVIOUS CONTEXT; read on every answer, so bounded and without the lines).
    pub async fn recent_summaries(
        &self,
        org: &str,
        agent: &str,
        conversation: &str,
        limit: i64,
    ) -> Result<Vec<String>> {
        let rows: Vec<(String,)> = sqlx::query_as(
            "SELECT summary FROM archives WHERE org = $1 AND agent = $2 AND conversation = $3 ORDER BY id DESC LIMIT $4",
        )
        .bind(org)
        .bind(agent)
        .bind(conversation)
        .bind(limit)
        .fetch_all(self.pool())
        .await?;
        Ok(rows.into_iter().map(|(s,)| s).collect())
    }

    /// The lines of an archive, oldest first, with their stored senders and roles.
    pub async fn archive_lines(&self, org: &str, archive_id: i64) -> Result<Vec<StoredMessage>> {
        self.messages_where(org, "trimmed = $2", archive_id).await
    }
}
