use super::audit::Act;
use super::fulltext::{self, vis_key, Doc};
use super::revisions::{insert_revision, vetoed, NewRevision, RevisionMeta};
use super::tombstones::{self, TombstoneKey};
use super::{Records, Result, Sql, StoreError};
use crate::admin_text::AdminText;
use crate::credentials::{credential_in, Credential};
use crate::fulltext::query_tokens;
use crate::model::{Kind, MemoryRecord, NewRecord, Scope, Status, ANY_AGENT};
use sqlx::{AnyConnection, AnyPool};
use std::collections::HashMap;
use strum::VariantArray;

/// What a conversation line a forgotten record was learned from reads afterwards.
pub const FORGOTTEN_LINE: &str = "[forgotten]";

use super::RECORD as SELECT;

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
    /// The work roles the speaker holds at this turn (the pairing store's
    /// answer): their role memory is read, with any agent.
    pub roles: Vec<String>,
}

impl RetrievalScope {
    /// The read rule (docs/memory.md, "Scopes, and which wins"): active records
    /// only; org policy; this agent's notes; the speaker's own personal records
    /// (in a group thread only how they want to be served); nobody else's
    /// personal memory, ever.
    pub fn may_read(&self, r: &MemoryRecord) -> bool {
        if r.org != self.org || r.status != Status::Active {
            return false;
        }
        let own = || {
            self.speaker.is_some()
                && r.owner == self.speaker
                && (!self.shared || SHARED_SCOPE_KINDS.iter().any(|k| r.is_kind(*k)))
        };
        match r.scope {
            Scope::OrgPolicy => true,
            Scope::AgentNotes => r.agent == self.agent,
            Scope::Personal => r.agent == self.agent && own(),
            Scope::Person => own(),
            Scope::Role => r
                .owner
                .as_ref()
                .is_some_and(|role| self.roles.iter().any(|held| held == role)),
        }
    }

    /// The one guard of every search for this scope (keyword, by meaning,
    /// the vector search's plan): the places it may read, as visibility
    /// keys, or a refusal when the scope is incomplete (no organisation, no
    /// agent, or `*`, every agent). Fails closed: each row a search reads is
    /// still checked with [`RetrievalScope::may_read`].
    pub(super) fn readable_places(&self) -> Result<Vec<String>> {
        if self.org.is_empty() || self.agent.is_empty() || self.agent == ANY_AGENT {
            return Err(StoreError::Refused(
                "retrieval needs an organisation and an agent",
            ));
        }
        Ok(READ_ORDER
            .iter()
            .flat_map(|&scope| self.places_of(scope))
            .collect())
    }

    /// The places of `scope` this scope reads (as [`RetrievalScope::may_read`]
    /// lets it): org policy, this agent's notes, the memory of each role the
    /// speaker holds, the speaker's own records.
    fn places_of(&self, scope: Scope) -> Vec<String> {
        match scope {
            Scope::OrgPolicy | Scope::AgentNotes => vec![vis_key(scope, &self.agent, None)],
            Scope::Role => self
                .roles
                .iter()
                .map(|role| vis_key(scope, ANY_AGENT, Some(role)))
                .collect(),
            Scope::Personal | Scope::Person => match self.speaker.as_deref() {
                Some(speaker) => vec![vis_key(scope, &self.agent, Some(speaker))],
                None => Vec::new(),
            },
        }
    }
}

/// The order a search reads the places of its scope in: every scope, once
/// (the array is as long as `Scope` has variants).
const READ_ORDER: [Scope; Scope::VARIANTS.len()] = [
    Scope::OrgPolicy,
    Scope::AgentNotes,
    Scope::Role,
    Scope::Personal,
    Scope::Person,
];

/// A record found for a turn: how many of the query's tokens it holds (of
/// those the search read: common ones are left out when rarer ones exist),
/// and its score (BM25's inverse document frequency summed over them, the
/// same on both engines; with embeddings, the fused reciprocal-rank score;
/// higher is better, comparable only within one search).
#[derive(Debug, Clone, PartialEq)]
pub struct Retrieved {
    pub record: MemoryRecord,
    pub hits: i64,
    pub score: f64,
    /// Its cosine similarity to the query, when the vector search found it (embeddings on).
    pub similarity: Option<f64>,
}

/// Personal kinds that may be read in a group thread: how the speaker wants to be served.
pub const SHARED_SCOPE_KINDS: &[Kind] = &[Kind::Preference, Kind::Vocabulary];

