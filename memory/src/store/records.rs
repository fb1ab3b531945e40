use super::revisions::{insert_revision, NewRevision};
use super::{col, Db, Result, StoreError};
use crate::model::{MemoryRecord, NewRecord, Scope, Status, ANY_AGENT};
use crate::terms::terms;
use sqlx::any::AnyRow;
use sqlx::AnyConnection;
use std::collections::HashMap;

/// How many newest matches of one word, in one posting list, a read looks at.
/// Keeps a turn's retrieval bounded however common a word is.
const POSTING_CAP: i64 = 500;

pub(super) const COLUMNS: &str = "id, org, agent, scope, owner, subject, kind, content, status, source, said_at, recorded_at, expires_at, conversation, batch, author";

pub(super) fn record(r: &AnyRow) -> Result<MemoryRecord> {
    let scope: String = col(r, "scope")?;
    let status: String = col(r, "status")?;
    Ok(MemoryRecord {
        id: col(r, "id")?,
        org: col(r, "org")?,
        agent: col(r, "agent")?,
        scope: Scope::parse(&scope).ok_or_else(|| StoreError::Corrupt(format!("scope {scope}")))?,
        owner: col(r, "owner")?,
        subject: col(r, "subject")?,
        kind: col(r, "kind")?,
        content: col(r, "content")?,
        status: Status::parse(&status)
            .ok_or_else(|| StoreError::Corrupt(format!("status {status}")))?,
        source: col(r, "source")?,
        said_at: col(r, "said_at")?,
        recorded_at: col(r, "recorded_at")?,
        expires_at: col(r, "expires_at")?,
        conversation: col(r, "conversation")?,
        batch: col(r, "batch")?,
        author: col(r, "author")?,
    })
}

/// Which records to list. `None` fields do not filter.
#[derive(Debug, Clone, Default)]
pub struct RecordFilter {
    pub agent: Option<String>,
    pub scope: Option<Scope>,
    pub owner: Option<String>,
    pub status: Option<Status>,
}

/// What activating a record did under the subject rule.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Supersession {
    /// Records this one retired.
    pub retired: Vec<i64>,
    /// Set when a newer live value exists: this record became history itself.
    pub superseded_by: Option<i64>,
    pub revisions: Vec<i64>,
}

/// The authenticated scope of one read. Built by the turn loop from the
/// pairing store's answer, never from message text.
#[derive(Debug, Clone)]
pub struct RetrievalScope {
    pub org: String,
    pub agent: String,
    /// The speaker's unified user id; `None` for unpaired senders and system principals.
    pub speaker: Option<String>,
    /// A group thread: only the speaker's preference/vocabulary records are read.
    pub shared: bool,
}

impl RetrievalScope {
    /// The read rule (SPEC §8): active records only; org policy; this agent's
    /// notes; the speaker's own personal records (in a group thread only how
    /// they want to be served); nobody else's personal memory, ever.
    pub fn may_read(&self, r: &MemoryRecord) -> bool {
        if r.org != self.org || r.status != Status::Active {
            return false;
        }
        let own = || {
            self.speaker.is_some()
                && r.owner == self.speaker
                && (!self.shared || SHARED_SCOPE_KINDS.contains(&r.kind.as_str()))
        };
        match r.scope {
            Scope::OrgPolicy => true,
            Scope::AgentNotes => r.agent == self.agent,
            Scope::Personal => r.agent == self.agent && own(),
            Scope::Person => own(),
        }
    }
}

/// A record found for a turn, with how many of the turn's words it matched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Retrieved {
    pub record: MemoryRecord,
    pub hits: i64,
}

/// Personal kinds that may be read in a group thread: how the speaker wants to be served.
pub const SHARED_SCOPE_KINDS: &[&str] = &["preference", "vocabulary"];

