use super::audit::Act;
use super::fulltext::{self, Doc};
use super::revisions::{insert_revision, NewRevision, RevisionMeta};
use super::tombstones::{self};
use super::{Records, Result, Sql, StoreError};
use crate::admin_text::AdminText;
use crate::credentials::{credential_in, Credential};
use crate::model::{MemoryRecord, NewRecord, Scope, Status, ANY_AGENT};
use sqlx::AnyConnection;

/// What a conversation line a forgotten record was learned from reads afterwards.
pub const FORGOTTEN_LINE: &str = "[forgotten]";

use super::RECORD as SELECT;

mod retrieval;
mod subject_rule;

pub(in crate::store) use retrieval::{fetch, hit_records};
pub use retrieval::{RetrievalScope, Retrieved};
pub(in crate::store) use subject_rule::activate_on;
pub(crate) use subject_rule::SubjectRuleRun;
use subject_rule::{find_same_on, insert_active_on, same_subject_active, SubjectPlace};

/// Which records to list (`records`, oldest first; `browse_records`, newest
/// first). `None` and empty fields do not filter.
#[derive(Debug, Clone, Default)]
pub struct RecordFilter {
    pub agent: Option<String>,
    /// Any of these scopes (empty: every scope).
    pub scopes: Vec<Scope>,
    pub owner: Option<String>,
    pub status: Option<Status>,
    /// Subject or content contains this text (case-insensitive).
    pub text: Option<String>,
    /// Only records with a smaller id (a page of a list, newest first).
    pub before: Option<i64>,
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

pub(super) async fn insert_on(conn: &mut AnyConnection, r: &NewRecord) -> Result<i64> {
    let text = "INSERT INTO memory_records (org, agent, scope, owner, subject, kind, content, status, source, said_at, recorded_at, expires_at, conversation, batch, author, on_behalf_of) \
                VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16) RETURNING id";
    let q = sql!(text, &r.org, &r.agent, r.scope, &r.owner, &r.subject, &r.kind)
        .arg(&r.content)
        .arg(r.status)
        .arg(&r.source)
        .arg(r.said_at)
        .arg(r.recorded_at)
        .arg(r.expires_at)
        .arg(&r.conversation)
        .arg(r.batch)
        .arg(&r.author)
        .arg(&r.on_behalf_of);
    let (id,) = q.one(&mut *conn).await?;
    if r.status == Status::Active {
        fulltext::index(conn, &Doc::new(id, r)).await?;
    }
    Ok(id)
}

/// Set a record's status, keeping the full-text index to active records only.
async fn set_status_on(
    conn: &mut AnyConnection,
    org: &str,
    id: i64,
    status: Status,
) -> Result<u64> {
    let text = "UPDATE memory_records SET status = $1 WHERE org = $2 AND id = $3";
    let changed = sql!(text, status, org, id).exec(&mut *conn).await?;
    if changed == 0 {
        return Ok(0);
    }
    reindex(conn, org, id).await?;
    Ok(changed)
}

/// Rebuild a record's full-text row from its current row: indexed when active, absent otherwise.
async fn reindex(conn: &mut AnyConnection, org: &str, id: i64) -> Result<()> {
    fulltext::unindex(conn, id).await?;
    let r = fetch(conn, org, id)
        .await?
        .ok_or_else(|| StoreError::NotFound(format!("memory record {id}")))?;
    // A record no longer active, or read elsewhere now, loses its vector.
    super::vectors::keep_current(conn, &r).await?;
    if r.status == Status::Active {
        fulltext::index(conn, &Doc::of(&r)).await?;
    }
    Ok(())
}

/// Records of an organisation in a place: any agent, scope in `scopes` (any when
/// empty), owner and status when given. The caller adds order and limit.
fn in_place<'q>(
    org: &'q str,
    agent: Option<&'q str>,
    scopes: &[Scope],
    owner: Option<&'q str>,
    status: Option<Status>,
) -> Sql<'q> {
    let mut q = sql!(format!("{SELECT} WHERE org = $1"), org).and_eq("agent", agent);
    if !scopes.is_empty() {
        q = q
            .push(" AND scope IN (")
            .bind_list(scopes.iter().copied())
            .push(")");
    }
    q.and_eq("owner", owner).and_eq("status", status)
}

