//! Full-text search on the engines' own indexes: SQLite's FTS5; on
//! PostgreSQL, a btree of (placed token, record id) postings beside each
//! record's tsvector (migrations `0006_fulltext`, `0008_placed_tokens`,
//! `0011_token_postings`). Both index the tokens of [`crate::fulltext`] for
//! active records only, each token written with the place the record is read
//! in (organisation and visibility key, hashed: [`place_prefix`]). A search
//! asks only for its own places' tokens, so the engine never touches a row of
//! another organisation, agent or person, and how many records hold a token
//! is counted per place.
//!
//! One statement per search reads, for each query token, the ids of its newest
//! matches (at most [`PER_TOKEN`]); the score is BM25's inverse document
//! frequency summed over the tokens a record holds, computed here. Scoring in
//! the engine (FTS5's `bm25()`, `ts_rank_cd`) reads each matched row's size or
//! vector, about 4 µs a row, which made a search grow with the store; a list of
//! ids costs a fraction of that. On PostgreSQL the ids come from the btree
//! alone (index-only scans): a GIN index over the tsvectors returned row
//! locations, and each id was then a heap fetch, as costly as scoring.
//! Tokens held by more than [`COMMON_DOCS`] records of a place are listed in
//! `memory_fts_common` by [`Db::optimize`] and left out of a search that has
//! rarer ones.

use super::Owned;
use super::{Backend, Db, Records, Result, Sql};
use crate::fulltext::document_tokens;
use crate::model::{MemoryRecord, NewRecord, Scope};
use foldhash::HashMap;
use sha2::{Digest, Sha256};
use sqlx::{AnyConnection, AnyPool};
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

/// A token held by more records of one place than this is common (see the module doc).
pub const COMMON_DOCS: i64 = 1_000;

/// A search reads at most this many newest matches of each query token: a
/// token not yet listed as common costs no more than a common one would.
pub const PER_TOKEN: i64 = COMMON_DOCS;

/// How long a process keeps its copy of the common tokens before reading the
/// table again (another replica may have refreshed it).
const COMMON_TTL: Duration = Duration::from_secs(300);

/// This process's copy of `memory_fts_common`.
#[derive(Debug, Default)]
pub(super) struct CommonTokens {
    loaded: RwLock<Option<(Instant, Arc<Common>)>>,
}

/// The common placed tokens with how many records hold each, and how many
/// records the index held, at the last refresh.
#[derive(Debug, Default)]
struct Common {
    docs: HashMap<String, i64>,
    total: i64,
}

/// The visibility key a record is read under (docs/memory.md, "Scopes, and which
/// wins"): org policy, an agent's notes, a person's records with one agent, a
/// person's records with every agent.
pub(super) fn vis_key(scope: Scope, agent: &str, owner: Option<&str>) -> String {
    let owner = owner.unwrap_or("");
    match scope {
        Scope::OrgPolicy => "org".into(),
        Scope::AgentNotes => format!("agent:{agent}"),
        Scope::Personal => format!("user:{agent}:{owner}"),
        Scope::Person => format!("person:{owner}"),
        Scope::Role => format!("role:{owner}"),
    }
}

/// The place (organisation, visibility key) as a token prefix: `p` and the
/// first 16 hex digits of sha256(org NUL key). Two places sharing a prefix
/// would only mix their rankings: every row is still checked against its scope.
pub(super) fn place_prefix(org: &str, key: &str) -> String {
    let digest = Sha256::new()
        .chain_update(org)
        .chain_update([0u8])
        .chain_update(key)
        .finalize();
    format!("p{}", hex::encode(&digest[..8]))
}

/// A token as indexed in the place `prefix` names. (Built by hand, as the
/// quoting below: a search builds some forty of these, and `format!` cost
/// each about 800 instructions.)
fn placed(prefix: &str, token: &str) -> String {
    let mut out = String::with_capacity(prefix.len() + 1 + token.len());
    out.push_str(prefix);
    out.push('_');
    out.push_str(token);
    out
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
    let mut out = String::with_capacity(token.len() + 2);
    pg_quote(&mut out, token);
    out
}