async fn same_subject_active(
    conn: &mut AnyConnection,
    r: &MemoryRecord,
) -> Result<Vec<MemoryRecord>> {
    let base = format!(
        "SELECT {COLUMNS} FROM memory_records WHERE org = $1 AND agent = $2 AND scope = $3 AND subject = $4 AND status = 'active' AND id <> $5"
    );
    let rows = match &r.owner {
        Some(owner) => {
            sqlx::query(&format!(
                "{base} AND owner = $6 ORDER BY said_at DESC, id DESC"
            ))
            .bind(&r.org)
            .bind(&r.agent)
            .bind(r.scope.as_str())
            .bind(&r.subject)
            .bind(r.id)
            .bind(owner)
            .fetch_all(&mut *conn)
            .await?
        }
        None => {
            sqlx::query(&format!(
                "{base} AND owner IS NULL ORDER BY said_at DESC, id DESC"
            ))
            .bind(&r.org)
            .bind(&r.agent)
            .bind(r.scope.as_str())
            .bind(&r.subject)
            .bind(r.id)
            .fetch_all(&mut *conn)
            .await?
        }
    };
    rows.iter().map(record).collect()
}

pub(super) async fn insert_on(conn: &mut AnyConnection, r: &NewRecord) -> Result<i64> {
    let (id,): (i64,) = sqlx::query_as(
        "INSERT INTO memory_records (org, agent, scope, owner, subject, kind, content, status, source, said_at, recorded_at, expires_at, conversation, batch, author) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15) RETURNING id",
    )
    .bind(&r.org)
    .bind(&r.agent)
    .bind(r.scope.as_str())
    .bind(&r.owner)
    .bind(&r.subject)
    .bind(&r.kind)
    .bind(&r.content)
    .bind(r.status.as_str())
    .bind(&r.source)
    .bind(r.said_at)
    .bind(r.recorded_at)
    .bind(r.expires_at)
    .bind(&r.conversation)
    .bind(r.batch)
    .bind(&r.author)
    .fetch_one(&mut *conn)
    .await?;
    if r.status == Status::Active {
        index_terms(
            conn,
            &r.org,
            id,
            &vis_key(r.scope, &r.agent, r.owner.as_deref()),
            &r.subject,
            &r.content,
        )
        .await?;
    }
    Ok(id)
}

pub(super) async fn vetoed(
    conn: &mut AnyConnection,
    org: &str,
    retired: i64,
    replacing: i64,
) -> Result<bool> {
    let (n,): (i64,) = sqlx::query_as(
        "SELECT COUNT(*) FROM memory_revisions WHERE org = $1 AND retired_id = $2 AND replacing_id = $3 AND undone_at IS NOT NULL",
    )
    .bind(org)
    .bind(retired)
    .bind(replacing)
    .fetch_one(&mut *conn)
    .await?;
    Ok(n > 0)
}

/// The posting-list key a record is visible under (see the `memory_terms` migration).
pub(super) fn vis_key(scope: Scope, agent: &str, owner: Option<&str>) -> String {
    let owner = owner.unwrap_or("");
    match scope {
        Scope::OrgPolicy => "org".into(),
        Scope::AgentNotes => format!("agent:{agent}"),
        Scope::Personal => format!("user:{agent}:{owner}"),
        Scope::Person => format!("person:{owner}"),
    }
}

async fn index_terms(
    conn: &mut AnyConnection,
    org: &str,
    id: i64,
    vis: &str,
    subject: &str,
    content: &str,
) -> Result<()> {
    let mut words = terms(content);
    for w in terms(subject) {
        if !words.contains(&w) {
            words.push(w);
        }
    }
    for w in words {
        sqlx::query("INSERT INTO memory_terms (org, vis, term, record_id) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING")
            .bind(org)
            .bind(vis)
            .bind(&w)
            .bind(id)
            .execute(&mut *conn)
            .await?;
    }
    Ok(())
}

