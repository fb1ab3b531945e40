use super::{fulltext, Conversations, Db, Owned, Records, Result};
use crate::model::{Scope, Status};

/// What stands for the text of an erased person's line.
pub const ERASED: &str = "[erased]";

/// What [`Db::erase_person`] removed.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Erasure {
    pub records: u64,
    pub messages: u64,
    /// Archives that held their lines.
    pub archives: Vec<i64>,
}

impl Db {
    /// Erase a person (`steward memory erase`): every record they own deleted
    /// outright, the text of every line they sent replaced by [`ERASED`]. Returns
    /// the counts and the archives that held their lines (to be rewritten).
    pub async fn erase_person(&self, org: &str, user: &str) -> Result<Erasure> {
        let mut tx = super::begin(&self.pool).await?;
        let owned = Owned {
            org,
            owner: user,
            scope: None,
        };
        fulltext::unindex_owned(&mut tx, &owned).await?;
        super::vectors::drop_owned(&mut tx, &owned).await?;
        super::tombstones::drop_owned(&mut tx, org, user).await?;
        let records = owned
            .rows("DELETE FROM memory_records")
            .exec(&mut *tx)
            .await?;
        let archives = "SELECT DISTINCT a.id FROM messages m JOIN archives a ON a.org = m.org AND a.agent = m.agent \
                        AND a.conversation = m.conversation AND m.id BETWEEN a.first_id AND a.last_id \
                        WHERE m.org = $1 AND m.sender = $2 ORDER BY a.id";
        let archives: Vec<(i64,)> = sql!(archives, org, user).all(&mut *tx).await?;
        // The assistant's replies to them go too: a reply quotes what it
        // answers ("your locker code 4411 is noted"). A reply is an agent
        // line after one of theirs with no one else's line between.
        let agent = crate::model::MessageAuthor::Agent.as_str();
        let replies = "UPDATE messages SET text = $1 WHERE org = $2 AND author = $4 AND id IN (\
             SELECT r.id FROM messages r JOIN messages p ON p.org = r.org AND p.agent = r.agent \
             AND p.conversation = r.conversation AND p.id < r.id \
             WHERE p.org = $2 AND p.sender = $3 AND r.author = $4 AND NOT EXISTS (\
             SELECT 1 FROM messages q WHERE q.org = r.org AND q.agent = r.agent \
             AND q.conversation = r.conversation AND q.id > p.id AND q.id < r.id AND q.author <> $4))";
        let answered = sql!(replies, ERASED, org, user, agent)
            .exec(&mut *tx)
            .await?;
        let lines = "UPDATE messages SET text = $1 WHERE org = $2 AND sender = $3";
        let messages = sql!(lines, ERASED, org, user).exec(&mut *tx).await? + answered;
        // Their corrections were kept as a skill's evidence: the words go too
        // (a revision already approved keeps its own text, an admin's).
        let corrections =
            "UPDATE skill_corrections SET task = $1, rule = $1 WHERE org = $2 AND sender = $3";
        sql!(corrections, ERASED, org, user).exec(&mut *tx).await?;
        tx.commit().await?;
        Ok(Erasure {
            records,
            messages,
            archives: archives.into_iter().map(|(id,)| id).collect(),
        })
    }
}

impl Records<'_> {
    /// Soft-forget a person's individual-tier records (status `deleted`, rows kept
    /// as keyed tombstones, without their text). Returns how many.
    pub async fn soft_forget_individual(&self, org: &str, owner: &str) -> Result<u64> {
        let individual = Owned {
            org,
            owner,
            scope: Some(Scope::Personal),
        };
        let ids: Vec<(i64,)> = individual
            .rows("SELECT id FROM memory_records")
            .push(" AND status <> ")
            .bind(Status::Deleted)
            .all(&self.db.pool)
            .await?;
        for (id,) in &ids {
            self.forget_record(org, *id).await?;
        }
        Ok(ids.len() as u64)
    }

    /// Delete a person's person-tier records outright. Returns how many.
    pub async fn delete_person_tier(&self, org: &str, owner: &str) -> Result<u64> {
        let mut tx = super::begin(&self.db.pool).await?;
        let owned = Owned {
            org,
            owner,
            scope: Some(Scope::Person),
        };
        fulltext::unindex_owned(&mut tx, &owned).await?;
        super::vectors::drop_owned(&mut tx, &owned).await?;
        let n = owned
            .rows("DELETE FROM memory_records")
            .exec(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(n)
    }
}

impl Conversations<'_> {
    /// Replace an archive's summary and Markdown (after an erasure).
    pub async fn rewrite_archive(
        &self,
        org: &str,
        id: i64,
        summary: &str,
        markdown: &str,
    ) -> Result<()> {
        let text = "UPDATE archives SET summary = $1, markdown = $2 WHERE org = $3 AND id = $4";
        sql!(text, summary, markdown, org, id)
            .exec(&self.db.pool)
            .await?;
        Ok(())
    }

    /// Messages a person sent, oldest first (their data export).
    pub async fn messages_by_sender(
        &self,
        org: &str,
        sender: &str,
    ) -> Result<Vec<crate::StoredMessage>> {
        self.messages_where(org, "sender = $2", sender.to_string())
            .await
    }
}