/// A record by id in an organisation, if it exists.
pub(super) async fn fetch(
    conn: &mut AnyConnection,
    org: &str,
    id: i64,
) -> Result<Option<MemoryRecord>> {
    sql!(format!("{SELECT} WHERE org = $1 AND id = $2"), org, id)
        .opt(conn)
        .await
}

/// Records by primary key (an org-led index would scan the org), in no order,
/// and with `also` the speaker's newest preferences in the same statement (a
/// record may come twice). Callers check every row against the scope they
/// read for: they fail closed.
async fn by_ids(
    pool: &AnyPool,
    ids: &[i64],
    also: Option<&Preferences<'_>>,
) -> Result<Vec<MemoryRecord>> {
    let mut q = sql!("");
    if !ids.is_empty() {
        q = q
            .push(&format!("{SELECT} WHERE id IN ("))
            .bind_list(ids.iter().copied())
            .push(")");
    }
    if let Some(p) = also {
        if !ids.is_empty() {
            q = q.push(" UNION ALL ");
        }
        q = q
            .push(&format!("SELECT * FROM ({SELECT} WHERE org = "))
            .bind(p.org)
            .push(" AND owner = ")
            .bind(p.owner)
            .push(" AND kind = ")
            .bind(Kind::Preference)
            .push(" AND status = ")
            .bind(Status::Active)
            .push(" AND ((scope = ")
            .bind(Scope::Personal)
            .push(" AND agent = ")
            .bind(p.agent)
            .push(") OR scope = ")
            .bind(Scope::Person)
            .push(") ORDER BY said_at DESC LIMIT ")
            .bind(p.limit)
            .push(") AS preferences");
    } else if ids.is_empty() {
        return Ok(Vec::new());
    }
    q.all(pool).await
}

/// How the speaker wants to be served: their newest active `preference`
/// records (of this agent, or of the person tier), added to every reply
/// whatever the words.
pub(super) struct Preferences<'a> {
    pub org: &'a str,
    pub agent: &'a str,
    pub owner: &'a str,
    pub limit: i64,
}

impl Preferences<'_> {
    fn hold(&self, r: &MemoryRecord) -> bool {
        r.org == self.org
            && r.owner.as_deref() == Some(self.owner)
            && r.is_kind(Kind::Preference)
            && r.status == Status::Active
            && (r.scope == Scope::Person || (r.scope == Scope::Personal && r.agent == self.agent))
    }
}

/// The first `want` records `ranked` names that `keep` accepts, in its
/// order, with their scores. Read `want` at a time, so the usual search, where
/// the place already excludes what `keep` would drop, reads no more than it returns.
pub(super) async fn hit_records(
    pool: &AnyPool,
    ranked: &[(i64, f64)],
    want: usize,
    keep: impl Fn(&MemoryRecord) -> bool,
) -> Result<Vec<(MemoryRecord, f64)>> {
    let lists = [Ranked { ranked, want }];
    let (mut found, _) = ranked_records(pool, &lists, keep, None).await?;
    Ok(found.pop().unwrap_or_default())
}

/// One ranking to read records for: the first `want` that are kept.
pub(super) struct Ranked<'a> {
    pub ranked: &'a [(i64, f64)],
    pub want: usize,
}