/// Set a record's status, keeping the posting lists to active records only.
async fn set_status_on(
    conn: &mut AnyConnection,
    org: &str,
    id: i64,
    status: Status,
) -> Result<u64> {
    let changed = sqlx::query("UPDATE memory_records SET status = $1 WHERE org = $2 AND id = $3")
        .bind(status.as_str())
        .bind(org)
        .bind(id)
        .execute(&mut *conn)
        .await?
        .rows_affected();
    if changed == 0 {
        return Ok(0);
    }
    reindex(conn, org, id).await?;
    Ok(changed)
}

/// Rebuild a record's posting lists from its current row: indexed when active, absent otherwise.
async fn reindex(conn: &mut AnyConnection, org: &str, id: i64) -> Result<()> {
    sqlx::query("DELETE FROM memory_terms WHERE record_id = $1 AND org = $2")
        .bind(id)
        .bind(org)
        .execute(&mut *conn)
        .await?;
    let row = sqlx::query(&format!(
        "SELECT {COLUMNS} FROM memory_records WHERE org = $1 AND id = $2"
    ))
    .bind(org)
    .bind(id)
    .fetch_one(&mut *conn)
    .await?;
    let r = record(&row)?;
    if r.status == Status::Active {
        index_terms(
            conn,
            org,
            id,
            &vis_key(r.scope, &r.agent, r.owner.as_deref()),
            &r.subject,
            &r.content,
        )
        .await?;
    }
    Ok(())
}

impl Db {
    /// Insert a record and index its words. Returns its id.
    pub async fn insert_record(&self, r: &NewRecord) -> Result<i64> {
        let mut tx = self.pool().begin().await?;
        let id = insert_on(&mut tx, r).await?;
        tx.commit().await?;
        Ok(id)
    }

    /// Insert many records in one transaction (imports, benchmarks). Returns their ids.
    pub async fn insert_records(&self, records: &[NewRecord]) -> Result<Vec<i64>> {
        let mut tx = self.pool().begin().await?;
        let mut ids = Vec::with_capacity(records.len());
        for r in records {
            ids.push(insert_on(&mut tx, r).await?);
        }
        tx.commit().await?;
        Ok(ids)
    }

    pub async fn record(&self, org: &str, id: i64) -> Result<MemoryRecord> {
        let row = sqlx::query(&format!(
            "SELECT {COLUMNS} FROM memory_records WHERE org = $1 AND id = $2"
        ))
        .bind(org)
        .bind(id)
        .fetch_optional(self.pool())
        .await?;
        row.as_ref()
            .map(record)
            .transpose()?
            .ok_or_else(|| StoreError::NotFound(format!("memory record {id}")))
    }

    /// Records of an organisation, oldest first.
    pub async fn records(&self, org: &str, f: &RecordFilter) -> Result<Vec<MemoryRecord>> {
        let mut sql = format!("SELECT {COLUMNS} FROM memory_records WHERE org = $1");
        let mut binds: Vec<String> = Vec::new();
        let mut push = |sql: &mut String, column: &str, value: String| {
            binds.push(value);
            sql.push_str(&format!(" AND {column} = ${}", binds.len() + 1));
        };
        if let Some(a) = &f.agent {
            push(&mut sql, "agent", a.clone());
        }
        if let Some(s) = f.scope {
            push(&mut sql, "scope", s.as_str().to_string());
        }
        if let Some(o) = &f.owner {
            push(&mut sql, "owner", o.clone());
        }
        if let Some(s) = f.status {
            push(&mut sql, "status", s.as_str().to_string());
        }
        sql.push_str(" ORDER BY id");
        let mut q = sqlx::query(&sql).bind(org);
        for b in binds {
            q = q.bind(b);
        }
        let rows = q.fetch_all(self.pool()).await?;
        rows.iter().map(record).collect()
    }

    /// Records whose subject or content contains `needle` (case-insensitive).
    pub async fn search_records(
        &self,
        org: &str,
        needle: &str,
        limit: i64,
    ) -> Result<Vec<MemoryRecord>> {
        let pattern = format!("%{}%", needle.to_lowercase());
        let rows = sqlx::query(&format!(
            "SELECT {COLUMNS} FROM memory_records WHERE org = $1 AND (LOWER(content) LIKE $2 OR LOWER(subject) LIKE $2) ORDER BY id DESC LIMIT $3"
        ))
        .bind(org)
        .bind(pattern)
        .bind(limit)
        .fetch_all(self.pool())
        .await?;
        rows.iter().map(record).collect()
    }

