//! Full-text search on the engines' own indexes: SQLite's FTS5 ranked by BM25,
//! PostgreSQL's tsvector + GIN ranked by `ts_rank_cd` (migration
//! `0006_fulltext`). Both index the tokens of [`crate::fulltext`], and both
//! hold active records only, with the organisation and visibility key each is
//! read under: one statement per search, keeping only rows its scope may see
//! (callers still check every row they get back).
//!
//! Ranking reads every row that holds a query token (BM25's document
//! frequencies, `ts_rank_cd` per matched row), so a token held by a large
//! share of the store would make each search grow with it. Such tokens are
//! listed in `memory_fts_common` by [`Db::optimize`] and left out of a search
//! that has rarer ones; a search of common tokens only reads the newest matches.

use super::{Backend, Db, Result};
use crate::fulltext::document_tokens;
use crate::model::{MemoryRecord, NewRecord, Scope};
use sqlx::{AnyConnection, AnyPool};
use std::collections::HashSet;
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

/// A token held by more records than this is common (see the module doc).
pub const COMMON_DOCS: i64 = 1_000;

/// How long a process keeps its copy of the common tokens before reading the
/// table again (another replica may have refreshed it).
const COMMON_TTL: Duration = Duration::from_secs(300);

/// A search of common tokens only reads at most this many newest matches.
const NEWEST_MATCHES: i64 = 500;

/// This process's copy of `memory_fts_common`.
#[derive(Debug, Default)]
pub(super) struct CommonTokens {
    loaded: RwLock<Option<(Instant, Arc<HashSet<String>>)>>,
}

/// The visibility key a record is read under (SPEC §8): org policy, an
/// agent's notes, a person's records with one agent, a person's records with every agent.
pub(super) fn vis_key(scope: Scope, agent: &str, owner: Option<&str>) -> String {
    let owner = owner.unwrap_or("");
    match scope {
        Scope::OrgPolicy => "org".into(),
        Scope::AgentNotes => format!("agent:{agent}"),
        Scope::Personal => format!("user:{agent}:{owner}"),
        Scope::Person => format!("person:{owner}"),
    }
}

fn backend_of(conn: &AnyConnection) -> Backend {
    if conn.backend_name().eq_ignore_ascii_case("sqlite") {
        Backend::Sqlite
    } else {
        Backend::Postgres
    }
}

/// A token quoted for a tsvector or tsquery literal.
fn pg_quoted(token: &str) -> String {
    format!("'{}'", token.replace('\\', "\\\\").replace('\'', "''"))
}

/// A token quoted as an FTS5 string.
fn fts5_quoted(token: &str) -> String {
    format!("\"{}\"", token.replace('"', "\"\""))
}

/// What the index holds of one active record.
pub(super) struct Doc<'a> {
    pub id: i64,
    pub org: &'a str,
    pub agent: &'a str,
    pub scope: Scope,
    pub owner: Option<&'a str>,
    pub subject: &'a str,
    pub content: &'a str,
}

impl<'a> Doc<'a> {
    pub fn of(r: &'a MemoryRecord) -> Self {
        Self::new(r.id, r)
    }

    pub fn new(id: i64, r: &'a impl Placed) -> Self {
        let (org, agent, scope, owner, subject, content) = r.place();
        Doc {
            id,
            org,
            agent,
            scope,
            owner,
            subject,
            content,
        }
    }
}

/// A record, stored or about to be: where it is read and what it says.
pub(super) trait Placed {
    fn place(&self) -> (&str, &str, Scope, Option<&str>, &str, &str);
}

/// Stored records and records about to be stored have the same fields.
macro_rules! placed {
    ($($t:ty),*) => {$(
        impl Placed for $t {
            fn place(&self) -> (&str, &str, Scope, Option<&str>, &str, &str) {
                let owner = self.owner.as_deref();
                (&self.org, &self.agent, self.scope, owner, &self.subject, &self.content)
            }
        }
    )*};
}

placed!(MemoryRecord, NewRecord);

/// Index a record (active) under its tokens, with its place.
pub(super) async fn index(conn: &mut AnyConnection, r: &Doc<'_>) -> Result<()> {
    let tokens = document_tokens(r.subject, r.content);
    let vis = vis_key(r.scope, r.agent, r.owner);
    match backend_of(conn) {
        Backend::Sqlite => {
            let text = "INSERT INTO memory_fts (rowid, tokens, org, vis) VALUES ($1, $2, $3, $4)";
            sql!(text, r.id, tokens.join(" "), r.org, vis)
                .exec(conn)
                .await?;
        }
        Backend::Postgres => {
            // Positions (1-based, capped as tsvector caps them) serve ts_rank_cd.
            let doc: Vec<String> = tokens
                .iter()
                .enumerate()
                .map(|(i, t)| format!("{}:{}", pg_quoted(t), (i + 1).min(16_383)))
                .collect();
            let text =
                "INSERT INTO memory_fts (rowid, org, vis, doc) VALUES ($1, $2, $3, $4::tsvector)";
            sql!(text, r.id, r.org, vis, doc.join(" "))
                .exec(conn)
                .await?;
        }
    }
    Ok(())
}

/// Drop record `id`'s row (it is no longer active).
pub(super) async fn unindex(conn: &mut AnyConnection, id: i64) -> Result<()> {
    let text = "DELETE FROM memory_fts WHERE rowid = $1";
    sql!(text, id).exec(conn).await.map(|_| ())
}