/// [`hit_records`] for each of `lists` (the keyword and the vector
/// rankings), and the speaker's preferences `also` names (newest first,
/// those `keep` accepts): every list's next `want` ids and the preferences
/// in one statement, each record read once however many lists name it.
pub(super) async fn ranked_records(
    pool: &AnyPool,
    lists: &[Ranked<'_>],
    keep: impl Fn(&MemoryRecord) -> bool,
    also: Option<&Preferences<'_>>,
) -> Result<(Vec<Vec<(MemoryRecord, f64)>>, Vec<MemoryRecord>)> {
    let mut out: Vec<Vec<(MemoryRecord, f64)>> = lists
        .iter()
        .map(|l| Vec::with_capacity(l.want.min(l.ranked.len())))
        .collect();
    let mut next = vec![0usize; lists.len()];
    // Every record asked for so far: `None` when missing or not kept.
    let mut read: HashMap<i64, Option<MemoryRecord>> = HashMap::new();
    let mut preferred: Vec<MemoryRecord> = Vec::new();
    let mut pending = also;
    loop {
        let mut chunks: Vec<(usize, &[(i64, f64)])> = Vec::new();
        for (i, l) in lists.iter().enumerate() {
            if out[i].len() < l.want && next[i] < l.ranked.len() {
                let end = (next[i] + l.want.max(1)).min(l.ranked.len());
                chunks.push((i, &l.ranked[next[i]..end]));
                next[i] = end;
            }
        }
        let prefs = pending.take();
        if chunks.is_empty() && prefs.is_none() {
            break;
        }
        let mut ids: Vec<i64> = chunks
            .iter()
            .flat_map(|(_, chunk)| chunk.iter().map(|(id, _)| *id))
            .filter(|id| !read.contains_key(id))
            .collect();
        ids.sort_unstable();
        ids.dedup();
        let rows = by_ids(pool, &ids, prefs).await?;
        for id in &ids {
            read.insert(*id, None);
        }
        for r in rows.into_iter().filter(|r| keep(r)) {
            if let Some(p) = prefs {
                if p.hold(&r) && !preferred.iter().any(|q| q.id == r.id) {
                    preferred.push(r.clone());
                }
            }
            if let Some(slot @ None) = read.get_mut(&r.id) {
                *slot = Some(r);
            }
        }
        if let Some(p) = prefs {
            // The statement read the newest `limit`; a hit that is an older
            // preference falls off here, as it did not make that list.
            preferred.sort_by(|a, b| b.said_at.cmp(&a.said_at).then(b.id.cmp(&a.id)));
            preferred.truncate(p.limit.max(0) as usize);
        }
        for (i, chunk) in chunks {
            for (id, score) in chunk {
                if let Some(Some(r)) = read.get(id) {
                    out[i].push((r.clone(), *score));
                }
            }
        }
    }
    for (found, l) in out.iter_mut().zip(lists) {
        found.truncate(l.want);
    }
    Ok((out, preferred))
}

/// Where the subject rule looks: one subject in one place (organisation,
/// agent, scope, owner).
struct SubjectPlace<'a> {
    org: &'a str,
    agent: &'a str,
    scope: Scope,
    owner: Option<&'a str>,
    subject: &'a str,
}

impl<'a> SubjectPlace<'a> {
    fn of(r: &'a MemoryRecord) -> Self {
        SubjectPlace {
            org: &r.org,
            agent: &r.agent,
            scope: r.scope,
            owner: r.owner.as_deref(),
            subject: &r.subject,
        }
    }
}

/// The active records on `place`'s subject other than record `except`, newest first.
async fn same_subject_active(
    conn: &mut AnyConnection,
    place: &SubjectPlace<'_>,
    except: i64,
) -> Result<Vec<MemoryRecord>> {
    if place.subject.trim().is_empty() {
        // No subject: nothing it could supersede, nothing that supersedes it.
        return Ok(Vec::new());
    }
    let text = format!(
        "{SELECT} WHERE org = $1 AND agent = $2 AND scope = $3 AND subject = $4 AND status = $5 AND id <> $6"
    );
    let q = sql!(
        text,
        place.org,
        place.agent,
        place.scope,
        place.subject,
        Status::Active,
        except
    );
    let q = match place.owner {
        Some(owner) => q.and_eq("owner", Some(owner)),
        None => q.push(" AND owner IS NULL"),
    };
    q.push(" ORDER BY said_at DESC, id DESC").all(conn).await
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

/// Record `id` made active under the subject rule, for `cause` in run
/// `run_id` at `now`: what the rule's revisions name.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SubjectRuleRun<'a> {
    pub org: &'a str,
    pub id: i64,
    pub cause: &'a str,
    pub run_id: &'a str,
    pub now: i64,
}

/// [`Records::activate_under_subject_rule`] inside the caller's transaction.
pub(super) async fn activate_on(
    conn: &mut AnyConnection,
    run: &SubjectRuleRun<'_>,
) -> Result<Supersession> {
    let (org, id) = (run.org, run.id);
    // Write first, so SQLite takes its write lock before any read in this transaction.
    if set_status_on(&mut *conn, org, id, Status::Active).await? == 0 {
        return Err(StoreError::NotFound(format!("memory record {id}")));
    }
    subject_rule_on(conn, run).await
}

