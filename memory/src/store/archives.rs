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
    /// The archive's lines are its conversation's lines with ids in
    /// `first_id..=last_id` (0 and 0: none).
    pub first_id: i64,
    pub last_id: i64,
}

/// A slice about to be archived: the oldest live lines of a conversation, up
/// to and including line `last_id`.
#[derive(Debug, Clone)]
pub struct NewArchive<'a> {
    pub org: &'a str,
    pub agent: &'a str,
    pub channel: &'a str,
    pub conversation: &'a str,
    pub conversation_kind: &'a str,
    /// The ids of the slice's first and last lines.
    pub first_id: i64,
    pub last_id: i64,
    pub started_at: i64,
    pub ended_at: i64,
    pub trust: &'a str,
    pub summary: &'a str,
    pub markdown: &'a str,
    pub created_at: i64,
    pub created_by: &'a str,
}

const SELECT: &str = "SELECT id, org, agent, channel, conversation, conversation_kind, started_at, ended_at, trust, summary, markdown, created_at, created_by, first_id, last_id FROM archives";

impl Db {
    /// Archive a slice and take its lines out of the live history, atomically:
    /// the conversation's watermark moves to `last_id`, and the archive keeps
    /// the range. `None` when the slice is no longer live (another trim of
    /// the same conversation took it first): nothing is written.
    ///
    /// On the group commit's connection: on SQLite every writer waits for
    /// the one write lock, and a trim waiting in SQLite's busy handler (which
    /// sleeps and polls) would keep the lines' commits waiting behind it.
    pub async fn archive_slice(&self, a: &NewArchive<'_>) -> Result<Option<i64>> {
        let mut tx = self.writer.begin().await?;
        // The slice's size comes off the live size, counted by the engine as
        // the triggers count a line, from the watermark as it stands.
        let slice = "FROM messages m WHERE m.org = $1 AND m.agent = $2 AND m.conversation = $3 \
                     AND m.id > live_history.trimmed_through AND m.id <= $4";
        let text = format!(
            "UPDATE live_history SET messages = messages - (SELECT COUNT(*) {slice}), \
             chars = chars - (SELECT COALESCE(SUM(LENGTH(m.text)), 0) {slice}), trimmed_through = $4 \
             WHERE org = $1 AND agent = $2 AND conversation = $3 AND trimmed_through < $5"
        );
        let moved = sql!(text, a.org, a.agent, a.conversation, a.last_id, a.first_id)
            .exec(&mut *tx)
            .await?;
        if moved == 0 {
            tx.rollback().await?;
            return Ok(None);
        }
        let text = "INSERT INTO archives (org, agent, channel, conversation, conversation_kind, started_at, ended_at, trust, summary, markdown, created_at, created_by, first_id, last_id) \
                    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14) RETURNING id";
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
        .arg(a.created_by)
        .arg(a.first_id)
        .arg(a.last_id);
        let (id,): (i64,) = q.one(&mut *tx).await?;
        tx.commit().await?;
        Ok(Some(id))
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
        let text = "SELECT m.id, m.org, m.agent, m.channel, m.conversation, m.conversation_kind, m.author, m.sender, m.sender_role, m.text, m.said_at \
                    FROM archives a JOIN messages m ON m.org = a.org AND m.agent = a.agent AND m.conversation = a.conversation \
                    AND m.id BETWEEN a.first_id AND a.last_id WHERE a.org = $1 AND a.id = $2 ORDER BY m.id";
        sql!(text, org, archive_id).all(&self.pool).await
    }
}