/// [`pg_quoted`], onto `out`.
fn pg_quote(out: &mut String, token: &str) {
    out.push('\'');
    if token.contains(['\\', '\'']) {
        for c in token.chars() {
            match c {
                '\\' => out.push_str("\\\\"),
                '\'' => out.push_str("''"),
                c => out.push(c),
            }
        }
    } else {
        out.push_str(token);
    }
    out.push('\'');
}

/// A token quoted as an FTS5 string, onto `out`.
fn fts5_quote(out: &mut String, token: &str) {
    out.push('"');
    if token.contains('"') {
        out.push_str(&token.replace('"', "\"\""));
    } else {
        out.push_str(token);
    }
    out.push('"');
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

/// Index a record (active) under its tokens, placed.
pub(super) async fn index(conn: &mut AnyConnection, r: &Doc<'_>) -> Result<()> {
    let prefix = place_prefix(r.org, &vis_key(r.scope, r.agent, r.owner));
    let tokens = document_tokens(r.subject, r.content);
    match backend_of(conn) {
        Backend::Sqlite => {
            let doc: Vec<String> = tokens.iter().map(|t| placed(&prefix, t)).collect();
            let text = "INSERT INTO memory_fts (rowid, tokens) VALUES ($1, $2)";
            sql!(text, r.id, doc.join(" ")).exec(conn).await?;
        }
        Backend::Postgres => {
            let doc: Vec<String> = tokens
                .iter()
                .map(|t| pg_quoted(&placed(&prefix, t)))
                .collect();
            // The row and its postings (the tsvector's distinct lexemes) in one statement.
            let text = "WITH doc AS (INSERT INTO memory_fts (rowid, doc) VALUES ($1, CAST($2 AS tsvector)) \
                        RETURNING rowid, doc) \
                        INSERT INTO memory_fts_postings (token, rowid) \
                        SELECT unnest(tsvector_to_array(doc.doc)), doc.rowid FROM doc";
            sql!(text, r.id, doc.join(" ")).exec(conn).await?;
        }
    }
    Ok(())
}

/// On PostgreSQL, the postings of the `memory_fts` rows the `DELETE … RETURNING
/// rowid, doc` named `gone` drops: each (lexeme, rowid) pair, by primary key.
const DROP_POSTINGS: &str = "DELETE FROM memory_fts_postings p USING gone \
                             WHERE p.rowid = gone.rowid AND p.token = ANY(tsvector_to_array(gone.doc))";

/// Drop record `id`'s row (it is no longer active).
pub(super) async fn unindex(conn: &mut AnyConnection, id: i64) -> Result<()> {
    let text = match backend_of(conn) {
        Backend::Sqlite => "DELETE FROM memory_fts WHERE rowid = $1".to_string(),
        Backend::Postgres => format!(
            "WITH gone AS (DELETE FROM memory_fts WHERE rowid = $1 RETURNING rowid, doc) {DROP_POSTINGS}"
        ),
    };
    sql!(text, id).exec(conn).await.map(|_| ())
}

/// Drop the rows of the records `owned` names: before they are deleted.
pub(super) async fn unindex_owned(conn: &mut AnyConnection, owned: &Owned<'_>) -> Result<()> {
    let q = match backend_of(conn) {
        Backend::Sqlite => owned
            .rows("DELETE FROM memory_fts WHERE rowid IN (SELECT id FROM memory_records")
            .push(")"),
        Backend::Postgres => owned
            .rows("WITH gone AS (DELETE FROM memory_fts WHERE rowid IN (SELECT id FROM memory_records")
            .push(&format!(") RETURNING rowid, doc) {DROP_POSTINGS}")),
    };
    q.exec(conn).await.map(|_| ())
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

/// A record a search found: its score (higher is better) and how many of
/// the query's tokens it holds among those the search read.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Hit {
    pub id: i64,
    pub score: f64,
    pub hits: i64,
}

/// The records `s` asks for, best first: BM25's inverse document frequency
/// summed over the query tokens each holds, more tokens then newer first on
/// ties. A common token's matches are read only as far as its newest
/// `s.limit`: they rank below any match of a rarer token, and answer a query
/// that has nothing rarer.
pub(super) async fn search(db: &Db, s: &Search<'_>) -> Result<Vec<Hit>> {
    if s.tokens.is_empty() || s.keys.is_empty() || s.limit == 0 {
        return Ok(Vec::new());
    }
    let common = db.common.load(&db.pool).await?;
    let prefixes: Vec<String> = s.keys.iter().map(|k| place_prefix(s.org, k)).collect();
    let asked: Vec<Vec<String>> = s
        .tokens
        .iter()
        .map(|t| prefixes.iter().map(|p| placed(p, t)).collect())
        .collect();
    let mut arms = arms(&asked, &common, s.limit as i64);
    let mut rows = read(db, &arms).await?;
    if rows.is_empty() && arms.iter().any(|a| !a.with.is_empty()) {
        // The rare words matched nothing here: answer from the common ones alone.
        arms.retain(|a| a.known > 0);
        for a in &mut arms {
            a.with.clear();
            a.limit = s.limit as i64;
        }
        rows = read(db, &arms).await?;
    }
    Ok(rank(
        rows,
        &arms,
        s.tokens.len(),
        common.total,
        s.except,
        s.limit,
    ))
}

/// The ids of a comma-separated list as the database writes it, into
/// `into`; an entry that is no number is skipped. Read in one pass over
/// the bytes, digits summed by hand: a search reads hundreds of ids, and
/// splitting and `str::parse` cost some 17k instructions a turn
/// (docs/benchmarks.md). Anything but plain digits is parsed as before.
fn ids_in(list: &str, into: &mut Vec<i64>) {
    let (mut n, mut digits, mut plain, mut start) = (0i64, 0usize, true, 0usize);
    // A comma after the last entry ends it as the others are ended.
    for (at, b) in list.bytes().chain(Some(b',')).enumerate() {
        if b == b',' {
            // Eighteen digits cannot overflow an i64.
            if plain && (1..=18).contains(&digits) {
                into.push(n);
            } else if let Ok(id) = list[start..at].trim().parse() {
                into.push(id);
            }
            (n, digits, plain, start) = (0, 0, true, at + 1);
        } else if b.is_ascii_digit() && digits < 18 {
            n = n * 10 + i64::from(b - b'0');
            digits += 1;
        } else {
            plain = false;
        }
    }
}

/// The `(arm, id)` pairs `arms` match, in one statement: each arm's newest
/// `limit` ids.
async fn read(db: &Db, arms: &[Arm<'_>]) -> Result<Vec<(usize, i64)>> {
    if arms.is_empty() {
        return Ok(Vec::new());
    }
    let intersect = arms.iter().any(|a| !a.with.is_empty());
    // One row per arm (or placed form), its ids as text: a search reads
    // hundreds of ids, and the driver's cost per row is many times that of a
    // number in a list.
    let lists: Vec<(i64, Option<String>)> = match db.backend {
        Backend::Postgres if !intersect => read_postings(arms).all(&db.pool).await?,
        backend => read_matching(backend, arms).all(&db.pool).await?,
    };
    let mut ids: Vec<Vec<i64>> = vec![Vec::new(); arms.len()];
    for (arm, list) in &lists {
        let Some(into) = usize::try_from(*arm).ok().and_then(|a| ids.get_mut(a)) else {
            continue;
        };
        ids_in(list.as_deref().unwrap_or(""), into);
    }
    let mut rows: Vec<(usize, i64)> = Vec::new();
    for (arm, (mut ids, a)) in ids.into_iter().zip(arms).enumerate() {
        // The postings are read form by form: the arm keeps the newest of them all.
        ids.sort_unstable_by(|x, y| y.cmp(x));
        ids.dedup();
        ids.truncate(usize::try_from(a.limit).unwrap_or(0));
        rows.extend(ids.into_iter().map(|id| (arm, id)));
    }
    Ok(rows)
}

/// The engine's own match, one per arm: FTS5's `MATCH`, or a tsquery on
/// PostgreSQL's GIN index, the forms OR'ed and AND'ed with `with`. On
/// PostgreSQL only a query of common words alone comes here: GIN intersects
/// two long posting lists far faster than the postings btree can (a place of
/// 300k records, words in 150k and 100k of them: 2.0 ms, against 146 ms for
/// a hash join of the postings and 11 ms probing one for each id of the other).
fn read_matching(backend: Backend, arms: &[Arm<'_>]) -> Sql<'static> {
    let ids = match backend {
        Backend::Sqlite => "group_concat(rowid)",
        Backend::Postgres => "string_agg(CAST(rowid AS TEXT), ',')",
    };
    let mut q = sql!("");
    for (j, arm) in arms.iter().enumerate() {
        let (predicate, matching, close) = match backend {
            Backend::Sqlite => (
                "memory_fts MATCH ",
                both(&arm.read, &arm.with, " OR ", " AND ", fts5_quote),
                "",
            ),
            Backend::Postgres => (
                "doc @@ CAST(",
                both(&arm.read, &arm.with, " | ", " & ", pg_quote),
                " AS tsquery)",
            ),
        };
        if j > 0 {
            q = q.push(" UNION ALL ");
        }
        let arm_no = itoa::Buffer::new().format(j).to_owned();
        q = q
            .push("SELECT CAST(")
            .push(&arm_no)
            .push(" AS BIGINT) AS arm, ")
            .push(ids)
            .push(" AS ids FROM (SELECT rowid FROM memory_fts WHERE ")
            .push(predicate)
            .bind(matching)
            .push(close)
            .push(" ORDER BY rowid DESC LIMIT ")
            .push(itoa::Buffer::new().format(arm.limit))
            .push(") AS arm")
            .push(&arm_no);
    }
    q
}

/// The PostgreSQL search of every query with a rare word, one text for all
/// (prepared once per connection): per placed form, its newest `lim` ids as
/// text, read by an index-only scan backward over `(token, rowid)`.
const POSTINGS_NEWEST: &str = "SELECT CAST(f.arm AS BIGINT) AS arm, \
     array_to_string(ARRAY(SELECT rowid FROM memory_fts_postings \
      WHERE token = f.token ORDER BY rowid DESC LIMIT f.lim), ',') AS ids \
     FROM unnest(string_to_array($1, ' '), CAST(string_to_array($2, ' ') AS BIGINT[]), \
                 CAST(string_to_array($3, ' ') AS BIGINT[])) AS f(token, arm, lim)";

/// PostgreSQL: the arms' placed forms as lists (tokens are letters, digits
/// and joiners: a space never occurs in one).
fn read_postings(arms: &[Arm<'_>]) -> Sql<'static> {
    let (mut tokens, mut arm_of, mut limits) = (Vec::new(), Vec::new(), Vec::new());
    for (j, arm) in arms.iter().enumerate() {
        for form in &arm.read {
            tokens.push(form.as_str());
            arm_of.push(j.to_string());
            limits.push(arm.limit.to_string());
        }
    }
    sql!(
        POSTINGS_NEWEST,
        tokens.join(" "),
        arm_of.join(" "),
        limits.join(" ")
    )
}

/// One part of a search's statement: some placed forms of query token
/// `token` (`read`), and when they are common and the query has nothing
/// rarer, the other words' forms a match must also hold (`with`); up to
/// `limit` newest matches;
/// `known` the records the common forms among `read` are in.
struct Arm<'a> {
    token: usize,
    read: Vec<&'a String>,
    with: Vec<&'a String>,
    limit: i64,
    known: i64,
}

/// Per query token, its rare placed forms, read up to [`PER_TOKEN`]; and its
/// common ones: their `limit` newest matches beside rarer words, or, when
/// the query has none, the matches that also hold another of its words (the
/// engines intersect); a query of one common word reads its `limit` newest.
fn arms<'a>(asked: &'a [Vec<String>], common: &Common, limit: i64) -> Vec<Arm<'a>> {
    let is_common = |t: &String| common.docs.contains_key(t);
    let any_rare = asked.iter().flatten().any(|t| !is_common(t));
    let mut arms = Vec::new();
    for (token, placed) in asked.iter().enumerate() {
        let (frequent, rare): (Vec<&String>, Vec<&String>) =
            placed.iter().partition(|t| is_common(t));
        if !rare.is_empty() {
            arms.push(Arm {
                token,
                read: rare,
                with: Vec::new(),
                limit: PER_TOKEN,
                known: 0,
            });
        }
        if !frequent.is_empty() {
            let known = frequent.iter().filter_map(|t| common.docs.get(*t)).sum();
            // With no rare word anywhere, a match must hold another of the
            // query's words: the records sharing most of them are found.
            let with: Vec<&String> = if !any_rare {
                asked
                    .iter()
                    .enumerate()
                    .filter(|(other, _)| *other != token)
                    .flat_map(|(_, forms)| forms.iter())
                    .collect()
            } else {
                // Beside rarer words a common one weighs little: its newest
                // matches are enough (intersecting would seek its long list
                // once for every rare match).
                Vec::new()
            };
            arms.push(Arm {
                token,
                limit: if with.is_empty() { limit } else { PER_TOKEN },
                read: frequent,
                with,
                known,
            });
        }
    }
    arms
}

fn join(out: &mut String, tokens: &[&String], sep: &str, quote: fn(&mut String, &str)) {
    for (i, t) in tokens.iter().enumerate() {
        if i > 0 {
            out.push_str(sep);
        }
        quote(out, t);
    }
}

/// `(read…) AND (with…)` in an engine's query language, or `read…` alone.
fn both(
    read: &[&String],
    with: &[&String],
    or: &str,
    and: &str,
    quote: fn(&mut String, &str),
) -> String {
    let mut out = String::new();
    if with.is_empty() {
        join(&mut out, read, or, quote);
    } else {
        out.push('(');
        join(&mut out, read, or, quote);
        out.push(')');
        out.push_str(and);
        out.push('(');
        join(&mut out, with, or, quote);
        out.push(')');
    }
    out
}

/// Score the `(arm, id)` rows of a search. A query token's document
/// frequency is the rows its rare forms returned plus what the common list
/// knows of its common forms; the collection is the index's size at the last
/// refresh, or the records seen when larger.
fn rank(
    rows: Vec<(usize, i64)>,
    arms: &[Arm<'_>],
    tokens: usize,
    total: i64,
    except: Option<i64>,
    limit: usize,
) -> Vec<Hit> {
    let mut df = vec![0i64; tokens];
    for a in arms {
        df[a.token] += a.known;
    }
    // An arm of rare forms counts what it returned; a common arm's count is known.
    let mut rows: Vec<(usize, i64)> = rows
        .into_iter()
        .filter_map(|(arm, id)| arms.get(arm).map(|a| (a, id)))
        .map(|(a, id)| {
            if a.known == 0 {
                df[a.token] += 1;
            }
            (a.token, id)
        })
        .collect();
    // The collection: at least the records seen (each appears once per token it holds).
    let seen = {
        let mut ids: Vec<i64> = rows.iter().map(|r| r.1).collect();
        ids.sort_unstable();
        ids.dedup();
        ids.len() as i64
    };
    let n = total.max(seen) as f64;
    let idf: Vec<f64> = df
        .iter()
        .map(|&d| {
            let d = d.max(1) as f64;
            (1.0 + (n - d + 0.5) / (d + 0.5)).ln()
        })
        .collect();
    // Newest first, each record's rows together.
    rows.sort_unstable_by_key(|r| std::cmp::Reverse(r.1));
    let mut hits: Vec<Hit> = Vec::with_capacity(seen as usize);
    for (token, id) in rows {
        match hits.last_mut() {
            Some(h) if h.id == id => {
                h.score += idf[token];
                h.hits += 1;
            }
            _ => hits.push(Hit {
                id,
                score: idf[token],
                hits: 1,
            }),
        }
    }
    hits.retain(|h| Some(h.id) != except);
    let order = |a: &Hit, b: &Hit| {
        b.score
            .total_cmp(&a.score)
            .then(b.hits.cmp(&a.hits))
            .then(b.id.cmp(&a.id))
    };
    super::best_first(hits, limit, order)
}

impl CommonTokens {
    /// The common tokens, read again from the table when this copy is old.
    async fn load(&self, pool: &AnyPool) -> Result<Arc<Common>> {
        if let Ok(guard) = self.loaded.read() {
            if let Some((at, common)) = guard.as_ref() {
                if at.elapsed() < COMMON_TTL {
                    return Ok(common.clone());
                }
            }
        }
        let rows: Vec<(String, i64)> = sql!("SELECT token, docs FROM memory_fts_common")
            .all(pool)
            .await?;
        let mut common = Common::default();
        for (token, docs) in rows {
            if token.is_empty() {
                common.total = docs;
            } else {
                common.docs.insert(token, docs);
            }
        }
        let common = Arc::new(common);
        if let Ok(mut guard) = self.loaded.write() {
            *guard = Some((Instant::now(), common.clone()));
        }
        Ok(common)
    }

    fn forget(&self) {
        if let Ok(mut guard) = self.loaded.write() {
            *guard = None;
        }
    }
}

impl Records<'_> {
    /// List the placed tokens held by more than [`COMMON_DOCS`] active
    /// records, from the engine's own counts (FTS5's vocabulary table,
    /// PostgreSQL's `ts_stat`), and how many records the index holds (the row
    /// with the empty token). Reads the whole index: run by the hourly job,
    /// not per turn. Returns how many tokens are common.
    pub async fn refresh_common_tokens(&self) -> Result<u64> {
        let counted = match self.db.backend {
            Backend::Sqlite => "SELECT term, doc FROM memory_fts_vocab WHERE doc > $1",
            Backend::Postgres => {
                "SELECT word, CAST(ndoc AS BIGINT) FROM ts_stat('SELECT doc FROM memory_fts') WHERE ndoc > $1"
            }
        };
        let rows: Vec<(String, i64)> = sql!(counted, COMMON_DOCS).all(&self.db.pool).await?;
        let (total,): (i64,) = sql!("SELECT COUNT(*) FROM memory_fts")
            .one(&self.db.pool)
            .await?;
        let mut tx = super::begin(&self.db.pool).await?;
        sql!("DELETE FROM memory_fts_common").exec(&mut *tx).await?;
        let text = "INSERT INTO memory_fts_common (token, docs) VALUES ('', $1)";
        sql!(text, total).exec(&mut *tx).await?;
        for (token, docs) in &rows {
            let text = "INSERT INTO memory_fts_common (token, docs) VALUES ($1, $2)";
            sql!(text, token, *docs).exec(&mut *tx).await?;
        }
        tx.commit().await?;
        self.db.common.forget();
        Ok(rows.len() as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_quoted_as_each_engine_reads_a_literal() {
        for token in ["plain", "it's", "back\\slash", "say \"hi\"", "ünï'\\\""] {
            let mut fts5 = String::new();
            fts5_quote(&mut fts5, token);
            assert_eq!(fts5, format!("\"{}\"", token.replace('"', "\"\"")));
            let pg = format!("'{}'", token.replace('\\', "\\\\").replace('\'', "''"));
            assert_eq!(pg_quoted(token), pg);
        }
        let (a, b, c) = (String::from("a"), String::from("b"), String::from("c"));
        assert_eq!(
            both(&[&a, &b], &[], " OR ", " AND ", fts5_quote),
            "\"a\" OR \"b\""
        );
        assert_eq!(
            both(&[&a], &[&b, &c], " | ", " & ", pg_quote),
            "('a') & ('b' | 'c')"
        );
        assert_eq!(placed("p0f", "tea"), "p0f_tea");
    }

    #[test]
    fn a_list_of_ids_reads_as_parsing_each_would() {
        for list in [
            "",
            "7",
            "120,99,3",
            " 4, 5 ,6",
            "1,,2",
            "x,12,-3,+4",
            "999999999999999999,9223372036854775807,9223372036854775808",
            "1234567890123456789,00042,١٢,7,",
        ] {
            let mut fast = Vec::new();
            ids_in(list, &mut fast);
            let parsed: Vec<i64> = list
                .split(',')
                .filter_map(|id| id.trim().parse().ok())
                .collect();
            assert_eq!(fast, parsed, "{list:?}");
        }
    }

    #[test]
    fn places_do_not_run_into_each_other() {
        // A naive join of org and key would make these one place.
        assert_ne!(place_prefix("a", "bc"), place_prefix("ab", "c"));
        assert_ne!(
            place_prefix("o", "user:default:ann"),
            place_prefix("o", "user:default:bob")
        );
        assert_eq!(place_prefix("o", "org"), place_prefix("o", "org"));
        assert_eq!(place_prefix("o", "org").len(), 17);
    }

    #[test]
    fn the_rarer_token_and_more_tokens_rank_first_and_except_is_left_out() {
        let (a, b) = (String::from("a"), String::from("b"));
        let arms = [
            Arm {
                token: 0,
                read: vec![&a],
                with: Vec::new(),
                limit: PER_TOKEN,
                known: 0,
            },
            Arm {
                token: 1,
                read: vec![&b],
                with: Vec::new(),
                limit: PER_TOKEN,
                known: 0,
            },
        ];
        // Token 0 is in records 1 and 2; token 1 in 3, 4, 5 and 2.
        let rows = vec![(0, 1), (0, 2), (1, 3), (1, 4), (1, 5), (1, 2)];
        let ids = |hits: Vec<Hit>| hits.iter().map(|h| h.id).collect::<Vec<_>>();
        let ranked = rank(rows.clone(), &arms, 2, 100, None, 10);
        assert_eq!(ids(ranked.clone()), vec![2, 1, 5, 4, 3]);
        assert_eq!(ranked[0].hits, 2);
        assert!(ranked[1].score > ranked[2].score, "the rarer token first");
        assert_eq!(
            ids(rank(rows.clone(), &arms, 2, 100, Some(2), 2)),
            vec![1, 5]
        );
    }

    #[test]
    fn a_token_read_in_rare_and_common_places_counts_both() {
        let (a, b, c) = (String::from("a"), String::from("b"), String::from("c"));
        let arm = |token, read, known| Arm {
            token,
            read: vec![read],
            with: Vec::new(),
            limit: PER_TOKEN,
            known,
        };
        // Token 0: three records. Token 1: one known elsewhere plus five read here.
        let arms = [arm(0, &a, 0), arm(1, &b, 0), arm(1, &c, 1)];
        let rows = vec![
            (0, 1),
            (0, 2),
            (0, 3),
            (1, 4),
            (1, 5),
            (1, 6),
            (1, 7),
            (1, 8),
        ];
        let ranked = rank(rows, &arms, 2, 100, None, 10);
        assert!(
            [1, 2, 3].contains(&ranked[0].id),
            "token 0 (3 records) is rarer than token 1 (6): {ranked:?}"
        );
    }
}