/// The records of `org` that `f` lets through, before ordering.
fn filtered<'q>(org: &'q str, f: &'q RecordFilter) -> Sql<'q> {
    let mut q = in_place(
        org,
        f.agent.as_deref(),
        &f.scopes,
        f.owner.as_deref(),
        f.status,
    );
    if let Some(t) = f.text.as_deref().map(str::trim).filter(|t| !t.is_empty()) {
        // The text is literal: LIKE's wildcards in it are escaped.
        let literal = t
            .to_lowercase()
            .replace('\\', "\\\\")
            .replace('%', "\\%")
            .replace('_', "\\_");
        let n = format!("${}", q.len() + 1);
        q = q
            .push(&format!(
                " AND (LOWER(content) LIKE {n} ESCAPE '\\' OR LOWER(subject) LIKE {n} ESCAPE '\\')"
            ))
            .arg(format!("%{literal}%"));
    }
    if let Some(before) = f.before {
        q = q.push(" AND id < ").bind(before);
    }
    q
}

/// A record kept beside one it conflicts with ([`Records::keep_beside`]).
#[derive(Debug, Clone, Copy)]
pub struct KeepBeside<'a> {
    pub org: &'a str,
    /// The record kept before.
    pub old: i64,
    /// The new one, kept too.
    pub new: i64,
    /// Who chose (the person's stored id).
    pub actor: &'a str,
    /// The turn that asked (`turn:<message id>`).
    pub run_id: &'a str,
    pub now: i64,
}