/// The subject rule for the active record `run.id`: the older of it and each
/// other active record on its subject is superseded, unless vetoed.
async fn subject_rule_on(
    conn: &mut AnyConnection,
    run: &SubjectRuleRun<'_>,
) -> Result<Supersession> {
    let SubjectRuleRun {
        org,
        id,
        cause,
        run_id,
        now,
    } = *run;
    let new = fetch(&mut *conn, org, id)
        .await?
        .ok_or_else(|| StoreError::NotFound(format!("memory record {id}")))?;
    let mut out = Supersession::default();
    for old in same_subject_active(&mut *conn, &SubjectPlace::of(&new), new.id).await? {
        let (retired, replacing, reason) = if old.said_at > new.said_at {
            (
                &new,
                &old,
                AdminText::fixed("older than the live value on its subject"),
            )
        } else {
            (
                &old,
                &new,
                AdminText::fixed("a newer value on the same subject"),
            )
        };
        if vetoed(&mut *conn, org, retired.id, replacing.id).await? {
            continue;
        }
        set_status_on(&mut *conn, org, retired.id, Status::Superseded).await?;
        let meta = RevisionMeta {
            via: "subject_rule",
            cause,
            run_id,
            reason: &reason,
            model: None,
            prompt_version: None,
        };
        let revision = NewRevision {
            org,
            agent: &new.agent,
            retired_id: retired.id,
            replacing_id: replacing.id,
            meta,
            created_at: now,
        };
        out.revisions
            .push(insert_revision(&mut *conn, &revision).await?);
        if retired.id == new.id {
            out.superseded_by = Some(old.id);
            break;
        }
        out.retired.push(old.id);
    }
    Ok(out)
}

/// Insert `r` active and apply the subject rule to it, on the caller's
/// transaction. Inserted active, it is indexed once; activating a pending
/// insert would index it again.
async fn insert_active_on(
    conn: &mut AnyConnection,
    r: &NewRecord,
    cause: &str,
    run_id: &str,
    now: i64,
) -> Result<(i64, Supersession)> {
    let id = match r.status {
        Status::Active => insert_on(&mut *conn, r).await?,
        Status::Superseded
        | Status::Unverified
        | Status::Pending
        | Status::Rejected
        | Status::Deleted => insert_on(&mut *conn, &r.clone().status(Status::Active)).await?,
    };
    let run = SubjectRuleRun {
        org: &r.org,
        id,
        cause,
        run_id,
        now,
    };
    let s = subject_rule_on(conn, &run).await?;
    Ok((id, s))
}

/// [`Db::find_same`] on the caller's connection.
async fn find_same_on(
    conn: &mut AnyConnection,
    key: &TombstoneKey,
    r: &NewRecord,
    statuses: &[Status],
) -> Result<Option<i64>> {
    if statuses.is_empty() {
        return Ok(None);
    }
    let text = "SELECT id FROM memory_records WHERE org = $1 AND agent = $2 AND scope = $3 AND COALESCE(owner, '') = $4 \
                AND subject = $5 AND content = $6 AND status IN (";
    let owner = r.owner.as_deref().unwrap_or_default();
    let row: Option<(i64,)> = sql!(text, &r.org, &r.agent, r.scope, owner, &r.subject, &r.content)
        .bind_list(statuses.iter().copied())
        .push(") ORDER BY id DESC LIMIT 1")
        .opt(&mut *conn)
        .await?;
    if let Some((id,)) = row {
        return Ok(Some(id));
    }
    // A forgotten record holds no text: its tombstone recognises the same
    // text, or an item of the same message, in the same place.
    if statuses.contains(&Status::Deleted) {
        return tombstones::buried(conn, key, r).await;
    }
    Ok(None)
}

/// How many of `tokens` (a query's) record `r` holds.
fn shared_tokens(tokens: &[String], r: &MemoryRecord) -> i64 {
    let doc = crate::fulltext::document_tokens(&r.subject, &r.content);
    tokens.iter().filter(|t| doc.contains(t)).count() as i64
}

/// The constant of reciprocal rank fusion (Cormack et al.: 60).
pub const RRF_K: f64 = 60.0;

