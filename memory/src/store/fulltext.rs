//! Full-text search on the engines' own indexes: SQLite's FTS5 ranked by BM25,
//! PostgreSQL's tsvector + GIN ranked by `ts_rank_cd` (migration
//! `0006_fulltext`). Both index the tokens of [`crate::fulltext`], and both
//! hold active records only. A record's row also carries one token naming its
//! organisation and visibility key, so a search's scope is part of its match:
//! one statement per search, reading only what the scope may see (callers
//! still check every row they get back).

use super::{Backend, Db, Result};
use crate::fulltext::{document_tokens, query_tokens};
use crate::model::{MemoryRecord, NewRecord, Scope};
use sha2::{Digest, Sha256};
use sqlx::{AnyConnection, AnyPool};

/// How many active records `Db::index_pending` indexes per transaction.
const PENDING_BATCH: i64 = 500;

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

/// The one token naming an organisation's visibility key (ids may hold any
/// character; the token holds hex digits only).
fn vis_token(org: &str, key: &str) -> String {
    let digest = Sha256::new()
        .chain_update(org.as_bytes())
        .chain_update([0x1f])
        .chain_update(key.as_bytes())
        .finalize();
    format!("k{}", hex::encode(&digest[..10]))
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

impl Placed for MemoryRecord {
    fn place(&self) -> (&str, &str, Scope, Option<&str>, &str, &str) {
        let owner = self.owner.as_deref();
        (
            &self.org,
            &self.agent,
            self.scope,
            owner,
            &self.subject,
            &self.content,
        )
    }
}

impl Placed for NewRecord {
    fn place(&self) -> (&str, &str, Scope, Option<&str>, &str, &str) {
        let owner = self.owner.as_deref();
        (
            &self.org,
            &self.agent,
            self.scope,
            owner,
            &self.subject,
            &self.content,
        )
    }
}

/// Index a record (active) under its tokens and its visibility token.
pub(super) async fn index(conn: &mut AnyConnection, r: &Doc<'_>) -> Result<()> {
    let tokens = document_tokens(r.subject, r.content);
    let vis = vis_token(r.org, &vis_key(r.scope, r.agent, r.owner));
    match backend_of(conn) {
        Backend::Sqlite => {
            let text = "INSERT INTO memory_fts (rowid, tokens, vis) VALUES ($1, $2, $3)";
            sql!(text, r.id, tokens.join(" "), vis).exec(conn).await?;
        }
        Backend::Postgres => {
            // Positions (1-based, capped as tsvector caps them) serve ts_rank_cd.
            let mut doc: Vec<String> = tokens
                .iter()
                .enumerate()
                .map(|(i, t)| format!("{}:{}", pg_quoted(t), (i + 1).min(16_383)))
                .collect();
            doc.push(pg_quoted(&vis));
            let text = "INSERT INTO memory_fts (rowid, doc) VALUES ($1, $2::tsvector)";
            sql!(text, r.id, doc.join(" ")).exec(conn).await?;
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

/// Records of `org` visible under one of `keys` matching any token of
/// `query`, best first (BM25 on SQLite, cover density on PostgreSQL), with
/// their scores (higher is better), at most `limit`, `except` left out.
pub(super) async fn search(
    pool: &AnyPool,
    backend: Backend,
    org: &str,
    keys: &[String],
    query: &str,
    except: Option<i64>,
    limit: usize,
) -> Result<Vec<(i64, f64)>> {
    let tokens = query_tokens(query);
    if tokens.is_empty() || keys.is_empty() || limit == 0 {
        return Ok(Vec::new());
    }
    let vis: Vec<String> = keys.iter().map(|k| vis_token(org, k)).collect();
    let except = except.unwrap_or(-1);
    let limit = limit as i64;
    match backend {
        Backend::Sqlite => {
            let any = |ts: &[String]| {
                ts.iter()
                    .map(|t| fts5_quoted(t))
                    .collect::<Vec<_>>()
                    .join(" OR ")
            };
            let matching = format!("tokens : ({}) AND vis : ({})", any(&tokens), any(&vis));
            // bm25 is lower for better matches; the visibility column weighs nothing.
            let text = "SELECT rowid, -bm25(memory_fts, 1.0, 0.0) AS score FROM memory_fts \
                        WHERE memory_fts MATCH $1 AND rowid <> $2 ORDER BY score DESC, rowid DESC LIMIT $3";
            sql!(text, matching, except, limit).all(pool).await
        }
        Backend::Postgres => {
            let any = |ts: &[String]| {
                ts.iter()
                    .map(|t| pg_quoted(t))
                    .collect::<Vec<_>>()
                    .join(" | ")
            };
            let words = any(&tokens);
            let matching = format!("({words}) & ({})", any(&vis));
            let text = "SELECT rowid, CAST(ts_rank_cd(doc, $1::tsquery) AS DOUBLE PRECISION) AS score FROM memory_fts \
                        WHERE doc @@ $2::tsquery AND rowid <> $3 ORDER BY score DESC, rowid DESC LIMIT $4";
            sql!(text, words, matching, except, limit).all(pool).await
        }
    }
}

/// How many of `query`'s tokens record `r` holds.
pub(super) fn shared_tokens(query: &str, r: &MemoryRecord) -> i64 {
    let doc = document_tokens(&r.subject, &r.content);
    query_tokens(query)
        .iter()
        .filter(|t| doc.contains(t))
        .count() as i64
}

impl Db {
    /// Index the active records a migration listed as not yet indexed
    /// (`memory_fts_pending`), in batches. Run at connect; returns how many.
    pub async fn index_pending(&self) -> Result<u64> {
        let mut done = 0;
        loop {
            let mut tx = self.pool.begin().await?;
            let text = "SELECT record_id, org FROM memory_fts_pending ORDER BY record_id LIMIT $1";
            let ids: Vec<(i64, String)> = sql!(text, PENDING_BATCH).all(&mut *tx).await?;
            if ids.is_empty() {
                tx.commit().await?;
                return Ok(done);
            }
            for (id, org) in &ids {
                let found = super::records::fetch(&mut tx, org, *id).await?;
                if let Some(r) = found.filter(|r| r.status == crate::Status::Active) {
                    unindex(&mut tx, r.id).await?;
                    index(&mut tx, &Doc::of(&r)).await?;
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