impl Records<'_> {
    /// Insert a record and index its words. Returns its id.
    pub(crate) async fn insert_new(&self, r: &NewRecord) -> Result<i64> {
        let ids = self.insert_new_many(std::slice::from_ref(r)).await?;
        ids.first()
            .copied()
            .ok_or_else(|| StoreError::Corrupt("insert returned no id".into()))
    }

    /// Insert a record active and apply the subject rule to it in one
    /// transaction ([`Db::write`] of a new record): one commit instead of two,
    /// and no crash leaves it active without the rule applied.
    pub(crate) async fn insert_new_active(
        &self,
        r: &NewRecord,
        cause: &str,
        run_id: &str,
        now: i64,
    ) -> Result<(i64, Supersession)> {
        let mut tx = super::begin(&self.db.pool).await?;
        let out = insert_active_on(&mut tx, r, cause, run_id, now).await?;
        tx.commit().await?;
        self.db.written();
        Ok(out)
    }

    /// Insert many records in one transaction (imports, benchmarks). Returns their ids.
    pub(crate) async fn insert_new_many(&self, records: &[NewRecord]) -> Result<Vec<i64>> {
        let mut tx = super::begin(&self.db.pool).await?;
        let mut ids = Vec::with_capacity(records.len());
        for r in records {
            ids.push(insert_on(&mut tx, r).await?);
        }
        tx.commit().await?;
        self.db.written();
        Ok(ids)
    }

    /// The batch form of [`Db::write`] for operator imports: each record is
    /// skipped when the same text is already active in its place, else
    /// inserted and activated under the subject rule (no belief revision: an
    /// operator wrote it), all in one transaction. Returns, per record, its
    /// id when it was written.
    pub async fn import_records(
        &self,
        records: &[NewRecord],
        run_id: &str,
        now: i64,
    ) -> Result<Vec<Option<i64>>> {
        let screened = records
            .iter()
            .enumerate()
            .map(|(at, r)| crate::screen::screen(r).map_err(|refusal| refusal.at(at)))
            .collect::<Result<Vec<_>>>()?;
        let mut tx = super::begin(&self.db.pool).await?;
        let mut out = Vec::with_capacity(records.len());
        for r in &screened {
            if find_same_on(&mut tx, &self.db.tombstone_key, r, &[Status::Active])
                .await?
                .is_some()
            {
                out.push(None);
                continue;
            }
            let (id, _) = insert_active_on(&mut tx, r, "import", run_id, now).await?;
            out.push(Some(id));
        }
        tx.commit().await?;
        self.db.written();
        Ok(out)
    }

    pub async fn get(&self, org: &str, id: i64) -> Result<MemoryRecord> {
        self.db.by_id(SELECT, "memory record", org, id).await
    }

    /// Records of an organisation, oldest first.
    pub async fn list(&self, org: &str, f: &RecordFilter) -> Result<Vec<MemoryRecord>> {
        filtered(org, f)
            .push(" ORDER BY id")
            .all(&self.db.pool)
            .await
    }

    /// Set a record's status. Errors when the record does not exist in `org`.
    pub(crate) async fn change_status(&self, org: &str, id: i64, status: Status) -> Result<()> {
        let mut conn = self.db.pool.acquire().await?;
        match set_status_on(&mut conn, org, id, status).await? {
            0 => Err(StoreError::NotFound(format!("memory record {id}"))),
            _ => {
                self.db.written();
                Ok(())
            }
        }
    }

    /// Forget record `id`: deleted (out of the keyword index and the
    /// vectors), its subject and content replaced by [`tombstones::FORGOTTEN`],
    /// and keyed tombstones of its text and source message kept, so nothing of
    /// it can be read back or guessed while the same item is still not relearned.
    pub async fn forget_record(&self, org: &str, id: i64) -> Result<()> {
        let mut tx = super::begin(&self.db.pool).await?;
        let rec = fetch(&mut tx, org, id)
            .await?
            .ok_or_else(|| StoreError::NotFound(format!("memory record {id}")))?;
        set_status_on(&mut tx, org, id, Status::Deleted).await?;
        if rec.content != tombstones::FORGOTTEN {
            let hash = tombstones::text_sha256(&rec.content);
            tombstones::bury(
                &mut tx,
                &self.db.tombstone_key,
                &rec,
                &hash,
                rec.recorded_at,
            )
            .await?;
        }
        // SQLite's contentless index only marks a deleted row: merging its
        // segments now drops the forgotten tokens from its pages (a forget is
        // rare and asked for; PostgreSQL's postings rows are deleted outright).
        if self.db.backend == super::Backend::Sqlite {
            let merge = "INSERT INTO memory_fts(memory_fts) VALUES ('optimize')";
            sql!(merge).exec(&mut *tx).await?;
        }
        // The line it was learned from keeps its words no longer either (the
        // tombstone is keyed by the line's id, not its text).
        if let Some(line) = crate::model::source_message(&rec.source) {
            let text = "UPDATE messages SET text = $1 WHERE org = $2 AND id = $3";
            sql!(text, FORGOTTEN_LINE, org, line).exec(&mut *tx).await?;
        }
        tx.commit().await?;
        self.db.written();
        Ok(())
    }

    /// Make record `id` active and apply the subject rule: an older live value
    /// on the same subject is retired (with a revision row); a newer one makes
    /// this record history itself. Undone pairs (vetoes) are never applied again.
    pub(crate) async fn activate_under_subject_rule(
        &self,
        run: &SubjectRuleRun<'_>,
    ) -> Result<Supersession> {
        let mut tx = super::begin(&self.db.pool).await?;
        let out = activate_on(&mut tx, run).await?;
        tx.commit().await?;
        self.db.written();
        Ok(out)
    }

    /// Undo a revision: the retired record is active again, the replacing one
    /// stays, and the pair stands as a veto. Idempotent: returns false when it
    /// was already undone.
    pub async fn undo_revision(&self, org: &str, id: i64, actor: &str, now: i64) -> Result<bool> {
        let rev = self.revision(org, id).await?;
        let mut tx = super::begin(&self.db.pool).await?;
        let text = "UPDATE memory_revisions SET undone_at = $1, undone_by = $2 WHERE org = $3 AND id = $4 AND undone_at IS NULL";
        let changed = sql!(text, now, actor, org, id).exec(&mut *tx).await?;
        if changed == 1 {
            let current = fetch(&mut tx, org, rev.retired_id).await?;
            // A record deleted since stays deleted: undo restores history, not forgotten data.
            if current.is_some_and(|r| r.status == Status::Superseded) {
                set_status_on(&mut tx, org, rev.retired_id, Status::Active).await?;
            }
            let (back, over) = (rev.retired_id, rev.replacing_id);
            let detail = admin_text!("record {} back; veto {} -> {}", back, over, back);
            let target = format!("revision:{id}");
            let by = Act {
                org,
                actor,
                at: now,
            };
            by.audit(&mut *tx, "revision.undo", &target, &detail)
                .await?;
        }
        tx.commit().await?;
        self.db.written();
        Ok(changed == 1)
    }

    /// The person chose to keep `new` beside `old`, which it conflicts with
    /// ("both" to a "Remember this?"): a revision of the pair, undone by
    /// `actor` as it is written, so neither the subject rule nor a judge ever
    /// retires `old` for `new` (a veto, as an undo leaves). Audited
    /// `memory.keep_both`. Returns the revision's id.
    pub async fn keep_beside(&self, keep: &KeepBeside<'_>) -> Result<i64> {
        let KeepBeside {
            org,
            old,
            new,
            actor,
            run_id,
            now,
        } = *keep;
        let mut tx = self.db.pool.begin().await?;
        let record = fetch(&mut tx, org, new)
            .await?
            .ok_or_else(|| StoreError::NotFound(format!("memory record {new}")))?;
        let revision = NewRevision {
            org,
            agent: &record.agent,
            retired_id: old,
            replacing_id: new,
            meta: RevisionMeta {
                via: "consent",
                cause: "live",
                run_id,
                reason: &AdminText::fixed("kept beside it on the person's word"),
                model: None,
                prompt_version: None,
            },
            created_at: now,
        };
        let id = insert_revision(&mut *tx, &revision).await?;
        let text =
            "UPDATE memory_revisions SET undone_at = $1, undone_by = $2 WHERE org = $3 AND id = $4";
        sql!(text, now, actor, org, id).exec(&mut *tx).await?;
        let by = Act {
            org,
            actor,
            at: now,
        };
        let target = format!("record:{new}");
        by.audit(
            &mut *tx,
            "memory.keep_both",
            &target,
            &admin_text!("beside record {}", old),
        )
        .await?;
        tx.commit().await?;
        self.db.written();
        Ok(id)
    }

    /// Move an individual-tier record to the person tier (`org/{org}/user/{user}`),
    /// read by every agent of the org. `content` is the re-sanitised text.
    pub async fn move_to_person_tier(&self, org: &str, id: i64, content: &str) -> Result<()> {
        let content = &crate::screen::screen_text("", content).map_err(|r| r.at(0))?;
        let mut tx = super::begin(&self.db.pool).await?;
        let text = "UPDATE memory_records SET scope = $1, agent = $2, content = $3 WHERE org = $4 AND id = $5 AND scope = $6";
        let q = sql!(
            text,
            Scope::Person,
            ANY_AGENT,
            content,
            org,
            id,
            Scope::Personal
        );
        let changed = q.exec(&mut *tx).await?;
        if changed == 0 {
            return Err(StoreError::NotFound(format!("individual record {id}")));
        }
        reindex(&mut tx, org, id).await?;
        tx.commit().await?;
        self.db.written();
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
        let text = format!(
            "{SELECT} WHERE org = $1 AND agent IN ($2, $3) AND conversation = $4 AND author = $5 \
             AND status = $6 AND expires_at > $7 ORDER BY batch DESC, id"
        );
        let q = sql!(text, org, agent, ANY_AGENT, conversation, author)
            .arg(Status::Pending)
            .arg(now);
        let all: Vec<MemoryRecord> = q.all(&self.db.pool).await?;
        let newest = all.first().and_then(|r| r.batch);
        Ok(all.into_iter().filter(|r| r.batch == newest).collect())
    }

    /// Every unexpired "Remember this?" proposal of `person`'s own memory
    /// that they were asked, in any conversation, newest question first:
    /// what their "Your memory" page lists of the questions waiting for them.
    pub async fn pending_of(&self, org: &str, person: &str, now: i64) -> Result<Vec<MemoryRecord>> {
        let text = format!(
            "{SELECT} WHERE org = $1 AND owner = $2 AND author = $3 AND status = $4 \
             AND expires_at > $5 ORDER BY batch DESC, id"
        );
        sql!(text, org, person, person)
            .arg(Status::Pending)
            .arg(now)
            .all(&self.db.pool)
            .await
    }

    /// The live records a new record on `subject` in this place (org, agent,
    /// scope, owner) would supersede under the subject rule, newest first:
    /// what a correction's question names as the old value.
    pub async fn live_on_subject(
        &self,
        org: &str,
        agent: &str,
        scope: Scope,
        owner: Option<&str>,
        subject: &str,
    ) -> Result<Vec<MemoryRecord>> {
        let place = SubjectPlace {
            org,
            agent,
            scope,
            owner,
            subject,
        };
        let mut conn = self.db.pool.acquire().await?;
        // No record has id 0: none is excepted.
        same_subject_active(&mut conn, &place, 0).await
    }

    /// Proposals past their expiry are deleted; returns how many.
    pub async fn expire_proposals(&self, org: &str, now: i64) -> Result<u64> {
        let text = "UPDATE memory_records SET status = $1 WHERE org = $2 AND status = $3 AND expires_at <= $4";
        sql!(text, Status::Deleted, org, Status::Pending, now)
            .exec(&self.db.pool)
            .await
    }

    /// True when a record with the same place, subject and content exists in one of `statuses`.
    pub async fn has_same(&self, r: &NewRecord, statuses: &[Status]) -> Result<bool> {
        Ok(self.find_same(r, statuses).await?.is_some())
    }

    /// The newest record with the same place, subject and content in one of `statuses`.
    pub async fn find_same(&self, r: &NewRecord, statuses: &[Status]) -> Result<Option<i64>> {
        let mut conn = self.db.pool.acquire().await?;
        find_same_on(&mut conn, &self.db.tombstone_key, r, statuses).await
    }
}