/// The keyword ranking (`keyword`, best first) and the vector ranking
/// (`near`, best first) as one, by reciprocal rank fusion, the best `want`;
/// a record's score is its fused score.
fn fuse(
    keyword: Vec<Retrieved>,
    near: Vec<(MemoryRecord, f64)>,
    tokens: &[String],
    want: usize,
) -> Vec<Retrieved> {
    let lists = [
        keyword.iter().map(|r| r.record.id).collect::<Vec<_>>(),
        near.iter().map(|(r, _)| r.id).collect::<Vec<_>>(),
    ];
    let mut records: HashMap<i64, Retrieved> =
        keyword.into_iter().map(|r| (r.record.id, r)).collect();
    for (record, similarity) in near {
        records
            .entry(record.id)
            .or_insert_with(|| Retrieved {
                // Counted below, for the records kept only: the analyzer
                // over every record found by meaning cost more than the rest
                // of the fusion.
                hits: -1,
                record,
                score: 0.0,
                similarity: None,
            })
            .similarity = Some(similarity);
    }
    super::vectors::reciprocal_rank_fusion(&lists, RRF_K)
        .into_iter()
        .filter_map(|(id, score)| records.remove(&id).map(|r| Retrieved { score, ..r }))
        .take(want)
        .map(|mut r| {
            if r.hits < 0 {
                r.hits = shared_tokens(tokens, &r.record);
            }
            r
        })
        .collect()
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

    /// The one retrieval entry point: active records a turn in `scope` may
    /// read that match `query` (ranked full-text search; with an embedder
    /// attached, fused with the records nearest in meaning by reciprocal rank
    /// fusion, and keyword only when it gives no query vector), plus the
    /// speaker's preferences. Fails closed on an incomplete scope.
    pub async fn retrieve(
        &self,
        scope: &RetrievalScope,
        query: &str,
        limit: i64,
    ) -> Result<Vec<Retrieved>> {
        let keys = scope.readable_places()?;
        // Room for rows the shared-thread rule drops.
        let cap = (limit.max(1) * 4) as usize;
        let tokens = query_tokens(query);
        let search = fulltext::Search {
            org: &scope.org,
            keys: &keys,
            tokens: &tokens,
            except: None,
            limit: cap,
        };
        // The keyword search and, with embeddings, the query's vector and the
        // vector search over the same places, at once: neither waits for the
        // other's statements (nor for the embedding call).
        let meaning = async {
            let qv = match &self.db.embedder {
                Some(e) => e.query(query).await?,
                None => return None,
            };
            match self.vector_search(&scope.org, &keys, &qv, cap).await {
                Ok(near) => Some(near),
                // The keyword ranking stands alone: embeddings never fail a search.
                Err(e) => {
                    tracing::warn!(error = %e, "vector search failed: this search is keyword only");
                    None
                }
            }
        };
        let (found, near) = tokio::join!(fulltext::search(self.db, &search), meaning);
        let found = found?;
        let read_hits: HashMap<i64, i64> = found.iter().map(|h| (h.id, h.hits)).collect();
        let ranked: Vec<(i64, f64)> = found.iter().map(|h| (h.id, h.score)).collect();
        // The visibility rule is checked on every row: the entry point fails closed.
        let want = limit.max(0) as usize;
        // The speaker's preferences come with the first records read, and so
        // do the vector ranking's.
        let prefs = scope.speaker.as_deref().map(|owner| Preferences {
            org: &scope.org,
            agent: &scope.agent,
            owner,
            limit,
        });
        // Fused, the keyword list goes as deep as the vector list (`cap`):
        // cut to the reply's size first, a record both searches found below
        // that got no keyword credit (hit@5 98.5% → 99.1%, docs/benchmarks.md).
        let keyword_depth = if near.is_some() { cap } else { want };
        let mut lists = vec![Ranked {
            ranked: &ranked,
            want: keyword_depth,
        }];
        if let Some(near) = &near {
            lists.push(Ranked {
                ranked: near,
                want: cap,
            });
        }
        let (mut read, prefs) =
            ranked_records(&self.db.pool, &lists, |r| scope.may_read(r), prefs.as_ref()).await?;
        let near_records = near.is_some().then(|| read.pop().unwrap_or_default());
        let mut out: Vec<Retrieved> = read
            .pop()
            .unwrap_or_default()
            .into_iter()
            .map(|(record, score)| Retrieved {
                hits: read_hits.get(&record.id).copied().unwrap_or(0),
                record,
                score,
                similarity: None,
            })
            .collect();
        // With embeddings, the records nearest in meaning fused with the keyword ranking.
        if let Some(near) = near_records {
            out = fuse(out, near, &tokens, want);
        }
        // What the speaker's roles share is read in every turn of theirs, whatever the words.
        let mut prefs = prefs;
        prefs.extend(self.role_entries(scope, limit).await?);
        // How the speaker wants to be served applies to every reply, whatever the words.
        for record in prefs {
            if !out.iter().any(|r| r.record.id == record.id) {
                out.push(Retrieved {
                    record,
                    hits: 0,
                    score: 0.0,
                    similarity: None,
                });
            }
        }
        Ok(out)
    }
}

