use super::{fulltext, Db, Result};

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
    /// Claim one run of a scheduled job; true for exactly one caller per (job, slot),
    /// however many replicas ask.
    pub async fn claim_job(&self, job: &str, slot: i64, now: i64) -> Result<bool> {
        let text = "INSERT INTO job_runs (job, slot, claimed_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING";
        Ok(sql!(text, job, slot, now).exec(&self.pool).await? == 1)
    }

    /// Every organisation that has users or memory.
    pub async fn orgs(&self) -> Result<Vec<String>> {
        let text = "SELECT org FROM users UNION SELECT org FROM memory_records ORDER BY 1";
        let rows: Vec<(String,)> = sql!(text).all(&self.pool).await?;
        Ok(rows.into_iter().map(|(o,)| o).collect())
    }

    /// Soft-forget a person's individual-tier records (status `deleted`, rows kept
    /// as tombstones without their text). Returns how many.
    pub async fn soft_forget_individual(&self, org: &str, owner: &str) -> Result<u64> {
        let text = "SELECT id FROM memory_records WHERE org = $1 AND owner = $2 AND scope = 'personal' AND status <> 'deleted'";
        let ids: Vec<(i64,)> = sql!(text, org, owner).all(&self.pool).await?;
        for (id,) in &ids {
            self.forget_record(org, *id).await?;
        }
        Ok(ids.len() as u64)
    }

    /// Erase a person (`steward memory erase`): every record they own deleted
    /// outright, the text of every line they sent replaced by [`ERASED`]. Returns
    /// the counts and the archives that held their lines (to be rewritten).
    pub async fn erase_person(&self, org: &str, user: &str) -> Result<Erasure> {
        let mut tx = self.pool.begin().await?;
        let owned = "SELECT id FROM memory_records WHERE org = $1 AND owner = $2";
        fulltext::unindex_owned(&mut tx, owned, org, user).await?;
        super::vectors::drop_owned(&mut tx, owned, org, user).await?;
        let records = "DELETE FROM memory_records WHERE org = $1 AND owner = $2";
        let records = sql!(records, org, user).exec(&mut *tx).await?;
        let archives = "SELECT DISTINCT a.id FROM messages m JOIN archives a ON a.org = m.org AND a.agent = m.agent \
                        AND a.conversation = m.conversation AND m.id BETWEEN a.first_id AND a.last_id \
                        WHERE m.org = $1 AND m.sender = $2 ORDER BY a.id";
        let archives: Vec<(i64,)> = sql!(archives, org, user).all(&mut *tx).await?;
        let lines = "UPDATE messages SET text = $1 WHERE org = $2 AND sender = $3";
        let messages = sql!(lines, ERASED, org, user).exec(&mut *tx).await?;
        tx.commit().await?;
        Ok(Erasure {
            records,
            messages,
            archives: archives.into_iter().map(|(id,)| id).collect(),
        })
    }

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
            .exec(&self.pool)
            .await?;
        Ok(())
    }

    /// Delete a person's person-tier records outright. Returns how many.
    pub async fn delete_person_tier(&self, org: &str, owner: &str) -> Result<u64> {
        let mut tx = self.pool.begin().await?;
        let owned =
            "SELECT id FROM memory_records WHERE org = $1 AND owner = $2 AND scope = 'person'";
        fulltext::unindex_owned(&mut tx, owned, org, owner).await?;
        super::vectors::drop_owned(&mut tx, owned, org, owner).await?;
        let records =
            "DELETE FROM memory_records WHERE org = $1 AND owner = $2 AND scope = 'person'";
        let n = sql!(records, org, owner).exec(&mut *tx).await?;
        tx.commit().await?;
        Ok(n)
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
