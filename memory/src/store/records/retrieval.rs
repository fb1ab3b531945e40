//! Reading records: the one retrieval entry point (`Records::retrieve`)
//! and what a turn's scope may read, ranked and fused.

use super::{filtered, RecordFilter};
use crate::fulltext::query_tokens;
use crate::model::{Kind, MemoryRecord, Scope, Status, ANY_AGENT};
use crate::store::fulltext::{self, vis_key};
use crate::store::RECORD as SELECT;
use crate::store::{Records, Result, StoreError};
use foldhash::{HashMap, HashMapExt};
use sqlx::{AnyConnection, AnyPool};
use strum::VariantArray;

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
    pub(in crate::store) fn readable_places(&self) -> Result<Vec<String>> {
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

impl Retrieved {
    /// A record given whole, not ranked by a search (a preference that applies
    /// to every reply, a standing note, the speaker's own record).
    pub fn given(record: MemoryRecord) -> Self {
        Retrieved {
            record,
            hits: 0,
            score: 0.0,
            similarity: None,
        }
    }

    /// Whether a search found it for the message (by its words, or its vector
    /// with embeddings on), not only given whole.
    pub fn found_by_search(&self) -> bool {
        self.hits > 0 || self.similarity.is_some()
    }
}

/// Personal kinds that may be read in a group thread: how the speaker wants to be served.
pub const SHARED_SCOPE_KINDS: &[Kind] = &[Kind::Preference, Kind::Vocabulary];

/// A record by id in an organisation, if it exists.
pub(in crate::store) async fn fetch(
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
pub(in crate::store) struct Preferences<'a> {
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
pub(in crate::store) async fn hit_records(
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
pub(in crate::store) struct Ranked<'a> {
    pub ranked: &'a [(i64, f64)],
    pub want: usize,
}

/// [`hit_records`] for each of `lists` (the keyword and the vector
/// rankings), and the speaker's preferences `also` names (newest first,
/// those `keep` accepts): every list's next `want` ids and the preferences
/// in one statement, each record read once however many lists name it.
pub(in crate::store) async fn ranked_records(
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
    crate::store::vectors::reciprocal_rank_fusion(&lists, RRF_K)
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

    /// The speaker's own active records (both tiers: this agent's and the
    /// person's), oldest first, at most `limit`; none for a scope with no
    /// speaker. Checked against the scope like every row read, so a group
    /// thread reads only how they want to be served.
    pub async fn speakers_own(
        &self,
        scope: &RetrievalScope,
        limit: i64,
    ) -> Result<Vec<MemoryRecord>> {
        scope.readable_places()?;
        let Some(speaker) = &scope.speaker else {
            return Ok(Vec::new());
        };
        let rows: Vec<MemoryRecord> = sql!(
            format!(
                "{SELECT} WHERE org = $1 AND status = $2 AND owner = $3 AND ((scope = $4 AND agent = $5) OR scope = $6) ORDER BY id LIMIT $7"
            ),
            &scope.org,
            Status::Active,
            speaker,
            Scope::Personal,
            &scope.agent,
            Scope::Person,
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
        query: &crate::store::QueryVector,
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

impl Records<'_> {
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
                out.push(Retrieved::given(record));
            }
        }
        Ok(out)
    }
}

/// How many of `tokens` (a query's) record `r` holds.
fn shared_tokens(tokens: &[String], r: &MemoryRecord) -> i64 {
    let doc = crate::fulltext::document_tokens(&r.subject, &r.content);
    tokens.iter().filter(|t| doc.contains(t)).count() as i64
}

#[cfg(test)]
mod tests {
    use super::*;
    use strum::VariantArray;

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