/// How many active records `Db::index_pending` indexes per transaction.
const PENDING_BATCH: i64 = 500;

impl Records<'_> {
    /// Index the active records a migration listed as not yet indexed
    /// (`memory_fts_pending`), in batches. Run at connect; returns how many.
    pub async fn index_pending(&self) -> Result<u64> {
        let mut done = 0;
        loop {
            let mut tx = super::begin(&self.db.pool).await?;
            let text = "SELECT record_id, org FROM memory_fts_pending ORDER BY record_id LIMIT $1";
            let ids: Vec<(i64, String)> = sql!(text, PENDING_BATCH).all(&mut *tx).await?;
            if ids.is_empty() {
                tx.commit().await?;
                return Ok(done);
            }
            for (id, org) in &ids {
                let found = fetch(&mut tx, org, *id).await?;
                if let Some(r) = found.filter(|r| r.status == crate::Status::Active) {
                    fulltext::unindex(&mut tx, r.id).await?;
                    fulltext::index(&mut tx, &Doc::of(&r)).await?;
                    done += 1;
                }
                sql!("DELETE FROM memory_fts_pending WHERE record_id = $1", *id)
                    .exec(&mut *tx)
                    .await?;
            }
            tx.commit().await?;
        }
    }
}

/// How many records `Records::forget_credentials` reads per statement.
const SCREEN_BATCH: i64 = 500;

