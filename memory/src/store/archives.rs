use super::{Conversations, Result};
use crate::model::StoredMessage;
use serde::Serialize;
use sqlx::AnyConnection;

/// One trimmed slice of a conversation. Its words (summary and transcript)
/// are an [`ArchiveWords`], read through [`Archive::words`].
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
    /// People's words: never serialised with the rest (`Archive::words`).
    #[sqlx(flatten)]
    #[serde(skip)]
    words: ArchiveWords,
    pub created_at: i64,
    pub created_by: String,
    /// The archive's lines are its conversation's lines with ids in
    /// `first_id..=last_id` (0 and 0: none).
    pub first_id: i64,
    pub last_id: i64,
}

/// What an archive says — its summary and its transcript as Markdown: the
/// words of the people in the conversation. Neither `Serialize` nor
/// `Display`, and no field a surface can reach: [`Archive::words`] gives
/// them, a person's direct conversation only after an [`AuditedLook`].
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct ArchiveWords {
    summary: String,
    markdown: String,
}

impl ArchiveWords {
    pub fn summary(&self) -> &str {
        &self.summary
    }

    pub fn markdown(&self) -> &str {
        &self.markdown
    }
}

/// Proof that an administrator's reasoned look was written to the audit log
/// (`AuditTrail::append_look`), the only way to make one: what opens a
/// person's direct conversation.
#[derive(Debug)]
pub struct AuditedLook(());

impl AuditedLook {
    pub(super) fn written() -> Self {
        AuditedLook(())
    }
}

impl Archive {
    /// Whether this is a slice of a person's direct conversation: anything
    /// but a group conversation (`adapters::ConversationKind`) is one.
    pub fn is_direct(&self) -> bool {
        self.conversation_kind != "group"
    }

    /// The archive's words: a group conversation's to whoever may read
    /// archives; a direct conversation's (the person's words) only with a
    /// reasoned look audited first.
    pub fn words(&self, look: Option<&AuditedLook>) -> Option<&ArchiveWords> {
        (!self.is_direct() || look.is_some()).then_some(&self.words)
    }
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

impl Conversations<'_> {
    /// Archive a slice and take its lines out of the live history, atomically:
    /// the conversation's watermark moves to `last_id`, and the archive keeps
    /// the range. `None` when the slice is no longer live (another trim of
    /// the same conversation took it first): nothing is written.
    ///
    /// Through the group commit of conversation lines, in the transaction of
    /// the lines queued with it: on SQLite every writer waits for the one
    /// write lock, and a trim's own transaction (its own sync of the log)
    /// kept the lines' commits waiting behind it, a hundred times a second
    /// when many conversations pass their budget together.
    pub async fn archive_slice(&self, a: &NewArchive<'_>) -> Result<Option<i64>> {
        self.db.lines.archive(&self.db.writer, a).await
    }

    pub async fn archive(&self, org: &str, id: i64) -> Result<Archive> {
        self.db.by_id(SELECT, "archive", org, id).await
    }

    /// Archives of an organisation, oldest first; of one conversation when given.
    pub async fn archives(&self, org: &str, conversation: Option<&str>) -> Result<Vec<Archive>> {
        let mut q = sql!(format!("{SELECT} WHERE org = $1"), org);
        if let Some(c) = conversation {
            q = q.push(" AND conversation = ").bind(c);
        }
        q.push(" ORDER BY id").all(&self.db.pool).await
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
            .all(&self.db.pool)
            .await
    }

    /// The lines of an archive, oldest first, with their stored senders and roles.
    pub async fn archive_lines(&self, org: &str, archive_id: i64) -> Result<Vec<StoredMessage>> {
        let text = "SELECT m.id, m.org, m.agent, m.channel, m.conversation, m.conversation_kind, m.author, m.sender, m.sender_role, m.text, m.said_at \
                    FROM archives a JOIN messages m ON m.org = a.org AND m.agent = a.agent AND m.conversation = a.conversation \
                    AND m.id BETWEEN a.first_id AND a.last_id WHERE a.org = $1 AND a.id = $2 ORDER BY m.id";
        sql!(text, org, archive_id).all(&self.db.pool).await
    }
}

/// A slice about to be archived, owned (it waits in the group commit's queue).
#[derive(Debug)]
pub(super) struct QueuedArchive {
    org: String,
    agent: String,
    channel: String,
    conversation: String,
    conversation_kind: String,
    first_id: i64,
    last_id: i64,
    started_at: i64,
    ended_at: i64,
    trust: String,
    summary: String,
    markdown: String,
    created_at: i64,
    created_by: String,
}

impl From<&NewArchive<'_>> for QueuedArchive {
    fn from(a: &NewArchive<'_>) -> Self {
        QueuedArchive {
            org: a.org.into(),
            agent: a.agent.into(),
            channel: a.channel.into(),
            conversation: a.conversation.into(),
            conversation_kind: a.conversation_kind.into(),
            first_id: a.first_id,
            last_id: a.last_id,
            started_at: a.started_at,
            ended_at: a.ended_at,
            trust: a.trust.into(),
            summary: a.summary.into(),
            markdown: a.markdown.into(),
            created_at: a.created_at,
            created_by: a.created_by.into(),
        }
    }
}

/// Archive `a` in the open transaction `conn` ([`Db::archive_slice`]): the
/// archive's id, or `None` (nothing written) when its slice is no longer live.
pub(super) async fn archive_in(conn: &mut AnyConnection, a: &QueuedArchive) -> Result<Option<i64>> {
    // The slice's size comes off the live size, counted by the engine as
    // the triggers count a line, from the watermark as it stands.
    let slice = "FROM messages m WHERE m.org = $1 AND m.agent = $2 AND m.conversation = $3 \
                 AND m.id > live_history.trimmed_through AND m.id <= $4";
    let text = format!(
        "UPDATE live_history SET messages = messages - (SELECT COUNT(*) {slice}), \
         chars = chars - (SELECT COALESCE(SUM(LENGTH(m.text)), 0) {slice}), trimmed_through = $4 \
         WHERE org = $1 AND agent = $2 AND conversation = $3 AND trimmed_through < $5"
    );
    let moved = sql!(
        text,
        a.org.as_str(),
        a.agent.as_str(),
        a.conversation.as_str(),
        a.last_id,
        a.first_id
    )
    .exec(&mut *conn)
    .await?;
    if moved == 0 {
        return Ok(None);
    }
    let text = "INSERT INTO archives (org, agent, channel, conversation, conversation_kind, started_at, ended_at, trust, summary, markdown, created_at, created_by, first_id, last_id) \
                VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14) RETURNING id";
    let q = sql!(
        text,
        a.org.as_str(),
        a.agent.as_str(),
        a.channel.as_str(),
        a.conversation.as_str(),
        a.conversation_kind.as_str()
    )
    .arg(a.started_at)
    .arg(a.ended_at)
    .arg(a.trust.as_str())
    .arg(a.summary.as_str())
    .arg(a.markdown.as_str())
    .arg(a.created_at)
    .arg(a.created_by.as_str())
    .arg(a.first_id)
    .arg(a.last_id);
    let (id,): (i64,) = q.one(&mut *conn).await?;
    Ok(Some(id))
}