    /// Set a record's status. Errors when the record does not exist in `org`.
    pub async fn set_status(&self, org: &str, id: i64, status: Status) -> Result<()> {
        let mut conn = self.pool().acquire().await?;
        match set_status_on(&mut conn, org, id, status).await? {
            0 => Err(StoreError::NotFound(format!("memory record {id}"))),
            _ => Ok(()),
        }
    }

    /// Make record `id` active and apply the subject rule: an older live value
    /// on the same subject is retired (with a revision row); a newer one makes
    /// this record history itself. Undone pairs (vetoes) are never applied again.
    pub async fn activate(
        &self,
        org: &str,
        id: i64,
        cause: &str,
        run_id: &str,
        now: i64,
    ) -> Result<Supersession> {
        let mut tx = self.pool().begin().await?;
        // Write first, so SQLite takes its write lock before any read in this transaction.
        if set_status_on(&mut tx, org, id, Status::Active).await? == 0 {
            return Err(StoreError::NotFound(format!("memory record {id}")));
        }
        let row = sqlx::query(&format!(
            "SELECT {COLUMNS} FROM memory_records WHERE org = $1 AND id = $2"
        ))
        .bind(org)
        .bind(id)
        .fetch_one(&mut *tx)
        .await?;
        let new = record(&row)?;
        let mut out = Supersession::default();
        for old in same_subject_active(&mut tx, &new).await? {
            let (retired, replacing, reason) = if old.said_at > new.said_at {
                (&new, &old, "older than the live value on its subject")
            } else {
                (&old, &new, "a newer value on the same subject")
            };
            if vetoed(&mut tx, org, retired.id, replacing.id).await? {
                continue;
            }
            set_status_on(&mut tx, org, retired.id, Status::Superseded).await?;
            let rev = insert_revision(
                &mut *tx,
                &NewRevision {
                    org,
                    agent: &new.agent,
                    retired_id: retired.id,
                    replacing_id: replacing.id,
                    reason,
                    via: "subject_rule",
                    cause,
                    run_id,
                    model: None,
                    prompt_version: None,
                    created_at: now,
                },
            )
            .await?;
            out.revisions.push(rev);
            if retired.id == new.id {
                out.superseded_by = Some(old.id);
                break;
            }
            out.retired.push(old.id);
        }
        tx.commit().await?;
        Ok(out)
    }