impl Records<'_> {
    /// Forget (as [`Records::forget_record`] does: no text left, a keyed
    /// tombstone so it is not relearned) every record not yet deleted whose
    /// subject or content holds a credential (`credentials::credential_in`):
    /// one kept before the screen knew its format. `steward serve` runs it
    /// at start; returns each record forgotten, with its organisation and
    /// the kind of credential it held.
    pub async fn forget_credentials(&self) -> Result<Vec<(String, i64, Credential)>> {
        // Read on a connection of its own, closed after: one that read every
        // record keeps a page cache that large, and SQLite clears a reader's
        // whole cache each time another connection wrote — on every turn
        // that connection then served (docs/benchmarks.md). A pool of one
        // connection is an in-memory store: closing it would drop the store.
        if self.db.pool.options().get_max_connections() <= 1 {
            return self.screen_all(None).await;
        }
        let mut conn = self.db.pool.acquire().await?.detach();
        let out = self.screen_all(Some(&mut conn)).await;
        if let Err(e) = sqlx::Connection::close(conn).await {
            tracing::warn!(error = %e, "closing the start-up screen's connection");
        }
        out
    }

    /// [`Records::forget_credentials`], reading on `conn` (else the pool).
    async fn screen_all(
        &self,
        mut conn: Option<&mut sqlx::AnyConnection>,
    ) -> Result<Vec<(String, i64, Credential)>> {
        let mut out = Vec::new();
        let mut after = 0i64;
        loop {
            let text = format!("{SELECT} WHERE id > $1 AND status <> $2 ORDER BY id LIMIT $3");
            let q = sql!(text, after, Status::Deleted, SCREEN_BATCH);
            let batch: Vec<MemoryRecord> = match conn.as_deref_mut() {
                Some(c) => q.all(c).await?,
                None => q.all(&self.db.pool).await?,
            };
            let Some(last) = batch.last() else {
                return Ok(out);
            };
            after = last.id;
            for r in &batch {
                let kind = credential_in(&r.content).or_else(|| credential_in(&r.subject));
                if let Some(kind) = kind.filter(|_| r.content != tombstones::FORGOTTEN) {
                    self.forget_record(&r.org, r.id).await?;
                    out.push((r.org.clone(), r.id, kind));
                }
            }
        }
    }
}