/// Drop the rows of the records `owned` names (`SELECT id FROM memory_records …`
/// over `$1` = org, `$2` = owner): before they are deleted.
pub(super) async fn unindex_owned(
    conn: &mut AnyConnection,
    owned: &str,
    org: &str,
    owner: &str,
) -> Result<()> {
    let text = format!("DELETE FROM memory_fts WHERE rowid IN ({owned})");
    sql!(text, org, owner).exec(conn).await.map(|_| ())
}

/// What one search asks: an organisation's records visible under one of
/// `keys` that hold one of `tokens` (`query_tokens`), `except` left out, at most `limit`.
pub(super) struct Search<'a> {
    pub org: &'a str,
    pub keys: &'a [String],
    pub tokens: &'a [String],
    pub except: Option<i64>,
    pub limit: usize,
}

/// Ids and scores of the records `s` asks for, best first (BM25 on SQLite,
/// cover density on PostgreSQL; higher is better). A search of common tokens
/// only scores its newest matches 0, and the caller ranks them.
pub(super) async fn search(db: &Db, s: &Search<'_>) -> Result<Vec<(i64, f64)>> {
    if s.tokens.is_empty() || s.keys.is_empty() || s.limit == 0 {
        return Ok(Vec::new());
    }
    let common = db.common.tokens(&db.pool).await?;
    let rare: Vec<&String> = s.tokens.iter().filter(|t| !common.contains(*t)).collect();
    let ranked = !rare.is_empty();
    let words: Vec<&String> = if ranked {
        rare
    } else {
        s.tokens.iter().collect()
    };
    // Per engine: the words as its query language writes them, where they
    // match, and the rank (bm25 is lower for better matches).
    let (matching, predicate, rank) = match db.backend {
        Backend::Sqlite => (
            format!(
                "tokens : ({})",
                words
                    .iter()
                    .map(|t| fts5_quoted(t))
                    .collect::<Vec<_>>()
                    .join(" OR ")
            ),
            "memory_fts MATCH $1",
            "-bm25(memory_fts)",
        ),
        Backend::Postgres => (
            words
                .iter()
                .map(|t| pg_quoted(t))
                .collect::<Vec<_>>()
                .join(" | "),
            "doc @@ $1::tsquery",
            "CAST(ts_rank_cd(doc, $1::tsquery) AS DOUBLE PRECISION)",
        ),
    };
    let (score, order, rows) = if ranked {
        (rank, "score DESC, rowid DESC", s.limit as i64)
    } else {
        (
            "CAST(0 AS DOUBLE PRECISION)",
            "rowid DESC",
            NEWEST_MATCHES.min(s.limit as i64 * 20),
        )
    };
    // The words matched; the place filters the rows they matched.
    sql!(
        format!("SELECT rowid, {score} AS score FROM memory_fts WHERE {predicate}"),
        matching
    )
    .push(" AND org = ")
    .bind(s.org.to_string())
    .push(" AND vis IN (")
    .bind_list(s.keys.to_vec())
    .push(") AND rowid <> ")
    .bind(s.except.unwrap_or(-1))
    .push(&format!(" ORDER BY {order} LIMIT "))
    .bind(rows)
    .all(&db.pool)
    .await
}

/// How many of `tokens` (a query's) record `r` holds.
pub(super) fn shared_tokens(tokens: &[String], r: &MemoryRecord) -> i64 {
    let doc = document_tokens(&r.subject, &r.content);
    tokens.iter().filter(|t| doc.contains(t)).count() as i64
}

impl CommonTokens {
    /// The common tokens, read again from the table when this copy is old.
    async fn tokens(&self, pool: &AnyPool) -> Result<Arc<HashSet<String>>> {
        if let Ok(guard) = self.loaded.read() {
            if let Some((at, tokens)) = guard.as_ref() {
                if at.elapsed() < COMMON_TTL {
                    return Ok(tokens.clone());
                }
            }
        }
        let rows: Vec<(String,)> = sql!("SELECT token FROM memory_fts_common")
            .all(pool)
            .await?;
        let tokens: Arc<HashSet<String>> = Arc::new(rows.into_iter().map(|(t,)| t).collect());
        if let Ok(mut guard) = self.loaded.write() {
            *guard = Some((Instant::now(), tokens.clone()));
        }
        Ok(tokens)
    }

    fn forget(&self) {
        if let Ok(mut guard) = self.loaded.write() {
            *guard = None;
        }
    }
}

impl Db {
    /// List the tokens held by more than [`COMMON_DOCS`] active records, from
    /// the engine's own counts (FTS5's vocabulary table, PostgreSQL's
    /// `ts_stat`). Reads the whole index: run by the hourly job, not per turn.
    pub async fn refresh_common_tokens(&self) -> Result<u64> {
        let counted = match self.backend {
            Backend::Sqlite => {
                "SELECT term, doc FROM memory_fts_vocab WHERE col = 'tokens' AND doc > $1"
            }
            Backend::Postgres => {
                "SELECT word, CAST(ndoc AS BIGINT) FROM ts_stat('SELECT doc FROM memory_fts') WHERE ndoc > $1"
            }
        };
        let rows: Vec<(String, i64)> = sql!(counted, COMMON_DOCS).all(&self.pool).await?;
        let mut tx = self.pool.begin().await?;
        sql!("DELETE FROM memory_fts_common").exec(&mut *tx).await?;
        for (token, docs) in &rows {
            let text = "INSERT INTO memory_fts_common (token, docs) VALUES ($1, $2)";
            sql!(text, token, *docs).exec(&mut *tx).await?;
        }
        tx.commit().await?;
        self.common.forget();
        Ok(rows.len() as u64)
    }
}