    /// Undo a revision: the retired record is active again, the replacing one
    /// stays, and the pair stands as a veto. Idempotent: returns false when it
    /// was already undone.
    pub async fn undo_revision(&self, org: &str, id: i64, actor: &str, now: i64) -> Result<bool> {
        let rev = self.revision(org, id).await?;
        let mut tx = self.pool().begin().await?;
        let changed = sqlx::query(
            "UPDATE memory_revisions SET undone_at = $1, undone_by = $2 WHERE org = $3 AND id = $4 AND undone_at IS NULL",
        )
        .bind(now)
        .bind(actor)
        .bind(org)
        .bind(id)
        .execute(&mut *tx)
        .await?
        .rows_affected();
        if changed == 1 {
            let current =
                sqlx::query("SELECT status FROM memory_records WHERE org = $1 AND id = $2")
                    .bind(org)
                    .bind(rev.retired_id)
                    .fetch_optional(&mut *tx)
                    .await?;
            let superseded = match current {
                Some(row) => col::<String>(&row, "status")? == Status::Superseded.as_str(),
                None => false,
            };
            // A record deleted since stays deleted: undo restores history, not forgotten data.
            if superseded {
                set_status_on(&mut tx, org, rev.retired_id, Status::Active).await?;
            }
            sqlx::query("INSERT INTO audit_log (org, actor, action, target, detail, at) VALUES ($1, $2, 'revision.undo', $3, $4, $5)")
                .bind(org)
                .bind(actor)
                .bind(format!("revision:{id}"))
                .bind(format!("record {} back; veto {} -> {}", rev.retired_id, rev.replacing_id, rev.retired_id))
                .bind(now)
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await?;
        Ok(changed == 1)
    }

    /// Move an individual-tier record to the person tier (`org/{org}/user/{user}`),
    /// read by every agent of the org. `content` is the re-sanitised text.
    pub async fn move_to_person_tier(&self, org: &str, id: i64, content: &str) -> Result<()> {
        let mut tx = self.pool().begin().await?;
        let changed = sqlx::query(
            "UPDATE memory_records SET scope = 'person', agent = $1, content = $2 WHERE org = $3 AND id = $4 AND scope = 'personal'",
        )
        .bind(ANY_AGENT)
        .bind(content)
        .bind(org)
        .bind(id)
        .execute(&mut *tx)
        .await?
        .rows_affected();
        if changed == 0 {
            return Err(StoreError::NotFound(format!("individual record {id}")));
        }
        reindex(&mut tx, org, id).await?;
        tx.commit().await?;
        Ok(())
    }

    /// Undo every revision of a run; returns the ids that were undone now.
    pub async fn undo_run(
        &self,
        org: &str,
        run_id: &str,
        actor: &str,
        now: i64,
    ) -> Result<Vec<i64>> {
        let mut undone = Vec::new();
        for rev in self.revisions_of_run(org, run_id).await? {
            if self.undo_revision(org, rev.id, actor, now).await? {
                undone.push(rev.id);
            }
        }
        if undone.is_empty() && self.revisions_of_run(org, run_id).await?.is_empty() {
            return Err(StoreError::NotFound(format!("run {run_id}")));
        }
        Ok(undone)
    }

    /// The newest batch of unexpired "Remember this?" proposals `author` was asked in a conversation.
    pub async fn pending_proposals(
        &self,
        org: &str,
        agent: &str,
        conversation: &str,
        author: &str,
        now: i64,
    ) -> Result<Vec<MemoryRecord>> {
        let rows = sqlx::query(&format!(
            "SELECT {COLUMNS} FROM memory_records WHERE org = $1 AND agent IN ($2, $3) AND conversation = $4 AND author = $5 \
             AND status = 'pending' AND expires_at > $6 ORDER BY batch DESC, id"
        ))
        .bind(org)
        .bind(agent)
        .bind(ANY_AGENT)
        .bind(conversation)
        .bind(author)
        .bind(now)
        .fetch_all(self.pool())
        .await?;
        let all: Vec<MemoryRecord> = rows.iter().map(record).collect::<Result<_>>()?;
        let newest = all.first().and_then(|r| r.batch);
        Ok(all.into_iter().filter(|r| r.batch == newest).collect())
    }

    /// Proposals past their expiry are deleted; returns how many.
    pub async fn expire_proposals(&self, org: &str, now: i64) -> Result<u64> {
        Ok(sqlx::query("UPDATE memory_records SET status = 'deleted' WHERE org = $1 AND status = 'pending' AND expires_at <= $2")
            .bind(org)
            .bind(now)
            .execute(self.pool())
            .await?
            .rows_affected())
    }

    /// True when a record with the same place, subject and content exists in one of `statuses`.
    pub async fn has_same(&self, r: &NewRecord, statuses: &[Status]) -> Result<bool> {
        Ok(self.find_same(r, statuses).await?.is_some())
    }

    /// The newest record with the same place, subject and content in one of `statuses`.
    pub async fn find_same(&self, r: &NewRecord, statuses: &[Status]) -> Result<Option<i64>> {
        let list = statuses
            .iter()
            .map(|s| format!("'{}'", s.as_str()))
            .collect::<Vec<_>>()
            .join(", ");
        let sql = format!(
            "SELECT id FROM memory_records WHERE org = $1 AND agent = $2 AND scope = $3 AND COALESCE(owner, '') = $4 \
             AND subject = $5 AND content = $6 AND status IN ({list}) ORDER BY id DESC LIMIT 1"
        );
        let row: Option<(i64,)> = sqlx::query_as(&sql)
            .bind(&r.org)
            .bind(&r.agent)
            .bind(r.scope.as_str())
            .bind(r.owner.clone().unwrap_or_default())
            .bind(&r.subject)
            .bind(&r.content)
            .fetch_optional(self.pool())
            .await?;
        Ok(row.map(|(id,)| id))
    }

    /// The one retrieval entry point: active records a turn in `scope` may
    /// read that match `words`, plus the speaker's preferences. Fails closed
    /// on an incomplete scope.
    pub async fn retrieve(
        &self,
        scope: &RetrievalScope,
        words: &[String],
        limit: i64,
    ) -> Result<Vec<Retrieved>> {
        if scope.org.is_empty() || scope.agent.is_empty() || scope.agent == ANY_AGENT {
            return Err(StoreError::Refused(
                "retrieval needs an organisation and an agent",
            ));
        }
        let speaker = scope.speaker.clone().unwrap_or_default();
        // Posting lists this scope may walk: org policy, the agent's notes, the speaker's own.
        let mut keys = vec!["org".to_string(), format!("agent:{}", scope.agent)];
        if scope.speaker.is_some() {
            keys.push(format!("user:{}:{speaker}", scope.agent));
            keys.push(format!("person:{speaker}"));
        }
        let mut hits: HashMap<i64, i64> = HashMap::new();
        for key in &keys {
            for w in words {
                let ids: Vec<(i64,)> = sqlx::query_as(
                    "SELECT record_id FROM memory_terms WHERE org = $1 AND vis = $2 AND term = $3 ORDER BY record_id DESC LIMIT $4",
                )
                .bind(&scope.org)
                .bind(key)
                .bind(w)
                .bind(POSTING_CAP)
                .fetch_all(self.pool())
                .await?;
                for (id,) in ids {
                    *hits.entry(id).or_default() += 1;
                }
            }
        }
        let mut ranked: Vec<(i64, i64)> = hits.into_iter().collect();
        ranked.sort_by(|a, b| b.1.cmp(&a.1).then(b.0.cmp(&a.0)));
        ranked.truncate((limit.max(1) * 4) as usize);
        let mut out: Vec<Retrieved> = Vec::new();
        if !ranked.is_empty() {
            // Fetched by primary key (an org-led index would scan the org), then the
            // visibility rule is checked on every row: the entry point fails closed.
            let ids = ranked
                .iter()
                .map(|(id, _)| id.to_string())
                .collect::<Vec<_>>()
                .join(", ");
            let sql = format!("SELECT {COLUMNS} FROM memory_records WHERE id IN ({ids})");
            let rows = sqlx::query(&sql).fetch_all(self.pool()).await?;
            let by_id: HashMap<i64, i64> = ranked.into_iter().collect();
            for row in rows {
                let rec = record(&row)?;
                if !scope.may_read(&rec) {
                    continue;
                }
                let h = by_id.get(&rec.id).copied().unwrap_or(0);
                out.push(Retrieved {
                    record: rec,
                    hits: h,
                });
            }
            out.sort_by(|a, b| {
                b.hits
                    .cmp(&a.hits)
                    .then(b.record.said_at.cmp(&a.record.said_at))
                    .then(b.record.id.cmp(&a.record.id))
            });
            out.truncate(limit.max(0) as usize);
        }
        if scope.speaker.is_some() {
            // How the speaker wants to be served applies to every reply, whatever the words.
            let sql = format!(
                "SELECT {cols} FROM memory_records r WHERE r.org = $1 AND r.status = 'active' AND r.owner = $3 \
                 AND ((r.scope = 'personal' AND r.agent = $2) OR r.scope = 'person') AND r.kind = 'preference' ORDER BY r.said_at DESC LIMIT $4",
                cols = COLUMNS.split(", ").map(|c| format!("r.{c}")).collect::<Vec<_>>().join(", ")
            );
            let rows = sqlx::query(&sql)
                .bind(&scope.org)
                .bind(&scope.agent)
                .bind(&speaker)
                .bind(limit)
                .fetch_all(self.pool())
                .await?;
            for row in rows {
                let rec = record(&row)?;
                if scope.may_read(&rec) && !out.iter().any(|r| r.record.id == rec.id) {
                    out.push(Retrieved {
                        record: rec,
                        hits: 0,
                    });
                }
            }
        }
        Ok(out)
    }
}

/// Which records a browser (the dashboard) lists. `None` and empty fields do not filter.
#[derive(Debug, Clone, Default)]
pub struct BrowseFilter {
    pub agent: Option<String>,
    /// Any of these scopes.
    pub scopes: Vec<Scope>,
    pub owner: Option<String>,
    pub status: Option<Status>,
    /// Subject or content contains this text (case-insensitive).
    pub text: Option<String>,
}

impl Db {
    /// Records matching `f`, newest first, at most `limit`.
    pub async fn browse_records(
        &self,
        org: &str,
        f: &BrowseFilter,
        limit: i64,
    ) -> Result<Vec<MemoryRecord>> {
        let mut sql = format!("SELECT {COLUMNS} FROM memory_records WHERE org = $1");
        let mut binds: Vec<String> = Vec::new();
        let bind = |binds: &mut Vec<String>, value: String| {
            binds.push(value);
            format!("${}", binds.len() + 1)
        };
        if let Some(a) = &f.agent {
            let p = bind(&mut binds, a.clone());
            sql.push_str(&format!(" AND agent = {p}"));
        }
        if !f.scopes.is_empty() {
            let ps: Vec<String> = f
                .scopes
                .iter()
                .map(|s| bind(&mut binds, s.as_str().to_string()))
                .collect();
            sql.push_str(&format!(" AND scope IN ({})", ps.join(", ")));
        }
        if let Some(o) = &f.owner {
            let p = bind(&mut binds, o.clone());
            sql.push_str(&format!(" AND owner = {p}"));
        }
        if let Some(s) = f.status {
            let p = bind(&mut binds, s.as_str().to_string());
            sql.push_str(&format!(" AND status = {p}"));
        }
        if let Some(t) = f.text.as_deref().map(str::trim).filter(|t| !t.is_empty()) {
            // The text is literal: LIKE's wildcards in it are escaped.
            let literal = t
                .to_lowercase()
                .replace('\\', "\\\\")
                .replace('%', "\\%")
                .replace('_', "\\_");
            let p = bind(&mut binds, format!("%{literal}%"));
            sql.push_str(&format!(
                " AND (LOWER(content) LIKE {p} ESCAPE '\\' OR LOWER(subject) LIKE {p} ESCAPE '\\')"
            ));
        }
        let p = binds.len() + 2;
        sql.push_str(&format!(" ORDER BY id DESC LIMIT ${p}"));
        let mut q = sqlx::query(&sql).bind(org);
        for b in binds {
            q = q.bind(b);
        }
        let rows = q.bind(limit).fetch_all(self.pool()).await?;
        rows.iter().map(record).collect()
    }

    /// People with personal memory (individual or person tier) that is not
    /// deleted, with how many of their records are active, by owner.
    pub async fn personal_owners(&self, org: &str) -> Result<Vec<(String, i64)>> {
        let rows: Vec<(String, i64)> = sqlx::query_as(
            "SELECT owner, COUNT(CASE WHEN status = 'active' THEN 1 END) AS active FROM memory_records \
             WHERE org = $1 AND scope IN ('personal', 'person') AND owner IS NOT NULL AND status <> 'deleted' \
             GROUP BY owner ORDER BY owner",
        )
        .bind(org)
        .fetch_all(self.pool())
        .await?;
        Ok(rows)
    }
}