impl Records<'_> {
    /// Every active record `scope` reads that is the same for every speaker
    /// of its agent — org policy and the agent's notes — oldest first, at
    /// most `limit`: the standing part of a model's prompt, which a server's
    /// prompt cache keeps from turn to turn (docs/configuration.md, `turn.standing_notes_chars`). Fails
    /// closed like [`Records::retrieve`]; every row is checked against the scope.
    pub async fn standing_notes(
        &self,
        scope: &RetrievalScope,
        limit: i64,
    ) -> Result<Vec<MemoryRecord>> {
        scope.readable_places()?;
        let rows: Vec<MemoryRecord> = sql!(
            format!(
                "{SELECT} WHERE org = $1 AND status = $2 AND (scope = $3 OR (scope = $4 AND agent = $5)) ORDER BY id LIMIT $6"
            ),
            &scope.org,
            Status::Active,
            Scope::OrgPolicy,
            Scope::AgentNotes,
            &scope.agent,
            limit.max(0)
        )
        .all(&self.db.pool)
        .await?;
        Ok(rows.into_iter().filter(|r| scope.may_read(r)).collect())
    }

    /// The newest active role entries of the roles `scope` holds (at most
    /// `limit`), checked against the scope like every row read.
    async fn role_entries(&self, scope: &RetrievalScope, limit: i64) -> Result<Vec<MemoryRecord>> {
        if scope.roles.is_empty() {
            return Ok(Vec::new());
        }
        let rows: Vec<MemoryRecord> = sql!(
            format!("{SELECT} WHERE org = $1 AND scope = $2 AND status = $3 AND owner IN ("),
            &scope.org,
            Scope::Role,
            Status::Active
        )
        .bind_list(scope.roles.iter().cloned())
        .push(") ORDER BY said_at DESC LIMIT ")
        .bind(limit.max(0))
        .all(&self.db.pool)
        .await?;
        Ok(rows.into_iter().filter(|r| scope.may_read(r)).collect())
    }

    /// The vector search alone, with the visibility rule of [`Db::retrieve`]:
    /// the records `scope` may read nearest to `query` in meaning, best first
    /// (benchmarks compare it with the keyword and the fused rankings).
    pub async fn retrieve_by_meaning(
        &self,
        scope: &RetrievalScope,
        query: &super::QueryVector,
        limit: i64,
    ) -> Result<Vec<Retrieved>> {
        let keys = scope.readable_places()?;
        let near = self
            .vector_search(&scope.org, &keys, query, limit.max(0) as usize)
            .await?;
        Ok(
            hit_records(&self.db.pool, &near, limit.max(0) as usize, |r| {
                scope.may_read(r)
            })
            .await?
            .into_iter()
            .map(|(record, similarity)| Retrieved {
                record,
                hits: 0,
                score: similarity,
                similarity: Some(similarity),
            })
            .collect(),
        )
    }

    /// Records matching `f`, newest first, at most `limit`.
    pub async fn browse_records(
        &self,
        org: &str,
        f: &RecordFilter,
        limit: i64,
    ) -> Result<Vec<MemoryRecord>> {
        filtered(org, f)
            .push(" ORDER BY id DESC LIMIT ")
            .bind(limit)
            .all(&self.db.pool)
            .await
    }

    /// People with personal memory (individual or person tier) that is not
    /// deleted, with how many of their records are active, by owner.
    pub async fn personal_owners(&self, org: &str) -> Result<Vec<(String, i64)>> {
        let text =
            "SELECT owner, COUNT(CASE WHEN status = $1 THEN 1 END) AS active FROM memory_records \
                    WHERE org = $2 AND scope IN (";
        let personal = Scope::VARIANTS.iter().copied().filter(|s| s.is_personal());
        sql!(text, Status::Active, org)
            .bind_list(personal)
            .push(") AND owner IS NOT NULL AND status <> ")
            .bind(Status::Deleted)
            .push(" GROUP BY owner ORDER BY owner")
            .all(&self.db.pool)
            .await
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
        let mut out = Vec::new();
        let mut after = 0i64;
        loop {
            let text = format!("{SELECT} WHERE id > $1 AND status <> $2 ORDER BY id LIMIT $3");
            let batch: Vec<MemoryRecord> = sql!(text, after, Status::Deleted, SCREEN_BATCH)
                .all(&self.db.pool)
                .await?;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_search_reads_every_scope_once() {
        for scope in Scope::VARIANTS {
            assert_eq!(
                READ_ORDER.iter().filter(|s| *s == scope).count(),
                1,
                "{scope}"
            );
        }
    }
}
